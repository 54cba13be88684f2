"""Counters: the direct counter of every table entry hit, and the per-port, per-reason
drop_counter (no other port or reason moves)."""

from __future__ import annotations

from ptf.testutils import group
from switch_base import (
    BLOCK_PREFIX,
    DROP_HOP_LIMIT,
    DROP_NO_ROUTE,
    DSCP_TRIMMABLE,
    EGRESS_TABLES,
    FABRIC_PORTS,
    HOST,
    HOST_PORTS,
    NIC_B,
    ROLE_T0,
    ROLE_T1,
    SwitchTest,
    carrier,
    plain_ipv6_packet,
    routed,
    shifted,
    srv6_packet,
    usid,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
OUT_PORT = FABRIC_PORTS[1]
OWN = usid(ROLE_T0, 1, 0x01)
NEXT = usid(ROLE_T1, 1, 0x02)
HITS = 3


@group("counters")
class DirectCountersTest(SwitchTest):
    """Each hit entry counts every packet and its bytes (as the architecture counts a packet
    received, `counted_bytes`); entries not hit stay 0."""

    @autocleanup
    def runTest(self) -> None:
        entries = {
            "port_role": self.insert_table_entry("port_role", {"port": IN_PORT},
                                                 "set_port_role", role=2),
            "egress_port_role": self.insert_table_entry(
                "egress_port_role", {"port": OUT_PORT}, "set_egress_port_role", role=2),
            "sid_block": self.add_sid_block(),
            "my_sid": self.add_usid_un(OWN),
            "route_v6": self.add_usid_route(NEXT, OUT_PORT),
            "dscp_priority": self.set_dscp_priority(DSCP_TRIMMABLE, 0),
            "trimmable_dscp": self.add_trimmable_dscp(DSCP_TRIMMABLE),
            "trim_config": self.set_trim(OUT_PORT, 1000, 128, 12),
            "ecn_config": self.set_ecn(OUT_PORT, 1000),
        }
        idle = {"my_sid": self.add_usid_un(usid(ROLE_T0, 1, 0x09)),
                "route_v6": self.add_block_drop(BLOCK_PREFIX),
                "encap_v6": self.add_encap("2001:db8:b::/48", "fcbb:bbbb:101::1",
                                           carrier(NEXT))}
        packet = srv6_packet(carrier(OWN, NEXT), ecn=2)
        for _ in range(HITS):
            self.expect(IN_PORT, packet, routed(shifted(packet)), OUT_PORT)
        for table, entry in entries.items():
            with self.case(f"{table}_counter"):
                data = self.wait_for_counter(lambda e=entry: self.read_direct_counter(e), HITS)
                self.assertEqual(data.packet_count, HITS)
                counted = self.counted_bytes(packet, egress=table in EGRESS_TABLES)
                self.assertEqual(data.byte_count, HITS * counted)
        for table, entry in idle.items():
            with self.case(f"{table}_counter (not hit)"):
                self.assertEqual(self.read_direct_counter(entry).packet_count, 0)
        with self.case("encap_v6_counter"):
            self.set_port_role(HOST_PORTS[0], HOST)
            self.add_host_route(NIC_B, OUT_PORT)
            self.send(HOST_PORTS[0], plain_ipv6_packet(NIC_B))
            self.assertEqual(len(self.collect(OUT_PORT, 1)), 1)
            data = self.wait_for_counter(lambda: self.read_direct_counter(idle["encap_v6"]), 1)
            self.assertEqual(data.packet_count, 1)


@group("counters")
@group("drop")
class DropCounterIsolationTest(SwitchTest):
    """A drop counts under its own ingress port and reason only."""

    @autocleanup
    def runTest(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        ports = (IN_PORT, OUT_PORT, HOST_PORTS[0])
        index = IN_PORT * 16 + DROP_NO_ROUTE
        bytes_before = self.read_counter("drop_counter", index).byte_count
        reasons = (DROP_NO_ROUTE, DROP_HOP_LIMIT)
        before = {(p, r): self.read_drop_counter(p, r) for p in ports for r in reasons}
        no_route = srv6_packet(carrier(NEXT))
        for _ in range(2):
            self.expect_drop(IN_PORT, no_route, DROP_NO_ROUTE)
        self.expect_drop(HOST_PORTS[0], plain_ipv6_packet(NIC_B, hop_limit=1), DROP_HOP_LIMIT)
        wanted = dict(before)
        wanted[(IN_PORT, DROP_NO_ROUTE)] += 2
        wanted[(HOST_PORTS[0], DROP_HOP_LIMIT)] += 1
        after = {key: self.read_drop_counter(*key) for key in before}
        self.assertEqual(after, wanted)
        self.assertEqual(self.read_counter("drop_counter", index).byte_count - bytes_before,
                         2 * self.counted_bytes(no_route))
