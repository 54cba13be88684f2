"""RuntimeBasicsTest: helpers named after runtime_basics.p4's table intents, and test packets."""

from __future__ import annotations

from typing import Any

import ptf.testutils as testutils

from ptf_tests.base import P4RuntimeTest

HOST_MAC = "00:00:00:00:aa:01"      # the sender of every test packet
ROUTER_MAC = "00:00:00:00:00:fe"    # the destination MAC senders use
NEXT_HOP_MAC = "00:00:00:00:bb:02"  # what `route` rewrites the destination MAC to


def tcp_packet(dst: str = "10.0.1.1", ttl: int = 64, src_mac: str = HOST_MAC,
               dst_mac: str = ROUTER_MAC, **extra: Any) -> Any:
    return testutils.simple_tcp_packet(eth_dst=dst_mac, eth_src=src_mac, ip_src="192.168.0.1",
                                       ip_dst=dst, ip_ttl=ttl, **extra)


def routed(packet: Any, dmac: str = NEXT_HOP_MAC) -> Any:
    """What `route` makes of a packet: new destination MAC, TTL - 1 (checksum recomputed)."""
    out = packet.copy()
    out["Ether"].dst = dmac
    out["IP"].ttl -= 1
    del out["IP"].chksum
    return out.__class__(bytes(out))


class RuntimeBasicsTest(P4RuntimeTest):
    """P4RuntimeTest plus setup helpers for runtime_basics.p4."""

    def add_route(self, prefix: str, port: int, dmac: str = NEXT_HOP_MAC) -> Any:
        return self.insert_table_entry("ipv4_lpm", {"dst_addr": prefix}, "route",
                                       port=port, dmac=dmac)

    def add_mcast_route(self, prefix: str, group_id: int) -> Any:
        return self.insert_table_entry("ipv4_lpm", {"dst_addr": prefix}, "set_mcast_grp",
                                       grp=group_id)

    def add_acl(self, action: str, priority: int = 10, ingress_port: int | None = None,
                dst_mac: str | None = None, ether_type: int | None = None, **params: Any) -> Any:
        match: dict[str, object] = {}
        if ingress_port is not None:
            match["ingress_port"] = ingress_port
        if dst_mac is not None:
            match["dst_addr"] = dst_mac
        if ether_type is not None:
            match["ether_type"] = ether_type
        return self.insert_table_entry("acl", match, action, priority=priority, **params)

    def add_known_mac(self, mac: str) -> Any:
        return self.insert_table_entry("smac", {"src_addr": mac}, "NoAction")
