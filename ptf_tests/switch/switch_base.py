"""SwitchTest: helpers named after srv6_switch.p4's control-plane intents, packets and transforms.

The API is p4src/README.md's contract: every table, action, parameter and counter name used here
is one of its global `@name`s. Addresses follow F3216 (32-bit block `fcbb:bbbb`, 16-bit uSIDs);
test uSIDs carry the plane in their second nibble (`usid(role, plane, index)` = 0xRPxI, e.g.
0x1p0i for a T0 of plane p).

Packet builders return scapy packets; the expected-packet transforms (`routed`, `shifted`,
`srh_next`, `decapped`, `trimmed`, `ce_marked`) take a packet and return what the switch must
make of it, so every expectation is derived from the packet sent rather than written by hand.
"""

from __future__ import annotations

import ipaddress
import re
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ptf.testutils as testutils
from ptf.mask import Mask
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from p4rt import CloneSessionEntry, TableEntry
from ptf_tests.base import P4RuntimeTest

ROOT = Path(__file__).resolve().parents[2]

# -- addressing -------------------------------------------------------------------------------
BLOCK = 0xFCBB_BBBB                       # the SID block, F3216
BLOCK_PREFIX = "fcbb:bbbb::/32"
BLOCK_MASK = ((1 << 32) - 1) << 96
ALL_ONES = (1 << 128) - 1
USIDS_PER_CARRIER = 6                     # (128 - 32) / 16
ROLE_T0, ROLE_T1, ROLE_NIC = 0x1, 0x2, 0xB
UDT6 = 0xFE09                             # a decap (End.DT6) function uSID
LOCAL_UA = 0xFE11                         # a local (LIB) uA uSID

NIC_A = "2001:db8:a::1"                   # the sending NIC (inner source)
NIC_B = "2001:db8:b::1"                   # the receiving NIC (inner destination)
NIC_B_NET = "2001:db8:b::/64"

# -- MACs -------------------------------------------------------------------------------------
SWITCH_MAC = "00:00:00:00:00:fe"          # what neighbours send to
NEIGHBOUR_MAC = "00:00:00:00:aa:01"       # the sender of every test packet
PORT_SMAC = "00:00:00:00:00:f1"           # the switch's MAC on the egress link
NEXT_HOP_MAC = "00:00:00:00:bb:02"        # the neighbour behind the egress link

# -- ports and roles (p4src/README.md) ----------------------------------------------------------
HOST, FABRIC, EXTERNAL = 1, 2, 3
HOST_PORTS = (0, 1)
FABRIC_PORTS = (2, 4, 5)                  # unlimited fabric ports
SLOW_PORT = 3                             # the runner rate-limits it (--queue-rate 3:PPS)
EXTERNAL_PORT = 6
UNCONFIGURED_PORT = 7                     # no port_role entry: EXTERNAL by default
CPU_PORT = 255
BMV2_DROP_PORT = 511                      # simple_switch's drop port (p4src/include/defines.p4)

# -- DSCPs (srv6-mrc-emulator's defaults; operator-configured in practice) ----------------------
DSCP_NO_TRIM, DSCP_TRIMMABLE, DSCP_TRIMMABLE_RETX = 0, 4, 8
DSCP_TRIMMED, DSCP_TRIMMED_LASTHOP, DSCP_CONTROL = 12, 16, 46
ECT0, ECT1, CE = 2, 1, 3

# -- drop reasons (p4src/include/defines.p4) ----------------------------------------------------
DROP_TRUNCATED = 1
DROP_SRH_TYPE = 2
DROP_SRH_LENGTH = 3
DROP_SRH_SEGMENTS_LEFT = 4
DROP_SRH_TOO_LONG = 5
DROP_HOP_LIMIT = 6
DROP_NO_ROUTE = 7
DROP_EXTERNAL_SR = 8
DROP_SID_NO_NEXT = 9
DROP_DECAP = 10
DROP_NOT_IPV6 = 11
DROP_IP_VERSION = 12
DROP_PACKET_OUT_PORT = 13
DROP_REASONS_PER_PORT = 16

# -- trimming on TNA (p4src/include/defines.p4): the trimmed copy is mirrored to a session per port
TRIM_SESSION_BASE = 256                   # session TRIM_SESSION_BASE + port
TRIM_MIRROR_BYTES = 4                     # the mirror header, counted by the session's truncation
PRIORITY_HIGHEST = 7                      # the queue trimmed headers take

# -- what the architecture counts (p4src/README.md): tests state packets and bytes as sent ------
FCS_LEN = 4                               # Tofino's byte counts include the Ethernet FCS
BRIDGED_LEN = 2                           # the TNA switch's bridged header (egress counts it)
CELL_BYTES = 80                           # Tofino's queue depths are in 80-byte cells
EGRESS_TABLES = frozenset({"egress_port_role", "trimmable_dscp", "trim_config", "ecn_config"})

ROCEV2_PORT = 4791
RC_WRITE_ONLY = 0x0A                      # BTH opcode followed by a RETH
BTH_LEN, RETH_LEN, ICRC_LEN = 12, 16, 4
ETH_LEN, IPV6_LEN, UDP_LEN = 14, 40, 8


def srh_max_segments() -> int:
    """SRH_MAX_SEGMENTS from p4src/include/sizes.p4 (the one place the size is written)."""
    text = (ROOT / "p4src" / "include" / "sizes.p4").read_text()
    found = re.search(r"\bSRH_MAX_SEGMENTS\b\D*?(\d+)", text)
    if found is None:
        raise RuntimeError("SRH_MAX_SEGMENTS is not defined in p4src/include/sizes.p4")
    return int(found.group(1))


# =============================================================================================
# Addresses


def usid(role: int, plane: int, index: int) -> int:
    """A test uSID 0xRPxI: role nibble, plane nibble, index byte."""
    return (role << 12) | (plane << 8) | index


def carrier(*usids: int, block: int = BLOCK) -> str:
    """An F3216 uSID carrier: the block, then up to six uSIDs, the rest zero (End-of-Carrier)."""
    if len(usids) > USIDS_PER_CARRIER:
        raise ValueError(f"{len(usids)} uSIDs do not fit in one carrier")
    value = block << 96
    for position, item in enumerate(usids):
        value |= item << (80 - 16 * position)
    return str(ipaddress.IPv6Address(value))


def usid_prefix(*usids: int) -> str:
    """block:u1[:u2]::/(32 + 16·n) — the LPM prefix of a uN (/48) or combined uN:uA (/64)."""
    return f"{carrier(*usids)}/{32 + 16 * len(usids)}"


def address_int(address: str) -> int:
    return int(ipaddress.IPv6Address(address))


def address_str(value: int) -> str:
    return str(ipaddress.IPv6Address(value))


def shift_address(address: str, bits: int = 16) -> str:
    """The uN/uA rewrite: keep the block, shift what follows it left (mask after the shift)."""
    value = address_int(address)
    return address_str((value & BLOCK_MASK) | ((value << bits) & ~BLOCK_MASK & ALL_ONES))


# =============================================================================================
# Packets


def transport(psn: int = 1, payload_len: int = 64) -> bytes:
    """BTH (RDMA WRITE ONLY, AckReq) + RETH + payload + ICRC, as a RoCEv2 NIC sends them."""
    bth = struct.pack("!BBHI I", RC_WRITE_ONLY, 0, 0xFFFF, 0x000012, (1 << 31) | (psn & 0xFFFFFF))
    reth = struct.pack("!QII", 0x1000_0000 + psn * 4096, 0xBEEF, payload_len)
    payload = bytes((psn + i) & 0xFF for i in range(payload_len))
    return bth + reth + payload + b"\x5a\x5a\x5a\x5a"


def srv6_packet(dst: str, *, segments: Sequence[str] | None = None,
                segments_left: int | None = None, inner: bool = True, roce: bool = True,
                hop_limit: int = 64, dscp: int = DSCP_TRIMMABLE, ecn: int = 0,
                flow_label: int = 0x12345, src: str = NIC_A, inner_dst: str = NIC_B,
                psn: int = 1, payload_len: int = 64, srh_type: int = 4,
                srh_len: int | None = None, last_entry: int | None = None,
                eth_src: str = NEIGHBOUR_MAC, eth_dst: str = SWITCH_MAC) -> Packet:
    """Ethernet / outer IPv6 (dst) [/ SRH] [/ inner IPv6] / UDP / RoCEv2 BTH + RETH or payload.

    `segments` is the SRH segment list in wire order (Segment List[0] = the last segment);
    segments_left defaults to len(segments): a reduced SRH, whose first segment is only in the
    destination (as H.Encaps.Red builds it). UDP checksums are 0, as RoCEv2 NICs send them, so
    the uSID rewrite of the outer destination leaves no checksum stale.
    """
    tc = (dscp << 2) | ecn
    l4: Packet = UDP(sport=0xC000 | (psn & 0x3FFF), dport=ROCEV2_PORT if roce else 5000,
                     chksum=0)
    l4 = l4 / Raw(transport(psn, payload_len) if roce
                  else bytes((psn + i) & 0xFF for i in range(payload_len + 32)))
    if inner:
        l4 = IPv6(src=src, dst=inner_dst, hlim=64, tc=tc, fl=flow_label) / l4
    if segments is not None:
        left = len(segments) if segments_left is None else segments_left
        l4 = IPv6ExtHdrSegmentRouting(addresses=list(segments), segleft=left, type=srh_type,
                                      len=srh_len, lastentry=last_entry) / l4
    outer = IPv6(src=src, dst=dst, hlim=hop_limit, tc=tc, fl=flow_label)
    return Ether(bytes(Ether(src=eth_src, dst=eth_dst) / outer / l4))


def plain_ipv6_packet(dst: str = NIC_B, **kwargs: Any) -> Packet:
    """A plain IPv6 RoCEv2 packet (no SR): what a NIC sends before encapsulation."""
    return srv6_packet(dst, inner=False, **kwargs)


# =============================================================================================
# Expected-packet transforms (each returns a new packet)


def _copy(packet: Packet) -> Packet:
    return Ether(bytes(packet))


def _outer(packet: Packet) -> Any:
    return packet.getlayer(IPv6, 1)


def routed(packet: Packet, smac: str = PORT_SMAC, dmac: str = NEXT_HOP_MAC) -> Packet:
    """Forwarded by the switch: MACs rewritten, outer hop limit - 1."""
    out = _copy(packet)
    out[Ether].src = smac
    out[Ether].dst = dmac
    _outer(out).hlim -= 1
    return Ether(bytes(out))


def shifted(packet: Packet, bits: int = 16) -> Packet:
    """The outer destination after a uN (16) or combined uN:uA (32) shift."""
    out = _copy(packet)
    _outer(out).dst = shift_address(_outer(out).dst, bits)
    return Ether(bytes(out))


def with_dst(packet: Packet, dst: str) -> Packet:
    out = _copy(packet)
    _outer(out).dst = dst
    return Ether(bytes(out))


def srh_next(packet: Packet) -> Packet:
    """End on the SRH: segments left - 1, destination ← Segment List[segments left]."""
    out = _copy(packet)
    srh = out[IPv6ExtHdrSegmentRouting]
    srh.segleft -= 1
    _outer(out).dst = srh.addresses[srh.segleft]
    return Ether(bytes(out))


def decapped(packet: Packet, smac: str = PORT_SMAC, dmac: str = NEXT_HOP_MAC,
             decrement: bool = True) -> Packet:
    """Outer IPv6 and SRH removed, the inner packet routed (MACs rewritten, hop limit - 1)."""
    inner = packet.getlayer(IPv6, 2)
    if inner is None:
        raise ValueError("the packet has no inner IPv6 header")
    inner = IPv6(bytes(inner))
    if decrement:
        inner.hlim -= 1
    return Ether(bytes(Ether(src=smac, dst=dmac) / inner))


def encapsulated(packet: Packet, src: str, carrier_dst: str,
                 next_carrier: str | None = None) -> Packet:
    """H.Encaps.Red of a plain IPv6 packet: outer IPv6 (+ a one-segment SRH) in front of it.

    The outer hop limit, traffic class and flow label are left to the switch (callers mask
    them); the inner packet is carried unchanged.
    """
    inner = IPv6(bytes(packet[IPv6]))
    l3: Packet = inner
    if next_carrier is not None:
        l3 = IPv6ExtHdrSegmentRouting(addresses=[next_carrier], segleft=1) / l3
    outer = IPv6(src=src, dst=carrier_dst, hlim=inner.hlim, tc=inner.tc, fl=inner.fl)
    return Ether(bytes(Ether(src=packet[Ether].src, dst=packet[Ether].dst) / outer / l3))


@dataclass(frozen=True)
class Layout:
    """Byte offsets of the headers the switch may rewrite (None when absent)."""

    outer: int
    srh: int | None
    inner: int | None
    udp: int | None

    @classmethod
    def of(cls, data: bytes) -> Layout:
        outer = ETH_LEN
        next_header = data[outer + 6]
        offset = outer + IPV6_LEN
        srh = inner = udp = None
        if next_header == 43:
            srh = offset
            next_header = data[offset]
            offset += 8 + 8 * data[offset + 1]
        if next_header == 41:
            inner = offset
            next_header = data[offset + 6]
            offset += IPV6_LEN
        if next_header == 17:
            udp = offset
        return cls(outer, srh, inner, udp)


def _set_dscp(data: bytearray, ipv6_offset: int, dscp: int) -> None:
    word = struct.unpack_from("!I", data, ipv6_offset)[0]
    word = (word & ~(0x3F << 22)) | (dscp << 22)
    struct.pack_into("!I", data, ipv6_offset, word)


def trimmed(packet: Packet, trim_bytes: int, dscp: int) -> bytes:
    """A trimmed packet: cut to trim_bytes, outer DSCP set (ECN kept), outer/inner IPv6 payload
    lengths and the UDP length fixed to the truncated size, UDP checksum 0 (what it covered is
    gone)."""
    data = bytearray(bytes(packet)[:trim_bytes])
    layout = Layout.of(bytes(packet))
    _set_dscp(data, layout.outer, dscp)
    struct.pack_into("!H", data, layout.outer + 4, trim_bytes - layout.outer - IPV6_LEN)
    if layout.inner is not None:
        struct.pack_into("!H", data, layout.inner + 4, trim_bytes - layout.inner - IPV6_LEN)
    if layout.udp is not None:
        struct.pack_into("!HH", data, layout.udp + 4, trim_bytes - layout.udp, 0)
    return bytes(data)


def with_ip_version(packet: Packet, version: int, header: int = 1) -> bytes:
    """`packet` with the version of its `header`-th IPv6 header (1: outer, 2: inner) changed,
    all else as it was."""
    data = bytearray(bytes(packet))
    offset = len(packet) - len(packet.getlayer(IPv6, header))
    data[offset] = (version << 4) | (data[offset] & 0x0F)
    return bytes(data)


def ce_marked(packet: Packet) -> Packet:
    """Outer traffic class ECN bits set to CE."""
    out = _copy(packet)
    _outer(out).tc |= CE
    return Ether(bytes(out))


def headers_length(packet: Packet) -> int:
    """Bytes through the RETH: what a trimmed packet keeps."""
    layout = Layout.of(bytes(packet))
    assert layout.udp is not None
    return layout.udp + UDP_LEN + BTH_LEN + RETH_LEN


def masked(packet: Packet, *fields: tuple[int, int, int]) -> Mask:
    """A Mask ignoring (byte offset, bit offset within, bit width) fields."""
    mask = Mask(packet)
    for byte, bit, width in fields:
        mask.set_do_not_care(byte * 8 + bit, width)
    return mask


def outer_tc_fl_hlim(offset: int = ETH_LEN) -> list[tuple[int, int, int]]:
    """The outer IPv6 traffic class, flow label and hop limit, as `masked` fields."""
    return [(offset, 4, 8), (offset, 12, 20), (offset + 7, 0, 8)]


# =============================================================================================
# The program base test


class SwitchTest(P4RuntimeTest):
    """P4RuntimeTest plus intent-named setup helpers and checks for srv6_switch.p4."""

    # -- port roles and the SR domain ---------------------------------------------------------
    def set_port_role(self, port: int, role: int, egress: bool = True) -> None:
        """The ingress role of a port, and (by default) its egress role too."""
        self.insert_table_entry("port_role", {"port": port}, "set_port_role", role=role)
        if egress:
            self.insert_table_entry("egress_port_role", {"port": port}, "set_egress_port_role",
                                    role=role)

    def set_default_roles(self) -> None:
        """HOST_PORTS host-facing, FABRIC_PORTS and SLOW_PORT fabric, EXTERNAL_PORT external."""
        for port in HOST_PORTS:
            self.set_port_role(port, HOST)
        for port in (*FABRIC_PORTS, SLOW_PORT):
            self.set_port_role(port, FABRIC)
        self.set_port_role(EXTERNAL_PORT, EXTERNAL)

    def add_sid_block(self, prefix: str = BLOCK_PREFIX) -> TableEntry:
        return self.insert_table_entry("sid_block", {"dst_addr": prefix}, "in_sid_block")

    # -- local SIDs ---------------------------------------------------------------------------
    def add_my_sid(self, prefix: str, action: str, **params: object) -> TableEntry:
        return self.insert_table_entry("my_sid", {"dst_addr": prefix}, action, **params)

    def add_usid_un(self, own: int) -> TableEntry:
        """block:own::/48 → uN (shift and route)."""
        return self.add_my_sid(usid_prefix(own), "usid_un")

    def add_usid_ua(self, ua: int, port: int, smac: str = PORT_SMAC,
                    dmac: str = NEXT_HOP_MAC) -> TableEntry:
        """block:ua::/48 → uA (shift and cross-connect), the local form."""
        return self.add_my_sid(usid_prefix(ua), "usid_ua", port=port, smac=smac, dmac=dmac)

    def add_usid_ua_combined(self, own: int, ua: int, port: int, smac: str = PORT_SMAC,
                             dmac: str = NEXT_HOP_MAC) -> TableEntry:
        """block:own:ua::/64 → uN then uA in one lookup (shift by 32)."""
        return self.add_my_sid(usid_prefix(own, ua), "usid_ua_combined", port=port, smac=smac,
                               dmac=dmac)

    def add_end(self, sid: str) -> TableEntry:
        return self.add_my_sid(f"{sid}/128", "end")

    def add_end_x(self, sid: str, port: int, smac: str = PORT_SMAC,
                  dmac: str = NEXT_HOP_MAC) -> TableEntry:
        return self.add_my_sid(f"{sid}/128", "end_x", port=port, smac=smac, dmac=dmac)

    def add_end_dt6(self, prefix: str) -> TableEntry:
        """A decap SID: a /128, or a uSID prefix such as block:uN:uDT6::/64."""
        return self.add_my_sid(prefix if "/" in prefix else f"{prefix}/128", "end_dt6")

    # -- routes -------------------------------------------------------------------------------
    def add_usid_route(self, next_usid: int, port: int, smac: str = PORT_SMAC,
                       dmac: str = NEXT_HOP_MAC) -> TableEntry:
        """block:next::/48 → port, MAC rewrite (a static route to a neighbour's uSID)."""
        return self.add_host_route(usid_prefix(next_usid), port, smac, dmac)

    def add_host_route(self, prefix: str, port: int, smac: str = PORT_SMAC,
                       dmac: str = NEXT_HOP_MAC) -> TableEntry:
        """Any prefix (a /128 or /64 NIC address) → port, MAC rewrite."""
        if "/" not in prefix:
            prefix = f"{prefix}/128"
        return self.insert_table_entry("route_v6", {"dst_addr": prefix}, "forward", port=port,
                                       smac=smac, dmac=dmac)

    def add_block_drop(self, prefix: str = BLOCK_PREFIX) -> TableEntry:
        """block::/32 → drop: nothing in the block is forwarded by a shorter route."""
        return self.insert_table_entry("route_v6", {"dst_addr": prefix}, "drop")

    def set_hop_limit_policy(self, punt: bool) -> TableEntry:
        return self.set_default_action("hop_limit_policy",
                                       "punt_hop_limit" if punt else "drop_hop_limit")

    # -- encapsulation ------------------------------------------------------------------------
    def add_encap(self, prefix: str, src: str, carrier_dst: str,
                  next_carrier: str | None = None) -> TableEntry:
        """H.Encaps.Red: one carrier, or a carrier plus a one-segment SRH (next_carrier)."""
        if next_carrier is None:
            return self.insert_table_entry("encap_v6", {"dst_addr": prefix}, "encap_usid",
                                           src=src, carrier=carrier_dst)
        return self.insert_table_entry("encap_v6", {"dst_addr": prefix}, "encap_usid_srh",
                                       src=src, carrier=carrier_dst, next_carrier=next_carrier)

    # -- QoS, trimming, ECN --------------------------------------------------------------------
    def set_dscp_priority(self, dscp: int, prio: int) -> TableEntry:
        return self.insert_table_entry("dscp_priority", {"dscp": dscp}, "set_priority", prio=prio)

    def set_trim(self, port: int, threshold: int, trim_bytes: int, dscp: int) -> TableEntry:
        """Trim on `port`: its trim_config entry and, on TNA, its trim session cutting copies
        to trim_bytes (as the controller's plan installs them)."""
        self.set_trim_session(port, trim_bytes)
        return self.insert_table_entry("trim_config", {"port": port}, "set_trim",
                                       threshold=threshold, trim_bytes=trim_bytes,
                                       trimmed_dscp=dscp)

    def set_trim_session(self, port: int, trim_bytes: int) -> CloneSessionEntry | None:
        """The clone session TNA mirrors a port's trimmed copies to (p4src/README.md): the same
        port, the highest priority, truncated to trim_bytes plus the mirror header. Inserted
        once per test, then modified. None on v1model, which trims by recirculation (and
        BMv2's P4Runtime server refuses a class of service)."""
        if self.arch != "tna":
            return None
        session = CloneSessionEntry(TRIM_SESSION_BASE + port, [port],
                                    class_of_service=PRIORITY_HIGHEST,
                                    packet_length_bytes=trim_bytes + TRIM_MIRROR_BYTES)
        if self.was_inserted(session):
            self.modify(session)
        else:
            self.insert(session)
        return session

    def add_trimmable_dscp(self, dscp: int) -> TableEntry:
        return self.insert_table_entry("trimmable_dscp", {"dscp": dscp}, "set_trimmable")

    def set_ecn(self, port: int, threshold: int) -> TableEntry:
        return self.insert_table_entry("ecn_config", {"port": port}, "set_ecn_threshold",
                                       threshold=threshold)

    # -- what the architecture counts ----------------------------------------------------------
    def counted_bytes(self, packet: Packet | bytes, egress: bool = False) -> int:
        """The bytes a counter adds for `packet` (as sent): its length on v1model (BMv2 counts
        the length it arrived with, in egress too); on TNA Tofino's MAC length (the 4-byte FCS
        too) and, in egress, what the ingress deparser emitted (the bridged header too)."""
        length = len(bytes(packet))
        if self.arch == "tna":
            length += FCS_LEN + (BRIDGED_LEN if egress else 0)
        return length

    def queue_depth(self, packets: int, packet: Packet | bytes) -> int:
        """`packets` queued packets the size of `packet` (as it leaves) in the unit of the
        architecture's enq_qdepth — what trim_config and ecn_config thresholds compare with:
        packets on v1model, Tofino's 80-byte cells on TNA (bridged header and FCS included)."""
        if self.arch != "tna":
            return packets
        cells = -(-(len(bytes(packet)) + BRIDGED_LEN + FCS_LEN) // CELL_BYTES)
        return packets * cells

    # -- counters -----------------------------------------------------------------------------
    def read_drop_counter(self, port: int, reason: int) -> int:
        """Packets dropped on arrival at `port` for `reason` (drop_counter[port·16 + reason])."""
        return self.read_counter("drop_counter", port * DROP_REASONS_PER_PORT + reason).packet_count

    # -- checks -------------------------------------------------------------------------------
    def send(self, port: int, packet: Packet | bytes) -> None:
        testutils.send_packet(self, port, bytes(packet))

    def expect(self, in_port: int, packet: Packet | bytes, expected: Packet | Mask | bytes,
               out_port: int) -> None:
        """Send; exactly `expected` comes out of `out_port` and nothing else anywhere."""
        self.send(in_port, packet)
        if isinstance(expected, bytes):
            expected = Ether(expected)
        testutils.verify_packet(self, expected, out_port)
        testutils.verify_no_other_packets(self)

    def expect_drop(self, in_port: int, packet: Packet | bytes, reason: int) -> None:
        """Send; nothing comes out, and drop_counter[in_port, reason] grows by exactly one."""
        before = self.read_drop_counter(in_port, reason)
        self.send(in_port, packet)
        testutils.verify_no_other_packets(self)
        after = self.wait_for_drop_count(in_port, reason, before + 1)
        self.assertEqual(after, before + 1,
                         f"drop_counter[port {in_port}, reason {reason}] went from {before} to "
                         f"{after}, expected {before + 1}")

    def wait_for_drop_count(self, port: int, reason: int, wanted: int,
                            timeout: float = 2.0) -> int:
        deadline = time.monotonic() + timeout
        value = self.read_drop_counter(port, reason)
        while value < wanted and time.monotonic() < deadline:
            time.sleep(0.02)
            value = self.read_drop_counter(port, reason)
        return value

    def collect(self, port: int, count: int, timeout: float = 5.0) -> list[bytes]:
        """Up to `count` packets leaving `port` (in arrival order), waiting at most `timeout`."""
        received: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(received) < count and time.monotonic() < deadline:
            result = testutils.dp_poll(self, device_number=0, port_number=port,
                                       timeout=max(0.01, deadline - time.monotonic()))
            if isinstance(result, self.dataplane.PollSuccess):
                received.append(bytes(result.packet))
        return received
