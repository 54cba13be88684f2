"""mrc_transport (Sender, Receiver, Host) over the real NIC program (p4src/nic/mrc_nic.p4) on the
engine: two hosts, each behind its NIC, the NICs back to back as in test_mrc_nic_program, and a
wire loop in virtual time (what a NIC sends on a plane port reaches the other NIC one step
later, through an optional drop or trim filter; what it sends on its host port reaches its host
at once). Deterministic: seeded data and loss, no sleeps."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet
from test_mrc_nic_program import (
    ASSUMED_BAD,
    DSCP,
    GOOD,
    HOST_PORT,
    PROGRAM,
    A,
    B,
    Nic,
    Side,
)

from mrc_transport.config import ConnectionConfig
from mrc_transport.host import Host
from mrc_transport.receiver import Receiver
from mrc_transport.sender import (
    ECHO_TOOK_OUT,
    OP_EV_REPORT,
    REPORT_QUERY_FLAG,
    RetryLimitExceeded,
    Sender,
)
from mrc_transport.wire import (
    BTH,
    PETH,
    RETH,
    SETH,
    WRITE_OPCODES,
    CCState,
    ImmDt,
    Opcode,
    SackM,
    compact_ev,
    data_packet,
)
from softswitch.compiler import compile_file
from softswitch.ir.checked import CheckedProgram

KIB = 1024
STEP_US = 10
VA = 0x1000
MEMORY = VA + 256 * KIB
K = 3                                   # answered probes that bring an EV back (NIC and host)
BTH_AT = 14 + 40 + 40 + 8               # outer Ethernet, outer and inner IPv6, UDP
TRIM_BYTES = BTH_AT + 12 + 4 + 16       # a trimmed packet keeps every header through RETH
Filter = Callable[[bytes], bytes | None]   # a plane frame -> what goes on (None: dropped)


def config(me: Side, peer: Side, **kw: Any) -> ConnectionConfig:
    return ConnectionConfig(local_addr=me.address, peer_addr=peer.address, local_qp=me.qp,
                            peer_qp=peer.qp, probe_successes=K, **kw)


class Link:
    """Two hosts behind two NICs wired back to back, in virtual time."""

    def __init__(self, program: CheckedProgram, wire_filter: Filter | None = None,
                 **cfg: Any) -> None:
        psn = cfg.get("initial_psn", 0)
        self.nics = {A: Nic(program, A, B, initial_psn=psn, probe_successes=K),
                     B: Nic(program, B, A, initial_psn=psn, probe_successes=K)}
        self.hosts = {A: Host(config(A, B, **cfg), MEMORY), B: Host(config(B, A, **cfg), MEMORY)}
        self.filter = wire_filter
        self.now = 0
        self.echoes: dict[Side, list[int]] = {A: [], B: []}   # EVs the NICs' echoes named
        self.answers: dict[Side, list[int]] = {A: [], B: []}  # EVs the query answers named
        self.completions: dict[Side, list[tuple[int, int, int, int | None]]] = {A: [], B: []}
        self._wire: list[tuple[Side, int, bytes]] = []

    def step(self) -> None:
        arriving, self._wire = self._wire, []
        for side, port, frame in arriving:
            self._into(side, port, frame)
        for side, host in self.hosts.items():
            for frame in host.poll(self.now):
                self._into(side, HOST_PORT, frame)
            self.completions[side] += host.receiver.completions()
        self.now += STEP_US

    def _into(self, side: Side, port: int, frame: bytes) -> None:
        peer = B if side is A else A
        for out in self.nics[side].sw.process_packet(port, frame):
            if out.port == HOST_PORT:
                if out.data[BTH_AT - 40] == OP_EV_REPORT:   # no outer header towards the host
                    probe_id = int.from_bytes(out.data[BTH_AT - 28:BTH_AT - 26])
                    if probe_id & REPORT_QUERY_FLAG:
                        self.answers[side].append(probe_id & 0xFF)
                    else:
                        self.echoes[side].append(probe_id & ~ECHO_TOOK_OUT)
                self.hosts[side].on_frame(out.data, self.now)
            elif (passed := out.data if self.filter is None else self.filter(out.data)):
                self._wire.append((peer, out.port, passed))

    def run(self, until: Callable[[], bool] | None = None, limit_us: int = 100_000) -> None:
        """Step until `until()` (default: every write acknowledged) or `limit_us` has passed."""
        until = until or self.idle
        end = self.now + limit_us
        while not until():
            assert self.now < end, "did not finish in time"
            self.step()

    def run_for(self, us: int) -> None:
        end = self.now + us
        self.run(lambda: self.now >= end)

    def idle(self) -> bool:
        return all(h.sender.done for h in self.hosts.values())

    def counters(self, side: Side = A) -> dict[str, int]:
        return self.hosts[side].sender.counters


MakeLink = Callable[..., Link]


@pytest.fixture(scope="module")
def make_link() -> MakeLink:
    # A closure, not the program: pytest's failure report would repr the whole program.
    program = compile_file(PROGRAM)

    def make(*args: Any, **kw: Any) -> Link:
        return Link(program, *args, **kw)

    return make


def payload(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def received(link: Link, side: Side, data: bytes, va: int = VA) -> bytes:
    return bytes(link.hosts[side].receiver.memory[va:va + len(data)])


# Plane frames read by offset: cheaper than dissecting every one, and the NIC's layout is fixed.
def flow_label(frame: bytes) -> int:
    return int.from_bytes(frame[14:18]) & 0xFFFFF


def is_data(frame: bytes) -> bool:
    return frame[BTH_AT] in WRITE_OPCODES


def psn_of(frame: bytes) -> int:
    return int.from_bytes(frame[BTH_AT + 9:BTH_AT + 12])


class DropFirst:
    """Drop the first transmission of one PSN's data packet."""

    def __init__(self, psn: int) -> None:
        self.psn = psn
        self.dropped = 0

    def __call__(self, frame: bytes) -> bytes | None:
        if self.dropped == 0 and is_data(frame) and psn_of(frame) == self.psn:
            self.dropped = 1
            return None
        return frame


def trim(frame: bytes) -> bytes:
    """What a trimming switch makes of a data packet: TRIMMED DSCP, cut after RETH, lengths
    fixed."""
    pkt = Ether(frame[:TRIM_BYTES])
    outer = pkt[IPv6]
    outer.tc = DSCP["trimmed"] << 2 | (outer.tc & 3)
    for layer in (outer, outer.payload):
        layer.plen = None
    pkt[UDP].len = None
    return bytes(pkt)


# -- the scenarios ---------------------------------------------------------------------------


def test_a_256_kib_write_arrives_intact_and_completes(make_link: MakeLink) -> None:
    link = make_link()
    data = payload(256 * KIB)
    msn = link.hosts[A].sender.write(data, VA)
    link.run()
    assert received(link, B, data) == data
    assert link.hosts[A].sender.completed() == [msn]
    assert link.completions[B] == [(msn, VA, len(data), None)]
    counters = link.counters()
    assert counters["sent"] == 256 and counters["retransmitted"] == 0
    assert link.nics[B].count("rx_data") == 256 and link.hosts[B].unexpected == 0


def test_writes_with_immediate_complete_in_msn_order(make_link: MakeLink) -> None:
    # The first packet of message 0 is lost once: messages 1 and 2 arrive whole before it
    # does, and must not complete before it.
    link = make_link(DropFirst(0))
    sizes, imms = (3000, 1, 2048), (0xA0, 0xA1, 0xA2)
    vas = (VA, VA + 8 * KIB, VA + 16 * KIB)
    datas = [payload(size, seed) for seed, size in enumerate(sizes)]
    sender = link.hosts[A].sender
    msns = [sender.write(d, va, imm) for d, va, imm in zip(datas, vas, imms)]
    assert msns == [0, 1, 2]
    link.run(lambda: link.nics[B].count("rx_data") == 5)   # all but the lost packet
    assert [received(link, B, d, va) for d, va in zip(datas[1:], vas[1:])] == datas[1:]
    assert link.completions[B] == []
    link.run()
    assert link.completions[B] == list(zip(msns, vas, sizes, imms))
    assert [received(link, B, d, va) for d, va in zip(datas, vas)] == datas
    assert sender.completed() == msns
    assert link.counters()["retransmitted"] == 1


def test_a_dead_ev_is_reported_assumed_bad_probed_and_brought_back(
        make_link: MakeLink) -> None:
    dead = compact_ev(1, 3)

    def drop_ev_3(frame: bytes) -> bytes | None:   # data and probes both ways
        return None if flow_label(frame) == dead else frame

    link = make_link(drop_ev_3)
    datas = {A: payload(128 * KIB, 1), B: payload(128 * KIB, 2)}
    for side, data in datas.items():
        link.hosts[side].sender.write(data, VA)
    link.run()
    for side, peer in ((A, B), (B, A)):
        assert received(link, peer, datas[side]) == datas[side]
        counters = link.counters(side)
        # Each loss reported once: late (before reorder_us says lost) or when found lost.
        losses = counters["timeout"] + counters["sack_hole"] + counters["path_out"]
        assert losses > 0 and counters["reports"] + counters["early_reports"] == losses
        assert set(link.echoes[side]) == {3}
        assert link.nics[side].ev_state(3) == ASSUMED_BAD
        assert link.hosts[side].sender.probing == {3}
    # While the path stays dead, every probe of it goes unanswered.
    link.run_for(5000)
    for side in (A, B):
        counters = link.counters(side)
        assert counters["probes"] >= 5 and counters["probe_answers"] == 0
        assert counters["probe_timeouts"] >= counters["probes"] - 1
        assert link.nics[side].ev_state(3) == ASSUMED_BAD
    link.filter = None
    link.run(lambda: not any(h.sender.probing for h in link.hosts.values()))
    for side in (A, B):
        assert link.nics[side].ev_state(3) == GOOD
        assert link.counters(side)["probe_answers"] == K
        assert link.nics[side].count("tx_probe") == link.counters(side)["probes"]


def test_trimmed_packets_are_nacked_and_resent_without_timeouts(
        make_link: MakeLink) -> None:
    seen = trimmed = 0

    def trim_every_10th(frame: bytes) -> bytes:
        nonlocal seen, trimmed
        if not is_data(frame):
            return frame
        seen += 1
        if seen % 10:
            return frame
        trimmed += 1
        return trim(frame)

    # A window of the receiver's bitmap (64): wider, a trimmed PSN holds the receiver's
    # cumulative point back for a round trip and what is sent beyond its bitmap is refused.
    link = make_link(trim_every_10th, window=64)
    data = payload(256 * KIB)
    link.hosts[A].sender.write(data, VA)
    link.run()
    assert received(link, B, data) == data
    counters = link.counters()
    assert trimmed > 25 and link.nics[B].count("rx_trimmed") == trimmed
    assert counters["nack_trimmed"] == counters["retransmitted"] == trimmed
    assert counters["timeout"] == counters["sack_hole"] == counters["reports"] == 0


def test_one_percent_random_loss_on_every_plane(make_link: MakeLink) -> None:
    # Seeded so that data and feedback are both lost, both ways (holes, a lost tail, and with
    # the default window of 128 what goes past the receiver's 64-PSN bitmap meanwhile).
    rng = random.Random(7)
    lost = {"data": 0, "feedback": 0}

    def lossy(frame: bytes) -> bytes | None:
        if rng.random() >= 0.01:
            return frame
        lost["data" if is_data(frame) else "feedback"] += 1
        return None

    link = make_link(lossy)
    datas = {A: payload(256 * KIB, 3), B: payload(128 * KIB, 4)}
    for side, data in datas.items():
        link.hosts[side].sender.write(data, VA)
    link.run()
    assert lost["data"] > 0 and lost["feedback"] > 0
    assert received(link, B, datas[A]) == datas[A] and received(link, A, datas[B]) == datas[B]
    assert link.nics[B].count("rx_data") == 256 and link.nics[A].count("rx_data") == 128
    repaired = sum(link.counters(side)[cause] for side in (A, B) for cause in
                   ("sack_hole", "timeout", "overtaken", "path_out"))
    assert repaired >= lost["data"]


def test_what_went_on_an_ev_with_its_path_is_resent_once_that_ev_is_out(
        make_link: MakeLink) -> None:
    # A's EV 3 turns into a blackhole after its first packets (as a cable that goes silent): the
    # first of them late (a round trip past what answers the rest) are reported and take the EV
    # out; the NIC's echo says so, and A asks its NIC about each packet in flight: those that
    # went on EV 3 are late too, a second sign, so the path is dead and they go again at once,
    # not each after its own reordering allowance.
    dead = compact_ev(1, 3)   # EV 3 is in plane 1 (3 mod 2)
    seen = {"ev3": 0}
    lost: list[int] = []

    def blackhole(frame: bytes) -> bytes | None:
        if flow_label(frame) != dead or not is_data(frame):
            return frame
        seen["ev3"] += 1
        if seen["ev3"] <= 3:
            return frame
        lost.append(psn_of(frame))
        return None

    link = make_link(blackhole)
    data = payload(128 * KIB)
    link.hosts[A].sender.write(data, VA)
    link.run()
    assert received(link, B, data) == data
    counters = link.counters()
    assert len(lost) >= 3, lost
    # Lateness found the first (reports, echoes naming EV 3); the NIC's answers every one,
    # resent once each.
    assert counters["early_reports"] == len(link.echoes[A]) > 0
    assert set(link.echoes[A]) == {3} and counters["reports"] == 0
    assert counters["path_out"] == counters["retransmitted"] == len(lost)
    assert link.answers[A] == [3] * len(lost)


@pytest.mark.parametrize(("psn", "cause"), [(5, "overtaken"), (31, "sack_hole")])
def test_a_lost_packet_is_resent_exactly_once(make_link: MakeLink, psn: int,
                                              cause: str) -> None:
    # PSN 5: PSN 13 went on its EV next, and its SACK, without PSN 5, says it is lost (the
    # NIC's note); PSN 31, the last, has nothing after it: the latest sent, the tail rule finds
    # it after the reordering allowance (not the retransmission timer).
    link = make_link(DropFirst(psn))
    data = payload(32 * KIB)
    link.hosts[A].sender.write(data, VA)
    link.run()
    assert received(link, B, data) == data
    counters = link.counters()
    assert counters["retransmitted"] == counters[cause] == 1
    # Either way (overtaken on its EV, or the tail with nothing after it) the NIC pinned
    # the loss on the EV that carried the PSN (slot psn % 8) and took it out at once.
    assert counters["reports"] == 1 and link.echoes[A] == [psn % 8]
    assert link.nics[A].ev_state(psn % 8) == ASSUMED_BAD


def test_psns_wrap_at_24_bits(make_link: MakeLink) -> None:
    link = make_link(DropFirst(0x000002), initial_psn=0xFFFFF0)
    data = payload(64 * KIB)
    link.hosts[A].sender.write(data, VA)
    link.run()
    assert received(link, B, data) == data
    assert link.counters()["overtaken"] == 1 and link.completions[B] == [(0, VA, len(data), None)]


def test_a_psn_that_is_never_acknowledged_ends_the_connection(make_link: MakeLink) -> None:
    link = make_link(lambda frame: None, max_retries=2)
    link.hosts[A].sender.write(b"x" * 100, VA)
    with pytest.raises(RetryLimitExceeded, match="after 2 retransmissions"):
        link.run()
    assert link.counters()["timeout"] == 2


# -- the halves on their own -------------------------------------------------------------------


def frames_of(sender: Sender, now: int = 0) -> list[Ether]:
    return [Ether(f) for f in sender.poll(now)]


def test_a_write_is_cut_into_mtu_packets_with_the_immediate_on_the_last() -> None:
    sender = Sender(config(A, B, initial_psn=0xFFFFFE, mtu=1000))
    sender.write(b"a" * 2500, 0x5000, immediate=0xBEEF)
    sender.write(b"", 0x9000)
    got = frames_of(sender)
    assert [p[BTH].opcode for p in got] == [Opcode.WRITE_FIRST, Opcode.WRITE_MIDDLE,
                                           Opcode.WRITE_LAST_IMM, Opcode.WRITE_ONLY]
    assert [p[BTH].psn for p in got] == [0xFFFFFE, 0xFFFFFF, 0, 1]
    assert [p[RETH].virtual_address for p in got] == [0x5000, 0x5000 + 1000, 0x5000 + 2000,
                                                      0x9000]
    assert [p[RETH].dma_length for p in got] == [2500, 2500, 2500, 0]
    assert got[2][ImmDt].data == 0xBEEF and ImmDt not in got[1]
    assert {p[BTH].dest_qp for p in got} == {B.qp} and not any(p[BTH].retransmit for p in got)


def test_the_window_bounds_what_is_in_flight() -> None:
    sender = Sender(config(A, B, window=4))
    sender.write(b"w" * 10 * 1024, 0)
    assert len(sender.poll(0)) == 4 and sender.poll(10) == []
    assert sender.counters["sent"] == 4 and not sender.done


def write_frame(**kw: Any) -> bytes:
    fields: dict[str, Any] = dict(src=A.address, dst=B.address, dest_qp=B.qp, psn=0,
                                  opcode=Opcode.WRITE_ONLY, msn=0, va=0, r_key=7,
                                  dma_length=4, payload=b"data")
    return bytes(data_packet(**(fields | kw)))


def test_the_receiver_counts_and_ignores_bad_packets() -> None:
    receiver = Receiver(config(B, A), 64)
    receiver.on_frame(write_frame(va=62))                    # past the end of memory
    receiver.on_frame(write_frame(dma_length=1 << 20))       # an extent past the end
    receiver.on_frame(write_frame(r_key=8))
    receiver.on_frame(write_frame(dest_qp=0x99))
    receiver.on_frame(b"\x00" * 20)
    assert receiver.counters == {"placed": 0, "duplicates": 0, "bad_va": 2, "bad_r_key": 1,
                                 "foreign": 1, "malformed": 1}
    receiver.on_frame(write_frame(va=60))
    receiver.on_frame(write_frame(va=60))                    # a duplicate: already complete
    assert receiver.completions() == [(0, 60, 4, None)] and receiver.memory[60:] == b"data"
    assert receiver.counters["duplicates"] == 1


def from_peer(feedback: Packet) -> bytes:
    """`feedback` (BTH and what follows) as B's NIC would deliver it to A's host."""
    return bytes(Ether() / IPv6(src=B.address, dst=A.address, nh=17)
                 / UDP(sport=0, dport=4791) / feedback)


def test_the_host_counts_what_is_neither_data_nor_feedback() -> None:
    host = Host(config(A, B), 64)
    probe = from_peer(BTH(opcode=Opcode.PROBE, dest_qp=A.qp) / PETH(probe_id=3))
    host.on_frame(probe, 0)   # a probe is for the NICs, never the host
    host.on_frame(bytes(Ether() / IPv6() / UDP(dport=53)), 0)
    assert host.unexpected == 2


def test_an_always_skip_sack_starts_probes_of_its_ev() -> None:
    # The NIC makes the EV ASSUMED_BAD on such a SACK without an echo: the host must probe it.
    sender = Sender(config(A, B))
    sender.on_frame(from_peer(
        BTH(opcode=Opcode.SACK, dest_qp=A.qp)
        / SETH(m=SackM.ALWAYS_SKIP, entropy=compact_ev(0, 4), cack_psn=0xFFFFFF) / CCState()), 0)
    assert sender.probing == {4}
    [probe] = frames_of(sender)
    assert probe[BTH].opcode == Opcode.PROBE and PETH(bytes(probe[BTH].payload)).probe_id == 4


def test_frames_too_short_to_dissect_are_counted_not_raised() -> None:
    host = Host(config(A, B), MEMORY)
    for frame in (b"", b"\x00" * 13):
        host.on_frame(frame, 0)
    cut_echo = bytes(Ether() / IPv6(nh=17) / UDP(dport=4791)
                     / BTH(opcode=OP_EV_REPORT, dest_qp=A.qp)) + b"\x00" * 4
    host.on_frame(cut_echo, 0)   # an EV-report echo with its PETH cut short
    host.receiver.on_frame(b"\x01\x02")
    assert host.unexpected == 2
    assert host.sender.counters["ignored"] == 1 and host.sender.counters["echoes"] == 0
    assert host.receiver.counters["malformed"] == 1
