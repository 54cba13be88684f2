"""The lower bound on Tofino 1 MAU stages per gress (softswitch/frontend/tofino_stages.py): match
and action dependencies add a stage, control dependencies do not, exclusive branches are not
summed; `softswitch compile --arch tna` prints the bound, more than 12 stages is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from softswitch.cli import main as cli_main
from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.frontend.tofino_stages import StageBound, stage_bounds

FIELDS = " ".join(f"bit<8> k{i};" for i in range(16))
PROGRAM = f"""
#include <core.p4>
#include <tna.p4>
header h_t {{ bit<8> f0; bit<8> f1; bit<8> f2; bit<8> f3; bit<16> idx; }}
struct headers_t {{ h_t h; }}
struct md_t {{ {FIELDS} bit<32> r; }}
parser IP(packet_in pkt, out headers_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {{
    state start {{ pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h);
                  transition accept; }}
}}
control I(inout headers_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t prsr,
          inout ingress_intrinsic_metadata_for_deparser_t dprsr,
          inout ingress_intrinsic_metadata_for_tm_t tm) {{
    Register<bit<32>, bit<16>>(64) reg;
    RegisterAction<bit<32>, bit<16>, bit<32>>(reg) bump = {{
        void apply(inout bit<32> value, out bit<32> rv) {{ value = value + 1; rv = value; }}
    }};
    LOCALS
    apply {{
BODY
    }}
}}
control ID(packet_out pkt, inout headers_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dprsr) {{ apply {{ pkt.emit(hdr); }} }}
parser EP(packet_in pkt, out headers_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {{
    state start {{ pkt.extract(eg); pkt.extract(hdr.h); transition accept; }}
}}
control E(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg) {{
    ELOCALS
    apply {{ EBODY }}
}}
control ED(packet_out pkt, inout headers_t hdr, in md_t md) {{ apply {{ pkt.emit(hdr); }} }}
Switch(Pipeline(IP(), I(), ID(), EP(), E(), ED())) main;
"""


def write(tmp_path: Path, locals_: str, body: str, e_locals: str = "", e_body: str = "") -> Path:
    text = (PROGRAM.replace("ELOCALS", e_locals).replace("EBODY", e_body)
            .replace("LOCALS", locals_).replace("BODY", body))
    path = tmp_path / "prog.p4"
    path.write_text(text)
    return path


def bounds(tmp_path: Path, locals_: str, body: str, e_locals: str = "", e_body: str = ""
           ) -> dict[str, StageBound]:
    checked = compile_file(write(tmp_path, locals_, body, e_locals, e_body))
    return {b.gress: b for b in stage_bounds(checked)}


def ingress(tmp_path: Path, locals_: str, body: str) -> StageBound:
    return bounds(tmp_path, locals_, body)["ingress"]


def table(name: str, key: str, action_body: str) -> str:
    """Table `name` keyed (exact) on `key`, with one action running `action_body` (`v`: an
    action-data parameter)."""
    return (f"action a_{name}(bit<8> v) {{ {action_body} }}\n"
            f"table {name} {{ key = {{ {key} : exact; }} actions = {{ a_{name}; }} }}\n")


def chain(n: int, first: int = 0) -> tuple[str, str]:
    """Tables t<first>..: the first keyed on a header field, each next one on the field the one
    before it writes (t<i> writes md.k<i>): locals and the apply-block statements."""
    locals_ = "".join(
        table(f"t{i}", "hdr.h.f0" if i == first else f"md.k{i - 1}", f"md.k{i} = v;")
        for i in range(first, first + n)
    )
    return locals_, "".join(f"        t{i}.apply();\n" for i in range(first, first + n))


def names(bound: StageBound) -> list[str]:
    return [link.name for link in bound.chain]


# --- match dependencies, independent tables, exclusive branches ---------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_a_chain_of_match_dependencies_needs_a_stage_per_table(tmp_path: Path, n: int) -> None:
    bound = ingress(tmp_path, *chain(n))
    assert bound.stages == n
    assert names(bound) == [f"I.t{i}" for i in range(n)]
    assert [link.field for link in bound.chain] == ["", *(f"md_t.k{i}" for i in range(n - 1))]


def test_independent_tables_share_one_stage(tmp_path: Path) -> None:
    locals_ = "".join(table(f"t{i}", f"hdr.h.f{i % 4}", f"md.k{i} = v;") for i in range(6))
    bound = ingress(tmp_path, locals_, "".join(f"t{i}.apply();" for i in range(6)))
    assert bound.stages == 1
    assert len(bound.chain) == 1


def test_a_write_after_write_adds_no_stage(tmp_path: Path) -> None:
    # bf-p4c's OUTPUT dependency: not counted (the bound counts what certainly needs a stage)
    locals_ = "".join(table(f"t{i}", "hdr.h.f0", "md.k0 = v;") for i in range(4))
    assert ingress(tmp_path, locals_, "t0.apply(); t1.apply(); t2.apply(); t3.apply();"
                   ).stages == 1


# the then arm: a chain of 3 (t0..t2, ending in md.k2); the else arm: t3, t4 (t3 keyed on md.k2)
BRANCHES = chain(3)[0] + chain(2, first=3)[0].replace("hdr.h.f0", "md.k2")


def test_exclusive_branches_count_the_longer_arm_not_both(tmp_path: Path) -> None:
    body = ("if (hdr.h.f1 == 1) { t0.apply(); t1.apply(); t2.apply(); }"
            " else { t3.apply(); t4.apply(); }")
    bound = ingress(tmp_path, BRANCHES, body)
    assert bound.stages == 3  # t3 on the else path reads md.k2 as the parser left it
    assert names(bound)[-3:] == ["I.t0", "I.t1", "I.t2"]


def test_the_same_tables_in_sequence_add_up(tmp_path: Path) -> None:
    body = "t0.apply(); t1.apply(); t2.apply(); t3.apply(); t4.apply();"
    assert ingress(tmp_path, BRANCHES, body).stages == 5


def test_a_join_takes_the_latest_writer_of_either_arm(tmp_path: Path) -> None:
    # md.k1 is written in stage 2 on the then path, in stage 1 on the else path: t9 after both
    locals_ = (chain(2)[0] + table("t5", "hdr.h.f2", "md.k1 = v;")
               + table("t9", "md.k1", "md.k9 = v;"))
    body = "if (hdr.h.f1 == 1) { t0.apply(); t1.apply(); } else { t5.apply(); } t9.apply();"
    bound = ingress(tmp_path, locals_, body)
    assert bound.stages == 3
    assert names(bound)[-3:] == ["I.t0", "I.t1", "I.t9"]


# --- gateways and control dependencies ----------------------------------------------------------

TWO = table("t0", "hdr.h.f0", "md.k0 = v;") + table("t1", "hdr.h.f1", "md.k1 = v;")


def test_a_gateway_reading_a_field_a_table_wrote_adds_a_stage(tmp_path: Path) -> None:
    bound = ingress(tmp_path, TWO, "t0.apply(); if (md.k0 == 1) { t1.apply(); }")
    assert bound.stages == 2
    assert bound.chain_text().startswith("I.t0 -> if (prog.p4:")
    assert bound.chain_text().endswith(" ~> I.t1")
    assert bound.chain[1].field == "md_t.k0"


@pytest.mark.parametrize(
    "body",
    [
        "t0.apply(); if (hdr.h.f2 == 1) { t1.apply(); }",  # a condition on a parsed field
        "if (t0.apply().hit) { t1.apply(); }",  # under t0's hit
        "switch (t0.apply().action_run) { a_t0: { t1.apply(); } }",  # under t0's action
        "if (hdr.h.f2 == 1) { if (hdr.h.f3 == 2) { if (!hdr.h.isValid()) { t1.apply(); } } }",
    ],
    ids=["if", "hit", "action_run", "nested_ifs"],
)
def test_a_control_dependency_alone_adds_no_stage(tmp_path: Path, body: str) -> None:
    assert ingress(tmp_path, TWO, body).stages == 1


# --- action dependencies, stateful ALU results ----------------------------------------------------


def test_an_action_reading_a_field_a_table_wrote_adds_a_stage(tmp_path: Path) -> None:
    locals_ = table("t0", "hdr.h.f0", "md.k0 = v;") + table("t1", "hdr.h.f1",
                                                              "md.k1 = md.k0 + v;")
    bound = ingress(tmp_path, locals_, "t0.apply(); t1.apply();")
    assert bound.stages == 2
    assert bound.chain_text(fields=True) == "I.t0 -[md_t.k0]-> I.t1"


def test_an_action_reading_only_parsed_fields_adds_no_stage(tmp_path: Path) -> None:
    locals_ = table("t0", "hdr.h.f0", "md.k0 = v;") + table("t1", "hdr.h.f1",
                                                              "md.k1 = hdr.h.f2 + v;")
    assert ingress(tmp_path, locals_, "t0.apply(); t1.apply();").stages == 1


@pytest.mark.parametrize(
    ("locals_", "body"),
    [
        ("", "md.r = bump.execute(hdr.h.idx); t1.apply();"),
        ("", "bit<32> x = bump.execute(hdr.h.idx); md.r = x; t1.apply();"),
        ("action count() { md.r = bump.execute(hdr.h.idx); }\n"
         "table c { key = { hdr.h.f0 : exact; } actions = { count; } }\n",
         "c.apply(); t1.apply();"),
    ],
    ids=["apply_block", "local", "table_action"],
)
def test_a_register_action_result_in_a_later_key_adds_a_stage(
    tmp_path: Path, locals_: str, body: str
) -> None:
    bound = ingress(tmp_path, locals_ + table("t1", "md.r", "md.k1 = v;"), body)
    assert bound.stages == 2
    assert names(bound)[-1] == "I.t1"
    assert bound.chain[-1].field == "md_t.r"


def test_a_register_action_result_read_in_its_own_action_adds_no_stage(tmp_path: Path) -> None:
    # the result and the write of md.k1 in one action: no later table waits for it
    locals_ = ("action count() { md.r = bump.execute(hdr.h.idx); md.k1 = (bit<8>)md.r; }\n"
               "table c { key = { hdr.h.f0 : exact; } actions = { count; } }\n")
    assert ingress(tmp_path, locals_, "c.apply();").stages == 1


# --- copy propagation in the apply block -----------------------------------------------------------

COPIED = table("t0", "hdr.h.f0", "md.k0 = v;")


@pytest.mark.parametrize(
    ("locals_", "body"),
    [
        (table("t1", "md.k1", "md.k2 = v;"), "t0.apply(); md.k1 = md.k0; t1.apply();"),
        (table("t1", "md.k1", "md.k2 = v;"), "t0.apply(); bit<8> y = md.k0; md.k1 = y; t1.apply();"),
        (table("t1", "hdr.h.f1", "md.k2 = v;"),
         "t0.apply(); md.k1 = md.k0; if (md.k1 == 1) { t1.apply(); }"),
        (table("t1", "hdr.h.f1", "md.k2 = v;"),
         "t0.apply(); md.k1 = md.k0 + 1; if (md.k1 == 2) { t1.apply(); }"),
    ],
    ids=["key", "key_through_local", "condition", "condition_of_a_sum"],
)
def test_a_copied_field_read_in_the_apply_block_waits_for_its_source(
    tmp_path: Path, locals_: str, body: str
) -> None:
    # p4c's LocalCopyPropagation reads md.k0 in md.k1's place (a table key: a plain copy only)
    bound = ingress(tmp_path, COPIED + locals_, body)
    assert bound.stages == 2
    assert names(bound)[0] == "I.t0" and names(bound)[-1] == "I.t1"


@pytest.mark.parametrize(
    ("locals_", "body"),
    [
        # an action reads the field itself (copy propagation stays out of actions)
        (table("t1", "hdr.h.f1", "md.k2 = md.k1 + v;"), "t0.apply(); md.k1 = md.k0; t1.apply();"),
        # a key is not rewritten to a computed value
        (table("t1", "md.k1", "md.k2 = v;"), "t0.apply(); md.k1 = md.k0 + 1; t1.apply();"),
        # a value reading the field it assigns is not propagated
        (table("t1", "md.k0", "md.k2 = v;"), "t0.apply(); md.k0 = md.k0 + 1; t1.apply();"),
        # a table writing the field in between: its write counts
        (table("t5", "md.k0", "md.k1 = v;") + table("t1", "md.k1", "md.k2 = v;"),
         "t0.apply(); md.k1 = hdr.h.f2; t5.apply(); t1.apply();"),
        # the copy on one path, a table's write on the other
        (table("t5", "md.k0", "md.k1 = v;") + table("t1", "md.k1", "md.k2 = v;"),
         "t0.apply(); if (hdr.h.f3 == 1) { md.k1 = hdr.h.f2; } else { t5.apply(); } t1.apply();"),
    ],
    ids=["action", "computed_key", "self", "overwritten", "other_path"],
)
def test_a_copied_field_is_waited_for_where_copy_propagation_does_not_reach(
    tmp_path: Path, locals_: str, body: str
) -> None:
    assert ingress(tmp_path, COPIED + locals_, body).stages == 3


# --- what is not counted ------------------------------------------------------------------------


def test_dead_writes_are_not_counted(tmp_path: Path) -> None:
    # keyless tables whose writes nobody reads: nothing bf-p4c must place
    locals_ = ("action a0() { md.k0 = hdr.h.f0 + 1; }\n"
               "table t0 { actions = { a0; } default_action = a0(); }\n"
               "action a1() { md.k1 = md.k0 + 1; }\n"
               "table t1 { actions = { a1; } default_action = a1(); }\n")
    dead = ingress(tmp_path, locals_, "t0.apply(); t1.apply();")
    assert dead.stages == 0
    assert dead.report().endswith("needs at least 0 of 12 MAU stages (no table or action whose "
                                  "work is used)")
    # the same chain ending in a header field (deparsed): both placed, one after the other
    live = locals_.replace("md.k1 = md.k0 + 1;", "hdr.h.f1 = md.k0 + 1;")
    assert ingress(tmp_path, live, "t0.apply(); t1.apply();").stages == 2


def test_a_program_with_the_same_type_names_as_an_earlier_one(tmp_path: Path) -> None:
    # types compare by name: what the bound knew of an earlier program's h_t (other fields) must
    # not leak into this one's (hdr.h.f1 would not be deparsed, and t1 would look dead)
    other = tmp_path / "other.p4"
    other.write_text(
        PROGRAM.replace("bit<8> f0; bit<8> f1; bit<8> f2; bit<8> f3;", "bit<8> g0; bit<8> g1;")
        .replace("ELOCALS", "").replace("EBODY", "").replace("LOCALS", "").replace("BODY", "")
    )
    assert [b.stages for b in stage_bounds(compile_file(other))] == [0, 0]
    locals_ = ("action a0() { md.k0 = hdr.h.f0 + 1; }\n"
               "table t0 { actions = { a0; } default_action = a0(); }\n"
               "action a1() { hdr.h.f1 = md.k0 + 1; }\n"
               "table t1 { actions = { a1; } default_action = a1(); }\n")
    assert ingress(tmp_path, locals_, "t0.apply(); t1.apply();").stages == 2


def test_ignore_table_dependency_drops_the_dependency(tmp_path: Path) -> None:
    locals_ = chain(2)[0].replace("table t1", '@ignore_table_dependency("I.t0") table t1')
    assert ingress(tmp_path, locals_, "t0.apply(); t1.apply();").stages == 1


# --- per gress, the CLI, the refusal -------------------------------------------------------------


def test_each_gress_has_its_own_twelve_stages(tmp_path: Path) -> None:
    e_locals = "".join(table(f"e{i}", "hdr.h.f0" if i == 0 else f"md.k{i - 1}", f"md.k{i} = v;")
                       for i in range(12))
    e_body = "".join(f"e{i}.apply();" for i in range(12))
    found = bounds(tmp_path, *chain(12), e_locals, e_body)
    assert (found["ingress"].stages, found["egress"].stages) == (12, 12)
    assert names(found["egress"]) == [f"E.e{i}" for i in range(12)]


def test_compile_prints_the_bound_of_each_gress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, *chain(3), table("e0", "hdr.h.f1", "md.k0 = v;"), "e0.apply();")
    assert cli_main(["compile", str(path), "--arch", "tna"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "Tofino: ingress needs at least 3 of 12 MAU stages (longest chain: I.t0 -> I.t1 -> I.t2)",
        "Tofino: egress needs at least 1 of 12 MAU stages (longest chain: E.e0)",
    ]


def test_more_than_twelve_stages_is_refused_with_the_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, *chain(13))
    with pytest.raises(P4Error) as info:
        compile_file(path)
    message = info.value.message
    assert "Tofino: ingress needs at least 13 MAU stages, Tofino 1 has 12" in message
    text = " ".join(f"-[md_t.k{i - 1}]-> I.t{i}" for i in range(1, 13))
    assert f": I.t0 {text} (" in message
    # at the chain's last table
    line = next(n for n, s in enumerate(path.read_text().splitlines(), 1) if "t12.apply()" in s)
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == (str(path), line)
    assert cli_main(["compile", str(path), "--arch", "tna"]) == 1
    assert "needs at least 13 MAU stages" in capsys.readouterr().err


# --- a larger program ---------------------------------------------------------------------------


def test_many_branches_and_nested_ifs(tmp_path: Path) -> None:
    """40 if/else blocks, each applying its own tables, the then arm under 6 more nested ifs;
    blocks 0, 10, 20, 30 form a chain of match dependencies (md.k0..md.k3), and a last table
    sits under 6 nested ifs, the outermost testing md.k3: 4 stages + the gateway's."""
    locals_, body = "", ""
    linked = {0: ("hdr.h.f1", "md.k0"), 10: ("md.k0", "md.k1"), 20: ("md.k1", "md.k2"),
              30: ("md.k2", "md.k3")}
    for i in range(40):
        key, out = linked.get(i, ("hdr.h.f1", "md.k5"))
        locals_ += table(f"ta{i}", key, f"{out} = v;") + table(f"tb{i}", key, f"{out} = v;")
        inner = f"ta{i}.apply();"
        for d in range(6):
            inner = f"if (hdr.h.f{d % 4} == {d + 1}) {{ {inner} }} else {{ md.k6 = {d}; }}"
        body += f"if (hdr.h.f0 == {i}) {{ {inner} }} else {{ tb{i}.apply(); }}\n"
    locals_ += table("last", "hdr.h.f2", "md.k4 = v;")
    inner = "last.apply();"
    for d in range(5):
        inner = f"if (hdr.h.f{d % 4} == {d}) {{ {inner} }}"
    body += f"if (md.k3 == 7) {{ {inner} }}"
    bound = ingress(tmp_path, locals_, body)
    assert bound.stages == 5
    tables = [name for name in names(bound) if name.startswith("I.")]
    assert tables == ["I.ta0", "I.ta10", "I.ta20", "I.ta30", "I.last"]
