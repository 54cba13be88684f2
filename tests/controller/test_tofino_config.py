"""Tofino device configs: pack bf-p4c's output (Stratum's BfPipelineConfig, PI's legacy packing),
unpack it back, `mrc-ctl tofino-config`, the topology's `target` and push choosing by it."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.devices.session import Program
from controller.devices.target_programs import program_for
from controller.devices.tofino_config import (
    BfPipelineConfig,
    TofinoConfigError,
    TofinoPipeline,
    TofinoProgram,
    detect_format,
    pack,
    pack_pi,
    pack_stratum,
    read_output,
    unpack,
    write_output,
)
from controller.topology import yaml_io
from controller.topology.errors import TopologyError
from controller.topology.model import Switch, Tier
from p4rt.device_config import P4DeviceConfig

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
DATA_FILES = ("bfrt.json", "pipe/context.json", "pipe/tofino.bin")


def compiler_output(out: Path, *, name: str = "prog", absolute: bool = False,
                    pipelines: tuple[str, ...] = ("pipe",)) -> Path:
    """A synthetic bf-p4c output folder: random bytes where the real files would be."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "bfrt.json").write_bytes(b'{"schema_version": "1.0.0", "tables": []}' + os.urandom(64))
    base = f"{out}/" if absolute else ""
    entries = []
    for k, pipe in enumerate(pipelines):
        (out / pipe).mkdir(exist_ok=True)
        (out / pipe / "context.json").write_bytes(b'{"tables": []}' + os.urandom(200))
        (out / pipe / "tofino.bin").write_bytes(os.urandom(4096))
        entries.append({"p4_pipeline_name": pipe, "context": f"{base}{pipe}/context.json",
                        "config": f"{base}{pipe}/tofino.bin",
                        "pipe_scope": [0, 1, 2, 3] if len(pipelines) == 1 else [k],
                        "path": str(out)})
    conf = {"chip_list": [{"chip_family": "tofino", "instance": 0}], "instance": 0,
            "p4_devices": [{"device-id": 0, "p4_programs": [
                {"program-name": name, "bfrt-config": f"{base}bfrt.json",
                 "p4_pipelines": entries}]}]}
    (out / f"{name}.conf").write_text(json.dumps(conf, indent=2))
    return out


# --- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize("absolute", [False, True])
def test_stratum_round_trip_is_byte_identical(tmp_path: Path, absolute: bool) -> None:
    out = compiler_output(tmp_path / "out", absolute=absolute)
    data = pack(out, "stratum")
    assert detect_format(data) == "stratum"
    conf = write_output(unpack(data), tmp_path / "back")
    assert conf == tmp_path / "back" / "prog.conf"
    for name in DATA_FILES:
        assert (tmp_path / "back" / name).read_bytes() == (out / name).read_bytes(), name
    assert read_output(tmp_path / "back") == read_output(out)  # the .conf says the same
    assert pack(tmp_path / "back", "stratum") == data


def test_stratum_keeps_several_pipelines_and_their_scopes(tmp_path: Path) -> None:
    out = compiler_output(tmp_path / "out", pipelines=("pipe0", "pipe1"))
    program = unpack(pack(out, "stratum"))
    assert [(p.name, p.pipe_scope) for p in program.pipelines] == [("pipe0", (0,)),
                                                                   ("pipe1", (1,))]
    write_output(program, tmp_path / "back")
    for pipe in ("pipe0", "pipe1"):
        for file in ("context.json", "tofino.bin"):
            assert (tmp_path / "back" / pipe / file).read_bytes() == (out / pipe / file).read_bytes()


def test_pi_round_trip_is_byte_identical(tmp_path: Path) -> None:
    out = compiler_output(tmp_path / "out")
    data = pack(out, "pi")
    assert detect_format(data) == "pi"
    program = unpack(data)
    assert program.name == "prog" and program.bfrt == b""  # PI does not carry bfrt.json
    write_output(program, tmp_path / "back")
    for name in ("pipe/context.json", "pipe/tofino.bin"):
        assert (tmp_path / "back" / name).read_bytes() == (out / name).read_bytes(), name
    assert not (tmp_path / "back" / "bfrt.json").exists()


def test_relative_paths_also_resolve_against_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A .conf naming `out/pipe/...` from its parent folder, as when bf-p4c ran with -o out."""
    out = compiler_output(tmp_path / "out")
    conf = json.loads((out / "prog.conf").read_text())
    program = conf["p4_devices"][0]["p4_programs"][0]
    program["bfrt-config"] = "out/bfrt.json"
    for entry in program["p4_pipelines"]:
        entry["context"], entry["config"] = "out/pipe/context.json", "out/pipe/tofino.bin"
    (out / "prog.conf").write_text(json.dumps(conf))
    monkeypatch.chdir(tmp_path)
    assert read_output(out).pipelines[0].binary == (out / "pipe" / "tofino.bin").read_bytes()


# --- the bytes themselves -----------------------------------------------------------------------

TINY_PROGRAM = TofinoProgram("p", b"B", (TofinoPipeline("pipe", b"C", b"\x00\x01", (0, 1)),))


def test_stratum_bytes_match_the_wire_format_by_hand() -> None:
    profile = (b"\x0a\x04pipe"          # 1 profile_name
               + b"\x12\x01C"           # 2 context
               + b"\x1a\x02\x00\x01"    # 3 binary
               + b"\x22\x02\x00\x01")   # 4 pipe_scope, proto3 packed: [0, 1]
    expected = (b"\x0a\x01p"            # 1 p4_name
                + b"\x12\x01B"          # 2 bfruntime_info
                + b"\x1a" + bytes([len(profile)]) + profile)  # 3 profiles
    assert pack_stratum(TINY_PROGRAM) == expected
    assert BfPipelineConfig.FromString(expected).profiles[0].pipe_scope == [0, 1]


def test_pi_bytes_match_the_wire_format_by_hand() -> None:
    device_data = (struct.pack("<I", 1) + b"p" + struct.pack("<I", 2) + b"\x00\x01"
                   + struct.pack("<I", 1) + b"C")
    expected = b"\x08\x01" + b"\x1a" + bytes([len(device_data)]) + device_data
    assert pack_pi(TINY_PROGRAM) == expected
    assert P4DeviceConfig.FromString(expected).device_data == device_data


def test_pi_wrapper_without_reassign_is_still_recognised() -> None:
    data = P4DeviceConfig(device_data=P4DeviceConfig.FromString(
        pack_pi(TINY_PROGRAM)).device_data).SerializeToString()
    assert data[:1] == b"\x1a" and detect_format(data) == "pi"
    assert unpack(data).pipelines[0].binary == b"\x00\x01"


# --- errors -------------------------------------------------------------------------------------


def test_missing_conf(tmp_path: Path) -> None:
    with pytest.raises(TofinoConfigError, match=r"no \.conf file"):
        read_output(tmp_path)
    with pytest.raises(TofinoConfigError, match="no such bf-p4c output folder"):
        read_output(tmp_path / "nowhere")


def test_no_p4_programs(tmp_path: Path) -> None:
    (tmp_path / "prog.conf").write_text(json.dumps({"p4_devices": [{"device-id": 0}]}))
    with pytest.raises(TofinoConfigError, match=r"prog\.conf: p4_devices\[0\] has no p4_programs"):
        read_output(tmp_path)


def test_missing_field(tmp_path: Path) -> None:
    out = compiler_output(tmp_path / "out")
    conf = json.loads((out / "prog.conf").read_text())
    del conf["p4_devices"][0]["p4_programs"][0]["p4_pipelines"][0]["config"]
    (out / "prog.conf").write_text(json.dumps(conf))
    with pytest.raises(TofinoConfigError, match=r"prog\.conf: p4_pipelines\[0\] has no 'config'"):
        read_output(out)


def test_missing_referenced_file(tmp_path: Path) -> None:
    out = compiler_output(tmp_path / "out")
    (out / "pipe" / "context.json").unlink()
    with pytest.raises(TofinoConfigError,
                       match=r"prog\.conf: p4_pipelines\[0\]\.context names pipe/context\.json"):
        read_output(out)


def test_truncated_legacy_bytes() -> None:
    whole = P4DeviceConfig.FromString(pack_pi(TINY_PROGRAM)).device_data
    cut = P4DeviceConfig(reassign=True, device_data=whole[:-1]).SerializeToString()
    with pytest.raises(TofinoConfigError, match="truncated or bad lengths"):
        unpack(cut, "pi")


def test_unknown_format() -> None:
    with pytest.raises(TofinoConfigError, match="unknown format for p4_device_config"):
        unpack(b'{"program": "bmv2 json"}')
    with pytest.raises(TofinoConfigError, match="unknown format for p4_device_config"):
        unpack(b"\x0a\x05ab")  # a length past the end
    with pytest.raises(TofinoConfigError, match="unknown device config format 'xml'"):
        unpack(pack_stratum(TINY_PROGRAM), "xml")


def test_pi_holds_one_pipeline(tmp_path: Path) -> None:
    out = compiler_output(tmp_path / "out", pipelines=("pipe0", "pipe1"))
    with pytest.raises(TofinoConfigError, match="the PI format holds one pipeline"):
        pack(out, "pi")


# --- mrc-ctl tofino-config ----------------------------------------------------------------------


def test_cli_pack_and_unpack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = compiler_output(tmp_path / "out")
    for fmt in ("stratum", "pi"):
        blob = tmp_path / f"{fmt}.bin"
        assert main(["tofino-config", "pack", str(out), "-o", str(blob), "--format", fmt]) == 0
        assert blob.read_bytes() == pack(out, fmt)
        back = tmp_path / f"back-{fmt}"
        assert main(["tofino-config", "unpack", str(blob), "-o", str(back)]) == 0
        assert (back / "pipe" / "tofino.bin").read_bytes() == (out / "pipe/tofino.bin").read_bytes()
        assert f"({fmt})" in capsys.readouterr().out


def test_cli_errors_exit_1_without_traceback(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tofino-config", "pack", str(tmp_path), "-o", str(tmp_path / "x.bin")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no .conf file" in err and "Traceback" not in err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\xff\xff")
    assert main(["tofino-config", "unpack", str(junk), "-o", str(tmp_path / "u")]) == 1
    assert "unknown format" in capsys.readouterr().err
    assert main(["tofino-config", "unpack", str(tmp_path / "none.bin"), "-o", "u"]) == 1
    assert "none.bin" in capsys.readouterr().err


# --- the topology's target ----------------------------------------------------------------------

EXPLICIT = """\
name: t
planes: 1
radix: 4
switches:
  - {name: a, tier: T0, plane: 0, index: 0}
  - {name: b, tier: T1, plane: 0, index: 0, target: tofino-stratum}
  - {name: c, tier: T1, plane: 0, index: 1, target: TARGET}
nics:
  - {name: n0, ports: ["a:0"]}
links: []
"""


@pytest.mark.parametrize("target", ["bmv2", "tofino-stratum", "tofino-pi"])
def test_topology_target_values(target: str) -> None:
    topo = yaml_io.loads(EXPLICIT.replace("TARGET", target))
    assert [s.target for s in topo.switches] == ["bmv2", "tofino-stratum", target]
    assert yaml_io.loads(yaml_io.dumps(topo)).switches == topo.switches


def test_topology_bad_target_reports_its_line() -> None:
    with pytest.raises(TopologyError) as info:
        yaml_io.loads(EXPLICIT.replace("TARGET", "tofino3"), "t.yaml")
    assert str(info.value).startswith("t.yaml:7:")
    assert "switches[2].target: 'tofino3' is not one of: bmv2, tofino-stratum, tofino-pi" in str(
        info.value)


def test_clos_topology_target_override() -> None:
    text = ("name: c\nplanes: 1\nradix: 4\nwiring: clos\nnics: 2\n"
            "switches:\n  - {name: p0-t0-0, target: tofino-pi}\n")
    topo = yaml_io.loads(text)
    targets = {s.name: s.target for s in topo.switches}
    assert targets["p0-t0-0"] == "tofino-pi" and set(targets.values()) == {"bmv2", "tofino-pi"}
    assert topo.switches[0].endpoint is not None  # the rule's endpoint is kept
    assert yaml_io.loads(yaml_io.dumps(topo)).switches == topo.switches


# --- push picks the device config by target -----------------------------------------------------


def _program(config: bytes) -> Program:
    from finsy.proto import p4i

    return Program(p4i.P4Info(), config)


def test_program_for_target() -> None:
    bmv2, stratum = _program(b"{}"), _program(b"\x0a\x01p")
    switch = Switch("s", Tier.T0, 0, 0)
    assert program_for(switch, bmv2, {"tofino-stratum": stratum}) is bmv2
    tofino = Switch("s", Tier.T0, 0, 0, target="tofino-stratum")
    assert program_for(tofino, bmv2, {"tofino-stratum": stratum}) is stratum
    with pytest.raises(ValueError, match=r"target tofino-pi: no device config.*--tofino-out"):
        program_for(Switch("s", Tier.T0, 0, 0, target="tofino-pi"), bmv2, {})


@pytest.mark.skipif(not TINY.is_file(), reason="topologies/tiny.yaml not written yet")
def test_push_sends_the_packed_config_to_tofino_switches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = TINY.read_text().replace("{name: p0-t0-1, tier: T0, plane: 0, index: 1,",
                                    "{name: p0-t0-1, tier: T0, plane: 0, index: 1, "
                                    "target: tofino-pi,")
    assert "tofino-pi" in text
    topo_path = tmp_path / "tiny.yaml"
    topo_path.write_text(text)
    out = compiler_output(tmp_path / "out")
    p4info = tmp_path / "sw.p4info.txtpb"
    assert main(["push", str(topo_path), "--tofino-out", str(out)]) == 2  # no out/p4info.txt
    seen: dict[str, Any] = {}

    class Report:
        exit_code = 0

        def summary(self) -> str:
            return "pushed"

    def fake_push(topo: Any, plan: Any, program: Program, **kwargs: Any) -> Report:
        seen.update(kwargs["targets"])
        return Report()

    monkeypatch.setattr("controller.devices.push.push", fake_push)
    p4info.write_text("")  # an empty P4Info is a valid one
    assert main(["push", str(topo_path), "--tofino-out", str(out),
                 "--tofino-p4info", str(p4info)]) == 0
    assert set(seen) == {"tofino-pi"}
    assert seen["tofino-pi"].device_config == pack(out, "pi")


def test_fabric_up_runs_every_switch_as_bmv2() -> None:
    from controller.fabric_up import build_fabric

    topo = yaml_io.loads(EXPLICIT.replace("TARGET", "tofino-pi"))
    fabric, running = build_fabric(topo, ephemeral_ports=True)
    try:
        assert {s.target for s in running.switches} == {"bmv2"}
    finally:
        fabric.close()
