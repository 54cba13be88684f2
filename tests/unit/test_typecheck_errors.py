"""The type checker reports every independent error of a program in one run, each at its exact
file:line:col, without follow-on errors for uses of a declaration that failed; the command line and
the P4Runtime server show them all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
from finsy.proto import p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from p4rt_harness import DEVICE_ID, pipeline_request

from softswitch.cli import main as cli_main
from softswitch.compiler import compile_file
from softswitch.errors import P4Error, P4Errors, P4TypeError, SourceLocation, UnsupportedError
from softswitch.frontend import typecheck
from softswitch.frontend.parser import parse
from softswitch.frontend.preprocess import preprocess
from softswitch.ir.serialize import ir_to_dict

BAD_DIR = Path(__file__).resolve().parents[1] / "p4" / "bad"

# Everything but the controls under test; %IG% is the ingress control's locals and apply body.
PRELUDE = """\
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers_t { h_t h; }
struct meta_t { bit<8> m; }
"""

# Errors in four different controls, one each (lines 9, 11, 14 and 17).
FOUR_CONTROLS = (
    PRELUDE
    + """\
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { meta.m = true; } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = nowhere; }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.h.d = 1; }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h, 1); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
)

# The pipeline around an ingress control with %LOCALS% and %APPLY%, and parser states %STATES%.
PIPELINE = (
    PRELUDE
    + """\
%TOP%
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%STATES%
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
%LOCALS%
    apply {
%APPLY%
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
)
GOOD_STATES = "    state start { pkt.extract(hdr.h); transition accept; }"


def program(locals_: str = "", apply: str = "", states: str = GOOD_STATES, top: str = "") -> str:
    return (
        PIPELINE.replace("%TOP%", top)
        .replace("%STATES%", states)
        .replace("%LOCALS%", locals_)
        .replace("%APPLY%", apply)
    )


def errors_of(tmp_path: Path, text: str) -> list[P4Error]:
    """Every error the checker reports for `text` (in prog.p4), in the order it prints them."""
    path = tmp_path / "prog.p4"
    path.write_text(text)
    with pytest.raises(P4Error) as info:
        compile_file(path)
    err = info.value
    errors = err.errors if isinstance(err, P4Errors) else [err]
    for e in errors:
        assert e.location is not None and e.location.file == str(path), str(e)
    return errors


def assert_reported(
    tmp_path: Path, text: str, expected: list[tuple[int, int, str, str]]
) -> list[P4Error]:
    """The program's errors are exactly `expected`: (line, column, the token found there, a
    fragment of the message), in this order; nothing else is reported."""
    lines = text.splitlines()
    for line, col, token, _ in expected:  # the test's own positions point where they mean to
        assert lines[line - 1][col - 1 :].startswith(token), (line, col, token)
    errors = errors_of(tmp_path, text)
    got = [(e.location.line, e.location.column) for e in errors if e.location]
    assert got == [(line, col) for line, col, _, _ in expected], "\n".join(map(str, errors))
    for e, (_, _, _, fragment) in zip(errors, expected):
        assert fragment in e.message, str(e)
    return errors


# -- independent errors -------------------------------------------------------------------------


def test_errors_in_different_controls_are_all_reported(tmp_path: Path) -> None:
    errors = assert_reported(
        tmp_path,
        FOUR_CONTROLS,
        [
            (9, 71, "true", "expected bit<8>, got bool"),
            (11, 30, "nowhere", "undeclared name 'nowhere'"),
            (14, 13, "hdr.h.d", "no field 'd'"),
            (17, 55, "pkt.emit", "emit"),
        ],
    )
    assert len(errors) == 4


def test_each_statement_of_an_action_is_checked(tmp_path: Path) -> None:
    text = program(
        locals_="""\
    action a(bit<8> x) {
        hdr.h.a = hdr.h.c;
        hdr.h.b = x;
        meta.m = undeclared;
        x = 1;
        hdr.h.b = x + true;
    }""",
        apply="        a(1);",
    )
    # line 12 is the action's header; the good statement and the call are not reported
    assert_reported(
        tmp_path,
        text,
        [
            (13, 19, "hdr.h.c", "expected bit<8>, got bit<16>"),
            (15, 18, "undeclared", "undeclared name 'undeclared'"),
            (16, 9, "x = 1", "cannot assign to in parameter 'x'"),
            (17, 23, "true", "operator + needs integer operands, got bool"),
        ],
    )


def test_table_keys_actions_and_properties_and_parser_states(tmp_path: Path) -> None:
    text = program(
        states="""\
    state start {
        pkt.extract(hdr.h);
        meta.m = hdr.h.nofield;
        transition select(hdr.h.a) { 1: second; default: nostate; }
    }
    state second {
        meta.m = hdr.h.c;
        transition accept;
    }""",
        locals_="""\
    action a1() { }
    table t {
        key = { hdr.h.a : exact; hdr.h.zz : exact; hdr.h.b : fuzzy; }
        actions = { a1; nosuch; }
        size = true;
        default_action = a1;
    }""",
        apply="        t.apply();",
    )
    assert_reported(
        tmp_path,
        text,
        [
            (10, 18, "hdr.h.nofield", "no field 'nofield'"),
            (11, 49, "default: nostate", "undeclared parser state 'nostate'"),
            (14, 18, "hdr.h.c", "expected bit<8>, got bit<16>"),
            (22, 34, "hdr.h.zz", "no field 'zz'"),
            (22, 52, "hdr.h.b", "unknown match_kind 'fuzzy'"),
            (23, 25, "nosuch", "undeclared action 'nosuch'"),
            (24, 16, "true", "size"),
        ],
    )


def test_errors_in_top_level_declarations_are_all_reported(tmp_path: Path) -> None:
    top = """\
const bit<8> K = true;
struct s_t { bit<8> a; bit<8> a; }
enum bit<8> E_t { A = 1, B = true }
header g_t { int x; }"""
    assert_reported(
        tmp_path,
        program(top=top),
        [
            (6, 18, "true", "expected bit<8>, got bool"),
            (7, 31, "a; }", "duplicate declaration of 'a'"),
            (8, 30, "true", "expected bit<8>, got bool"),
            (9, 18, "x", "cannot have type int"),
        ],
    )


# -- no follow-on errors ------------------------------------------------------------------------


def test_uses_of_a_type_that_failed_are_not_errors_again(tmp_path: Path) -> None:
    top = """\
typedef nosuch_t bad_t;
struct holder_t { bad_t x; }"""
    locals_ = """\
    holder_t v;
    bad_t w = 1;
    action set(bad_t y) { w = y; }
    table t { key = { hdr.h.a : exact; } actions = { set; } default_action = set(2); }"""
    apply = """\
        v.x = 1;
        w = w + 1;
        set(3);
        t.apply();
        hdr.h.a = hdr.h.c;"""
    assert_reported(
        tmp_path,
        program(top=top, locals_=locals_, apply=apply),
        [
            (6, 9, "nosuch_t", "undeclared name 'nosuch_t'"),
            # the one independent error after it is still found
            (22, 19, "hdr.h.c", "expected bit<8>, got bit<16>"),
        ],
    )


def test_a_local_variable_that_failed_is_not_an_error_at_each_use(tmp_path: Path) -> None:
    apply = """\
        bit<8> x = hdr.h.c;
        x = x + 1;
        hdr.h.a = x;
        if (x == 2) { hdr.h.b = x; }"""
    assert_reported(
        tmp_path,
        program(apply=apply),
        [(14, 20, "hdr.h.c", "expected bit<8>, got bit<16>")],
    )


def test_a_bad_parameter_type_still_checks_the_body_but_not_the_uses(tmp_path: Path) -> None:
    """The control's body is checked without the parameter; the control is then erroneous, so
    main, which instantiates it, is not an error."""
    text = program().replace(
        "control VC(inout headers_t hdr, inout meta_t meta) { apply { } }",
        "control VC(inout headers_t hdr, inout nosuch_t meta) {\n"
        "    apply { meta.m = 1; hdr.h.a = true; }\n"
        "}",
    )
    assert_reported(
        tmp_path,
        text,
        [
            (10, 39, "nosuch_t", "undeclared name 'nosuch_t'"),
            (11, 35, "true", "expected bit<8>, got bool"),
        ],
    )


def test_an_action_with_a_bad_parameter_is_not_an_error_where_used(tmp_path: Path) -> None:
    locals_ = """\
    action set(nosuch_t y, bit<8> z) { hdr.h.a = y; hdr.h.b = z; hdr.h.c = z; }
    table t { key = { hdr.h.a : exact; } actions = { set; } }"""
    assert_reported(
        tmp_path,
        program(locals_=locals_, apply="        set(1, 2);\n        t.apply();"),
        [
            (12, 16, "nosuch_t", "undeclared name 'nosuch_t'"),
            (12, 76, "z", "expected bit<16>, got bit<8>"),
        ],
    )


def test_entries_are_not_checked_against_a_key_that_failed(tmp_path: Path) -> None:
    locals_ = """\
    action a1(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.zz : exact; }
        actions = { a1(1, 2); }
        default_action = a1(3);
        const entries = { 5 : a1(4); }
    }"""
    # the list's wrong argument count is reported; a1 stays listed, so the default action is
    # not "not in the actions list", and the entries wait for a key that checks
    assert_reported(
        tmp_path,
        program(locals_=locals_, apply="        t.apply();"),
        [
            (14, 17, "hdr.h.zz", "no field 'zz'"),
            (15, 21, "a1", "expects 1 arguments, got 2"),
        ],
    )


def test_a_checker_failure_after_an_error_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An internal failure is reported (located, no traceback) when it is the only problem, and
    dropped after a real error, whose half-checked declarations it most likely tripped over."""

    def broken(self: object, s: object, scope: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(typecheck.Checker, "_stmt_ExitStatement", broken, raising=False)
    alone = errors_of(tmp_path, program(apply="        exit;"))
    assert len(alone) == 1 and "internal error" in alone[0].message
    after = errors_of(tmp_path, program(apply="        hdr.h.a = true;\n        exit;"))
    assert [e.message for e in after] == ["type mismatch in assignment: expected bit<8>, got bool"]


# -- limits and shape -----------------------------------------------------------------------------


def test_at_most_max_errors_are_reported(tmp_path: Path) -> None:
    n = typecheck.MAX_ERRORS + 10
    apply = "\n".join(f"        hdr.h.a = undeclared{i};" for i in range(n))
    path = tmp_path / "prog.p4"
    path.write_text(program(apply=apply))
    with pytest.raises(P4Errors) as info:
        compile_file(path)
    err = info.value
    assert err.truncated
    assert [e.message for e in err.errors] == [
        f"undeclared name 'undeclared{i}'" for i in range(typecheck.MAX_ERRORS)
    ]
    lines = str(err).splitlines()
    assert len(lines) == typecheck.MAX_ERRORS + 1
    assert lines[-1] == f"error: stopped after {typecheck.MAX_ERRORS} errors"


def test_one_error_is_raised_as_itself(tmp_path: Path) -> None:
    path = tmp_path / "prog.p4"
    path.write_text(program(apply="        hdr.h.a = true;"))
    with pytest.raises(P4TypeError) as info:
        compile_file(path)
    assert not isinstance(info.value, P4Errors)
    assert str(info.value).startswith(f"{path}:14:19: error: type mismatch")


def test_p4errors_sorts_by_file_then_place_and_looks_like_its_first_error() -> None:
    a, b = "main.p4", "lib.p4"
    found = [
        P4TypeError("third", SourceLocation(a, 9, 1)),
        UnsupportedError("x", SourceLocation(b, 1, 1)),
        P4TypeError("no place"),
        P4TypeError("first", SourceLocation(a, 2, 7)),
        P4TypeError("second", SourceLocation(a, 2, 9)),
    ]
    err = P4Errors(found)
    assert [e.message for e in err.errors] == [
        "first",
        "second",
        "third",
        "not supported by softswitch: x",
        "no place",
    ]
    assert (err.message, err.location) == ("first", SourceLocation(a, 2, 7))
    assert str(err).splitlines() == [
        "main.p4:2:7: error: first",
        "main.p4:2:9: error: second",
        "main.p4:9:1: error: third",
        "lib.p4:1:1: error: not supported by softswitch: x",
        "error: no place",
    ]
    assert P4Errors.of(found[:1]) is found[0]
    assert isinstance(P4Errors.of(found[:2]), P4Errors)


def test_the_negative_corpus_program_with_two_errors_reports_both() -> None:
    path = BAD_DIR / "two_errors.p4"
    with pytest.raises(P4Errors) as info:
        compile_file(path)
    assert [(e.location.line, e.location.column) for e in info.value.errors if e.location] == [
        (27, 19),
        (37, 16),
    ]


# -- the command line and the P4Runtime server show them all --------------------------------------


def _four_controls(tmp_path: Path) -> Path:
    path = tmp_path / "bad.p4"
    path.write_text(FOUR_CONTROLS)
    return path


def _assert_all_four_printed(err: str, path: Path) -> None:
    lines = err.splitlines()
    assert [line.split(": error:")[0] for line in lines] == [
        f"{path}:9:71",
        f"{path}:11:30",
        f"{path}:14:13",
        f"{path}:17:55",
    ], err
    assert "Traceback" not in err


def test_compile_prints_every_error_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _four_controls(tmp_path)
    assert cli_main(["compile", str(path), "--p4info", str(tmp_path / "p.txt")]) == 1
    _assert_all_four_printed(capsys.readouterr().err, path)
    assert not (tmp_path / "p.txt").exists()


def test_stf_and_run_print_every_error_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _four_controls(tmp_path)
    stf = tmp_path / "t.stf"
    stf.write_text("packet 0 00\n")
    assert cli_main(["stf", str(path), str(stf)]) == 1
    _assert_all_four_printed(capsys.readouterr().err, path)
    assert cli_main(["run", str(path), "--", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    _assert_all_four_printed(capsys.readouterr().err, path)


@pytest.fixture
def stub() -> Iterator[p4runtime_pb2_grpc.P4RuntimeStub]:
    from softswitch.runtime.device import Device
    from softswitch.runtime.server.server import P4RuntimeServer

    device = Device(DEVICE_ID)
    device.start()
    server = P4RuntimeServer(device, "127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield p4runtime_pb2_grpc.P4RuntimeStub(channel)
    channel.close()
    server.stop(0)
    device.stop()


def test_set_pipeline_with_errors_names_them_all_and_the_server_stays_up(
    tmp_path: Path, stub: p4runtime_pb2_grpc.P4RuntimeStub
) -> None:
    import json

    path = _four_controls(tmp_path)
    unchecked = SimpleNamespace(program=parse(preprocess(path)), source_file=str(path))
    bad_ir = json.dumps(ir_to_dict(unchecked)).encode()  # type: ignore[arg-type]
    with pytest.raises(grpc.RpcError) as info:
        stub.SetForwardingPipelineConfig(pipeline_request(device_config=bad_ir))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = info.value.details()
    for place in ("9:71", "11:30", "14:13", "17:55"):
        assert f"{path}:{place}: error:" in details, details
    stub.SetForwardingPipelineConfig(pipeline_request())  # still serving: a good one commits
    reply = stub.GetForwardingPipelineConfig(
        p4r.GetForwardingPipelineConfigRequest(device_id=DEVICE_ID)
    )
    assert reply.config.p4_device_config
