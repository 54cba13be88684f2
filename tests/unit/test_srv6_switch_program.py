"""The fabric switch program on the engine, feature by feature, on both architectures: the
v1model program (p4src/switch/srv6_switch.p4) and its TNA variant (p4src/switch/tna/).

Every check drives `Switch.process_packet` (or `run` with a queue depth for trimming and ECN)
with scapy-built packets and compares whole output packets, or drop counters by reason. What
differs by architecture is only how it counts (`counted`: Tofino's byte counts include the
FCS) and how the TNA switch trims (a mirror to the port's trim session, `trim_session`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from softswitch.compiler import compile_file
from softswitch.engine.switch import OutputPacket, QueueInfo, Switch
from softswitch.engine.tables import ExactMatch, LpmMatch
from softswitch.ir.checked import CheckedProgram

SWITCH = Path(__file__).resolve().parents[2] / "p4src" / "switch"
PROGRAMS = {"v1model": SWITCH / "srv6_switch.p4", "tna": SWITCH / "tna" / "srv6_switch.p4"}

HOST, FABRIC, EXTERNAL = 1, 2, 3
HOST_PORT, UP_PORT, DOWN_PORT, EXT_PORT = 1, 2, 3, 4
CPU_PORT = 255
DROP = {"TRUNCATED": 1, "SRH_TYPE": 2, "SRH_LENGTH": 3, "SRH_SEGMENTS_LEFT": 4,
        "SRH_TOO_LONG": 5, "HOP_LIMIT": 6, "NO_ROUTE": 7, "EXTERNAL_SR": 8, "SID_NO_NEXT": 9,
        "DECAP": 10, "NOT_IPV6": 11, "IP_VERSION": 12, "PACKET_OUT_PORT": 13}
BMV2_DROP_PORT = 511
SWITCH_MAC = 0x02_00_00_00_00_01
MAC_UP, MAC_DOWN, MAC_HOST, MAC_ADJ = (0x02_00_00_00_00_10, 0x02_00_00_00_00_20,
                                       0x02_00_00_00_00_30, 0x02_00_00_00_00_40)

MY_USID = 0x0001             # this switch (a T0)
UP_USID, DOWN_USID = 0x1001, 0x0002   # a T1 above, another T0 reached downwards
UA_USID = 0xFE11             # a local uA towards the adjacency on ADJ_PORT
ADJ_PORT = 5
NIC_ADDR = "2001:db8:1::b"   # host route of the attached NIC (after decapsulation)
# p4src/include/defines.p4: the TNA switch mirrors port P's trimmed copies to session 256 + P,
# whose truncation counts the 4-byte trim mirror header
TRIM_SESSION_BASE, TRIM_MIRROR_BYTES = 256, 4
FCS_BYTES = 4                # Tofino's byte counts include the Ethernet FCS


def a(text: str) -> int:
    return int(ipaddress.IPv6Address(text))


def usids(*ids: int) -> str:
    """A carrier in block fcbb:bbbb::/32 holding the given uSIDs, zero-filled."""
    words = [0xFCBB, 0xBBBB, *ids] + [0] * (6 - len(ids))
    return str(ipaddress.IPv6Address(int("".join(f"{w:04x}" for w in words), 16)))


def mac(value: int) -> str:
    return ":".join(f"{(value >> s) & 0xFF:02x}" for s in range(40, -8, -8))


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request: pytest.FixtureRequest) -> CheckedProgram:
    return compile_file(PROGRAMS[request.param])


@pytest.fixture
def sw(program: CheckedProgram) -> Switch:
    """A T0 with the README's baseline configuration."""
    s = Switch(program)
    s.set_queue_count(8)     # TNA: qids 0-7 are queues of their own (v1model: nothing to set)
    for port, role in ((HOST_PORT, HOST), (UP_PORT, FABRIC), (DOWN_PORT, FABRIC),
                       (ADJ_PORT, FABRIC), (EXT_PORT, EXTERNAL)):
        s.table("port_role").add_entry([ExactMatch(port)], "set_port_role", [role])
        s.table("egress_port_role").add_entry([ExactMatch(port)], "set_egress_port_role", [role])
    s.table("sid_block").add_entry([LpmMatch(a("fcbb:bbbb::"), 32)], "in_sid_block")
    s.table("my_sid").add_entry([LpmMatch(a(usids(MY_USID)), 48)], "usid_un")
    route = s.table("route_v6")
    route.add_entry([LpmMatch(a(usids(UP_USID)), 48)], "forward", [UP_PORT, SWITCH_MAC, MAC_UP])
    route.add_entry([LpmMatch(a(usids(DOWN_USID)), 48)], "forward",
                    [DOWN_PORT, SWITCH_MAC, MAC_DOWN])
    route.add_entry([LpmMatch(a(NIC_ADDR), 128)], "forward", [HOST_PORT, SWITCH_MAC, MAC_HOST])
    route.add_entry([LpmMatch(a("fcbb:bbbb::"), 32)], "drop")
    return s


def frame(dst: str, *, hlim: int = 64, tc: int = 0, inner: str | None = None,
          segments: Sequence[str] | None = None, segleft: int | None = None,
          payload: bytes = b"x" * 64) -> Packet:
    """Ether / IPv6 [/ SRH] [/ inner IPv6] / UDP(4791) / payload."""
    l4 = UDP(sport=1234, dport=4791) / Raw(payload)
    body: Packet = l4 if inner is None else IPv6(src="2001:db8:2::a", dst=inner, hlim=33) / l4
    if segments is not None:
        body = IPv6ExtHdrSegmentRouting(
            addresses=list(segments), segleft=len(segments) - 1 if segleft is None else segleft,
            lastentry=len(segments) - 1) / body
    return (Ether(src=mac(MAC_HOST), dst=mac(SWITCH_MAC)) /
            IPv6(src="2001:db8:2::a", dst=dst, hlim=hlim, tc=tc) / body)


def rewritten(pkt: Packet, port_mac: int, **outer: object) -> bytes:
    """The frame as the switch should send it: MACs, hop limit - 1, outer fields changed."""
    out = Ether(bytes(pkt))  # every length and checksum frozen: the switch recomputes none
    out[Ether].src, out[Ether].dst = mac(SWITCH_MAC), mac(port_mac)
    out[IPv6].hlim -= 1
    for field, value in outer.items():
        setattr(out[IPv6], field, value)
    return bytes(out)


def decapsulated(pkt: Packet) -> Packet:
    """The frame with its outer IPv6 header and SRH removed (the inner header as sent)."""
    return Ether(bytes(pkt)[:14]) / Ether(bytes(pkt)).getlayer(IPv6, 2)


def counted(sw: Switch, data: Packet | bytes) -> int:
    """The bytes an ingress counter adds for `data`: its length; on Tofino the FCS too."""
    return len(bytes(data)) + (FCS_BYTES if sw.arch == "tna" else 0)


def trim_session(sw: Switch, port: int, trim_bytes: int) -> None:
    """TNA: the trim session of `port` (the controller's plan installs it); v1model needs none."""
    if sw.arch == "tna":
        sid = TRIM_SESSION_BASE + port
        if sw.pre.has_clone_session(sid):
            sw.pre.delete_clone_session(sid)
        sw.pre.insert_clone_session(sid, [(port, 0)], 7, trim_bytes + TRIM_MIRROR_BYTES)


def send(sw: Switch, port: int, pkt: Packet | bytes) -> list[OutputPacket]:
    return sw.process_packet(port, bytes(pkt))


def drops(sw: Switch, port: int, reason: str) -> int:
    return sw.counter("drop_counter").read(port * 16 + DROP[reason])[0]


# --- uN -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("carrier", "shifted", "out_port", "out_mac"), [
    # first uSID of a 4-uSID carrier, up to the T1
    ((MY_USID, UP_USID, DOWN_USID, 0xB001), (UP_USID, DOWN_USID, 0xB001), UP_PORT, MAC_UP),
    # a middle position: more uSIDs behind
    ((MY_USID, DOWN_USID, 0xB001, 0xFE09, 0x1234), (DOWN_USID, 0xB001, 0xFE09, 0x1234),
     DOWN_PORT, MAC_DOWN),
    # the last position of a full carrier (6 uSIDs)
    ((MY_USID, UP_USID, 2, 3, 4, 5), (UP_USID, 2, 3, 4, 5), UP_PORT, MAC_UP),
    # the next uSID is the last one
    ((MY_USID, DOWN_USID), (DOWN_USID,), DOWN_PORT, MAC_DOWN),
])
def test_un_shifts_and_routes(sw: Switch, carrier: tuple[int, ...], shifted: tuple[int, ...],
                              out_port: int, out_mac: int) -> None:
    pkt = frame(usids(*carrier))
    assert send(sw, UP_PORT, pkt) == [(out_port, rewritten(pkt, out_mac, dst=usids(*shifted)))]
    assert sw.direct_counter("my_sid_counter") is not None


def test_un_shift_masks_after_shifting(sw: Switch) -> None:
    # uSID 0xffff after ours must not leak into the block when shifted.
    sw.table("route_v6").add_entry([LpmMatch(a(usids(0xFFFF)), 48)], "forward",
                                   [UP_PORT, SWITCH_MAC, MAC_UP])
    pkt = frame(usids(MY_USID, 0xFFFF, 0xABCD))
    assert send(sw, UP_PORT, pkt) == [(UP_PORT, rewritten(pkt, MAC_UP,
                                                          dst=usids(0xFFFF, 0xABCD)))]


def test_transit_is_routed_with_one_decrement(sw: Switch) -> None:
    pkt = frame(usids(UP_USID, DOWN_USID), hlim=2)
    assert send(sw, DOWN_PORT, pkt) == [(UP_PORT, rewritten(pkt, MAC_UP))]


def test_block_route_drops_unknown_usid(sw: Switch) -> None:
    assert send(sw, UP_PORT, frame(usids(MY_USID, 0x7777))) == []
    assert send(sw, UP_PORT, frame(usids(0x7777))) == []
    assert drops(sw, UP_PORT, "NO_ROUTE") == 2


def test_no_route_outside_block(sw: Switch) -> None:
    assert send(sw, HOST_PORT, frame("2001:db8:99::1")) == []
    assert drops(sw, HOST_PORT, "NO_ROUTE") == 1


# --- port roles and the SR domain --------------------------------------------------------

def test_external_port_drops_sid_block_and_srh(sw: Switch) -> None:
    assert send(sw, EXT_PORT, frame(usids(MY_USID, UP_USID))) == []
    assert send(sw, EXT_PORT, frame(NIC_ADDR, segments=[NIC_ADDR], segleft=0)) == []
    assert drops(sw, EXT_PORT, "EXTERNAL_SR") == 2
    # plain IPv6 from outside is routed
    pkt = frame(NIC_ADDR)
    assert send(sw, EXT_PORT, pkt) == [(HOST_PORT, rewritten(pkt, MAC_HOST))]


def test_unconfigured_port_is_external(sw: Switch) -> None:
    assert send(sw, 9, frame(usids(MY_USID, UP_USID))) == []
    assert drops(sw, 9, "EXTERNAL_SR") == 1


def test_host_and_fabric_ports_accept_sr(sw: Switch) -> None:
    for port in (HOST_PORT, UP_PORT):
        pkt = frame(usids(MY_USID, UP_USID))
        assert send(sw, port, pkt) == [(UP_PORT, rewritten(pkt, MAC_UP, dst=usids(UP_USID)))]


# --- uN with the argument exhausted: End on the SRH, then USD ------------------------------

@pytest.mark.parametrize("segleft", [1, 2, 3])
def test_un_exhausted_does_end_on_srh(sw: Switch, segleft: int) -> None:
    # segment list [0] = final; segments left points at the next carrier to visit
    segments = [usids(DOWN_USID, 0xB001), usids(UP_USID, 7), usids(UP_USID, 8),
                usids(MY_USID)][:segleft + 1]
    pkt = frame(usids(MY_USID), segments=segments, segleft=segleft, inner=NIC_ADDR)
    out = Ether(bytes(pkt))
    out[IPv6ExtHdrSegmentRouting].segleft = segleft - 1
    expected = rewritten(out, MAC_UP if segleft > 1 else MAC_DOWN, dst=segments[segleft - 1])
    assert send(sw, UP_PORT, pkt) == [(UP_PORT if segleft > 1 else DOWN_PORT, expected)]


def test_un_usd_decapsulates_and_routes_inner(sw: Switch) -> None:
    pkt = frame(usids(MY_USID), inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(HOST_PORT, rewritten(decapsulated(pkt), MAC_HOST))]


def test_un_usd_with_exhausted_srh(sw: Switch) -> None:
    pkt = frame(usids(MY_USID), segments=[usids(MY_USID)], segleft=0, inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(HOST_PORT, rewritten(decapsulated(pkt), MAC_HOST))]


def test_un_with_nothing_left_drops(sw: Switch) -> None:
    assert send(sw, UP_PORT, frame(usids(MY_USID))) == []
    assert send(sw, UP_PORT, frame(usids(MY_USID), segments=[usids(MY_USID)], segleft=0)) == []
    assert drops(sw, UP_PORT, "SID_NO_NEXT") == 2


# --- uA, End, End.X, End.DT6 ---------------------------------------------------------------

def add_sid(sw: Switch, addr: str, plen: int, action: str, args: Sequence[int] = ()) -> None:
    sw.table("my_sid").add_entry([LpmMatch(a(addr), plen)], action, list(args))


ADJ = [ADJ_PORT, SWITCH_MAC, MAC_ADJ]


@pytest.mark.parametrize("rest", [(0x0B01,), (0x0B01, 0xFE09), (1, 2, 3, 4)])
def test_ua_shifts_and_forwards_on_its_port(sw: Switch, rest: tuple[int, ...]) -> None:
    add_sid(sw, usids(UA_USID), 48, "usid_ua", ADJ)
    pkt = frame(usids(UA_USID, *rest))
    assert send(sw, UP_PORT, pkt) == [(ADJ_PORT, rewritten(pkt, MAC_ADJ, dst=usids(*rest)))]


@pytest.mark.parametrize("rest", [(0x0B01,), (0x0B01, 0xFE09, 7, 8)])
def test_ua_combined_consumes_two_usids(sw: Switch, rest: tuple[int, ...]) -> None:
    add_sid(sw, usids(MY_USID, UA_USID), 64, "usid_ua_combined", ADJ)
    pkt = frame(usids(MY_USID, UA_USID, *rest))
    assert send(sw, UP_PORT, pkt) == [(ADJ_PORT, rewritten(pkt, MAC_ADJ, dst=usids(*rest)))]
    # the /64 wins over the /48 uN of the same node; another uSID after ours is still uN
    pkt = frame(usids(MY_USID, UP_USID))
    assert send(sw, UP_PORT, pkt) == [(UP_PORT, rewritten(pkt, MAC_UP, dst=usids(UP_USID)))]


def test_ua_exhausted_uses_srh_then_drops(sw: Switch) -> None:
    add_sid(sw, usids(UA_USID), 48, "usid_ua", ADJ)
    pkt = frame(usids(UA_USID), segments=[usids(0x0B01), usids(UA_USID)], segleft=1)
    out = Ether(bytes(pkt))
    out[IPv6ExtHdrSegmentRouting].segleft = 0
    assert send(sw, UP_PORT, pkt) == [(ADJ_PORT, rewritten(out, MAC_ADJ, dst=usids(0x0B01)))]
    assert send(sw, UP_PORT, frame(usids(UA_USID))) == []
    assert drops(sw, UP_PORT, "SID_NO_NEXT") == 1


CLASSIC_SID = "2001:db8:ff::1"


@pytest.mark.parametrize(("action", "args", "port", "dmac"), [
    ("end", (), UP_PORT, MAC_UP), ("end_x", ADJ, ADJ_PORT, MAC_ADJ)])
def test_end_and_end_x_on_128_bit_sids(sw: Switch, action: str, args: Sequence[int], port: int,
                                       dmac: int) -> None:
    add_sid(sw, CLASSIC_SID, 128, action, args)
    segments = [usids(0x0B01), usids(UP_USID, 0x0B01), CLASSIC_SID]
    pkt = frame(CLASSIC_SID, segments=segments, segleft=2)
    out = Ether(bytes(pkt))
    out[IPv6ExtHdrSegmentRouting].segleft = 1
    assert send(sw, DOWN_PORT, pkt) == [(port, rewritten(out, dmac, dst=segments[1]))]
    # segments left 0 (or no SRH): nothing left to do
    assert send(sw, DOWN_PORT, frame(CLASSIC_SID, segments=segments, segleft=0)) == []
    assert send(sw, DOWN_PORT, frame(CLASSIC_SID)) == []
    assert drops(sw, DOWN_PORT, "SID_NO_NEXT") == 2


def test_end_dt6_decapsulates(sw: Switch) -> None:
    add_sid(sw, usids(0xFE09), 48, "end_dt6")
    pkt = frame(usids(0xFE09), inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(HOST_PORT, rewritten(decapsulated(pkt), MAC_HOST))]
    pkt = frame(usids(0xFE09), segments=[usids(0xFE09), usids(1)], segleft=0, inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(HOST_PORT, rewritten(decapsulated(pkt), MAC_HOST))]


def test_end_dt6_refusals(sw: Switch) -> None:
    add_sid(sw, usids(0xFE09), 48, "end_dt6")
    assert send(sw, UP_PORT, frame(usids(0xFE09))) == []   # no inner header
    pkt = frame(usids(0xFE09), segments=[usids(2), usids(0xFE09)], segleft=1, inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == []                     # segments left != 0
    assert drops(sw, UP_PORT, "DECAP") == 2


def test_decapsulated_inner_hop_limit_is_checked(sw: Switch) -> None:
    pkt = frame(usids(MY_USID), inner=NIC_ADDR)
    pkt.getlayer(IPv6, 2).hlim = 1
    assert send(sw, UP_PORT, pkt) == []
    assert drops(sw, UP_PORT, "HOP_LIMIT") == 1


# --- parser checks, each its own drop reason ----------------------------------------------

def srh_frame(**srh: object) -> bytes:
    pkt = frame(usids(MY_USID), segments=[usids(DOWN_USID), usids(MY_USID)], segleft=0,
                inner=NIC_ADDR)
    for field, value in srh.items():
        setattr(pkt[IPv6ExtHdrSegmentRouting], field, value)
    return bytes(pkt)


@pytest.mark.parametrize(("data", "reason"), [
    (srh_frame(type=3), "SRH_TYPE"),
    (srh_frame(len=6), "SRH_LENGTH"),            # 2 segments need HdrExtLen 4
    (srh_frame(lastentry=2), "SRH_LENGTH"),
    (srh_frame(segleft=3), "SRH_SEGMENTS_LEFT"),  # last entry 1: at most 2
    (bytes(frame(usids(MY_USID), segments=[usids(n) for n in range(1, 6)], segleft=4)),
     "SRH_TOO_LONG"),
    # a list longer than SRH_MAX_SEGMENTS is checked in v1model's order (TNA: in ingress)
    (bytes(frame(usids(MY_USID), segments=[usids(n) for n in range(1, 6)], segleft=6)),
     "SRH_SEGMENTS_LEFT"),
    # a list longer than SRH_MAX_SEGMENTS cut short: within its first SRH_MAX_SEGMENTS
    # segments the cut is found first, past them the length
    (bytes(frame(usids(MY_USID), segments=[usids(n) for n in range(1, 6)], segleft=4))
     [:14 + 40 + 8 + 16 * 2 + 8], "TRUNCATED"),
    (bytes(frame(usids(MY_USID), segments=[usids(n) for n in range(1, 6)], segleft=4))
     [:14 + 40 + 8 + 16 * 4 + 8], "SRH_TOO_LONG"),
    (bytes(frame(usids(MY_USID), inner=NIC_ADDR))[:14 + 40 + 20], "TRUNCATED"),
    (bytes(frame(usids(MY_USID)))[:14 + 30], "TRUNCATED"),
    (bytes(frame(usids(MY_USID), payload=b""))[:14 + 40 + 8 + 6], "TRUNCATED"),  # half a BTH
    (srh_frame()[:14 + 40 + 8 + 20], "TRUNCATED"),
    (bytes(Ether(src=mac(MAC_HOST), dst=mac(SWITCH_MAC), type=0x0800) / Raw(b"\x45" * 40)),
     "NOT_IPV6"),
])
def test_malformed_packets_are_counted_and_dropped(sw: Switch, data: bytes, reason: str) -> None:
    assert sw.process_packet(UP_PORT, data) == []
    assert drops(sw, UP_PORT, reason) == 1
    counter = sw.counter("drop_counter")
    assert sum(counter.read(UP_PORT * 16 + r)[0] for r in range(16)) == 1
    assert counter.read(UP_PORT * 16 + DROP[reason])[1] == counted(sw, data)


def with_version(pkt: Packet, version: int, header: int = 1) -> bytes:
    """`pkt` with the version of its `header`-th IPv6 header (1: outer, 2: inner) changed."""
    data = bytearray(bytes(pkt))
    offset = len(pkt) - len(pkt.getlayer(IPv6, header))
    data[offset] = (version << 4) | (data[offset] & 0x0F)
    return bytes(data)


VERSION_CASES = {   # (in port, packet): each forwarded as IPv6 version 6
    "transit": (DOWN_PORT, frame(usids(UP_USID))),
    "uN on an SRH": (DOWN_PORT, frame(usids(MY_USID), segments=[usids(UP_USID), usids(MY_USID)],
                                      segleft=1)),
    "plain from a host": (HOST_PORT, frame(NIC_ADDR)),
    "uN with an inner header": (UP_PORT, frame(usids(MY_USID), inner=NIC_ADDR)),
}


@pytest.mark.parametrize("version", [4, 0, 15])
@pytest.mark.parametrize("case", sorted(VERSION_CASES))
def test_an_ipv6_header_of_another_version_is_dropped(sw: Switch, case: str,
                                                       version: int) -> None:
    """The EtherType says IPv6, the header another version (a version-4 header with IPv6's
    next header used to be forwarded as IPv6): dropped, counted as DROP_IP_VERSION and nothing
    else; the same packet as version 6 is forwarded."""
    port, pkt = VERSION_CASES[case]
    assert send(sw, port, pkt) != []
    bad = with_version(pkt, version)
    assert send(sw, port, bad) == []
    counter = sw.counter("drop_counter")
    assert [(r, counter.read(port * 16 + r)) for r in range(16) if counter.read(port * 16 + r)[0]
            ] == [(DROP["IP_VERSION"], (1, counted(sw, bad)))]


@pytest.mark.parametrize("version", [4, 0])
def test_an_inner_ipv6_header_of_another_version_is_dropped(sw: Switch, version: int) -> None:
    """Decapsulation would make the inner header the packet's: its version is checked too."""
    pkt = frame(usids(MY_USID), inner=NIC_ADDR)
    assert send(sw, UP_PORT, with_version(pkt, version, header=2)) == []
    assert drops(sw, UP_PORT, "IP_VERSION") == 1


def test_srh_with_max_segments_is_accepted(sw: Switch) -> None:
    segments = [usids(DOWN_USID), usids(3), usids(2), usids(MY_USID)]
    pkt = frame(usids(MY_USID), segments=segments, segleft=1)
    out = Ether(bytes(pkt))
    out[IPv6ExtHdrSegmentRouting].segleft = 0
    assert send(sw, UP_PORT, pkt) == [(DOWN_PORT, rewritten(out, MAC_DOWN, dst=segments[0]))]


# --- hop limit ---------------------------------------------------------------------------

@pytest.mark.parametrize("hlim", [0, 1])
def test_hop_limit_expired_is_dropped(sw: Switch, hlim: int) -> None:
    assert send(sw, UP_PORT, frame(usids(MY_USID, UP_USID), hlim=hlim)) == []
    assert send(sw, UP_PORT, frame(usids(UP_USID), hlim=hlim)) == []
    assert drops(sw, UP_PORT, "HOP_LIMIT") == 2


def test_hop_limit_punt_to_cpu(sw: Switch) -> None:
    sw.table("hop_limit_policy").set_default_action("punt_hop_limit")
    pkt = frame(usids(UP_USID), hlim=1)
    # packet_in: ingress_port (9 bits), reason (8), pad (7)
    header = ((UP_PORT << 15) | (DROP["HOP_LIMIT"] << 7)).to_bytes(3, "big")
    assert send(sw, UP_PORT, pkt) == [(CPU_PORT, header + bytes(pkt))]
    assert drops(sw, UP_PORT, "HOP_LIMIT") == 1


def test_packet_out_goes_to_its_port_unchanged(sw: Switch) -> None:
    pkt = bytes(frame(usids(UP_USID), hlim=1))
    header = (DOWN_PORT << 7).to_bytes(2, "big")
    assert sw.process_packet(CPU_PORT, header + pkt) == [(DOWN_PORT, pkt)]


@pytest.mark.parametrize("port", [CPU_PORT, BMV2_DROP_PORT])
def test_a_packet_out_to_the_cpu_or_drop_port_is_dropped_and_counted(sw: Switch,
                                                                     port: int) -> None:
    """Sent on, BMv2 would hand it back to the controller as a PacketIn whose metadata is its
    first bytes (CPU port), or drop it uncounted (511, its drop port): the switch drops it and
    counts DROP_PACKET_OUT_PORT on the CPU port."""
    pkt = bytes(frame(usids(UP_USID)))
    header = (port << 7).to_bytes(2, "big")
    assert sw.process_packet(CPU_PORT, header + pkt) == []
    counter = sw.counter("drop_counter")
    assert [r for r in range(16) if counter.read(CPU_PORT * 16 + r)[0]] == [
        DROP["PACKET_OUT_PORT"]]
    assert counter.read(CPU_PORT * 16 + DROP["PACKET_OUT_PORT"]) == (1, counted(sw, header + pkt))


def test_a_packet_out_leaves_whatever_its_ip_version(sw: Switch) -> None:
    """The controller's packets are sent as they are: the version check is for arrivals."""
    pkt = with_version(frame(usids(UP_USID)), 4)
    header = (DOWN_PORT << 7).to_bytes(2, "big")
    assert sw.process_packet(CPU_PORT, header + pkt) == [(DOWN_PORT, pkt)]
    assert sum(sw.counter("drop_counter").read(CPU_PORT * 16 + r)[0] for r in range(16)) == 0


@pytest.mark.parametrize("arch", sorted(PROGRAMS))
def test_cpu_port_is_set_at_compile_time(arch: str) -> None:
    # A Tofino switch's PCIe CPU port is the chip's: -DCPU_PORT_ID moves packet-in and -out.
    sw = Switch(compile_file(PROGRAMS[arch], defines={"CPU_PORT_ID": "320"}))
    sw.table("hop_limit_policy").set_default_action("punt_hop_limit")
    pkt = bytes(frame(usids(UP_USID), hlim=1))
    header = ((UP_PORT << 15) | (DROP["HOP_LIMIT"] << 7)).to_bytes(3, "big")
    assert sw.process_packet(UP_PORT, pkt) == [(320, header + pkt)]
    out = (DOWN_PORT << 7).to_bytes(2, "big")
    assert sw.process_packet(320, out + pkt) == [(DOWN_PORT, pkt)]
    assert sw.process_packet(CPU_PORT, out + pkt) == []     # 255 is a port like any other now


# --- H.Encaps.Red ------------------------------------------------------------------------

SRC = "fcbb:bbbb:1::1"


def test_encap_one_carrier(sw: Switch) -> None:
    carrier = usids(UP_USID, DOWN_USID, 0xB001, 0xFE09)
    sw.table("encap_v6").add_entry([LpmMatch(a("2001:db8:7::"), 48)], "encap_usid",
                                   [a(SRC), a(carrier)])
    pkt = frame("2001:db8:7::5", hlim=20, tc=0x12)
    host = Ether(bytes(pkt))
    outer = IPv6(src=SRC, dst=carrier, nh=41, hlim=19, tc=0x12, plen=len(host[IPv6]))
    expected = Ether(src=mac(SWITCH_MAC), dst=mac(MAC_UP)) / outer / host[IPv6]
    assert send(sw, HOST_PORT, pkt) == [(UP_PORT, bytes(expected))]


def test_encap_carrier_and_srh(sw: Switch) -> None:
    carrier, nxt = usids(UP_USID, DOWN_USID), usids(0xB001, 0xFE09)
    sw.table("encap_v6").add_entry([LpmMatch(a("2001:db8:7::"), 48)], "encap_usid_srh",
                                   [a(SRC), a(carrier), a(nxt)])
    pkt = frame("2001:db8:7::5", hlim=20)
    host = Ether(bytes(pkt))
    srh = IPv6ExtHdrSegmentRouting(nh=41, addresses=[nxt], segleft=1, lastentry=0)
    outer = IPv6(src=SRC, dst=carrier, nh=43, hlim=19, plen=24 + len(host[IPv6]))
    expected = Ether(src=mac(SWITCH_MAC), dst=mac(MAC_UP)) / outer / srh / host[IPv6]
    assert send(sw, HOST_PORT, pkt) == [(UP_PORT, bytes(expected))]


def test_encap_only_plain_ipv6_from_host_ports(sw: Switch) -> None:
    sw.table("encap_v6").add_entry([LpmMatch(a("::"), 0)], "encap_usid",
                                   [a(SRC), a(usids(UP_USID))])
    # from a fabric port: routed as it is
    pkt = frame(NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(HOST_PORT, rewritten(pkt, MAC_HOST))]
    # already SR traffic from the host: not encapsulated again
    pkt = frame(usids(MY_USID, UP_USID))
    assert send(sw, HOST_PORT, pkt) == [(UP_PORT, rewritten(pkt, MAC_UP, dst=usids(UP_USID)))]


# --- QoS, trimming, ECN -------------------------------------------------------------------

TRIMMABLE, TRIMMED, TRIMMED_LASTHOP, CONTROL = 4, 12, 16, 46


def through_queues(sw: Switch, port: int, pkt: Packet | bytes,
                   qdepth: int) -> list[tuple[int, int, bytes]]:
    """Run one input to completion, every egress job meeting a queue of depth `qdepth` (in the
    architecture's unit: packets on v1model, cells on Tofino): (port, priority, data)."""
    jobs, out = [sw.new_packet(port, bytes(pkt))], []
    queue = QueueInfo(enq_timestamp=0, enq_qdepth=qdepth, deq_timedelta=0, deq_qdepth=qdepth)
    while jobs:
        job = jobs.pop(0)
        if not job.is_ingress and hasattr(job, "enq_cells"):   # a TNA job: the queue's cells
            job.enq_cells = job.deq_cells = qdepth
        sent, more = sw.run(job, None if job.is_ingress else queue)
        out += [(p.port, job.priority, p.data) for p in sent]
        jobs += more
    return out


@pytest.fixture
def qsw(sw: Switch) -> Switch:
    for dscp, prio in ((CONTROL, 7), (TRIMMED, 7), (TRIMMED_LASTHOP, 7)):
        sw.table("dscp_priority").add_entry([ExactMatch(dscp)], "set_priority", [prio])
    sw.table("trimmable_dscp").add_entry([ExactMatch(TRIMMABLE)], "set_trimmable")
    sw.table("trim_config").add_entry([ExactMatch(UP_PORT)], "set_trim", [10, 134, TRIMMED])
    sw.table("trim_config").add_entry([ExactMatch(HOST_PORT)], "set_trim",
                                      [10, 134, TRIMMED_LASTHOP])
    trim_session(sw, UP_PORT, 134)
    trim_session(sw, HOST_PORT, 134)
    sw.table("ecn_config").add_entry([ExactMatch(UP_PORT)], "set_ecn_threshold", [5])
    return sw


def test_dscp_priority(qsw: Switch) -> None:
    assert [p for _, p, _ in through_queues(qsw, HOST_PORT, frame(NIC_ADDR, tc=CONTROL << 2),
                                            0)] == [7]
    assert [p for _, p, _ in through_queues(qsw, HOST_PORT, frame(NIC_ADDR, tc=TRIMMABLE << 2),
                                            0)] == [0]


def test_a_packet_out_is_queued_by_its_dscp_too(qsw: Switch) -> None:
    """The controller's link probes carry the control DSCP: behind a congested cable's data
    they would look lost; they overtake it as feedback does. Out unchanged, to its port."""
    header = (UP_PORT << 7).to_bytes(2, "big")
    for dscp, prio in ((CONTROL, 7), (TRIMMABLE, 0)):
        pkt = bytes(frame(usids(UP_USID), hlim=2, tc=dscp << 2))
        assert through_queues(qsw, CPU_PORT, header + pkt, 0) == [(UP_PORT, prio, pkt)]


def trimmed(pkt: Packet, length: int, dscp: int) -> bytes:
    """`pkt` cut to `length` bytes with IPv6 and UDP lengths fixed, UDP checksum 0, DSCP set."""
    out = Ether(bytes(pkt)[:length])
    ips = [layer for layer in out.layers() if layer is IPv6]
    outer_end = 14 + 40
    out[IPv6].plen = length - outer_end
    out[IPv6].tc = (dscp << 2) | (out[IPv6].tc & 3)
    if len(ips) == 2:
        inner = out.getlayer(IPv6, 2)
        inner.plen = length - (len(out) - len(inner)) - 40
    out[UDP].len = length - (len(out) - len(out[UDP]))
    out[UDP].chksum = 0
    return bytes(out)


@pytest.mark.parametrize(("carrier", "port", "dmac", "dscp"), [
    ((MY_USID, UP_USID, DOWN_USID), UP_PORT, MAC_UP, TRIMMED),
    ((MY_USID, 0xB001), HOST_PORT, MAC_HOST, TRIMMED_LASTHOP),
])
def test_trimming_on_a_congested_port(qsw: Switch, carrier: tuple[int, ...], port: int,
                                      dmac: int, dscp: int) -> None:
    qsw.table("route_v6").add_entry([LpmMatch(a(usids(0xB001)), 48)], "forward",
                                    [HOST_PORT, SWITCH_MAC, MAC_HOST])
    pkt = frame(usids(*carrier), tc=TRIMMABLE << 2, inner=NIC_ADDR, payload=b"p" * 1000)
    whole = rewritten(pkt, dmac, dst=usids(*carrier[1:]))
    # uncongested (depth at the threshold): forwarded whole on the data queue
    assert through_queues(qsw, UP_PORT, pkt, 10) == [(port, 0, whole)]
    # congested: the headers only, on the highest priority, with lengths and DSCP fixed
    assert through_queues(qsw, UP_PORT, pkt, 11) == [(port, 7, trimmed(Ether(whole), 134, dscp))]
    # BMv2 counts bytes before the truncation, which happens on transmission; the TNA switch
    # counts the trimmed copy, as its egress sees it (the mirror header in front)
    counted_trim = (len(whole) if qsw.arch == "v1model" else
                    counted(qsw, trimmed(Ether(whole), 134, dscp)) + TRIM_MIRROR_BYTES)
    assert qsw.counter("trim_counter").read(port) == (1, counted_trim)


def test_trimming_keeps_srh_and_shorter_packets(qsw: Switch) -> None:
    segments = [usids(DOWN_USID), usids(MY_USID)]
    pkt = frame(usids(UP_USID), tc=TRIMMABLE << 2, segments=segments, segleft=1,
                inner=NIC_ADDR, payload=b"p" * 500)
    entry = qsw.table("trim_config").find_entry([ExactMatch(UP_PORT)])
    assert entry is not None
    qsw.table("trim_config").modify_entry(entry.handle, "set_trim", [10, 134 + 40, TRIMMED])
    trim_session(qsw, UP_PORT, 134 + 40)
    whole = rewritten(pkt, MAC_UP)
    assert through_queues(qsw, DOWN_PORT, pkt, 50) == [
        (UP_PORT, 7, trimmed(Ether(whole), 174, TRIMMED))]
    # a packet already shorter than the trim length keeps its length, gets the DSCP
    small = frame(usids(UP_USID), tc=TRIMMABLE << 2, inner=NIC_ADDR, payload=b"p" * 20)
    whole = rewritten(small, MAC_UP)
    assert through_queues(qsw, DOWN_PORT, small, 50) == [
        (UP_PORT, 7, trimmed(Ether(whole), len(whole), TRIMMED))]


def test_no_trimming_without_config_or_trimmable_dscp(qsw: Switch) -> None:
    pkt = frame(usids(DOWN_USID), tc=TRIMMABLE << 2, payload=b"p" * 300)
    assert through_queues(qsw, UP_PORT, pkt, 60) == [(DOWN_PORT, 0, rewritten(pkt, MAC_DOWN))]
    pkt = frame(usids(UP_USID), tc=8 << 2, payload=b"p" * 300)
    assert through_queues(qsw, DOWN_PORT, pkt, 60) == [(UP_PORT, 0, rewritten(pkt, MAC_UP))]


@pytest.mark.parametrize(("ecn", "qdepth", "marked"), [
    (2, 6, True), (1, 6, True), (2, 5, False), (0, 6, False), (3, 6, False)])
def test_ecn_marking_on_fabric_ports(qsw: Switch, ecn: int, qdepth: int, marked: bool) -> None:
    pkt = frame(usids(UP_USID), tc=(8 << 2) | ecn)
    tc = (8 << 2) | (3 if marked else ecn)
    assert through_queues(qsw, DOWN_PORT, pkt, qdepth) == [
        (UP_PORT, 0, rewritten(pkt, MAC_UP, tc=tc))]
    assert qsw.counter("ecn_counter").read(UP_PORT)[0] == int(marked)


def test_no_ecn_marking_on_host_ports(qsw: Switch) -> None:
    qsw.table("ecn_config").add_entry([ExactMatch(HOST_PORT)], "set_ecn_threshold", [0])
    pkt = frame(NIC_ADDR, tc=2)
    assert through_queues(qsw, UP_PORT, pkt, 60) == [(HOST_PORT, 0, rewritten(pkt, MAC_HOST))]
    # a fabric port without an ecn_config entry never marks either
    pkt = frame(usids(DOWN_USID), tc=2)
    assert through_queues(qsw, UP_PORT, pkt, 60) == [(DOWN_PORT, 0, rewritten(pkt, MAC_DOWN))]


def test_direct_counters_count_hits(sw: Switch) -> None:
    pkt = frame(usids(MY_USID, UP_USID))
    send(sw, UP_PORT, pkt)
    my_sid = sw.table("my_sid")
    entry = my_sid.find_entry([LpmMatch(a(usids(MY_USID)), 48)])
    assert entry is not None
    assert sw.direct_counter("my_sid_counter").read(entry.handle) == (1, counted(sw, pkt))


def test_ua_exhausted_with_inner_decapsulates_onto_its_port(sw: Switch) -> None:
    add_sid(sw, usids(UA_USID), 48, "usid_ua", ADJ)
    pkt = frame(usids(UA_USID), inner=NIC_ADDR)
    assert send(sw, UP_PORT, pkt) == [(ADJ_PORT, rewritten(decapsulated(pkt), MAC_ADJ))]
