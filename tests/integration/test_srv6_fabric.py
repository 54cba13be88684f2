"""The fabric switch in a small two-plane fabric: uSID shift-and-forward across T0 → T1 → T0.

Every switch runs `p4src/switch/srv6_switch.p4` in one in-process `Fabric`, has its own
P4Runtime server on 127.0.0.1 and is programmed through the `p4rt` client over gRPC, as a
controller programs simple_switch_grpc: the static uSID plan of p4src/README.md (my_sid /48 uN,
/48 routes to neighbours, NIC /48 and host routes, the block's /32 drop, port roles). A capture on
every wire checks the destination address, hop limit and MACs at every hop.

Topology, per plane p (switch names end in `.p<p>`):

    nicA.p ── 1 T0a 3 ── 1 T1a 2 ── 3 T0b 1 ── nicB.p
                    4 ── 1 T1b 2 ── 4

uSIDs carry the plane: `kind << 12 | plane << 8 | index`, kind 0xd = T0, 0xe = T1, 0xc = NIC.
Every kind nibble has a bit (0x4) that the block's low half 0xbbbb lacks, so a uN that masked
before shifting (the active uSID ORed into the block) is caught.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from p4rt import CounterEntry, DirectCounterEntry, Schema, SwitchConnection, TableEntry
from softswitch.compiler import load_program
from softswitch.fabric import Capture, Fabric

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
INCLUDE = ROOT / "p4src" / "include"

pytestmark = pytest.mark.skipif(not PROGRAM.is_file(),
                                reason=f"{PROGRAM.relative_to(ROOT)} is not written yet")

BLOCK = 0xFCBB_BBBB  # fcbb:bbbb::/32, the SID block (F3216)
PLANES = (0, 1)
HOST, FABRIC = 1, 2  # port roles (defines.p4)
DROP_NO_ROUTE = 7
DROP_REASONS = 16
CPU_PORT = 255
KIND_T0, KIND_T1, KIND_NIC = 0xD, 0xE, 0xC
DECAP_FUNCTION = 0xFE06  # a local uDT6 function on every T0: block:T0:fe06::/64 → end_dt6
START_HOP_LIMIT = 64



def udp_payload(frame: bytes) -> bytes:
    """The bytes after the UDP header, however scapy dissects them (a process that imported
    mrc_transport.wire reads UDP 4791 as MRC headers)."""
    return bytes(Ether(frame)[UDP].payload)

def usid(plane: int, kind: int, index: int) -> int:
    return kind << 12 | plane << 8 | index


def carrier(*usids: int) -> str:
    """The block followed by up to six uSIDs, End-of-Carrier (zeros) after them."""
    assert len(usids) <= 6
    value = BLOCK << 96
    for i, u in enumerate(usids):
        value |= u << (80 - 16 * i)
    return str(ipaddress.IPv6Address(value))


def prefix48(u: int) -> str:
    return f"{carrier(u)}/48"


def port_mac(switch: str, port: int) -> str:
    """A MAC per switch port, stable and unique within the fabric."""
    digest = sum(ord(c) * 31**i for i, c in enumerate(switch)) & 0xFFFFFF
    return "02:{:02x}:{:02x}:{:02x}:00:{:02x}".format(*digest.to_bytes(3, "big"), port)


@dataclass(frozen=True)
class Nic:
    name: str  # nicA.p0: NIC A's port on plane 0
    usid: int
    switch: str
    port: int
    address: str  # the NIC's own (inner) address, reached by decapsulated traffic
    mac: str


@dataclass
class Plan:
    """The fabric's static plan: switches and their uSIDs, links, NICs."""

    usids: dict[str, int] = field(default_factory=dict)
    links: list[tuple[str, int, str, int]] = field(default_factory=list)
    nics: dict[str, Nic] = field(default_factory=dict)

    def neighbours(self, switch: str) -> Iterator[tuple[int, str, int]]:
        """(local port, neighbour, neighbour's port) for every link of `switch`."""
        for a, a_port, b, b_port in self.links:
            if a == switch:
                yield a_port, b, b_port
            elif b == switch:
                yield b_port, a, a_port


def build_plan(planes: tuple[int, ...] = PLANES) -> Plan:
    plan = Plan()
    for p in planes:
        t0a, t0b, t1a, t1b = (f"{n}.p{p}" for n in ("T0a", "T0b", "T1a", "T1b"))
        plan.usids.update({t0a: usid(p, KIND_T0, 1), t0b: usid(p, KIND_T0, 2),
                           t1a: usid(p, KIND_T1, 1), t1b: usid(p, KIND_T1, 2)})
        plan.links += [(t0a, 3, t1a, 1), (t0a, 4, t1b, 1), (t0b, 3, t1a, 2), (t0b, 4, t1b, 2)]
        for letter, index, t0 in (("A", 1, t0a), ("B", 2, t0b)):
            name = f"nic{letter}.p{p}"
            plan.nics[name] = Nic(name, usid(p, KIND_NIC, index), t0, 1,
                                  f"2001:db8:{index:x}::1", f"02:00:00:00:{index:02x}:{p:02x}")
    return plan


# -- the controller: what it installs on each switch, over P4Runtime ----------------------------

def switch_entries(schema: Schema, plan: Plan, switch: str) -> list[TableEntry]:
    def entry(table: str, match: dict[str, object], action: str, **params: object) -> TableEntry:
        return TableEntry(schema, table, match=match).action(action, **params)

    entries = [entry("sid_block", {"dst_addr": f"{carrier()}/32"}, "in_sid_block"),
               entry("my_sid", {"dst_addr": prefix48(plan.usids[switch])}, "usid_un"),
               entry("route_v6", {"dst_addr": f"{carrier()}/32"}, "drop")]
    if switch.startswith("T0"):
        decap_sid = carrier(plan.usids[switch], DECAP_FUNCTION)
        entries.append(entry("my_sid", {"dst_addr": f"{decap_sid}/64"}, "end_dt6"))
    for port, peer, peer_port in plan.neighbours(switch):
        entries += [entry("port_role", {"port": port}, "set_port_role", role=FABRIC),
                    entry("egress_port_role", {"port": port}, "set_egress_port_role", role=FABRIC),
                    entry("route_v6", {"dst_addr": prefix48(plan.usids[peer])}, "forward",
                          port=port, smac=port_mac(switch, port), dmac=port_mac(peer, peer_port))]
    for nic in plan.nics.values():
        if nic.switch != switch:
            continue
        to_nic = {"port": nic.port, "smac": port_mac(switch, nic.port), "dmac": nic.mac}
        entries += [entry("port_role", {"port": nic.port}, "set_port_role", role=HOST),
                    entry("egress_port_role", {"port": nic.port}, "set_egress_port_role",
                          role=HOST),
                    entry("route_v6", {"dst_addr": prefix48(nic.usid)}, "forward", **to_nic),
                    entry("route_v6", {"dst_addr": f"{nic.address}/128"}, "forward", **to_nic)]
    return entries


@dataclass
class Fixture:
    fabric: Fabric
    plan: Plan
    conns: dict[str, SwitchConnection]


@pytest.fixture(scope="module")
def fab() -> Iterator[Fixture]:
    program = load_program(PROGRAM, [INCLUDE])
    plan = build_plan()
    fabric = Fabric()
    conns: dict[str, SwitchConnection] = {}
    try:
        for name in plan.usids:
            fabric.add_switch(name, program, grpc_address="127.0.0.1:0", cpu_port=CPU_PORT,
                              priority_queues=8)
        for link in plan.links:
            fabric.link(*link)
        for nic in plan.nics.values():
            fabric.add_host(nic.name, nic.switch, nic.port)
        for name in plan.usids:
            node = fabric.switch(name)
            conn = SwitchConnection(node.grpc_address, node.device.device_id, election_id=(0, 1))
            conn.connect()
            conn.get_pipeline()  # the switch already runs the program: adopt its P4Info
            conn.insert(switch_entries(conn.schema, plan, name))
            conns[name] = conn
        yield Fixture(fabric, plan, conns)
    finally:
        for conn in conns.values():
            conn.close()
        fabric.close()


@pytest.fixture
def capture(fab: Fixture) -> Iterator[Capture]:
    for host in fab.fabric.hosts:
        host.clear()
    cap = fab.fabric.capture()
    yield cap
    cap.detach()


# -- packets ------------------------------------------------------------------------------------

PAYLOAD = b"MRC-uSID-probe-" + bytes(range(32))


def nic_frame(plan: Plan, nic: str, dst: str, *, inner_dst: str | None = None) -> bytes:
    """What NIC `nic` puts on its wire: a uSID carrier to `dst`; with `inner_dst` an IPv6-in-
    IPv6 packet (decap form), else a plain UDP packet (the NIC's uSID in the carrier)."""
    n = plan.nics[nic]
    outer = Ether(src=n.mac, dst=port_mac(n.switch, n.port)) / IPv6(
        src=n.address, dst=dst, hlim=START_HOP_LIMIT, tc=0)
    inner = UDP(sport=49152, dport=4791) / Raw(PAYLOAD)
    if inner_dst is not None:
        inner = IPv6(src=n.address, dst=inner_dst, hlim=START_HOP_LIMIT) / inner
    return bytes(outer / inner)


@dataclass(frozen=True)
class Hop:
    sender: str
    receiver: str
    dst: str
    hlim: int
    smac: str
    dmac: str


def hops(cap: Capture) -> list[Hop]:
    out = []
    for d in cap.deliveries:
        eth = Ether(d.data)
        ip = eth[IPv6]
        out.append(Hop(d.sender, d.receiver or "-", ip.dst, ip.hlim, eth.src, eth.dst))
    return out


def expected_hops(plan: Plan, path: list[str], dsts: list[str]) -> list[Hop]:
    """The walk along `path` (NIC, switches..., NIC) with the destination on each wire (as many
    wires as `dsts` gives); the hop limit drops by one per switch; each switch rewrites the MACs
    to its port → the next node."""
    result = []
    for i, (sender, receiver) in enumerate(itertools.pairwise(path[:len(dsts) + 1])):
        if sender in plan.nics:
            nic = plan.nics[sender]
            smac, dmac = nic.mac, port_mac(nic.switch, nic.port)
        else:
            out_port, in_port = port_between(plan, sender, receiver)
            smac = port_mac(sender, out_port)
            dmac = plan.nics[receiver].mac if receiver in plan.nics else port_mac(receiver,
                                                                                   in_port)
        result.append(Hop(sender, receiver, dsts[i], START_HOP_LIMIT - i, smac, dmac))
    return result


def port_between(plan: Plan, a: str, b: str) -> tuple[int, int]:
    if b in plan.nics:
        return plan.nics[b].port, plan.nics[b].port
    for port, peer, peer_port in plan.neighbours(a):
        if peer == b:
            return port, peer_port
    raise AssertionError(f"{a} and {b} are not linked")


def read_counter(conn: SwitchConnection, counter: str, index: int) -> int:
    (entry,) = conn.read(CounterEntry(conn.schema, counter, index))
    return 0 if entry.data is None else entry.data.packet_count


def read_route_counter(conn: SwitchConnection, prefix: str) -> int:
    """Packets that hit the `route_v6` entry for `prefix` (its direct counter)."""
    assert conn.schema is not None
    table_entry = TableEntry(conn.schema, "route_v6", match={"dst_addr": prefix})
    (entry,) = conn.read(DirectCounterEntry(table_entry))
    return 0 if entry.data is None else entry.data.packet_count


# -- the tests ----------------------------------------------------------------------------------

@pytest.mark.parametrize("plane", PLANES)
@pytest.mark.parametrize(("src", "t1", "dst"), [("A", "T1a", "B"), ("A", "T1b", "B"),
                                                ("B", "T1a", "A")])
def test_usid_carrier_crosses_t0_t1_t0(fab: Fixture, capture: Capture, plane: int, src: str,
                                       t1: str, dst: str) -> None:
    plan = fab.plan
    s, d = plan.nics[f"nic{src}.p{plane}"], plan.nics[f"nic{dst}.p{plane}"]
    t0_src, t1_name, t0_dst = s.switch, f"{t1}.p{plane}", d.switch
    u = plan.usids
    fab.fabric.host(s.name).send(nic_frame(plan, s.name, carrier(
        u[t0_src], u[t1_name], u[t0_dst], d.usid)))
    fab.fabric.run_until_idle()

    path = [s.name, t0_src, t1_name, t0_dst, d.name]
    dsts = [carrier(u[t0_src], u[t1_name], u[t0_dst], d.usid),  # as the NIC built it
            carrier(u[t1_name], u[t0_dst], d.usid),              # after T0's shift
            carrier(u[t0_dst], d.usid),                          # after T1's shift
            carrier(d.usid)]                                     # after the last T0's shift
    assert hops(capture) == expected_hops(plan, path, dsts)
    (got,) = fab.fabric.host(d.name).received
    assert udp_payload(got) == PAYLOAD and Ether(got)[UDP].dport == 4791
    assert fab.fabric.host(s.name).received == []


@pytest.mark.parametrize("plane", PLANES)
@pytest.mark.parametrize("form", ["usd", "end_dt6"])
def test_decapsulation_at_the_last_t0(fab: Fixture, capture: Capture, plane: int,
                                      form: str) -> None:
    """USD (uN with the argument exhausted and an inner IPv6 header) or the T0's /64 uDT6 SID:
    the outer header goes, the inner destination is routed to the NIC's host route."""
    plan = fab.plan
    s, d = plan.nics[f"nicA.p{plane}"], plan.nics[f"nicB.p{plane}"]
    u = plan.usids
    t1 = f"T1a.p{plane}"
    last = (u[d.switch],) if form == "usd" else (u[d.switch], DECAP_FUNCTION)
    fab.fabric.host(s.name).send(nic_frame(plan, s.name, carrier(u[s.switch], u[t1], *last),
                                           inner_dst=d.address))
    fab.fabric.run_until_idle()

    path = [s.name, s.switch, t1, d.switch, d.name]
    dsts = [carrier(u[s.switch], u[t1], *last), carrier(u[t1], *last), carrier(*last)]
    assert hops(capture)[:3] == expected_hops(plan, path, dsts)
    last_hop = capture.deliveries[-1]
    assert (last_hop.sender, last_hop.receiver) == (d.switch, d.name)
    (got,) = fab.fabric.host(d.name).received
    eth = Ether(got)
    assert eth.type == 0x86DD and eth.dst == d.mac and eth.src == port_mac(d.switch, d.port)
    inner = eth[IPv6]
    assert (inner.src, inner.dst, inner.nh) == (s.address, d.address, 17)  # the outer is gone
    assert IPv6 not in inner.payload
    assert bytes(inner[UDP].payload) == PAYLOAD


@pytest.mark.parametrize("plane", PLANES)
@pytest.mark.parametrize("via_t1", [None, "T1a", "T1b"])
def test_loop_probes_return_to_the_sender(fab: Fixture, capture: Capture, plane: int,
                                          via_t1: str | None) -> None:
    """NIC → T0 → NIC, and NIC → T0 → T1 → T0 → NIC, both ending at the sending NIC."""
    plan = fab.plan
    nic = plan.nics[f"nicA.p{plane}"]
    u = plan.usids
    t0 = nic.switch
    if via_t1 is None:
        program = [u[t0], nic.usid]
        path = [nic.name, t0, nic.name]
    else:
        t1 = f"{via_t1}.p{plane}"
        program = [u[t0], u[t1], u[t0], nic.usid]
        path = [nic.name, t0, t1, t0, nic.name]
    fab.fabric.host(nic.name).send(nic_frame(plan, nic.name, carrier(*program)))
    fab.fabric.run_until_idle()

    dsts = [carrier(*program[i:]) for i in range(len(program))]
    assert hops(capture) == expected_hops(plan, path, dsts)
    (back,) = fab.fabric.host(nic.name).received
    assert Ether(back)[IPv6].dst == carrier(nic.usid) and udp_payload(back) == PAYLOAD


def test_unknown_t1_is_dropped_at_t0_and_counted(fab: Fixture, capture: Capture) -> None:
    """After T0's shift the destination names a T1 with no /48 route: the block's /32 drop
    entry takes it (DROP_NO_ROUTE, counted per ingress port), nothing leaves T0."""
    plan = fab.plan
    nic, other = plan.nics["nicA.p0"], plan.nics["nicB.p0"]
    u = plan.usids
    conn = fab.conns[nic.switch]
    index = nic.port * DROP_REASONS + DROP_NO_ROUTE
    before = read_counter(conn, "drop_counter", index)
    block_hits = read_route_counter(conn, f"{carrier()}/32")
    unknown_t1 = usid(0, KIND_T1, 9)
    fab.fabric.host(nic.name).send(nic_frame(plan, nic.name, carrier(
        u[nic.switch], unknown_t1, u[other.switch], other.usid)))
    fab.fabric.run_until_idle()

    assert [(d.sender, d.receiver) for d in capture.deliveries] == [(nic.name, nic.switch)]
    assert read_counter(conn, "drop_counter", index) == before + 1
    assert read_route_counter(conn, f"{carrier()}/32") == block_hits + 1  # the block's drop
    assert all(not h.received for h in fab.fabric.hosts)
