"""softswitch's resource bounds (softswitch/limits.py): hostile programs are refused with a
located error naming the limit and the flag that raises it, before the work or memory they ask
for; each bound can be raised from the command line and through the API."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc

from softswitch.cli import main
from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.errors import P4SyntaxError
from softswitch.frontend.preprocess import preprocess
from softswitch.ir.serialize import dumps_ir, loads_ir
from softswitch.limits import DEFAULT_LIMITS, LimitError, Limits
from softswitch.p4info import build_p4info
from softswitch.runtime.device import Device
from softswitch.runtime.run import parse_run_args
from softswitch.runtime.server.server import P4RuntimeServer

TESTS = Path(__file__).resolve().parents[1]


def program_text(headers: str = "header h_t { bit<8> f; }\nstruct H { h_t h; }",
                 ingress_locals: str = "", parser_locals: str = "", apply: str = "") -> str:
    """A v1model program with the given header types, ingress/parser locals and statements."""
    return f"""#include <core.p4>
#include <v1model.p4>
{headers}
struct M {{ }}
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {{
    {parser_locals}
    state start {{ transition accept; }}
}}
control I(inout H h, inout M m, inout standard_metadata_t s) {{
    {ingress_locals}
    apply {{ s.egress_spec = 1; {apply} }}
}}
control E(inout H h, inout M m, inout standard_metadata_t s) {{ apply {{ }} }}
control VC(inout H h, inout M m) {{ apply {{ }} }}
control CC(inout H h, inout M m) {{ apply {{ }} }}
control D(packet_out pk, in H h) {{ apply {{ pk.emit(h); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def write(tmp_path: Path, text: str, name: str = "prog.p4") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(path: Path, limits: Limits = DEFAULT_LIMITS) -> LimitError:
    with pytest.raises(LimitError) as info:
        compile_file(path, limits=limits)
    return info.value


def doubling_defines(levels: int) -> str:
    """The hostile file: each macro twice the one before (2**levels x's from 4*levels lines)."""
    lines = ["#define A0 x"] + [f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"A{levels}", ""])


# --- the preprocessor --------------------------------------------------------------------------


def test_doubling_defines_stop_at_the_expansion_limit(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The campaign's 40-line file (6 GB after 84 s before): refused where it is used, by name
    and flag, after a megabyte of expansion."""
    path = write(tmp_path, doubling_defines(39))
    assert main(["compile", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"{path}:41:1: error: macro expansion: 1,048,577 characters, over "
                   "softswitch's limit of 1,048,576 (--max-macro-expansion N raises it)")


def test_the_expansion_limit_is_an_api_parameter(tmp_path: Path) -> None:
    path = write(tmp_path, doubling_defines(12))   # 4,096 x's
    assert preprocess(path).text.count("x") == 4096
    with pytest.raises(LimitError, match=r"macro expansion: .* over softswitch's limit of 5,000"):
        preprocess(path, limits=Limits(macro_expansion=5_000))


def test_a_long_multi_line_call_is_expanded_once(tmp_path: Path) -> None:
    """A call whose arguments span 5,000 lines: each line used to restart the expansion
    (quadratic: 2 minutes for 20,000 lines); its lines are now taken up to its closing
    parenthesis at once. The retries are charged to the expansion limit, which a quadratic
    expansion would pass."""
    body = "a b c\n" * 5000
    path = write(tmp_path, f"#define F(x) [x]\nF(\n{body})\nafter\n")
    out = preprocess(path, limits=Limits(macro_expansion=100_000))
    lines = out.text.split("\n")
    assert lines[1] == "[" + " ".join(["a b c"] * 5000) + "]"
    assert lines[5003] == "after"
    assert out.location(5004, 1).line == 5004


def test_a_chain_of_multi_line_calls_is_bounded(tmp_path: Path) -> None:
    """Each line closes one call and opens the next: every try expands all of them again, so
    the work grows with the square of the lines; it is charged and refused."""
    path = write(tmp_path, "#define F(x) x\nF(\n" + ") F(\n" * 3000 + ")\n")
    with pytest.raises(LimitError) as info:
        preprocess(path, limits=Limits(macro_expansion=200_000))
    assert info.value.location is not None and info.value.location.line == 2
    assert info.value.message.startswith("macro expansion: 200,")


def test_source_size_is_checked_before_reading(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.p4"
    path.write_bytes(b"x" * (DEFAULT_LIMITS.source_bytes + 1))
    assert main(["compile", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: reading {path}: 8,388,609 bytes, over softswitch's limit of 8,388,608 "
        "(--max-source-bytes N raises it)")


def test_every_include_counts_towards_the_source_limit(tmp_path: Path) -> None:
    write(tmp_path, "const bit<8> C = 1;\n" * 50, "part.p4")   # 1,000 bytes, no guard
    main_file = write(tmp_path, '#include "part.p4"\n' * 3, "main.p4")
    with pytest.raises(LimitError) as info:
        preprocess(main_file, limits=Limits(source_bytes=2_500))
    assert info.value.location is not None and info.value.location.line == 3
    assert "bytes, over softswitch's limit of 2,500" in info.value.message
    assert preprocess(main_file, limits=Limits(source_bytes=3_100)).text.count("C = 1") == 150


def test_the_first_syntax_error_comes_before_the_rest_is_lexed(tmp_path: Path) -> None:
    """Tokens are lexed as the parser needs them: an error on line 1 is reported without
    reading on to a bad literal 200,000 lines later (the whole file was lexed first: 10 MB of
    garbage took 34 s and 1.6 GB to its first error)."""
    path = write(tmp_path, "control ( ;\n" + "header h_t { bit<8> f; }\n" * 200_000 + "1q;\n")
    with pytest.raises(P4SyntaxError) as info:
        compile_file(path)
    assert info.value.location is not None and info.value.location.line == 1


def test_a_long_program_still_parses_whole(tmp_path: Path) -> None:
    """Declarations straddling the lexer's windows are parsed again whole (type names too)."""
    decls = "".join(f"typedef bit<8> t{i}_t;\nheader h{i}_t {{ t{i}_t f; }}\n" for i in range(3000))
    path = write(tmp_path, program_text(decls + "struct H { h2999_t h; }"))
    checked = compile_file(path)
    assert len(checked.program.declarations) > 6000


# --- types and instances -----------------------------------------------------------------------


def test_a_huge_header_stack_is_refused_where_it_is_declared(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The campaign's h_t[100000000] compiled, and one STF packet then took 108 s and 5.5 GB."""
    path = write(tmp_path, program_text("header h_t { bit<8> f; }\nstruct H { h_t[100000000] s; }"))
    assert main(["compile", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"{path}:4:16: error: header stack h_t[100000000]: 100,000,000 elements, over "
        "softswitch's limit of 4,096 (--max-header-stack N raises it)")


def test_the_header_stack_limit_can_be_raised(tmp_path: Path) -> None:
    path = write(tmp_path, program_text("header h_t { bit<8> f; }\nstruct H { h_t[5000] s; }"))
    assert "4,096" in refused(path).message
    assert main(["compile", str(path), "--max-header-stack", "5000"]) == 0
    compile_file(path, limits=Limits(header_stack=5000))


def test_nested_structs_are_bounded_by_the_values_an_instance_holds(tmp_path: Path) -> None:
    """Each struct two of the one before: 2**30 headers from 30 lines, no stack at all."""
    levels = ["header h_t { bit<8> f; }", "struct S0 { h_t a; h_t b; }"]
    levels += [f"struct S{i} {{ S{i - 1} a; S{i - 1} b; }}" for i in range(1, 31)]
    path = write(tmp_path, program_text("\n".join([*levels, "struct H { S30 s; }"])))
    error = refused(path)
    assert error.location is not None and error.location.line == 4 + 15   # S15: 2**17 values
    assert error.message == ("an instance of S15: 131,072 values, over softswitch's limit of "
                             "65,536 (--max-type-fields N raises it)")


@pytest.mark.parametrize(("local", "what"), [
    ("register<bit<32>>(1 << 28) r;", "register 'r' size: 268,435,456"),
    ("counter(1 << 25, CounterType.packets) c;", "counter 'c' size: 33,554,432"),
    ("meter(1 << 25, MeterType.bytes) m;", "meter 'm' size: 33,554,432"),
    ("action_profile(1 << 30) ap;", "action_profile 'ap' size: 1,073,741,824"),
    ("action a() { } table t { actions = { a; } size = 1 << 32; }", "table 't' size: 4,294,967,296"),
])
def test_sizes_are_bounded(local: str, what: str, tmp_path: Path) -> None:
    path = write(tmp_path, program_text(ingress_locals=local))
    assert refused(path).message == (f"{what}, over softswitch's limit of 16,777,216 "
                                     "(--max-size N raises it)")


def test_a_value_set_size_is_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, program_text(parser_locals="value_set<bit<8>>(1 << 30) vs;"))
    assert refused(path).message.startswith("value_set 'vs' size: 1,073,741,824, over ")


def test_the_cells_of_all_arrays_together_are_bounded(tmp_path: Path) -> None:
    """Five registers each under the size limit, 80 M cells together: refused before any is
    allocated (8 bytes a cell), naming the one that went over."""
    regs = " ".join(f"register<bit<32>>(1 << 24) r{i};" for i in range(5))
    uses = " ".join(f"r{i}.write(0, 1);" for i in range(5))
    checked = compile_file(write(tmp_path, program_text(ingress_locals=regs, apply=uses)))
    with pytest.raises(LimitError) as info:
        Switch(checked)
    assert info.value.message == (
        "register 'I.r4' brings the program's register, counter and meter cells: 83,886,080 "
        "cells, over softswitch's limit of 67,108,864 (--max-state-cells N raises it)")
    small = compile_file(write(tmp_path, program_text(ingress_locals=regs.replace("24", "10"),
                                                      apply=uses)),
                         limits=Limits(state_cells=5 << 10))
    assert Switch(small).register("I.r4").size == 1 << 10


# --- IR JSON, the device and the command lines -------------------------------------------------


def test_an_ir_is_checked_under_the_limits_it_is_loaded_with(tmp_path: Path) -> None:
    path = write(tmp_path, program_text("header h_t { bit<8> f; }\nstruct H { h_t[5000] s; }"))
    ir = dumps_ir(compile_file(path, limits=Limits(header_stack=5000)))
    with pytest.raises(LimitError, match="--max-header-stack"):
        loads_ir(ir)
    assert loads_ir(ir, Limits(header_stack=5000)).limits.header_stack == 5000
    with pytest.raises(LimitError, match=r"IR JSON: 2.*over softswitch's limit of 100 "):
        loads_ir(json.dumps({"padding": "x" * 200}), Limits(source_bytes=100))


def test_set_pipeline_over_the_device_limits_is_resource_exhausted(tmp_path: Path) -> None:
    """A P4Runtime client's program over the switch's limits (softswitch run --max-...):
    RESOURCE_EXHAUSTED naming the limit; the same program under raised limits is taken."""
    path = write(tmp_path, program_text("header h_t { bit<8> f; }\nstruct H { h_t[5000] s; }"))
    checked = compile_file(path, limits=Limits(header_stack=5000))
    request = p4r.SetForwardingPipelineConfigRequest(
        device_id=1, action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    request.config.p4info.CopyFrom(build_p4info(checked))
    request.config.p4_device_config = dumps_ir(checked).encode()
    for limits, accepted in ((DEFAULT_LIMITS, False), (Limits(header_stack=5000), True)):
        device = Device(1, limits=limits)
        server = P4RuntimeServer(device, "127.0.0.1:0")
        server.start()
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
                if accepted:
                    stub.SetForwardingPipelineConfig(request, timeout=30)
                    assert device.switch is not None
                else:
                    with pytest.raises(grpc.RpcError) as info:
                        stub.SetForwardingPipelineConfig(request, timeout=30)
                    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    assert "--max-header-stack" in (info.value.details() or "")
                    assert device.switch is None
        finally:
            server.stop(0)


def test_run_takes_the_limit_flags() -> None:
    opts = parse_run_args(["--no-p4", "--max-header-stack", "8192", "--max-size", "100"])
    assert not isinstance(opts, str)
    assert (opts.limits.header_stack, opts.limits.size) == (8192, 100)
    assert opts.limits.source_bytes == DEFAULT_LIMITS.source_bytes


def test_stf_takes_the_limit_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = write(tmp_path, "packet 0 01 02\nexpect 1 01 02\n", "t.stf")
    path = write(tmp_path, program_text("header h_t { bit<8> f; }\nstruct H { h_t[5000] s; }"))
    assert main(["stf", str(path), str(stf)]) == 1
    assert "--max-header-stack N raises it" in capsys.readouterr().err
    assert main(["stf", str(path), str(stf), "--max-header-stack", "5000"]) == 0
    with pytest.raises(SystemExit):   # argparse's usage error: not a positive integer
        main(["stf", str(path), str(stf), "--max-size", "0"])
