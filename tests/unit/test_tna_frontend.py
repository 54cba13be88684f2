"""The frontend for TNA programs: architecture choice, the Switch/Pipeline package with @optional
block parameters, initializer blocks (RegisterAction.apply), the per-architecture externs."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.cli import main as cli_main
from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.frontend import ast
from softswitch.ir.serialize import dumps_ir, loads_ir

TESTS = Path(__file__).resolve().parent.parent
MINIMAL = TESTS / "p4" / "tna_minimal.p4"

HEAD = """
#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { eth_t eth; }
struct md_t { bit<16> h; bit<32> r; }
struct pair_t { bit<16> lo; bit<16> hi; }
parser IP(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}
"""

INGRESS = """
control I(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t prsr,
          inout ingress_intrinsic_metadata_for_deparser_t dprsr,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    LOCALS
    apply { BODY }
}
"""

TAIL = """
control ID(packet_out pkt, inout headers_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dprsr) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control E(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) { apply { } }
control ED(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
MAIN
"""

INLINE_MAIN = "Switch(Pipeline(IP(), I(), ID(), EP(), E(), ED())) main;"


def program(
    tmp_path: Path,
    locals_: str = "",
    body: str = "",
    main: str = INLINE_MAIN,
    ingress: str = INGRESS,
) -> Path:
    text = HEAD + ingress.replace("LOCALS", locals_).replace("BODY", body)
    path = tmp_path / "prog.p4"
    path.write_text(text + TAIL.replace("MAIN", main))
    return path


def error_of(path: Path, **kwargs: object) -> str:
    with pytest.raises(P4Error) as info:
        compile_file(path, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


def test_minimal_program_is_a_tna_program_with_six_blocks() -> None:
    checked = compile_file(MINIMAL)
    assert checked.arch == "tna"
    assert checked.pipe_name == "pipe"
    assert {role: b.path for role, b in checked.blocks.items()} == {
        "ingress_parser": "SwitchIngressParser",
        "ingress": "SwitchIngress",
        "ingress_deparser": "SwitchIngressDeparser",
        "egress_parser": "SwitchEgressParser",
        "egress": "SwitchEgress",
        "egress_deparser": "SwitchEgressDeparser",
    }


def test_arch_params_name_the_arch_parameter_of_each_block_parameter() -> None:
    blocks = compile_file(MINIMAL).blocks
    assert blocks["ingress_parser"].arch_params == ["pkt", "hdr", "ig_md", "ig_intr_md"]
    assert blocks["ingress"].arch_params == [
        "hdr", "ig_md", "ig_intr_md", "ig_intr_md_from_prsr", "ig_intr_md_for_dprsr",
        "ig_intr_md_for_tm",
    ]  # fmt: skip
    assert blocks["egress"].arch_params == ["hdr", "eg_md", "eg_intr_md"]
    assert blocks["egress_deparser"].arch_params == ["pkt", "hdr", "metadata"]
    for block in blocks.values():
        assert len(block.arch_params) == len(block.decl.params)


def test_named_and_inline_pipeline(tmp_path: Path) -> None:
    named = "Pipeline(IP(), I(), ID(), EP(), E(), ED()) my_pipe;\nSwitch(my_pipe) main;"
    checked = compile_file(program(tmp_path, main=named))
    assert checked.pipe_name == "my_pipe"
    assert checked.blocks["ingress"].path == "I"
    assert compile_file(program(tmp_path)).pipe_name == ""


def test_switch_needs_a_pipeline(tmp_path: Path) -> None:
    main = "Switch(I()) main;"
    assert "must be a Pipeline" in error_of(program(tmp_path, main=main))


def test_a_block_missing_a_required_parameter_is_refused(tmp_path: Path) -> None:
    ingress = """
control I(inout headers_t hdr) {
    apply { }
}
"""
    message = error_of(program(tmp_path, ingress=ingress))
    assert "'I' (passed as 'ingress' of Pipeline) has 1 parameters, IngressT has 2 to 6" in message


def test_a_block_parameter_of_the_wrong_intrinsic_type_is_refused(tmp_path: Path) -> None:
    ingress = """
control I(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_for_tm_t tm) {
    apply { }
}
"""
    message = error_of(program(tmp_path, ingress=ingress))
    assert "parameter 'tm' has type ingress_intrinsic_metadata_for_tm_t" in message


def test_arch_from_include_and_mismatches(tmp_path: Path) -> None:
    path = program(tmp_path)
    assert compile_file(path, arch="tna").arch == "tna"
    assert "includes tna.p4, but the architecture is v1model" in error_of(path, arch="v1model")
    v1 = TESTS / "p4" / "usid_forward.p4"
    assert compile_file(v1).arch == "v1model"
    assert "includes v1model.p4, but the architecture is tna" in error_of(v1, arch="tna")


def test_tna_programs_see_bf_p4cs_macros(tmp_path: Path) -> None:
    body = """
#if __TARGET_TOFINO__ == 1 && defined(__p4c__) && !defined(__TARGET_BMV2__)
        tm.ucast_egress_port = 1;
#else
        this_is_not_tofino();
#endif
"""
    compile_file(program(tmp_path, body=body))


def test_v1model_externs_are_not_declared_in_a_tna_program(tmp_path: Path) -> None:
    message = error_of(program(tmp_path, locals_="counter(8, CounterType.packets) c;"))
    assert "undeclared name 'counter'" in message
    own = program(tmp_path, locals_="")
    own.write_text(
        own.read_text()
        .replace("struct md_t", "extern Foo { Foo(); }\nstruct md_t")
        .replace("    apply {  }\n}", "    Foo() f;\n    apply { }\n}", 1)
    )
    assert "unknown extern 'Foo'" in error_of(own)


REGISTER = "Register<bit<32>, bit<16>>(1024) reg;\n"


def test_register_action_with_and_without_rv(tmp_path: Path) -> None:
    locals_ = (
        REGISTER
        + """
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            bit<32> old = value;
            value = value + (bit<32>)md.h;   // reads the control's parameter
            rv = old;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) clear = {
        void apply(inout bit<32> value) { value = 0; }
    };
"""
    )
    body = "if (md.h == 0) { clear.execute(md.h); } else { md.r = bump.execute(md.h); }"
    checked = compile_file(program(tmp_path, locals_, body))
    ingress = checked.blocks["ingress"].decl
    bump = next(d for d in ingress.locals if d.name == "bump")
    assert isinstance(bump, ast.InstanceDecl)
    assert [f.name for f in bump.initializer] == ["apply"]
    assert bump.implements["apply"].is_abstract
    assert bump.ctor_args[0].decl.name == "reg"  # type: ignore[union-attr]
    clear = next(d for d in ingress.locals if d.name == "clear")
    assert len(clear.initializer[0].params) == 1  # type: ignore[attr-defined]
    # the IR JSON keeps the initializer and the architecture
    again = loads_ir(dumps_ir(checked))
    assert again.arch == "tna"
    bump2 = next(d for d in again.blocks["ingress"].decl.locals if d.name == "bump")
    assert bump2.implements["apply"].name == "apply"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("impl", "message"),
    [
        ("void apply(inout bit<16> value) { }",
         "'ra.apply': parameter 'value' has type bit<16>, expected bit<32>"),
        ("void apply(in bit<32> value) { }", "parameter 'value' must have direction 'inout'"),
        ("void apply() { }", "'ra.apply' is missing parameter 'value'"),
        ("bit<32> apply(inout bit<32> value) { return value; }", "must return void"),
        ("void run(inout bit<32> value) { }", "extern 'RegisterAction' has no abstract method 'run'"),
        ("void apply(inout bit<32> value) { md.r = value; }",
         "'ra.apply' may write only its own parameters and local variables, not 'md'"),
        ("void apply(inout bit<32> value) { hdr.eth.setInvalid(); }",
         "may write only its own parameters and local variables, not 'hdr'"),
    ],
)  # fmt: skip
def test_bad_register_action_implementations(tmp_path: Path, impl: str, message: str) -> None:
    locals_ = REGISTER + f"RegisterAction<bit<32>, bit<16>, bit<32>>(reg) ra = {{ {impl} }};"
    assert message in error_of(program(tmp_path, locals_, "ra.execute(0);"))


def test_register_action_without_initializer_is_refused(tmp_path: Path) -> None:
    locals_ = REGISTER + "RegisterAction<bit<32>, bit<16>, bit<32>>(reg) ra;"
    message = error_of(program(tmp_path, locals_))
    assert "must implement its abstract method 'apply' in an initializer block" in message


def test_initializer_on_an_extern_without_abstract_methods_is_refused(tmp_path: Path) -> None:
    locals_ = "Random<bit<8>>() rnd = { void apply() { } };"
    assert "extern 'Random' has no abstract method 'apply'" in error_of(program(tmp_path, locals_))


def test_dont_care_type_arguments_and_tna_table_properties(tmp_path: Path) -> None:
    locals_ = """
    CRCPolynomial<bit<16>>(0x8005, true, false, false, 0, 0) poly;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, poly) h1;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h2;
    ActionSelector(128, h2, SelectorMode_t.FAIR) sel;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) dc;
    action a(PortId_t p) { tm.ucast_egress_port = p; dc.count(); }
    table t {
        key = { hdr.eth.dst : exact; md.h : selector; }
        actions = { a; }
        implementation = sel;
        counters = dc;
        idle_timeout = true;
    }
"""
    body = "md.h = h1.get({hdr.eth.dst, hdr.eth.src}); t.apply();"
    compile_file(program(tmp_path, locals_, body))


def test_cli_arch_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(program(tmp_path))
    out = str(tmp_path / "p4info.txt")
    assert (
        cli_main(
            [
                "compile",
                path,
                "--target",
                "tofino",
                "--arch",
                "tna",
                "-g",
                "--p4runtime-force-std-externs",
                "--p4runtime-files",
                out,
            ]
        )
        == 0
    )
    assert cli_main(["compile", path, "--target", "tofino", "--arch", "v1model"]) == 1
    assert "the tofino target has the tna architecture" in capsys.readouterr().err
    assert cli_main(["compile", path, "--arch", "v1model"]) == 1
    assert "includes tna.p4" in capsys.readouterr().err


# --- Tofino rules: what one path may use, where externs work ----------------------------------

RA = (
    REGISTER
    + """
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) ra1 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = v + 1; }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) ra2 = {
        void apply(inout bit<32> v) { v = 0; }
    };
    Counter<bit<32>, bit<16>>(64, CounterType_t.PACKETS) cnt;
    action use1() { md.r = ra1.execute(md.h); cnt.count(md.h); }
    action use2() { ra2.execute(md.h); cnt.count(md.h); }
    action none() { }
    table t { key = { hdr.eth.dst : exact; } actions = { use1; use2; none; } default_action = none(); }
    table u { key = { hdr.eth.src : exact; } actions = { use1; none; } default_action = none(); }
"""
)


@pytest.mark.parametrize(
    "body",
    [
        "t.apply();",  # different actions of one table
        "if (md.h == 1) { ra1.execute(0); } else if (md.h == 2) { ra2.execute(0); }",
        "switch (md.h) { 1: { ra1.execute(0); } 2: { ra2.execute(0); } default: { t.apply(); } }",
        "if (md.h == 0) { ra1.execute(0); return; } ra2.execute(0);",  # return ends the path
        "if (md.h == 0) { t.apply(); exit; } ra1.execute(1);",  # exit ends that path
        "switch (t.apply().action_run) { none: { ra1.execute(0); } default: { } }",
        "if (md.h == 0) { u.apply(); } else { t.apply(); }",
    ],
)
def test_mutually_exclusive_uses_are_fine(tmp_path: Path, body: str) -> None:
    compile_file(program(tmp_path, RA, body))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("t.apply(); ra1.execute(0);", "register 'I.reg' is used twice on one path"),
        ("u.apply(); cnt.count(1);", "counter 'I.cnt' is used twice on one path"),
        ("switch (t.apply().action_run) { use1: { ra2.execute(0); } default: { } }",
         "register 'I.reg' is used twice"),
        ("if (u.apply().hit) { ra2.execute(0); }", "register 'I.reg' is used twice"),
        ("u.apply(); if (md.h == 0) { u.apply(); }", "table 'I.u' is applied twice"),
        ("md.r = ra1.execute(0) + ra1.execute(1);", "register 'I.reg' is used twice"),
    ],
)  # fmt: skip
def test_two_uses_on_one_path_are_refused(tmp_path: Path, body: str, message: str) -> None:
    assert message in error_of(program(tmp_path, RA, body))


SUB = """
control Count(inout md_t md)(bit<16> base) {
    Register<bit<32>, bit<16>>(16) cells;
    RegisterAction<bit<32>, bit<16>, bit<32>>(cells) bump = {
        void apply(inout bit<32> v) { v = v + 1; }
    };
    apply { bump.execute(base); }
}
"""


def test_sub_control_instances_have_their_own_registers(tmp_path: Path) -> None:
    locals_ = "Count(1) first; Count(2) second;"
    path = program(tmp_path, locals_, "first.apply(md); second.apply(md);")
    path.write_text(path.read_text().replace("control I(", SUB + "control I(", 1))
    compile_file(path)
    path.write_text(path.read_text().replace("second.apply(md);", "first.apply(md);"))
    # the same instance applied twice reaches its register twice
    assert "register 'I.first.cells' is used twice" in error_of(path)


@pytest.mark.parametrize(
    ("cell", "ok"),
    [("bit<8>", True), ("bit<16>", True), ("int<32>", True), ("pair_t", True),
     ("bit<64>", False), ("bit<1>", False), ("md_t", False)],
)  # fmt: skip
def test_register_cell_types(tmp_path: Path, cell: str, ok: bool) -> None:
    path = program(tmp_path, f"Register<{cell}, bit<8>>(16) cells;")
    if ok:
        compile_file(path)
    else:
        assert f"register 'cells' has cells of type {cell}" in error_of(path)


def _with_deparser(tmp_path: Path, locals_: str, body: str, egress: bool = False) -> Path:
    path = program(tmp_path)
    text = path.read_text()
    if egress:
        old = "control ED(packet_out pkt, inout headers_t hdr, in md_t md) { apply { pkt.emit(hdr); } }"
        new = (
            "control ED(packet_out pkt, inout headers_t hdr, in md_t md,\n"
            "           in egress_intrinsic_metadata_for_deparser_t dprsr) {\n"
            f"    {locals_}\n    apply {{ {body} pkt.emit(hdr); }}\n}}"
        )
    else:
        old = "in ingress_intrinsic_metadata_for_deparser_t dprsr) { apply { pkt.emit(hdr); } }"
        new = (
            "in ingress_intrinsic_metadata_for_deparser_t dprsr) {\n"
            f"    {locals_}\n    apply {{ {body} pkt.emit(hdr); }}\n}}"
        )
    assert old in text
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    ("locals_", "body", "egress", "message"),
    [
        ("Mirror() m; Digest<md_t>() d; Resubmit() r;",
         "if (dprsr.mirror_type == 1) { m.emit(3); } if (2 == dprsr.digest_type) { d.pack(md); }"
         " if (dprsr.resubmit_type == 1) { r.emit(); }", False, None),
        ("Mirror() m;", "if (dprsr.mirror_type == 1) { m.emit(3); }", True, None),
        ("Resubmit() r;", "r.emit();", True, "Resubmit.emit can only be used in the ingress deparser"),
        ("Digest<md_t>() d;", "d.pack(md);", True, "Digest.pack can only be used in the ingress deparser"),
        ("Mirror() m;", "if (dprsr.mirror_type == 1 && md.h == 0) { m.emit(3); }", False,
         "an 'if' in a deparser can only compare"),
        ("", "if (md.h == 1) { }", False, "an 'if' in a deparser can only compare"),
        # bf-p4c takes a validity test around a checksum update as the update's condition
        ("Checksum() ck;", "if (hdr.eth.isValid()) { hdr.eth.ether_type = ck.update(hdr.eth.src); }",
         False, None),
        ("Checksum() ck;", "if (hdr.eth.isValid()) { pkt.emit(hdr.eth); }", False,
         "an 'if' in a deparser can only compare"),
    ],
)  # fmt: skip
def test_deparser_externs_and_conditions(
    tmp_path: Path, locals_: str, body: str, egress: bool, message: str | None
) -> None:
    path = _with_deparser(tmp_path, locals_, body, egress)
    if message is None:
        compile_file(path)
    else:
        assert message in error_of(path)


def test_parser_externs_in_a_parser_are_fine(tmp_path: Path) -> None:
    path = program(tmp_path)
    text = path.read_text().replace(
        "        pkt.extract(hdr.eth);\n        transition accept;",
        "        pkt.extract(hdr.eth);\n        ck.add(hdr.eth);\n        pc.set(8w3);\n"
        "        md.h = (bit<16>)(bit<1>)ck.verify();\n        transition accept;",
        1,
    )
    text = text.replace(
        "    state start {\n        pkt.extract(ig_intr_md);",
        "    Checksum() ck; ParserCounter() pc;\n    state start {\n"
        "        pkt.extract(ig_intr_md);",
        1,
    )
    path.write_text(text)
    compile_file(path)


def test_loops_are_refused(tmp_path: Path) -> None:
    body = "for (bit<8> i in 0 .. 3) { md.h = md.h + 1; }"
    assert "Tofino: loops are not supported" in error_of(program(tmp_path, "", body))


def test_a_program_only_bf_p4cs_macros_let_through(tmp_path: Path) -> None:
    path = program(tmp_path)
    path.write_text("#ifndef __TARGET_TOFINO__\n#error needs bf-p4c\n#endif\n" + path.read_text())
    assert compile_file(path).arch == "tna"
    assert "needs bf-p4c" in error_of(path, arch="v1model")
