"""Trimming: on a congested port, trimmable packets over the queue-depth threshold come out cut
to trim_bytes (every header through RETH kept), lengths fixed, DSCP TRIMMED / TRIMMED_LASTHOP,
ahead of the queued whole packets; the same packets to an uncongested port (sent one at a time)
come out whole.

Congestion needs a slow port: the suite runs with `--switch-args "--priority-queues 8
--queue-rate 3:50"` (SLOW_PORT drains 50 packets/s). A burst of BURST packets outruns it, so its
queue grows; packet i meets enq_qdepth <= i packets, so with a threshold of THRESHOLD packets (in
the architecture's unit, `queue_depth`) the first THRESHOLD + 1 are never trimmed.
"""

from __future__ import annotations

from collections.abc import Callable

from ptf.testutils import group, verify_no_other_packets
from scapy.packet import Packet
from switch_base import (
    DSCP_NO_TRIM,
    DSCP_TRIMMABLE,
    DSCP_TRIMMABLE_RETX,
    DSCP_TRIMMED,
    DSCP_TRIMMED_LASTHOP,
    FABRIC_PORTS,
    HOST,
    NIC_B,
    ROLE_NIC,
    ROLE_T0,
    ROLE_T1,
    SLOW_PORT,
    UDT6,
    SwitchTest,
    carrier,
    decapped,
    headers_length,
    routed,
    shifted,
    srv6_packet,
    trimmed,
    usid,
    usid_prefix,
)

from ptf_tests.base import autocleanup

IN_PORT = FABRIC_PORTS[0]
FAST_PORT = FABRIC_PORTS[1]
OWN = usid(ROLE_T0, 1, 0x01)
TO_SLOW = usid(ROLE_T1, 1, 0x02)
TO_FAST = usid(ROLE_T1, 1, 0x03)
NIC = usid(ROLE_NIC, 1, 0x04)
THRESHOLD = 2
BURST = 14
PAYLOAD = 1000


class TrimTest(SwitchTest):
    def install(self) -> None:
        self.set_default_roles()
        self.add_block_drop()
        self.add_usid_un(OWN)
        self.add_end_dt6(usid_prefix(OWN, UDT6))
        self.add_usid_route(TO_SLOW, SLOW_PORT)
        self.add_usid_route(TO_FAST, FAST_PORT)
        for dscp in (DSCP_TRIMMABLE, DSCP_TRIMMABLE_RETX):
            self.add_trimmable_dscp(dscp)

    def burst(self, packets: list[Packet], whole: Callable[[Packet], Packet], port: int,
              trim_bytes: int, trim_dscp: int | None, *, paced: bool = False) -> tuple[int, int]:
        """Send the burst; every packet must come out of `port` once, whole or trimmed (never
        trimmed when trim_dscp is None). Returns (whole, trimmed) counts. `paced` sends each
        packet only after the previous one left, so no queue can build on any target."""
        expected_whole = {bytes(whole(p)): i for i, p in enumerate(packets)}
        expected_trim = ({} if trim_dscp is None else
                         {trimmed(whole(p), trim_bytes, trim_dscp): i
                          for i, p in enumerate(packets)})
        received: list[bytes] = []
        for packet in packets:
            self.send(IN_PORT, packet)
            if paced:
                received += self.collect(port, 1)
        if not paced:
            received = self.collect(port, len(packets))
        verify_no_other_packets(self)
        seen: dict[int, str] = {}
        for data in received:
            if data in expected_whole:
                index, form = expected_whole[data], "whole"
            elif data in expected_trim:
                index, form = expected_trim[data], "trimmed"
            else:
                self.fail(f"port {port} sent a packet that is neither a whole nor a trimmed "
                          f"packet of the burst ({len(data)} bytes): {data.hex()}")
            self.assertNotIn(index, seen, f"packet {index} came out twice")
            seen[index] = form
        missing = sorted(set(range(len(packets))) - set(seen))
        self.assertFalse(missing, f"packets {missing} never came out of port {port} "
                         f"(got {len(received)}: {seen})")
        for index in range(THRESHOLD + 1):
            self.assertEqual(seen[index], "whole",
                             f"packet {index} met a queue of at most {index} and was trimmed")
        trimmed_count = sum(form == "trimmed" for form in seen.values())
        return len(packets) - trimmed_count, trimmed_count

    def trim_count(self, port: int) -> int:
        return self.read_counter("trim_counter", port).packet_count


def fabric_burst(dst_usid: int, dscp: int = DSCP_TRIMMABLE, **kwargs: object) -> list[Packet]:
    return [srv6_packet(carrier(OWN, dst_usid, NIC, UDT6), psn=i, dscp=dscp,
                        payload_len=PAYLOAD, **kwargs)  # type: ignore[arg-type]
            for i in range(BURST)]


def uN_forward(packet: Packet) -> Packet:
    return routed(shifted(packet))


@group("trimming")
class TrimCongestedVsUncongestedTest(TrimTest):
    """The demonstration: the congested port trims, the uncongested one forwards whole."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        sample = uN_forward(fabric_burst(TO_SLOW)[0])
        trim_bytes = headers_length(sample)            # Ethernet … BTH + RETH
        for port in (SLOW_PORT, FAST_PORT):
            self.set_trim(port, self.queue_depth(THRESHOLD, sample), trim_bytes, DSCP_TRIMMED)
        with self.case("congested port"):
            before = self.trim_count(SLOW_PORT)
            whole, cut = self.burst(fabric_burst(TO_SLOW), uN_forward, SLOW_PORT, trim_bytes,
                                    DSCP_TRIMMED)
            self.assertGreater(cut, 0, "no packet was trimmed on the congested port")
            self.assertEqual(self.trim_count(SLOW_PORT) - before, cut)
        with self.case("uncongested port"):
            # Paced: a port without a rate limit still queues a back-to-back burst on BMv2,
            # whose egress pipeline is slower than PTF sends (ptf_tests/README.md, timing).
            before = self.trim_count(FAST_PORT)
            whole, cut = self.burst(fabric_burst(TO_FAST), uN_forward, FAST_PORT, trim_bytes,
                                    None, paced=True)
            self.assertEqual(whole, BURST)
            self.assertEqual(self.trim_count(FAST_PORT) - before, 0)


@group("trimming")
class TrimCasesTest(TrimTest):
    """Table-driven: SRH packets, retransmissions, last-hop trimming after decapsulation
    (TRIMMED_LASTHOP, no outer header left), a shorter trim length; non-trimmable DSCPs and
    ports without trim_config are never trimmed, congested or not."""

    @autocleanup
    def runTest(self) -> None:
        self.install()
        self.add_host_route(NIC_B, SLOW_PORT)
        srh = [carrier(usid(ROLE_T1, 1, 0x50), NIC, UDT6)]
        cases: list[tuple[str, list[Packet], Callable[[Packet], Packet], int, int | None]] = [
            ("fabric/srh", fabric_burst(TO_SLOW, segments=srh, segments_left=1), uN_forward,
             DSCP_TRIMMED, 0),
            ("fabric/retx dscp", fabric_burst(TO_SLOW, dscp=DSCP_TRIMMABLE_RETX), uN_forward,
             DSCP_TRIMMED, 0),
            ("fabric/shorter cut", fabric_burst(TO_SLOW), uN_forward, DSCP_TRIMMED, -20),
            ("last hop/decapsulated", [srv6_packet(carrier(OWN, UDT6), psn=i,
                                                   payload_len=PAYLOAD) for i in range(BURST)],
             decapped, DSCP_TRIMMED_LASTHOP, 0),
            ("not trimmable dscp", fabric_burst(TO_SLOW, dscp=DSCP_NO_TRIM), uN_forward,
             DSCP_TRIMMED, None),
        ]
        for name, packets, whole, dscp, adjust in cases:
            with self.case(name):
                if name.startswith("last hop"):
                    self.modify_table_entry("egress_port_role", {"port": SLOW_PORT},
                                            "set_egress_port_role", role=HOST)
                trim_bytes = headers_length(whole(packets[0])) + (adjust or 0)
                self.set_trim(SLOW_PORT, self.queue_depth(THRESHOLD, whole(packets[0])),
                              trim_bytes, dscp)
                _whole, cut = self.burst(packets, whole, SLOW_PORT, trim_bytes,
                                         None if adjust is None else dscp)
                if adjust is not None:
                    self.assertGreater(cut, 0, "no packet was trimmed")
                self.delete_table_entry("trim_config", {"port": SLOW_PORT})
        with self.case("no trim_config on the congested port"):
            whole, _cut = self.burst(fabric_burst(TO_SLOW), uN_forward, SLOW_PORT, 0, None)
            self.assertEqual(whole, BURST)
