"""Push and reconciliation against real softswitch P4Runtime servers (gRPC on 127.0.0.1).

Each switch here is a softswitch Device behind its own P4RuntimeServer, started with no program
(as `simple_switch_grpc --no-p4`), so the push installs the pipeline too. What the switches
hold is read back with the synchronous `p4rt` client, independently of the pusher's own reads.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from finsy.proto import p4r

from controller.devices.push import Progress, push
from controller.devices.reconcile import diff, to_table_entry
from controller.devices.session import Program
from controller.plan.entries import PlannedEntry
from controller.topology.model import Endpoint, Switch, Tier, Topology
from p4rt import P4RuntimeRpcError, SwitchConnection, TableEntry
from softswitch.runtime.device import Device
from softswitch.runtime.server.server import P4RuntimeServer

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
BLOCK = 0xFCBB_BBBB << 96
CPU_PORT = 255


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.compile(PROGRAM)


@dataclass
class Server:
    """A softswitch with a P4Runtime server; `restart` = a fresh device on the same port."""

    device: Device
    server: P4RuntimeServer
    device_id: int

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    @classmethod
    def start(cls, device_id: int, port: int = 0) -> Server:
        device = Device(device_id, cpu_port=CPU_PORT, priority_queues=8)
        server = P4RuntimeServer(device, f"127.0.0.1:{port}")
        server.start()
        return cls(device, server, device_id)

    def stop(self) -> None:
        self.server.stop(0)

    def restart(self) -> Server:
        port = self.server.port
        self.stop()
        return Server.start(self.device_id, port)


def usid(switch: Switch) -> int:
    return (switch.plane + 1) << 12 | (0x800 if switch.tier == Tier.T1 else 0) | switch.index


def small_plan(topology: Topology) -> dict[str, list[PlannedEntry]]:
    """A hand-made static plan in the shape of p4src/README.md's API (independent of
    controller/plan): SID block, own uN, neighbour /48 routes, the /32 drop, port roles."""
    plan: dict[str, list[PlannedEntry]] = {}
    for switch in topology.switches:
        me = usid(switch)
        entries = [
            PlannedEntry.make("sid_block", {"dst_addr": (BLOCK, 32)}, "in_sid_block"),
            PlannedEntry.make("route_v6", {"dst_addr": (BLOCK, 32)}, "drop"),
            PlannedEntry.make("my_sid", {"dst_addr": (BLOCK | me << 80, 48)}, "usid_un"),
            PlannedEntry.default("hop_limit_policy", "punt_hop_limit"),
        ]
        for port, peer, _ in topology.neighbors(switch.name):
            entries.append(PlannedEntry.make("port_role", {"port": port}, "set_port_role",
                                             {"role": 2}))
            entries.append(PlannedEntry.make("egress_port_role", {"port": port},
                                             "set_egress_port_role", {"role": 2}))
            other = topology.switch(peer)
            entries.append(PlannedEntry.make(
                "route_v6", {"dst_addr": (BLOCK | usid(other) << 80, 48)}, "forward",
                {"port": port, "smac": 0x0200_0000_0000 | me, "dmac": 0x0200_0000_0000 | usid(other)}))
        plan[switch.name] = entries
    return plan


def topology_on(servers: dict[str, Server], election: tuple[int, int] = (0, 1)) -> Topology:
    """One plane: T0 0 up to T1 0 (port 2 ↔ 0) and T1 1 (port 3 ↔ 0)."""
    def sw(name: str, tier: Tier, index: int) -> Switch:
        srv = servers[name]
        return Switch(name, tier, 0, index, Endpoint(srv.address, srv.device_id, election))

    from controller.topology.model import Link
    return Topology("push-test", 1, 4, "fcbb:bbbb::/32",
                    switches=[sw("t0", Tier.T0, 0), sw("t1a", Tier.T1, 0),
                              sw("t1b", Tier.T1, 1)],
                    links=[Link("t0", 2, "t1a", 0), Link("t0", 3, "t1b", 0)])


@pytest.fixture
def servers() -> Iterator[dict[str, Server]]:
    started = {name: Server.start(i + 1) for i, name in enumerate(("t0", "t1a", "t1b"))}
    yield started
    for srv in started.values():
        srv.stop()


def serialized(entities: list[p4r.Entity]) -> list[bytes]:
    return sorted(entity.SerializeToString(deterministic=True) for entity in entities)


def read_back(server: Server, program: Program) -> tuple[list[p4r.Entity], p4r.Entity]:
    """(every table entry, hop_limit_policy's default entry) as the switch returns them."""
    # No stream: reads need no arbitration, and an arbitration with the controller's election
    # id could race the server's noticing that the push's stream closed (ALREADY_EXISTS).
    conn = SwitchConnection(server.address, server.device_id, schema=program.schema)
    try:
        entries = list(conn.read_raw(p4r.TableEntry()))
        default = list(conn.read_raw(TableEntry(program.schema, "hop_limit_policy").as_default()))
    finally:
        conn.close()
    return entries, default[0]


def expected(program: Program, entries: list[PlannedEntry]) -> list[bytes]:
    return serialized([to_table_entry(program.schema, e).to_entity()
                       for e in entries if not e.is_default])


def test_push_installs_every_planned_entry(servers: dict[str, Server], program: Program) -> None:
    topo = topology_on(servers)
    plan = small_plan(topo)
    report = push(topo, plan, program)
    assert report.ok, report.summary()
    assert report.exit_code == 0
    for name, srv in servers.items():
        sw = report.switch(name)
        assert sw.pipeline_pushed
        assert sw.inserted == len(plan[name]) - 1 and sw.modified == 1 and sw.deleted == 0
        entries, default = read_back(srv, program)
        assert serialized(entries) == expected(program, plan[name])
        action = program.schema.action(default.table_entry.action.action.action_id)
        assert action.preamble.name == "punt_hop_limit"


def test_second_push_writes_nothing(servers: dict[str, Server], program: Program) -> None:
    topo = topology_on(servers)
    plan = small_plan(topo)
    assert push(topo, plan, program).ok
    before = {name: serialized(read_back(srv, program)[0]) for name, srv in servers.items()}
    again = push(topo, plan, program)
    assert again.ok and again.written == 0
    for name, srv in servers.items():
        sw = again.switch(name)
        assert not sw.pipeline_pushed
        assert sw.unchanged == len(plan[name])
        assert serialized(read_back(srv, program)[0]) == before[name]


def test_restarted_switch_is_repaired(servers: dict[str, Server], program: Program) -> None:
    topo = topology_on(servers)
    plan = small_plan(topo)
    assert push(topo, plan, program).ok
    servers["t1a"] = servers["t1a"].restart()  # same port, empty device, no pipeline
    report = push(topo, plan, program)
    assert report.ok, report.summary()
    repaired = report.switch("t1a")
    assert repaired.pipeline_pushed and repaired.inserted == len(plan["t1a"]) - 1
    for name in ("t0", "t1b"):
        assert report.switch(name).written == 0 and not report.switch(name).pipeline_pushed
    assert serialized(read_back(servers["t1a"], program)[0]) == expected(program, plan["t1a"])


def test_reconcile_writes_only_the_difference(servers: dict[str, Server],
                                              program: Program) -> None:
    """Missing entries inserted, a changed one modified, a stale one deleted, the rest kept."""
    topo = topology_on(servers)
    plan = small_plan(topo)
    assert push(topo, plan, program).ok
    srv = servers["t0"]
    schema = program.schema
    mine = plan["t0"]
    routes = [e for e in mine if e.table == "route_v6" and e.action == "forward"]
    with SwitchConnection(srv.address, srv.device_id, election_id=(0, 1), schema=schema) as conn:
        conn.delete([to_table_entry(schema, routes[0])])
        changed = replace(routes[1], params=(("dmac", 0x0A), ("port", 9), ("smac", 0x0B)))
        conn.modify([to_table_entry(schema, changed)])
        stale = PlannedEntry.make("my_sid", {"dst_addr": (BLOCK | 0x7777 << 80, 48)}, "usid_un")
        conn.insert([to_table_entry(schema, stale)])
    report = push(topo, plan, program)
    t0 = report.switch("t0")
    assert (t0.inserted, t0.modified, t0.deleted) == (1, 1, 1), t0.line()
    assert t0.unchanged == len(mine) - 2
    assert serialized(read_back(srv, program)[0]) == expected(program, mine)


def test_diff_sees_equal_entries_written_differently(program: Program) -> None:
    """Bits beyond the prefix and field names by suffix do not make an entry look changed."""
    schema = program.schema
    planned = [PlannedEntry.make("route_v6", {"dst_addr": (BLOCK | 0x1001 << 80 | 0xFFFF, 48)},
                                 "forward", {"port": 1, "smac": 2, "dmac": 3})]
    written = to_table_entry(schema, planned[0]).to_entity()
    assert diff(schema, planned, [written]).writes == 0
    clash = [*planned, replace(planned[0], params=(("dmac", 4), ("port", 1), ("smac", 2)))]
    with pytest.raises(ValueError, match="two entries for one key"):
        diff(schema, clash, [])


def test_fresh_switch_writes_a_repeated_entry_once(servers: dict[str, Server],
                                                   program: Program) -> None:
    """A new switch takes the streamed inserts (reconcile.fresh_phases): an entry planned
    twice, once written differently (bits beyond its prefix), is written once."""
    topo = topology_on(servers)
    plan = small_plan(topo)
    route = next(e for e in plan["t0"] if e.action == "forward")
    value, plen = route.match[0][1]
    plan["t0"] += [route, replace(route, match=(("dst_addr", (value | 0xFF, plen)),))]
    report = push(topo, plan, program, batch_size=2)
    assert report.ok, report.summary()
    t0 = report.switch("t0")
    assert t0.inserted == len(plan["t0"]) - 3 and t0.modified == 1
    assert serialized(read_back(servers["t0"], program)[0]) == expected(program,
                                                                        plan["t0"][:-2])


def test_plan_clash_on_a_fresh_switch_fails_and_a_fixed_plan_repairs(
        servers: dict[str, Server], program: Program) -> None:
    """Two planned entries for one key with different actions: the push of that switch
    fails naming both (found while streaming, after some requests may have gone), the
    others are pushed; the fixed plan's push leaves the switch exactly as planned."""
    topo = topology_on(servers)
    plan = small_plan(topo)
    good = list(plan["t0"])
    route = next(e for e in good if e.action == "forward")
    plan["t0"] = [*good, replace(route, params=(("dmac", 9), ("port", 1), ("smac", 9)))]
    report = push(topo, plan, program, batch_size=2)
    t0 = report.switch("t0")
    assert t0.status == "failed" and not report.ok
    assert "two entries for one key" in t0.errors[0] and "0x9" in t0.errors[0]
    assert report.switch("t1a").ok and report.switch("t1b").ok
    plan["t0"] = good
    again = push(topo, plan, program)
    assert again.ok, again.summary()
    assert again.switch("t0").deleted == 0
    assert serialized(read_back(servers["t0"], program)[0]) == expected(program, good)


def test_backup_controller_is_refused(servers: dict[str, Server], program: Program) -> None:
    """Another controller holds a higher election id: this one is a backup and writes nothing."""
    topo = topology_on(servers, election=(0, 5))
    plan = small_plan(topo)
    srv = servers["t1b"]
    with SwitchConnection(srv.address, srv.device_id, election_id=(0, 10)) as other:
        assert other.is_primary
        report = push(topo, plan, program)
    assert not report.ok and report.exit_code == 1
    refused = report.switch("t1b")
    assert refused.status == "backup" and refused.written == 0
    assert "backup" in refused.errors[0] and "0,10" in refused.errors[0]
    assert report.switch("t0").ok and report.switch("t1a").ok
    with (SwitchConnection(srv.address, srv.device_id, election_id=(0, 1)) as conn,
          pytest.raises(P4RuntimeRpcError, match="FAILED_PRECONDITION")):
        conn.get_pipeline()  # nothing was pushed to the refused switch


def test_switch_down_fails_alone(servers: dict[str, Server], program: Program) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    dead_port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    topo = topology_on(servers)
    plan = small_plan(topo)
    dead = replace(topo.switch("t1b"),
                   endpoint=Endpoint(f"127.0.0.1:{dead_port}", 3, (0, 1)))
    topo = replace(topo, switches=[topo.switch("t0"), topo.switch("t1a"), dead])
    report = push(topo, plan, program, connect_timeout=0.5)
    assert report.exit_code == 1
    assert report.switch("t1b").status == "failed"
    assert "no P4Runtime server answers" in report.switch("t1b").errors[0]
    assert report.switch("t0").ok and report.switch("t1a").ok
    assert "error: t1b:" in report.summary()


def test_progress_lines_when_not_a_tty(servers: dict[str, Server], program: Program) -> None:
    import io

    topo = topology_on(servers)
    out = io.StringIO()
    report = push(topo, small_plan(topo), program, progress=Progress(3, out))
    assert report.ok
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and all(line.startswith("push: [") for line in lines)


def test_a_role_config_is_sent_and_scopes_what_the_push_may_write(
        servers: dict[str, Server], program: Program) -> None:
    from p4rt.role_config import RoleConfig

    topo = topology_on(servers)
    plan = small_plan(topo)
    tables = sorted({e.table for entries in plan.values() for e in entries})

    def scoped(config: RoleConfig) -> Topology:
        return replace(topo, switches=[replace(s, endpoint=replace(
            s.endpoint, role="fabric", role_config=config)) for s in topo.switches])

    narrow = RoleConfig(exclusive=tuple(t for t in tables if t != "route_v6"),
                        can_push_pipeline=True)
    report = push(scoped(narrow), plan, program)
    assert not report.ok
    errors = report.switch("t0").errors
    route_entries = sum(e.table == "route_v6" and not e.is_default for e in plan["t0"])
    assert len(errors) == route_entries and all("not in its role config" in e for e in errors)
    assert push(scoped(RoleConfig(exclusive=tuple(tables), can_push_pipeline=True)),
                plan, program).ok
    unknown = push(scoped(RoleConfig(exclusive=("no_such_table",))), plan, program)
    assert "no_such_table" in unknown.switch("t0").errors[0]
