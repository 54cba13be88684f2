"""The trim clone sessions of TNA switches: planned per trimming port (controller/plan), pushed
only to Tofino switches, as the difference (controller/devices/trim_sessions.py).

The push runs against a softswitch P4Runtime server standing in for a Tofino switch: its target
says tofino-stratum, and the pipeline pushed is the TNA switch (p4src/switch/tna/).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from plan_fixtures import clos

from controller.devices.push import push
from controller.devices.session import Program
from controller.plan.plan import FabricPlan
from controller.plan.switch_plan import TRIM_MIRROR_BYTES, TRIM_SESSION_BASE, TrimSession
from controller.topology.model import Endpoint, PortRole, Topology
from p4rt import CloneSessionEntry, SwitchConnection
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
TNA_PROGRAM = ROOT / "p4src" / "switch" / "tna" / "srv6_switch.p4"


def test_one_session_per_trimming_port() -> None:
    topology = clos(planes=1, radix=4)
    topology = replace(topology, port_roles={("p0-t0-00", 2): PortRole.EXTERNAL})
    plan = FabricPlan(topology)
    sessions = plan.trim_sessions("p0-t0-00")
    length = topology.qos.trim_bytes + TRIM_MIRROR_BYTES
    # ports 0, 1: NICs (HOST), 2, 3: T1s (FABRIC), but 2 made EXTERNAL: no trim_config, no session
    assert sessions == [
        TrimSession(TRIM_SESSION_BASE + port, port, 7, length) for port in (0, 1, 3)
    ]
    trimming = sorted(e.match[0][1] for e in plan.switch("p0-t0-00") if e.table == "trim_config")
    assert trimming == [s.port for s in sessions]


def test_tofino_thresholds_are_in_cells() -> None:
    """Tofino's enq_qdepth counts 80-byte cells: a Tofino switch's thresholds are the
    topology's packet counts times qos.tofino_cells_per_packet; a BMv2 switch's stay packets."""
    topology = clos(planes=1, radix=4)
    tofino = [replace(sw, target="tofino-stratum") if sw.name == "p0-t0-00" else sw
              for sw in topology.switches]
    plan = FabricPlan(replace(topology, switches=tofino))
    qos = topology.qos

    def thresholds(name: str, table: str) -> set[int]:
        return {dict(e.params)["threshold"] for e in plan.switch(name) if e.table == table}

    cells = qos.tofino_cells_per_packet
    assert thresholds("p0-t0-00", "trim_config") == {qos.trim_threshold * cells}
    assert thresholds("p0-t0-00", "ecn_config") == {qos.ecn_threshold * cells}
    assert thresholds("p0-t0-01", "trim_config") == {qos.trim_threshold}
    assert thresholds("p0-t0-01", "ecn_config") == {qos.ecn_threshold}


def _on(server: P4RuntimeServer, target: str) -> Topology:
    topology = clos(planes=1, radix=4)
    endpoint = Endpoint(f"127.0.0.1:{server.port}", 1)
    switches = [
        replace(s, endpoint=endpoint if s.name == "p0-t0-00" else None, target=target)
        for s in topology.switches
    ]
    return replace(topology, switches=switches)


def _sessions(server: P4RuntimeServer) -> list[CloneSessionEntry]:
    conn = SwitchConnection(f"127.0.0.1:{server.port}", 1)
    try:
        return sorted(
            (
                CloneSessionEntry.from_proto(e.packet_replication_engine_entry.clone_session_entry)
                for e in conn.read_raw(CloneSessionEntry())
            ),
            key=lambda c: c.session_id,
        )
    finally:
        conn.close()


def _fields(clone: CloneSessionEntry) -> tuple[int, list[int], int, int]:
    return (
        clone.session_id,
        [r.port for r in clone.replicas],
        clone.class_of_service,
        clone.packet_length_bytes,
    )


def test_tofino_switches_get_their_sessions_once(server: P4RuntimeServer) -> None:
    program = Program.compile(TNA_PROGRAM)
    topology = _on(server, "tofino-stratum")
    plan = FabricPlan(topology)
    wanted = plan.trim_sessions("p0-t0-00")
    report = push(
        topology, plan, program, switches=["p0-t0-00"], targets={"tofino-stratum": program}
    )
    assert report.ok, report.summary()
    assert [_fields(c) for c in _sessions(server)] == [
        (t.session_id, [t.port], t.class_of_service, t.packet_length_bytes) for t in wanted
    ]
    again = push(
        topology, plan, program, switches=["p0-t0-00"], targets={"tofino-stratum": program}
    )
    assert again.ok and again.written == 0, again.summary()
    # a changed trim length: a MODIFY of each port's trim_config entry and of its session
    longer = FabricPlan(replace(topology, qos=replace(topology.qos, trim_bytes=200)))
    third = push(
        topology, longer, program, switches=["p0-t0-00"], targets={"tofino-stratum": program}
    )
    assert third.ok and third.switch("p0-t0-00").modified == 2 * len(wanted), third.summary()
    assert {c.packet_length_bytes for c in _sessions(server)} == {200 + TRIM_MIRROR_BYTES}


def test_bmv2_switches_get_none(server: P4RuntimeServer) -> None:
    program = Program.compile(PROGRAM)
    topology = _on(server, "bmv2")
    report = push(topology, FabricPlan(topology), program, switches=["p0-t0-00"])
    assert report.ok, report.summary()
    assert _sessions(server) == []
