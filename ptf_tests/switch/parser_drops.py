"""Parser checks: truncated headers, inconsistent or oversized SRHs, non-IPv6 frames and IPv6
headers of another version are dropped, each counted under its own reason on the ingress port."""

from __future__ import annotations

import ptf
from ptf.testutils import group, simple_arp_packet, simple_udp_packet
from switch_base import (
    DROP_IP_VERSION,
    DROP_NOT_IPV6,
    DROP_SRH_LENGTH,
    DROP_SRH_SEGMENTS_LEFT,
    DROP_SRH_TOO_LONG,
    DROP_SRH_TYPE,
    DROP_TRUNCATED,
    ETH_LEN,
    FABRIC_PORTS,
    HOST_PORTS,
    IPV6_LEN,
    NEIGHBOUR_MAC,
    ROLE_T0,
    ROLE_T1,
    SWITCH_MAC,
    UDP_LEN,
    SwitchTest,
    carrier,
    routed,
    shifted,
    srh_max_segments,
    srv6_packet,
    usid,
    with_ip_version,
)

from ptf_tests.base import autocleanup

OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
DST = carrier(OWN, NEXT)           # a local uN: the packet would be forwarded if it parsed
OUT_PORT = FABRIC_PORTS[1]
SEGMENT = carrier(NEXT)


def _cut(packet: object, length: int) -> bytes:
    return bytes(packet)[:length]  # type: ignore[call-overload]


def truncated_cases() -> list[tuple[str, bytes]]:
    srh_packet = srv6_packet(DST, segments=[SEGMENT, SEGMENT], segments_left=1)
    long_list = srv6_packet(DST, segments=[SEGMENT] * (srh_max_segments() + 1))
    plain = srv6_packet(DST, inner=False)
    inner = srv6_packet(DST)
    srh_at = ETH_LEN + IPV6_LEN
    cases = [
        ("ipv6", _cut(plain, ETH_LEN + 20)),
        ("srh fixed part", _cut(srh_packet, srh_at + 4)),
        ("srh segment list", _cut(srh_packet, srh_at + 8 + 16 + 6)),
        # cut before the list is found too long (v1model extracts it segment by segment)
        ("too long srh segment list", _cut(long_list, srh_at + 8 + 16 + 6)),
        ("inner ipv6", _cut(inner, srh_at + 30)),
        ("udp", _cut(plain, srh_at + 4)),
        ("bth", _cut(plain, srh_at + UDP_LEN + 6)),
    ]
    # A frame shorter than its Ethernet header only reaches the switch over nanomsg: on a
    # veth, AF_PACKET pads the link-layer header to 14 bytes (a DROP_NOT_IPV6 frame then).
    if ptf.config.get("platform") == "nn":
        cases.insert(0, ("ethernet", _cut(plain, 10)))
    return cases


def srh_cases() -> list[tuple[str, bytes, int]]:
    too_many = srh_max_segments() + 1
    return [
        ("routing type 3", bytes(srv6_packet(DST, segments=[SEGMENT], srh_type=3)),
         DROP_SRH_TYPE),
        ("routing type 0", bytes(srv6_packet(DST, segments=[SEGMENT], srh_type=0)),
         DROP_SRH_TYPE),
        ("hdr ext len 4 for 1 segment",
         bytes(srv6_packet(DST, segments=[SEGMENT, SEGMENT], last_entry=0, srh_len=4,
                                     segments_left=1)),
         DROP_SRH_LENGTH),
        ("hdr ext len 2 for 2 segments",
         bytes(srv6_packet(DST, segments=[SEGMENT], last_entry=1, srh_len=2, segments_left=1)),
         DROP_SRH_LENGTH),
        ("segments left = last entry + 2",
         bytes(srv6_packet(DST, segments=[SEGMENT], segments_left=2)), DROP_SRH_SEGMENTS_LEFT),
        ("segments left 255", bytes(srv6_packet(DST, segments=[SEGMENT, SEGMENT],
                                                segments_left=255)), DROP_SRH_SEGMENTS_LEFT),
        (f"{too_many} segments", bytes(srv6_packet(DST, segments=[SEGMENT] * too_many)),
         DROP_SRH_TOO_LONG),
    ]


class ParserTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_usid_route(NEXT, OUT_PORT)


@group("parser")
@group("drop")
class TruncatedTest(ParserTest):
    """A header running past the end of the packet: DROP_TRUNCATED; the whole packet passes."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for in_port in (FABRIC_PORTS[0], HOST_PORTS[0]):
            for name, data in truncated_cases():
                with self.case(f"port {in_port}/{name} ({len(data)} bytes)"):
                    self.expect_drop(in_port, data, DROP_TRUNCATED)
        with self.case("complete packet"):
            packet = srv6_packet(DST, inner=False)
            self.expect(FABRIC_PORTS[0], packet, routed(shifted(packet)), OUT_PORT)


@group("parser")
@group("drop")
class SrhChecksTest(ParserTest):
    """SRH type ≠ 4, HdrExtLen ≠ 2·(LastEntry+1), SL > LastEntry+1, too many segments."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        for name, data, reason in srh_cases():
            with self.case(name):
                self.expect_drop(FABRIC_PORTS[0], data, reason)


@group("parser")
@group("drop")
class NotIpv6Test(ParserTest):
    """IPv4 and ARP frames: DROP_NOT_IPV6 (the fabric forwards IPv6 only)."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        cases = (("ipv4/udp", simple_udp_packet(eth_dst=SWITCH_MAC, eth_src=NEIGHBOUR_MAC)),
                 ("arp", simple_arp_packet(eth_src=NEIGHBOUR_MAC)))
        for name, packet in cases:
            for in_port in (FABRIC_PORTS[0], HOST_PORTS[0]):
                with self.case(f"port {in_port}/{name}"):
                    self.expect_drop(in_port, packet, DROP_NOT_IPV6)


@group("parser")
@group("drop")
class IpVersionTest(ParserTest):
    """The EtherType says IPv6 (or the next header says an inner IPv6 header) and the header
    another version: DROP_IP_VERSION, nothing sent; the same packet as version 6 is forwarded.
    A version-4 header with IPv6's next header used to be forwarded as IPv6."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        cases = (("outer, plain", srv6_packet(DST, inner=False), 1),
                 ("outer, with an SRH", srv6_packet(DST, segments=[SEGMENT], segments_left=1,
                                                    inner=False), 1),
                 ("inner", srv6_packet(DST), 2))
        for name, packet, header in cases:
            with self.case(f"{name}, version 6"):
                self.expect(FABRIC_PORTS[0], packet, routed(shifted(packet)), OUT_PORT)
            for version in (4, 0, 15):
                for in_port in (FABRIC_PORTS[0], HOST_PORTS[0]):
                    with self.case(f"port {in_port}/{name}, version {version}"):
                        self.expect_drop(in_port, with_ip_version(packet, version, header),
                                         DROP_IP_VERSION)
