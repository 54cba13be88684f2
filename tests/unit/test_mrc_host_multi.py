"""NicHost: several connections behind one NIC host port. Demultiplexing by BTH dest_qp (and EV
report echoes by the peer's address and QP), merged polls, per-connection state, failures kept
per connection; then two connections each way through the real NIC program, back to back."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from nic_pair import BACKUPS, EV_COUNT, PLANES, R_KEY, addr
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet
from test_mrc_nic_program import PROGRAM, A, B, Nic, Side
from test_mrc_transport import K, config, payload

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import data_frame
from mrc_transport.nic_host import NicHost
from mrc_transport.sender import OP_EV_REPORT, RetryLimitExceeded
from mrc_transport.wire import (
    BTH,
    HOST_MAC,
    NETH,
    NIC_MAC,
    PETH,
    SETH,
    CCState,
    NackReason,
    Opcode,
)
from softswitch.compiler import compile_file
from softswitch.engine.tables import ExactMatch
from softswitch.ir.checked import CheckedProgram

C_ADDR = "2001:db8::c"
A2_QP, B2_QP, C_QP = 0x13, 0x24, 0x33   # the second connection between A and B; A to C
A2_CONN, B2_CONN = 4, 6                 # its NIC connection numbers (A.conn 3, B.conn 5)
VA = 0x1000


def a_host(memory: int = 1 << 16) -> NicHost:
    """A with a connection to B (A.qp <-> B.qp) and one to C (A2_QP <-> C_QP)."""
    host = NicHost(memory)
    host.add_connection(config(A, B))
    host.add_connection(ConnectionConfig(A.address, C_ADDR, A2_QP, C_QP))
    return host


def up(src: str, dst: str, feedback: Packet) -> bytes:
    """`feedback` (BTH and what follows) as A's NIC hands it up."""
    return bytes(Ether(src=NIC_MAC, dst=HOST_MAC) / IPv6(src=src, dst=dst, nh=17)
                 / UDP(sport=0, dport=4791) / feedback)


def sack(dest_qp: int, cack_psn: int) -> bytes:
    return up(B.address, A.address, BTH(opcode=Opcode.SACK, dest_qp=dest_qp)
              / SETH(cack_psn=cack_psn) / CCState())


def write_to(dest_qp: int, src: str, data: bytes, va: int = VA) -> bytes:
    return data_frame(src=src, dst=A.address, dest_qp=dest_qp, r_key=7, psn=0,
                      opcode=Opcode.WRITE_ONLY, msn=0, va=va, dma_length=len(data),
                      payload=data)


def test_writes_go_to_the_receiver_of_their_qp_into_the_hosts_memory() -> None:
    host = a_host()
    host.on_frame(write_to(A.qp, B.address, b"from b"), 0)
    host.on_frame(write_to(A2_QP, C_ADDR, b"from c", VA + 0x100), 0)
    host.on_frame(write_to(0x99, C_ADDR, b"nobody"), 0)
    assert host.receiver(A.qp).completions() == [(0, VA, 6, None)]
    assert host.receiver(A2_QP).completions() == [(0, VA + 0x100, 6, None)]
    assert host.memory[VA:VA + 6] == b"from b" and host.memory[VA + 0x100:VA + 0x106] == b"from c"
    assert host.receiver(A.qp).memory is host.memory
    assert host.unexpected == 1


def test_a_connection_may_bring_its_own_memory() -> None:
    host = NicHost(0)
    own = bytearray(64)
    host.add_connection(config(A, B), memory=own)
    host.add_connection(ConnectionConfig(A.address, C_ADDR, A2_QP, C_QP), memory=128)
    host.on_frame(write_to(A.qp, B.address, b"x", va=3), 0)
    assert own[3] == ord("x") and len(host.receiver(A2_QP).memory) == 128


def test_feedback_goes_to_the_sender_of_its_qp() -> None:
    host = a_host()
    to_b, to_c = host.sender(A.qp), host.sender(A2_QP)
    to_b.write(b"b" * 10, VA, now_us=0)
    to_c.write(b"c" * 10, VA, now_us=0)
    host.poll(0)
    host.on_frame(sack(A2_QP, 0), 5)             # acknowledges C's connection only
    assert to_c.done and not to_b.done and to_c.completed() == [0]
    host.on_frame(up(B.address, A.address, BTH(opcode=Opcode.NACK, dest_qp=A.qp)
                     / NETH(nack_reason=NackReason.TRIMMED, nack_psn=0)), 6)
    assert [f[14 + 40 + 8 + 8] & 0x20 for f in host.poll(6)] == [0x20]   # B's resent
    assert to_b.counters["nack_trimmed"] == 1 and to_c.counters["retransmitted"] == 0
    host.on_frame(sack(0x77, 0), 7)
    assert host.unexpected == 1


def test_report_echoes_go_to_the_sender_of_the_peer_they_name() -> None:
    host = a_host()
    # Our own report comes back as we sent it: to the peer's address and QP.
    echo = up(A.address, C_ADDR, BTH(opcode=OP_EV_REPORT, dest_qp=C_QP) / PETH(probe_id=5))
    host.on_frame(echo, 0)
    assert host.sender(A2_QP).probing == {5} and host.sender(A.qp).probing == frozenset()
    host.on_frame(up(A.address, B.address, BTH(opcode=OP_EV_REPORT, dest_qp=C_QP)
                     / PETH(probe_id=6)), 0)    # C's QP but B's address: nobody's
    host.on_frame(up(A.address, C_ADDR, BTH(opcode=Opcode.PROBE, dest_qp=A2_QP)
                     / PETH(probe_id=6)), 0)    # a probe is for the NICs
    for junk in (b"", b"\x00" * 20, bytes(Ether(dst=HOST_MAC) / IPv6() / UDP(dport=53))):
        host.on_frame(junk, 0)
    assert host.unexpected == 5
    assert host.next_deadline_us(3) == 3        # the probe of EV 5 is due
    [probe] = host.poll(3)
    assert probe[14 + 40 + 8] == Opcode.PROBE
    assert probe[14 + 24:14 + 40] == socket.inet_pton(socket.AF_INET6, C_ADDR)


def test_poll_interleaves_the_connections_in_the_order_they_were_added() -> None:
    host = a_host()
    host.sender(A2_QP).write(b"c" * 3000, VA)   # 3 packets to C
    host.sender(A.qp).write(b"b" * 2000, VA)    # 2 packets to B
    frames = host.poll(0)
    qps = [int.from_bytes(f[14 + 40 + 8 + 5:14 + 40 + 8 + 8]) for f in frames]
    assert qps == [B.qp, C_QP, B.qp, C_QP, C_QP]
    assert host.poll(1) == [] and host.next_deadline_us(1) == 500   # the RTO
    assert host.connection(A.qp).config.peer_qp == B.qp
    assert [c.config.local_qp for c in host.connections] == [A.qp, A2_QP]


def paced_host(gbps: float) -> NicHost:
    """a_host with both connections on a NIC of `gbps`, each with 20 packets to send."""
    host = NicHost(1 << 16)
    host.add_connection(config(A, B, tx_gbps=gbps))
    host.add_connection(ConnectionConfig(A.address, C_ADDR, A2_QP, C_QP, tx_gbps=gbps))
    host.sender(A.qp).write(b"b" * 20_000, VA)
    host.sender(A2_QP).write(b"c" * 20_000, VA)
    return host


def qps_of(frames: list[bytes]) -> list[int]:
    return [int.from_bytes(f[14 + 40 + 8 + 5:14 + 40 + 8 + 8]) for f in frames]


def test_the_connections_share_the_nics_line_rate() -> None:
    """Two connections on a 20 Gb/s NIC hand it 20 Gb/s together, not 20 each (the excess
    would wait in the NIC's own queue, or overflow it, for no fault of any path)."""
    host = paced_host(20.0)
    sent = [len(host.poll(now)) for now in range(10)]
    wire_ns = (1024 + 80 + 40) * 8 / 20.0   # a full packet with its headers: ~0.46 µs
    # those whose transmission starts within the 10 µs, with either connection's own rate
    # it would be twice as many
    assert abs(sum(sent) - 10_000 / wire_ns) <= 2
    assert host.transmitter is host.sender(A.qp).transmitter is host.sender(A2_QP).transmitter


def test_the_connections_take_the_wire_in_turn_packet_by_packet() -> None:
    """A NIC's round robin over its QPs: one packet from each in turn while the wire is free,
    and the next poll that hands out frames starts one connection further."""
    host = paced_host(100.0)   # about 11 packets start in a µs
    first = qps_of(host.poll(0))
    assert first[:4] == [B.qp, C_QP, B.qp, C_QP] and abs(first.count(B.qp)
                                                          - first.count(C_QP)) <= 1
    assert host.poll(0) == []               # the wire is busy until the next µs
    second = qps_of(host.poll(1))
    assert second[0] == C_QP and abs(second.count(B.qp) - second.count(C_QP)) <= 1


def test_an_unpaced_nic_hands_out_every_window_at_once() -> None:
    host = paced_host(0.0)
    assert len(host.poll(0)) == 40   # both writes: 20 packets each fit the window


def test_one_nic_has_one_line_rate() -> None:
    host = NicHost(1 << 16)
    host.add_connection(config(A, B, tx_gbps=20.0))
    with pytest.raises(ValueError, match=r"tx_gbps 10\.0 is not this NIC's 20\.0"):
        host.add_connection(ConnectionConfig(A.address, C_ADDR, A2_QP, C_QP, tx_gbps=10.0))
    assert len(host.connections) == 1


def test_a_failed_connection_is_kept_aside_and_the_others_go_on() -> None:
    host = NicHost(1 << 16)
    dead = host.add_connection(config(A, B, max_retries=0, rto_us=10))
    alive = host.add_connection(ConnectionConfig(A.address, C_ADDR, A2_QP, C_QP, rto_us=100))
    dead.sender.write(b"x", VA)
    alive.sender.write(b"y", VA)
    assert len(host.poll(0)) == 2
    assert len(host.poll(10)) == 0 and isinstance(dead.error, RetryLimitExceeded)
    assert host.failed == [dead] and alive.error is None
    assert host.next_deadline_us(10) == 100      # the live one's RTO; the dead one is out
    assert len(host.poll(100)) == 2              # report + retransmission
    host.on_frame(write_to(A.qp, B.address, b"late"), 101)   # still taken for the dead one
    assert dead.receiver.counters["placed"] == 1


def test_qps_and_peers_are_one_connection_each() -> None:
    host = a_host()
    with pytest.raises(ValueError, match="local QP"):
        host.add_connection(ConnectionConfig(A.address, "2001:db8::d", A.qp, 0x44))
    with pytest.raises(ValueError, match="exists"):
        host.add_connection(ConnectionConfig(A.address, "2001:db8:0::c", 0x55, C_QP))
    assert len(host.connections) == 2


# -- through the NIC program -----------------------------------------------------------------------


def add_nic_connection(nic: Nic, conn: int, local_qp: int, peer_qp: int) -> None:
    """A second connection on `nic` towards the same peer NIC (as Nic sets up the first)."""
    peer: Side = nic.peer
    nic.sw.table("tx_connection").add_entry(
        [ExactMatch(addr(peer.address)), ExactMatch(peer_qp)], "set_connection",
        [conn, 1, EV_COUNT - 1, PLANES, BACKUPS, 2, peer.row, peer.ua, PLANES, 0, 20])
    nic.sw.table("local_qp").add_entry(
        [ExactMatch(local_qp)], "set_local_qp",
        [conn, 1, EV_COUNT - 1, PLANES, BACKUPS, 2, K, 0, peer_qp])
    nic.sw.table("rx_r_key").add_entry([ExactMatch(local_qp), ExactMatch(R_KEY)], "r_key_valid",
                                       [])


def two_connection_hosts(program: CheckedProgram, memory: int, **cfg: Any,
                         ) -> tuple[dict[Side, Nic], dict[Side, NicHost]]:
    """A and B with two connections between them (A.qp <-> B.qp, A2_QP <-> B2_QP), each NIC
    and each NicHost configured for both; each connection's receiver with its own memory."""
    nics = {A: Nic(program, A, B, probe_successes=K), B: Nic(program, B, A, probe_successes=K)}
    add_nic_connection(nics[A], A2_CONN, A2_QP, B2_QP)
    add_nic_connection(nics[B], B2_CONN, B2_QP, A2_QP)
    hosts = {A: NicHost(), B: NicHost()}
    for me, peer, second, peer_second in ((A, B, A2_QP, B2_QP), (B, A, B2_QP, A2_QP)):
        hosts[me].add_connection(config(me, peer, **cfg), memory)
        hosts[me].add_connection(ConnectionConfig(me.address, peer.address, second, peer_second,
                                                  probe_successes=K, **cfg), memory)
    return nics, hosts


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(PROGRAM)


def test_two_connections_each_way_through_the_nics(program: CheckedProgram) -> None:
    from test_mrc_transport_events import EventLink, lossy

    nics, hosts = two_connection_hosts(program, VA + (64 << 10))
    link = EventLink(nics, hosts, lossy(5, dead_until=800))
    datas = {}
    for n, (side, host) in enumerate(hosts.items()):
        for m, connection in enumerate(host.connections):
            datas[side, m] = payload(40 << 10, 4 * n + m)
            link.at(0, lambda s=connection.sender, d=datas[side, m]: s.write(d, VA, now_us=0))
    link.run_events(100_000)
    assert link.quiet()
    for (side, m), data in datas.items():
        peer = B if side is A else A
        sender = hosts[side].connections[m].sender
        receiver = hosts[peer].connections[m].receiver
        assert bytes(receiver.memory[VA:VA + len(data)]) == data
        assert receiver.completions() == [(0, VA, len(data), None)]
        assert sender.completed() == [0] and len(sender.timings) == 1
        assert sender.counters["echoes"] > 0 and sender.counters["probe_answers"] >= K
    assert hosts[A].unexpected == hosts[B].unexpected == 0
    assert all(c.receiver.counters["foreign"] == 0 for h in hosts.values()
               for c in h.connections)
