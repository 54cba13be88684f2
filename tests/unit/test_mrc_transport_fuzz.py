"""Forged and corrupt feedback into the host transport, seeded: a sender fed random SACKs,
NACKs, echoes and stray frames between its polls raises nothing but TransportError (a
connection nothing genuine answered ending, by design) and is never wedged: once the genuine
peer answers every packet it sends, it raises nothing and completes. A receiver fed random writes (any opcode, address, length, MSN, QP,
R_Key) raises nothing and its memory keeps its size."""

from __future__ import annotations

import random

import pytest

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import NackFrame, OtherFrame, Parsed, SackFrame, WriteFrame, parse
from mrc_transport.nscc import NsccConfig
from mrc_transport.receiver import Receiver
from mrc_transport.sender import Sender, TransportError
from mrc_transport.wire import PSN_MOD

QP = 0x11


def config(rng: random.Random) -> ConnectionConfig:
    return ConnectionConfig(
        local_addr="2001:db8::1", peer_addr="2001:db8::2", local_qp=QP, peer_qp=0x22,
        rto_us=rng.choice([30, 100, 500]), reorder_us=rng.choice([0, 10, 30]),
        initial_psn=rng.choice([0, PSN_MOD - 3, rng.randrange(PSN_MOD)]),
        cc=NsccConfig(base_rtt_us=10, linkspeed_gbps=100) if rng.random() < 0.5 else None,
        tx_gbps=rng.choice([0.0, 100.0]))


def field(rng: random.Random, bits: int) -> int:
    """A value of `bits` bits, its edges more often than chance gives them."""
    return rng.choice([0, 1, (1 << bits) - 1, 1 << (bits - 1), rng.randrange(1 << bits)])


def forged(rng: random.Random, first_psn: int) -> Parsed:
    """Feedback as an attacker, a corrupt wire or a stale path could hand it up."""
    near = (first_psn + rng.randrange(-5, 80)) % PSN_MOD
    kind = rng.randrange(5)
    if kind == 0:      # anything at all
        return SackFrame(rng.choice([QP, field(rng, 24)]), field(rng, 24), rng.randrange(4),
                         rng.randrange(2), field(rng, 16), field(rng, 8), field(rng, 24),
                         field(rng, 16), field(rng, 64))
    if kind == 1:      # plausible PSNs, any offset and bitmap
        return SackFrame(QP, near, rng.randrange(4), rng.randrange(2), rng.randrange(1 << 16),
                         rng.randrange(256), near, rng.choice([0, 1, 2, 65000, 65535]),
                         rng.randrange(1 << 64))
    if kind == 2:
        return NackFrame(QP, field(rng, 24), field(rng, 8), field(rng, 16), field(rng, 8),
                         near if rng.random() < 0.7 else field(rng, 24))
    if kind == 3:      # an EV-report echo or any other opcode, any tail
        return OtherFrame(rng.choice([0xDE, 0xDF, 0xE0, rng.randrange(256)]), QP,
                          field(rng, 24), bytes(16), rng.randbytes(rng.randrange(0, 40)))
    return WriteFrame(0xC6, QP, 0, 0, 0, 0, 0, 0, None, b"")   # data, to a sender


# 117 and 378: the forged phase ends with the retransmissions backed off past give_up_us.
@pytest.mark.parametrize("seed", [*range(60), 117, 378])
def test_forged_feedback_never_raises_nor_wedges_a_sender(seed: int) -> None:
    rng = random.Random(seed)
    sender = Sender(config(rng))
    sender.write(bytes(rng.randrange(1, 20) * 1024 + rng.randrange(1024)), 0x1000)
    now = 0
    try:
        for _ in range(150):
            now += rng.randrange(0, 40)
            if rng.random() < 0.5:
                sender.on_parsed(forged(rng, sender.config.initial_psn), now)
            sender.poll(now)
            sender.next_deadline_us(now)
    except TransportError:
        return   # no genuine answer came for give_up_us: the connection gave up, by design
    # The genuine peer from here on: every data packet answered, cumulatively. Once it has
    # answered one, nothing may raise, and the write completes. (Before that, the connection
    # may still give up: the forged phase may end with its retransmissions backed off past
    # what is left of give_up_us, so nothing goes out for the genuine peer to answer.)
    answered = 0
    try:
        for _ in range(2000):
            now += 5
            for frame in sender.poll(now):
                data = parse(frame)
                if isinstance(data, WriteFrame):
                    answered += 1
                    sender.on_parsed(SackFrame(QP, data.psn, 0, 0, 0, 0, data.psn, 0, 0),
                                     now + 2)
            if sender.done:
                break
    except TransportError as e:
        assert not answered, f"gave up after {answered} genuine answers: {e}"
        return
    assert sender.done, f"wedged: {sender.counters}"


@pytest.mark.parametrize("seed", range(40))
def test_random_writes_never_raise_nor_grow_a_receiver(seed: int) -> None:
    rng = random.Random(seed)
    receiver = Receiver(config(rng), 1 << 16)
    for _ in range(300):
        opcode = rng.choice([0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB, rng.randrange(256)])
        immediate = (rng.randrange(1 << 32)
                     if opcode in (0xC9, 0xCB) or rng.random() < 0.1 else None)
        receiver.on_parsed(WriteFrame(
            opcode, rng.choice([QP, QP, rng.randrange(1 << 24)]), rng.randrange(1 << 24), 0,
            rng.choice([0, 1, 2, rng.randrange(1 << 24), 0xFFFF, 0x8000]),
            rng.choice([0, rng.randrange(1 << 16), rng.randrange(1 << 64), (1 << 16) - 1]),
            7 if rng.random() < 0.9 else 8,
            rng.choice([0, rng.randrange(1 << 16), rng.randrange(1 << 32), 1 << 17]),
            immediate, rng.randbytes(rng.choice([0, 1, 100, 1024, 5000]))))
        receiver.completions()
    assert len(receiver.memory) == 1 << 16
    assert sum(receiver.counters.values()) == 300


@pytest.mark.parametrize("seed", range(30))
def test_trims_resent_within_nsccs_window_never_act_early_nor_wedge(seed: int) -> None:
    """A peer that trims a random share of what it gets (a NACK now, the rest answered
    cumulatively later), NACKed packets waiting for NSCC's window: before next_deadline_us,
    poll hands out nothing; every trim is resent; the write completes (nothing wedges)."""
    rng = random.Random(seed)
    sender = Sender(ConnectionConfig(
        local_addr="2001:db8::1", peer_addr="2001:db8::2", local_qp=QP, peer_qp=0x22,
        rto_us=200, reorder_us=30, cc=NsccConfig(base_rtt_us=10, linkspeed_gbps=100),
        tx_gbps=rng.choice([0.0, 100.0])))
    sender.write(bytes(rng.randrange(20, 120) * 1024), 0x1000)
    share = rng.choice([0.1, 0.5, 0.9])
    # What the peer got (PSNs from 0) and its answers on their way: (when, PSN, trimmed).
    got: set[int] = set()
    answers: list[tuple[int, int, bool]] = []
    now, nacks = 0, 0
    while not sender.done and now < 200_000:
        due = sender.next_deadline_us(now)
        if due is not None and due > now:
            assert sender.poll(now) == [], f"work before the deadline {due} at {now}"
        for frame in sender.poll(now):
            data = parse(frame)
            if isinstance(data, WriteFrame):
                rtt = rng.randrange(5, 30)
                answers.append((now + rtt, data.psn, rng.random() < share))
        answers.sort()
        while answers and answers[0][0] <= now:
            _, psn, trimmed = answers.pop(0)
            if trimmed:
                sender.on_parsed(NackFrame(QP, psn, 1, 0, 0, psn), now)
                nacks += 1
                continue
            got.add(psn)
            cack = 0
            while cack in got:
                cack += 1
            sender.on_parsed(SackFrame(QP, psn, 0, 0, 0, 0, (cack - 1) % PSN_MOD, 0, 0), now)
        nxt = [t for t in (sender.next_deadline_us(now), answers[0][0] if answers else None)
               if t is not None]
        now = max(now + 1, min(nxt)) if nxt else now + 1
    assert sender.done, f"wedged at {now}: {sender.counters}"
    # every trim resent (one resend may answer two NACKs of one PSN: its first transmission
    # and one a timeout sent before that NACK came)
    assert (sender.counters["nack_trimmed"] > 0) == (nacks > 0)
    assert sender.counters["nack_trimmed"] <= nacks
