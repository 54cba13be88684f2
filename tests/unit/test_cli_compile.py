"""``softswitch compile``: P4Info files in every format, IR output, errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import json_format, text_format

from softswitch.cli import build_parser, load_program, main
from softswitch.p4info import build_p4info

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
#include "extra.p4"

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.eth); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action set_port(bit<9> port) { s.egress_spec = port; }
    table fwd {
        key = { h.eth.dst : exact; }
        actions = { set_port; }
        size = TABLE_SIZE;
    }
#ifdef WITH_ACL
    table acl { key = { h.eth.etype : ternary; } actions = { set_port; } }
#endif
    apply {
        fwd.apply();
#ifdef WITH_ACL
        acl.apply();
#endif
    }
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control VC(inout H h, inout M m) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "extra.p4").write_text("#define TABLE_SIZE 4096\n")
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM)
    return path


def _args(program: Path, *extra: str) -> list[str]:
    return ["compile", str(program), "-I", str(program.parent / "inc"), *extra]


def test_text_p4info_round_trip(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "prog.p4info.txtpb"
    assert main(_args(program, "--p4info", str(out))) == 0
    text = out.read_text()
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n")
    parsed = text_format.Parse(text, p4info_pb2.P4Info())
    expected = build_p4info(load_program(str(program), [str(program.parent / "inc")]))
    assert parsed == expected
    assert [t.preamble.name for t in parsed.tables] == ["I.fwd"]
    assert parsed.tables[0].size == 4096  # the macro from the -I include


def test_define_changes_the_program(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "p4info.txt"
    assert main(_args(program, "-D", "WITH_ACL", "--p4info", str(out))) == 0
    parsed = text_format.Parse(out.read_text(), p4info_pb2.P4Info())
    assert [t.preamble.name for t in parsed.tables] == ["I.fwd", "I.acl"]


def test_binary_and_json_formats(program: Path, tmp_path: Path) -> None:
    binary, as_json = tmp_path / "p4info.bin", tmp_path / "p4info.json"
    assert main(_args(program, "--p4info", str(binary))) == 0
    assert main(_args(program, "--p4info", str(as_json))) == 0
    from_bin = p4info_pb2.P4Info.FromString(binary.read_bytes())
    from_json = json_format.Parse(as_json.read_text(), p4info_pb2.P4Info())
    assert from_bin == from_json
    assert json.loads(as_json.read_text())["tables"][0]["preamble"]["name"] == "I.fwd"


def test_ir_output(program: Path, tmp_path: Path) -> None:
    out = tmp_path / "prog.ir.json"
    assert main(_args(program, "--ir", str(out))) == 0
    assert json.loads(out.read_text())  # a JSON document (its schema belongs to ir/serialize)


def test_p4_error_is_reported_without_traceback(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol c( { }\n")
    assert main(["compile", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "error:" in err
    assert "Traceback" not in err


def test_missing_file_and_bad_suffix(program: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(tmp_path / "nope.p4")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["compile", str(tmp_path / ("y" * 300 + ".p4"))]) == 1
    assert "File name too long" in capsys.readouterr().err
    out = tmp_path / "p4info.yaml"
    assert main(_args(program, "--p4info", str(out))) == 1
    assert "unknown P4Info file kind" in capsys.readouterr().err
    assert not out.exists()


def test_parser_has_compile_subcommand() -> None:
    args = build_parser().parse_args(["compile", "x.p4", "-I", "a", "-I", "b", "-D", "X=2"])
    assert args.include_dirs == ["a", "b"] and args.defines == ["X=2"]
    assert args.handler.__name__ == "cmd_compile"


def test_p4c_command_lines(program: Path, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """p4c's and p4c-bm2-ss's command lines run unchanged: -o folder or file, P4Info files."""
    build = tmp_path / "build"
    files = f"{build}/prog.p4info.txtpb,{build}/prog.p4info.json"
    build.mkdir()
    assert main(_args(program, "--target", "bmv2", "--arch", "v1model", "--std", "p4-16",
                      "--p4runtime-files", files, "-o", str(build))) == 0
    assert json.loads((build / "prog.json").read_text())        # <stem>.json in the folder
    text = text_format.Parse((build / "prog.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    as_json = json_format.Parse((build / "prog.p4info.json").read_text(), p4info_pb2.P4Info())
    assert text == as_json and [t.preamble.name for t in text.tables] == ["I.fwd"]

    old = tmp_path / "old.bin"
    assert main(_args(program, "--p4v", "16", "--p4runtime-file", str(old),
                      "--p4runtime-format", "binary", "-o", str(tmp_path / "x.json"))) == 0
    assert p4info_pb2.P4Info.FromString(old.read_bytes()) == text
    assert (tmp_path / "x.json").is_file()

    assert main(_args(program, "--target", "dpdk", "-o", str(tmp_path / "t.json"))) == 1
    assert "--target dpdk: softswitch compiles for bmv2 / tofino only" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
    # a v1model program for --target tofino (bf-p4c's tna): the include says otherwise
    assert main(_args(program, "--target", "tofino", "-o", str(tmp_path / "t.json"))) == 1
    assert "includes v1model.p4, but the architecture is tna" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()
