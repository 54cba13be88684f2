"""`mrc-ctl run` chooses each device's program by its target, as `mrc-ctl push` does: the v1model
programs for `bmv2` switches and NICs, the TNA programs of `--tofino-out` / `--tofino-nic-out`
for `tofino-*` ones, on the first push and on every re-push after a restart; a Tofino device
with no such option is refused, naming it, before anything is pushed.

Softswitch P4Runtime servers stand in for every device; the TNA folders are what `make tna`
writes without bf-p4c (`softswitch compile --arch tna`: p4info.txt + IR JSON). The controller
runs in virtual time (`poll(now_s)`); the only real-time waits are for gRPC's own threads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_tofino_config import compiler_output

from controller.cli import build_parser, main
from controller.daemon.command import build_controller
from controller.daemon.controller import Controller
from controller.devices.session import Program
from controller.devices.tofino_config import TofinoConfigError, pack
from p4rt import SwitchConnection
from p4rt.errors import P4RuntimeRpcError
from softswitch.cli import main as softswitch_main
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]
V1MODEL = {"switch": ROOT / "p4src/switch/srv6_switch.p4", "nic": ROOT / "p4src/nic/mrc_nic.p4"}
TNA = {"switch": ROOT / "p4src/switch/tna/srv6_switch.p4", "nic": ROOT / "p4src/nic/tna/mrc_nic.p4"}
PROFILE = ["--ev-count", "16", "--backups", "1", "--ev-min-active", "4"]
DEVICES = ("t0", "t1", "nic0", "nic1")   # t1 and nic1 are the Tofino ones


def _topology(ports: dict[str, int], t1_target: str = "tofino-stratum") -> str:
    def endpoint(name: str) -> str:
        return f'endpoint: {{grpc: "127.0.0.1:{ports[name]}", device_id: 1}}'

    return ("name: mixed\nplanes: 1\nradix: 4\nswitches:\n"
            f"  - {{name: t0, tier: T0, plane: 0, index: 0, {endpoint('t0')}}}\n"
            f"  - {{name: t1, tier: T1, plane: 0, index: 0, target: {t1_target}, "
            f"{endpoint('t1')}}}\n"
            "nics:\n  - {name: nic0, ports: [t0:0]}\n  - {name: nic1, ports: [t0:1]}\n"
            "links:\n  - [t0:2, t1:0]\n")


def _inventory(ports: dict[str, int], nic1_target: str = "tofino-stratum") -> str:
    return ("nics:\n"
            f"  nic0: {{grpc: '127.0.0.1:{ports['nic0']}', device_id: 1}}\n"
            f"  nic1: {{grpc: '127.0.0.1:{ports['nic1']}', device_id: 1, target: {nic1_target}}}\n"
            "connections: [[nic0, nic1]]\n")


def _serve(port: int = 0) -> P4RuntimeServer:
    """A blank softswitch (no pipeline) on 127.0.0.1:`port` (0: any free port)."""
    server = P4RuntimeServer(Device(1, cpu_port=255, priority_queues=8), f"127.0.0.1:{port}")
    server.start()
    return server


@pytest.fixture(scope="module")
def tna_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """out/tna/<prog>/ as `make tna` writes it with softswitch, for the switch and the NIC."""
    folders = {}
    for device, source in TNA.items():
        out = tmp_path_factory.mktemp(f"tna-{device}")
        assert softswitch_main(["compile", "--arch", "tna", str(source), "--p4info",
                                str(out / "p4info.txt"), "--ir",
                                str(out / f"{source.stem}.json")]) == 0
        folders[device] = out
    return folders


@pytest.fixture(scope="module")
def programs(tna_out: dict[str, Path]) -> dict[tuple[str, str], Program]:
    """(arch, device) -> the Program each device should end up running."""
    found = {("v1model", d): Program.compile(p) for d, p in V1MODEL.items()}
    for device, out in tna_out.items():
        found["tna", device] = Program.from_files(out / "p4info.txt",
                                                  out / f"{TNA[device].stem}.json")
    return found


@pytest.fixture
def servers() -> Iterator[dict[str, P4RuntimeServer]]:
    running = {name: _serve() for name in DEVICES}
    yield running
    for server in running.values():
        server.stop(0)


def _ports(servers: dict[str, P4RuntimeServer]) -> dict[str, int]:
    return {name: server.port for name, server in servers.items()}


def _args(tmp_path: Path, topology: str, *options: str, inventory: str | None = None) -> Any:
    path = tmp_path / "topology.yaml"
    path.write_text(topology)
    argv = ["run", str(path), "--state", str(tmp_path / "state"), "--connect-timeout", "5",
            *PROFILE, *options]
    if inventory is not None:
        (tmp_path / "nics.yaml").write_text(inventory)
        argv += ["--nics", str(tmp_path / "nics.yaml")]
    return build_parser().parse_args(argv)


class Clock:
    """Virtual seconds for the controller, a step per poll."""

    def __init__(self, step_s: float = 0.01) -> None:
        self.now_s = 0.0
        self.step_s = step_s

    def until(self, ctl: Controller, done: Callable[[], bool], what: str,
              seconds: float = 60.0) -> None:
        """Poll `ctl` until `done()`; between polls, wait for the connects and reconciles on
        its worker threads (real time, bounded by `seconds`)."""
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"not {what}: {ctl.states()}"
            ctl.poll(self.now_s)
            for keeper in ctl.keepers.values():
                keeper.wait(max(0.0, deadline - time.monotonic()))
            self.now_s += self.step_s


def _pipeline(server: P4RuntimeServer) -> Any:
    """The ForwardingPipelineConfig the device reports (P4Info, device config, cookie)."""
    conn = SwitchConnection(f"127.0.0.1:{server.port}", 1)
    try:
        return conn.get_pipeline()
    finally:
        conn.close()


def _runs(server: P4RuntimeServer, program: Program) -> bool:
    config = _pipeline(server)
    return (config.p4info == program.p4info and config.p4_device_config == program.device_config
            and config.cookie.cookie == program.cookie)


def _expected(programs: dict[tuple[str, str], Program]) -> dict[str, Program]:
    return {"t0": programs["v1model", "switch"], "t1": programs["tna", "switch"],
            "nic0": programs["v1model", "nic"], "nic1": programs["tna", "nic"]}


def test_the_programs_differ(programs: dict[tuple[str, str], Program]) -> None:
    """What the other tests tell apart really is different."""
    for device in ("switch", "nic"):
        v1, tna = programs["v1model", device], programs["tna", device]
        assert v1.p4info != tna.p4info and v1.cookie != tna.cookie
        assert b'"arch":"tna"' in tna.device_config and b'"arch":' not in v1.device_config[:200]


def test_run_pushes_each_device_its_targets_program_and_again_after_a_restart(
        tmp_path: Path, tna_out: dict[str, Path], programs: dict[tuple[str, str], Program],
        servers: dict[str, P4RuntimeServer]) -> None:
    ports = _ports(servers)
    args = _args(tmp_path, _topology(ports), "--tofino-out", str(tna_out["switch"]),
                 "--tofino-nic-out", str(tna_out["nic"]), inventory=_inventory(ports))
    ctl = build_controller(args)
    assert isinstance(ctl, Controller)
    expected = _expected(programs)
    clock = Clock()
    with ctl:
        clock.until(ctl, ctl.ready, "every device programmed")
        for name in DEVICES:
            sync = ctl.keepers[name].last_sync
            assert sync is not None and sync.pipeline_pushed and sync.failed == 0, name
            assert sync.written > 0, name
            assert _runs(servers[name], expected[name]), name
        # The Tofino switch's trim sessions went to the TNA program, which takes them.
        assert ctl.plan.trim_sessions("t1")
        # The Tofino switch and NIC restart blank on the same addresses: re-pushed with the TNA
        # programs again; the BMv2 devices keep theirs, untouched.
        syncs = {name: ctl.keepers[name].syncs for name in DEVICES}
        for name in ("t1", "nic1"):
            servers[name].stop(0)
        clock.until(ctl, lambda: not ctl.keepers["t1"].ready and not ctl.keepers["nic1"].ready,
                    "the restarts noticed")
        for name in ("t1", "nic1"):
            servers[name] = _serve(ports[name])
        clock.until(ctl, lambda: ctl.ready() and all(
            ctl.keepers[n].syncs > syncs[n] for n in ("t1", "nic1")), "re-programmed")
        for name in ("t1", "nic1"):
            sync = ctl.keepers[name].last_sync
            assert sync is not None and sync.pipeline_pushed and sync.failed == 0, name
            assert _runs(servers[name], expected[name]), name
        for name in ("t0", "nic0"):
            assert ctl.keepers[name].syncs == syncs[name]
            assert _runs(servers[name], expected[name]), name


def test_push_takes_the_same_tofino_out(tmp_path: Path, tna_out: dict[str, Path],
                                        programs: dict[tuple[str, str], Program],
                                        servers: dict[str, P4RuntimeServer],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(_topology(_ports(servers), "tofino-pi"))
    assert main(["push", str(path), "--tofino-out", str(tna_out["switch"])]) == 0
    assert "2 switch(es), 0 failed" in capsys.readouterr().out
    assert _runs(servers["t0"], programs["v1model", "switch"])
    assert _runs(servers["t1"], programs["tna", "switch"])


def _blank(server: P4RuntimeServer) -> bool:
    try:
        _pipeline(server)
    except P4RuntimeRpcError as error:
        return error.code == "FAILED_PRECONDITION"   # no pipeline set
    return False


@pytest.mark.parametrize(("options", "message"), [
    ([], "error: switch t1: target tofino-stratum: no device config for it (--tofino-out DIR"),
    (["--tofino-out", "SWITCH"],
     "error: NIC nic1: target tofino-stratum: no device config for it (--tofino-nic-out DIR"),
])
def test_a_tofino_device_without_its_option_is_refused_by_name_before_any_push(
        tmp_path: Path, tna_out: dict[str, Path], servers: dict[str, P4RuntimeServer],
        capsys: pytest.CaptureFixture[str], options: list[str], message: str) -> None:
    ports = _ports(servers)
    topology = tmp_path / "topology.yaml"
    topology.write_text(_topology(ports))
    (tmp_path / "nics.yaml").write_text(_inventory(ports))
    options = [str(tna_out["switch"]) if o == "SWITCH" else o for o in options]
    started = time.monotonic()
    assert main(["run", str(topology), "--nics", str(tmp_path / "nics.yaml"), "--seconds", "30",
                 "--state", str(tmp_path / "state"), *PROFILE, *options]) == 2
    assert time.monotonic() - started < 20   # refused, not run for --seconds
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert all(_blank(server) for server in servers.values())


def test_several_devices_missing_a_program_are_named_together(
        tmp_path: Path, programs: dict[tuple[str, str], Program]) -> None:
    from dataclasses import replace

    from plan_fixtures import clos

    topology = clos(planes=2, radix=4)
    topology = replace(topology, switches=[replace(s, target="tofino-pi")
                                           for s in topology.switches])
    with pytest.raises(ValueError, match=r"^switch p0-t0-00, p0-t0-01, p0-t0-02, p0-t0-03, "
                                         r"p0-t1-00 and 7 more: target tofino-pi: no device"):
        Controller(topology, programs["v1model", "switch"])


def test_run_packs_bf_p4c_output_per_target(tmp_path: Path) -> None:
    """With a bf-p4c output folder, a tofino-stratum switch gets Stratum's packing and a
    tofino-pi one PI's, as push sends them (no device needed to see what each would get)."""
    out = compiler_output(tmp_path / "out")
    (out / "p4info.txt").write_text("")   # an empty P4Info is a valid one
    topology = _topology({name: 1 for name in DEVICES}).replace(
        "index: 0, endpoint", "index: 0, target: tofino-pi, endpoint", 1)
    ctl = build_controller(_args(tmp_path, topology, "--tofino-out", str(out)))
    assert isinstance(ctl, Controller)
    with ctl:
        assert ctl.keepers["t0"].desired().program.device_config == pack(out, "pi")
        assert ctl.keepers["t1"].desired().program.device_config == pack(out, "stratum")


def test_a_v1model_ir_is_no_tofino_program(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from controller.devices.target_programs import tofino_programs

    out = tmp_path / "out"
    out.mkdir()
    assert softswitch_main(["compile", str(V1MODEL["switch"]), "--p4info",
                            str(out / "p4info.txt"), "--ir", str(out / "sw.json")]) == 0
    with pytest.raises(TofinoConfigError, match=r"sw\.json: the IR of a v1model program"):
        tofino_programs(out, None, ["tofino-stratum"])
    args = _args(tmp_path, _topology({name: 1 for name in DEVICES}), "--tofino-out", str(out))
    assert build_controller(args) == 2
    assert "the IR of a v1model program" in capsys.readouterr().err
