"""`mrc-ctl run` keeps clone sessions as `push` does: a Tofino switch's trim sessions and a NIC's
SACK/NACK sessions, cut to the TNA NIC's mirror length on a Tofino NIC
(controller/daemon/controller.py, keeper.py, controller/devices/trim_sessions.py).

Softswitch P4Runtime servers stand in for the devices: the TNA programs (p4src/*/tna/) for
Tofino ones, the v1model programs for BMv2 ones. Switches the test does not look at get an
endpoint nobody listens on: their keepers stay down, which the others do not wait for.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
from plan_fixtures import clos

from controller.daemon.controller import Controller, DaemonConfig, NicSpec
from controller.daemon.keeper import DeviceKeeper
from controller.devices.session import Program
from controller.plan.nic_plan import (
    FEEDBACK_PRIORITY,
    NIC_HOST_SESSION,
    SACK_SESSION_BASE,
    TNA_FB_SESSION_BYTES,
)
from controller.topology.model import Endpoint, Topology
from p4rt import CloneSessionEntry, SwitchConnection
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]
SWITCH = {
    "bmv2": ROOT / "p4src" / "switch" / "srv6_switch.p4",
    "tofino-stratum": ROOT / "p4src" / "switch" / "tna" / "srv6_switch.p4",
}
NIC = {
    "bmv2": ROOT / "p4src" / "nic" / "mrc_nic.p4",
    "tofino-stratum": ROOT / "p4src" / "nic" / "tna" / "mrc_nic.p4",
}
NOBODY = Endpoint("127.0.0.1:1", 1)  # refused at once
CONFIG = DaemonConfig(connect_timeout_s=0.5, retry_s=5.0)
_programs: dict[Path, Program] = {}


def _program(path: Path) -> Program:
    if path not in _programs:
        _programs[path] = Program.compile(path)
    return _programs[path]


def _fabric(switch: str, endpoint: Endpoint, target: str) -> Topology:
    topology = clos(planes=2, radix=4)
    switches = [
        replace(s, endpoint=endpoint if s.name == switch else NOBODY, target=target)
        for s in topology.switches
    ]
    return replace(topology, switches=switches)


def _ready(controller: Controller, name: str) -> DeviceKeeper:
    keeper = controller.keepers[name]
    deadline = time.monotonic() + 60
    while not keeper.ready:
        assert time.monotonic() < deadline, controller.states()
        controller.poll(time.monotonic())
        time.sleep(0.01)
    return keeper


def _sessions(server: P4RuntimeServer) -> list[tuple[int, list[int], int, int]]:
    conn = SwitchConnection(f"127.0.0.1:{server.port}", 1)
    try:
        clones = [
            CloneSessionEntry.from_proto(e.packet_replication_engine_entry.clone_session_entry)
            for e in conn.read_raw(CloneSessionEntry())
        ]
    finally:
        conn.close()
    return sorted(
        (c.session_id, [r.port for r in c.replicas], c.class_of_service, c.packet_length_bytes)
        for c in clones
    )


def test_run_keeps_a_tofino_switchs_trim_sessions(server: P4RuntimeServer) -> None:
    topology = _fabric("p0-t0-00", Endpoint(f"127.0.0.1:{server.port}", 1), "tofino-stratum")
    tna = {"tofino-stratum": _program(SWITCH["tofino-stratum"])}
    with Controller(topology, _program(SWITCH["bmv2"]), config=CONFIG, targets=tna) as controller:
        wanted = controller.plan.trim_sessions("p0-t0-00")
        assert wanted  # every connected port trims
        keeper = _ready(controller, "p0-t0-00")
        assert _sessions(server) == [
            (t.session_id, [t.port], t.class_of_service, t.packet_length_bytes) for t in wanted
        ]
        assert keeper.session is not None
        # Read back, nothing to write; then one session lost and one changed behind its back:
        # only those two are written.
        assert keeper.reconcile(keeper.session).written == 0
        first, second = wanted[0], wanted[1]
        keeper.session.write(
            [
                (3, CloneSessionEntry(first.session_id)),  # DELETE
                (2, CloneSessionEntry(second.session_id, [second.port], 7, 64)),
            ]
        )
        report = keeper.reconcile(keeper.session)
        assert (report.written, report.failed) == (2, 0)
        assert len(_sessions(server)) == len(wanted)
        assert {s[3] for s in _sessions(server)} == {first.packet_length_bytes}


def test_run_gives_a_bmv2_switch_no_trim_sessions(server: P4RuntimeServer) -> None:
    topology = _fabric("p0-t0-00", Endpoint(f"127.0.0.1:{server.port}", 1), "bmv2")
    with Controller(topology, _program(SWITCH["bmv2"]), config=CONFIG) as controller:
        _ready(controller, "p0-t0-00")
        assert _sessions(server) == []


@pytest.mark.parametrize("target", ["bmv2", "tofino-stratum"])
def test_a_nic_gets_its_architecture_s_sessions(server: P4RuntimeServer, target: str) -> None:
    """v1model: one session, the host's copy of a received packet (its SACK is the packet
    itself); TNA: the SACK/NACK mirror sessions, cut and in the control queue."""
    topology = _fabric("", NOBODY, "bmv2")
    nic = topology.nics[0]
    spec = NicSpec(Endpoint(f"127.0.0.1:{server.port}", 1), target=target)
    with Controller(
        topology, _program(SWITCH["bmv2"]), _program(NIC["bmv2"]), {nic.name: spec},
        config=CONFIG, nic_targets={"tofino-stratum": _program(NIC["tofino-stratum"])},
    ) as controller:
        _ready(controller, nic.name)
        planes = range(topology.planes)
        assert _sessions(server) == (
            [(NIC_HOST_SESSION, [1], 0, 0)] if target == "bmv2" else
            [(SACK_SESSION_BASE + p, [2 + p], FEEDBACK_PRIORITY, TNA_FB_SESSION_BYTES)
             for p in planes])


def test_the_nic_session_length_is_the_tna_nics_constant() -> None:
    text = (ROOT / "p4src" / "nic" / "tna" / "nic_arch.p4").read_text()
    found = re.search(r"const bit<32> FB_SESSION_BYTES = (\d+);", text)
    assert found is not None and int(found.group(1)) == TNA_FB_SESSION_BYTES


def test_the_nic_session_and_queue_are_the_nic_programs_constants() -> None:
    text = (ROOT / "p4src" / "nic" / "nic_types.p4").read_text()
    for name, value in (("NIC_HOST_SESSION", NIC_HOST_SESSION),
                        ("SACK_SESSION_BASE", SACK_SESSION_BASE),
                        ("NIC_FEEDBACK_PRIORITY", FEEDBACK_PRIORITY)):
        found = re.search(rf"const bit<\d+> {name} = (\d+);", text)
        assert found is not None and int(found.group(1)) == value, name
