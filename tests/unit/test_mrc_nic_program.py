"""The MRC NIC program (p4src/nic/mrc_nic.p4) on the engine: two NICs wired back to back (what
one sends on a plane port is what the other receives there; the fabric is not needed to check
the NICs), behaviour by behaviour: spraying and encapsulation, EV choice, SACKs, NACKs, EV state
from feedback, EV events, drops."""

from __future__ import annotations

import ipaddress

import pytest
from nic_pair import (
    ASSUMED_BAD,
    BACKUPS,
    COUNTER,
    DSCP,
    EV_COUNT,
    GOOD,
    HOST_PORT,
    PLANE_PORT,
    PLANES,
    PROGRAM,
    R_KEY,
    SKIP,
    SKIP_US,
    T0_MAC,
    A,
    B,
    Side,
    addr,
    carrier,
    locator,
    resealed,
    return_address,
    t0_usid,
    t1_usid,
    template,
)
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller.plan import usid
from controller.plan.nic_plan import NIC_HOST_SESSION
from mrc_transport.wire import (
    BTH,
    PETH,
    RETH,
    SETH,
    NackReason,
    Opcode,
    SackM,
    compact_ev,
    data_packet,
    nack_fields,
    psns_acked,
    sack_fields,
)
from softswitch.clock import VirtualClock
from softswitch.compiler import compile_file
from softswitch.engine.switch import OutputPacket, Switch
from softswitch.engine.tables import ExactMatch, TernaryMatch
from softswitch.fabric import Fabric
from softswitch.ir.checked import CheckedProgram

OP_EV_REPORT = 0xDF          # host -> own NIC only (p4src/include/mrc_headers.p4)
REPORT_PROBE_FLAG = 0x8000
REPORT_QUERY_FLAG = 0x4000   # a query about the EV a PSN left on
ECHO_TOOK_OUT = 0x2000       # in a report's echo: it took the EV out of service
ANSWER_EV_GOOD = 0x2000      # in a query's answer: the EV is GOOD, passed over on the bad path
ALWAYS = 0xFFFFFFFF          # loss injector threshold: every packet


class Nic:
    """A NIC program with a baseline configuration towards one peer; intent-named helpers."""

    def __init__(self, program: CheckedProgram, me: Side, peer: Side, *,
                 ev_min_active: int = 2, initial_psn: int = 0, probe_successes: int = 3,
                 hand_off: int = PLANES, rotation: int = 0, skip_us: int = SKIP_US,
                 engine: Switch | None = None) -> None:
        self.sw = engine or Switch(program)   # `engine`: a fabric device's, to configure
        self.me, self.peer = me, peer
        # The NIC's µs: still until a test moves it (a fabric device keeps the fabric's clock).
        self.now_us = 1_000
        if engine is None:
            self.sw.set_clock(lambda: self.now_us)
        sw = self.sw
        sw.table("tx_connection").add_entry(
            [ExactMatch(addr(peer.address)), ExactMatch(peer.qp)], "set_connection",
            [me.conn, 1, EV_COUNT - 1, PLANES, BACKUPS, ev_min_active, peer.row, peer.ua, hand_off,
             rotation, skip_us])
        sw.table("local_qp").add_entry(
            [ExactMatch(me.qp)], "set_local_qp",
            [me.conn, 1, EV_COUNT - 1, PLANES, BACKUPS, ev_min_active, probe_successes,
             initial_psn, peer.qp])
        sw.table("rx_r_key").add_entry([ExactMatch(me.qp), ExactMatch(R_KEY)], "r_key_valid", [])
        for ev in range(EV_COUNT + BACKUPS * PLANES):
            self.set_path(ev, ev % PLANES, t1_index=ev // PLANES)
        for plane in range(PLANES):
            sw.table("path_template").add_entry([ExactMatch(plane), ExactMatch(peer.row)],
                                                "via_t1", [template(me, peer, plane)])
            sw.table("plane_port").add_entry(
                [ExactMatch(plane)], "set_plane_port",
                [PLANE_PORT[plane], me.mac(plane), T0_MAC + plane, locator(me, plane)])
            sw.table("port_plane").add_entry([ExactMatch(PLANE_PORT[plane])], "set_rx_plane",
                                             [plane])
        sw.pre.mirroring_add(NIC_HOST_SESSION, HOST_PORT)

    def set_path(self, ev: int, plane: int, t1_index: int) -> None:
        table = self.sw.table("ev_path")
        match = [ExactMatch(1), ExactMatch(ev)]
        found = table.find_entry(match)
        if found is not None:
            table.delete_entry(found.handle)
        table.add_entry(match, "set_path", [plane, t1_usid(plane, t1_index)])

    def deny(self, ev: int) -> None:
        table = self.sw.table("ev_path")
        match = [ExactMatch(1), ExactMatch(ev)]
        found = table.find_entry(match)
        if found is not None:
            table.delete_entry(found.handle)
        table.add_entry(match, "deny_path")

    def ports_down(self, *planes: int) -> None:
        """The NIC's agent: these planes' ports of this NIC are down (none: every port up)."""
        self.sw.table("local_port_state").set_default_action(
            "set_port_state", [sum(1 << p for p in planes)])

    def ev_picture(self) -> tuple[list[int], list[int], list[int]]:
        """Every EV's state and every slot/EV pairing of the connection."""
        cells = range(self.me.conn * 256, self.me.conn * 256 + 256)
        return tuple([self.sw.register(r).read(c) for c in cells]  # type: ignore[return-value]
                     for r in ("ev_state", "slot_ev", "ev_slot"))

    def ev_state(self, ev: int) -> int:
        return self.sw.register("ev_state").read(self.me.conn * 256 + ev)

    def set_ev_state(self, ev: int, state: int) -> None:
        """As feedback would (a SKIP: told to step aside now)."""
        self.sw.register("ev_state").write(self.me.conn * 256 + ev, state)
        if state == SKIP:
            self.sw.register("ev_skip_at").write(self.me.conn * 256 + ev, self.now_us)

    def port_backlog(self, plane: int, packets: int) -> None:
        """What this NIC's egress last saw queued at its port of `plane` (v1model)."""
        self.sw.register("plane_backlog").write(plane, packets)

    def evs_in_slots(self) -> list[int]:
        """The EV each slot holds now (its own unless refilled)."""
        held = self.sw.register("slot_ev")
        return [s ^ held.read(self.me.conn * 256 + s) for s in range(EV_COUNT)]

    def count(self, name: str) -> int:
        return self.sw.counter("nic_counter").read(COUNTER[name])[0]

    def write(self, psn: int, payload: bytes = b"p" * 64, *, retransmit: bool = False,
              ) -> list[OutputPacket]:
        """The host hands the NIC one write packet for the peer."""
        pkt = data_packet(src=self.me.address, dst=self.peer.address, dest_qp=self.peer.qp,
                          psn=psn, opcode=Opcode.WRITE_ONLY, msn=psn & 0xFFFF, va=0x1000 + psn * 64,
                          r_key=R_KEY, dma_length=len(payload), payload=payload,
                          retransmit=retransmit)
        return self.sw.process_packet(HOST_PORT, bytes(pkt))

    def receive(self, port: int, data: bytes) -> list[OutputPacket]:
        return self.sw.process_packet(port, data)

    def _to_own_nic(self, opcode: int, psn: int, probe_id: int) -> list[OutputPacket]:
        pkt = (Ether() / IPv6(src=self.me.address, dst=self.peer.address, nh=17)
               / UDP(dport=4791) / BTH(opcode=opcode, dest_qp=self.peer.qp, psn=psn)
               / PETH(probe_id=probe_id))
        return self.sw.process_packet(HOST_PORT, bytes(pkt))

    def probe(self, slot: int) -> list[OutputPacket]:
        """The host asks for a probe of `slot` (it paces probes of ASSUMED_BAD slots)."""
        return self._to_own_nic(Opcode.PROBE, 0, slot)

    def report_loss(self, psn: int) -> list[OutputPacket]:
        """The host's timer: the packet with `psn` got no SACK and no NACK."""
        return self._to_own_nic(OP_EV_REPORT, psn, 0)

    def query(self, psn: int) -> list[OutputPacket]:
        """The host asks whether `psn` left on an EV out of service now."""
        return self._to_own_nic(OP_EV_REPORT, psn, REPORT_QUERY_FLAG)

    def report_probe_timeout(self, slot: int) -> list[OutputPacket]:
        return self._to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | slot)

    def inject_loss(self, threshold: int, plane: int | None = None,
                    slot: int | None = None) -> None:
        self.sw.table("loss_injector").add_entry(
            [TernaryMatch(plane or 0, 0x7 if plane is not None else 0),
             TernaryMatch(slot or 0, 0xFF if slot is not None else 0)],
            "drop_randomly", [threshold], priority=1)


@pytest.fixture(scope="module")
def program() -> CheckedProgram:
    return compile_file(PROGRAM)


@pytest.fixture
def a(program: CheckedProgram) -> Nic:
    return Nic(program, A, B)


@pytest.fixture
def b(program: CheckedProgram) -> Nic:
    return Nic(program, B, A)


def one(outputs: list[OutputPacket]) -> OutputPacket:
    assert len(outputs) == 1, outputs
    return outputs[0]


def trimmed(frame: bytes, dscp: int = DSCP["trimmed"]) -> bytes:
    """What a trimming switch forwards: the DSCP set, headers through RETH kept."""
    pkt = Ether(frame)
    pkt[IPv6].tc = dscp << 2
    return bytes(pkt)[:14 + 40 + 40 + 8 + 12 + 4 + 16]


def by_port(outputs: list[OutputPacket]) -> dict[int, bytes]:
    ports = [o.port for o in outputs]
    assert len(ports) == len(set(ports)), outputs
    return {o.port: o.data for o in outputs}


def outer(data: bytes) -> IPv6:
    return Ether(data)[IPv6]


# -- sender: spraying and encapsulation -----------------------------------------------------------


def test_packets_rotate_over_every_slot_and_plane_with_the_ev_in_the_header(a: Nic) -> None:
    seen = []
    for psn in range(EV_COUNT):
        sent = one(a.write(psn))
        slot = psn % EV_COUNT
        plane = slot % PLANES
        assert sent.port == PLANE_PORT[plane]
        ip = outer(sent.data)
        assert ip.nh == 41 and ip.tc >> 2 == DSCP["trimmable"] and ip.tc & 3 == 2  # ECT(0)
        assert ip.fl == compact_ev(plane, slot)
        assert ip.dst == str(ipaddress.IPv6Address(carrier(
            t0_usid(plane, A.row), t1_usid(plane, slot // PLANES), t0_usid(plane, B.row),
            B.ua, usid.NIC_DECAP_USID)))
        assert ip.src == return_address(A, plane, slot // PLANES)
        inner = ip.payload
        assert isinstance(inner, IPv6) and (inner.src, inner.dst) == (A.address, B.address)
        assert inner[UDP].sport == compact_ev(plane, slot) and inner[UDP].dport == 4791
        assert inner[BTH].psn == psn and inner[RETH].virtual_address == 0x1000 + psn * 64
        assert ip.plen == 40 + inner.plen
        seen.append(slot)
    assert seen == list(range(EV_COUNT))
    assert a.count("tx_data") == EV_COUNT


def test_the_rotation_starts_at_the_connections_own_slot(program: CheckedProgram) -> None:
    a = Nic(program, A, B, rotation=EV_COUNT + 3)   # the NIC takes it modulo the EV count
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(2 * EV_COUNT)]
    assert slots == [3, 4, 5, 6, 7, 0, 1, 2] * 2
    a.set_ev_state(5, SKIP)   # plane 1: its turn goes to the plane's next slot, 7
    assert [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(16, 20)] == [3, 4, 7, 6]


def test_a_retransmission_is_marked_trimmable_retx(a: Nic) -> None:
    assert outer(one(a.write(0, retransmit=True)).data).tc >> 2 == DSCP["retx"]


def test_a_peer_without_connection_is_dropped_and_counted(program: CheckedProgram) -> None:
    nic = Nic(program, A, B)
    stranger = Side("c", "2001:db8::c", row=1, ua=0xFE02, conn=9, qp=0x33)
    nic.peer = stranger
    assert nic.write(0) == []
    assert nic.count("tx_no_connection") == 1


def test_a_skip_or_assumed_bad_slot_hands_its_turn_to_its_planes_next_slot(a: Nic) -> None:
    a.set_ev_state(2, SKIP)          # plane 0
    a.set_ev_state(4, ASSUMED_BAD)   # plane 0
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(EV_COUNT)]
    # 2 (SKIP: passed over once) -> 4 (ASSUMED_BAD, no backup took its slot) -> 6; 4 -> 6:
    # plane 0 keeps its share (mrc-srv6.md §3.3: the planes carry equal loads while every
    # port is up; Fig. 14: ECN on one EV of a plane moves the flow to the plane's other EVs)
    assert slots == [0, 1, 6, 3, 6, 5, 6, 7]
    assert a.ev_state(2) == GOOD and a.ev_state(4) == ASSUMED_BAD
    next_rotation = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(8, 11)]
    assert next_rotation == [0, 1, 2]   # the SKIP lasted one rotation
    assert a.count("tx_fallback") == 0


def test_a_skip_holds_for_skip_us_and_is_spent_after(a: Nic) -> None:
    # Told to step aside at 1,000 µs: its next turn, SKIP_US later, is still passed over ...
    a.set_ev_state(2, SKIP)
    a.now_us += SKIP_US
    assert [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(EV_COUNT)] == [
        0, 1, 4, 3, 4, 5, 6, 7]
    # ... one µs later it is the EV's own (the mark spoke of a queue long gone), and the EV is
    # GOOD again; so is a plane's next slot the hand-off meets (4, SKIP too, spent as well)
    a.set_ev_state(2, SKIP)
    a.set_ev_state(4, SKIP)
    a.now_us += SKIP_US + 1
    assert [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(8, 16)] == list(
        range(EV_COUNT))
    assert a.ev_state(2) == GOOD and a.ev_state(4) == GOOD
    assert a.count("tx_fallback") == 0


def test_a_passed_over_turn_goes_hand_off_slots_on(program: CheckedProgram) -> None:
    a = Nic(program, A, B, hand_off=3 * PLANES)   # three slots of the plane on
    a.set_ev_state(2, SKIP)
    a.set_ev_state(4, ASSUMED_BAD)
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(EV_COUNT)]
    # 2 -> 2 + 6 = 0 (wrapped in the 8 slots); 4 -> 2 (GOOD again after its SKIP): the
    # controller's step, so that senders moved off one T1 do not all land on the next one.
    assert slots == [0, 1, 0, 3, 2, 5, 6, 7]
    assert a.ev_state(2) == GOOD and a.ev_state(4) == ASSUMED_BAD
    assert a.count("tx_fallback") == 0


def test_a_try_passes_over_the_slots_of_a_plane_that_is_down(a: Nic, b: Nic) -> None:
    b.ports_down(1)
    assert peer_says(a, b, 0) == 0b10      # slot 0; plane 1 is down at the peer
    a.set_ev_state(2, SKIP)
    a.set_ev_state(4, SKIP)
    # first choices 1 -> 2 (port state): SKIP -> 3 is in plane 1: 4, SKIP -> 5: 6; then
    # 3 -> 4 (GOOD again now); 5 -> 6; 7 -> 0
    assert writes(a, range(1, 5)) == [(PLANE_PORT[0], slot) for slot in (6, 4, 6, 0)]
    assert a.ev_state(2) == GOOD and a.ev_state(4) == GOOD and a.count("tx_fallback") == 0


def test_a_plane_whose_every_ev_is_congested_keeps_its_share(a: Nic) -> None:
    for slot in range(1, EV_COUNT, PLANES):   # every plane-1 EV SKIP (its queues mark ECN)
        a.set_ev_state(slot, SKIP)
    sent = writes(a, range(EV_COUNT))
    # The first plane-1 turn passes every one of them over once (each GOOD again) and goes on
    # its first slot anyway; a plane that marks everywhere is congested, not a path to avoid.
    assert [port for port, _ in sent].count(PLANE_PORT[1]) == EV_COUNT // PLANES
    assert all(a.ev_state(slot) == GOOD for slot in range(1, EV_COUNT, PLANES))
    assert a.count("tx_fallback") == 1


def test_when_every_try_fails_the_first_slot_is_used_and_counted(a: Nic) -> None:
    for slot in range(0, EV_COUNT, PLANES):   # every plane-0 slot
        a.set_ev_state(slot, ASSUMED_BAD)
    sent = one(a.write(0))
    assert outer(sent.data).fl & 0xFF == 0 and a.count("tx_fallback") == 1


def test_a_port_with_a_backlog_gives_its_turns_to_the_next_planes_slot(a: Nic) -> None:
    a.port_backlog(1, 9)   # plane 1's port: one packet more than the margin (8) over plane 0's
    sent = writes(a, range(EV_COUNT))
    # Every plane-1 first choice (1, 3, 5, 7) goes to the next slot, in plane 0; the cursor
    # moves on by one as ever.
    assert sent == [(PLANE_PORT[0], slot) for slot in (0, 2, 2, 4, 4, 6, 6, 0)]
    assert a.count("tx_port_balanced") == 4 and a.count("tx_fallback") == 0
    assert a.ev_picture()[0] == [GOOD] * 256   # a busy port is no path state


def test_a_backlog_within_the_margin_changes_nothing(a: Nic) -> None:
    a.port_backlog(1, 8)
    assert [port for port, _ in writes(a, range(4))] == [PLANE_PORT[p] for p in (0, 1, 0, 1)]
    assert a.count("tx_port_balanced") == 0


def test_the_ports_egress_says_what_is_left_there(a: Nic) -> None:
    a.port_backlog(1, 30)
    a.probe(1)   # a probe is not balanced: it leaves on plane 1, whose queue is empty here
    assert a.sw.register("plane_backlog").read(1) == 0
    assert [port for port, _ in writes(a, range(4))] == [PLANE_PORT[p] for p in (0, 1, 0, 1)]


def test_a_balanced_try_that_is_not_good_keeps_the_first_choice(a: Nic) -> None:
    a.port_backlog(1, 20)
    a.set_ev_state(2, ASSUMED_BAD)   # slot 1's alternative
    assert [slot for _, slot in writes(a, range(2))] == [0, 1]
    assert a.count("tx_port_balanced") == 0


def test_oblivious_spraying_passes_nothing_over(program: CheckedProgram) -> None:
    # ev_min_active = ev_count (the spray mode): neither a port's backlog nor ECN moves a packet
    a, b = Nic(program, A, B, ev_min_active=EV_COUNT), Nic(program, B, A)
    a.port_backlog(1, 50)
    assert [port for port, _ in writes(a, range(4))] == [PLANE_PORT[p] for p in (0, 1, 0, 1)]
    a.receive(PLANE_PORT[0], sack_for(b, a, 0, SackM.SKIP_ONCE))
    assert a.ev_state(0) == GOOD and a.count("ev_skipped") == 0
    assert a.count("tx_port_balanced") == 0


def test_a_denied_slot_is_never_used(a: Nic) -> None:
    a.deny(1)
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(2 * EV_COUNT)]
    assert 1 not in slots and len(slots) == 2 * EV_COUNT


def test_a_connection_whose_slots_are_all_denied_drops_and_counts(a: Nic) -> None:
    for slot in range(EV_COUNT):
        a.deny(slot)
    assert a.write(0) == []
    assert a.count("tx_denied_drop") == 1 and a.count("tx_data") == 0


# -- receiver: delivery, SACKs, NACKs ------------------------------------------------------------


def test_data_is_decapsulated_to_the_host_and_sacked_on_the_same_plane(a: Nic, b: Nic) -> None:
    sent = one(a.write(0, b"hello"))
    out = by_port(b.receive(sent.port, sent.data))
    delivered = Ether(out[HOST_PORT])
    assert delivered[IPv6].src == A.address and delivered[IPv6].nh == 17   # the inner header
    assert delivered[BTH].psn == 0 and bytes(delivered[RETH].payload) == b"hello"
    sack = out[sent.port]
    fields = sack_fields(sack)
    assert fields is not None
    assert (fields["dest_qp"], fields["cack_psn"], fields["sack_offset"]) == (A.qp, 0, 1)
    assert fields["sack_bitmap"] == 0 and fields["m"] == SackM.NONE
    assert fields["entropy"] == compact_ev(0, 0)
    assert (fields["src"], fields["dst"]) == (B.address, A.address)
    ip = outer(sack)
    assert ip.tc >> 2 == DSCP["control"] and len(sack) == 150
    assert ip.dst == return_address(A, 0, 0)       # back the way the data came
    assert ip.src == str(ipaddress.IPv6Address(locator(B, 0)))
    assert b.count("rx_data") == 1 and b.count("sack_sent") == 1


@pytest.mark.parametrize("feedback", ["sack", "nack"])
def test_feedback_leaves_ahead_of_the_data_queued_at_its_port(program: CheckedProgram, b: Nic,
                                                               feedback: str) -> None:
    """SACKs and NACKs are the control class (mrc-srv6.md §4.7): on a NIC whose plane port holds
    a queue of its own data, the SACK for a packet that came in there (or the NACK for a trimmed
    one) goes out next, not last."""
    clock = VirtualClock()
    fabric = Fabric(clock=clock)
    fabric.add_switch("a", program, priority_queues=8)
    Nic(program, A, B, engine=fabric.switch("a").engine)   # A, configured in the fabric
    fabric.switch("a").device.set_line_rate(None, 1_000_000_000)   # 1 Gb/s: the data queues
    host = fabric.add_host("host", "a", HOST_PORT)
    t0 = {port: fabric.add_host(f"t0-{plane}", "a", port) for plane, port in PLANE_PORT.items()}
    for psn in range(16):   # eight writes a plane, one after another at the same instant
        host.send(data_packet(src=A.address, dst=B.address, dest_qp=B.qp, psn=psn,
                              opcode=Opcode.WRITE_ONLY, msn=psn, va=0x1000 + psn * 64,
                              r_key=R_KEY, dma_length=64, payload=b"p" * 64).build())
    sent = one(b.write(0))
    t0[sent.port].send(sent.data if feedback == "sack" else trimmed(sent.data))
    fabric.run_until_idle()
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        fabric.run_until_idle()
    out = t0[sent.port].received
    fields = sack_fields if feedback == "sack" else nack_fields
    assert len(out) == 9 and len(host.received) == (feedback == "sack")   # 8 writes + feedback
    assert [k for k, frame in enumerate(out) if fields(frame) is not None] == [1]   # next


def test_feedback_returns_through_the_t1_its_packet_crossed(a: Nic, b: Nic) -> None:
    for psn in range(4):    # EVs 0..3: (plane 0, T1 0), (1, 0), (0, 1), (1, 1)
        sent = one(a.write(psn))
        plane, t1 = psn % PLANES, psn // PLANES
        sack = by_port(b.receive(sent.port, sent.data))[sent.port]
        assert outer(sack).dst == return_address(A, plane, t1)
    sent = one(a.write(4))
    nack = one(b.receive(sent.port, trimmed(sent.data)))
    assert outer(nack.data).dst == return_address(A, 0, 2)   # EV 4: plane 0, T1 index 2


def test_data_with_a_return_address_outside_the_sid_block_is_delivered_not_acked(
        a: Nic, b: Nic) -> None:
    sent = one(a.write(0))
    pkt = Ether(sent.data)
    pkt[IPv6].src = "2001:db8:dead::1"
    out = by_port(b.receive(sent.port, bytes(pkt)))
    assert set(out) == {HOST_PORT}
    assert b.count("rx_data") == 1 and b.count("sack_sent") == 0
    assert b.count("tx_no_path_drop") == 1      # the SACK: nowhere to send it


def remove(nic: Nic, table: str, *key: int) -> None:
    """Delete the entry of `table` with this exact key (as the controller may)."""
    entries = nic.sw.table(table)
    found = entries.find_entry([ExactMatch(k) for k in key])
    assert found is not None
    entries.delete_entry(found.handle)


def test_data_and_probes_with_no_template_or_plane_port_are_dropped_and_counted(a: Nic) -> None:
    remove(a, "path_template", 1, B.row)          # no path to B on plane 1
    sent = [a.write(psn) for psn in range(4)]     # slots 0..3: planes 0, 1, 0, 1
    assert [[o.port for o in s] for s in sent] == [[PLANE_PORT[0]], [], [PLANE_PORT[0]], []]
    assert a.count("tx_no_path_drop") == 2 and a.count("tx_data") == 2
    assert a.probe(3) == [] and a.count("tx_probe") == 0          # EV 3: plane 1
    assert a.count("tx_no_path_drop") == 3
    remove(a, "plane_port", 0)                    # and no port in plane 0
    assert a.write(4) == [] and a.probe(0) == []
    assert a.count("tx_no_path_drop") == 5 and a.count("tx_data") == 2
    assert a.count("port_down_drop") == 0 and a.count("tx_probe_denied_drop") == 0


def test_feedback_with_no_plane_port_is_not_sent_and_counted(a: Nic, b: Nic) -> None:
    remove(b, "plane_port", 0)                    # B cannot answer in plane 0
    sent = one(a.write(0))                        # slot 0: plane 0
    assert list(by_port(b.receive(sent.port, sent.data))) == [HOST_PORT]   # delivered, no SACK
    assert b.count("rx_data") == 1 and b.count("sack_sent") == 0
    assert b.count("tx_no_path_drop") == 1
    assert sack_of(deliver(a, b, 1))["cack_psn"] == 1             # plane 1: SACKed
    sent = one(a.write(2))                        # slot 2: plane 0, trimmed on the way
    assert b.receive(sent.port, trimmed(sent.data)) == []
    assert b.count("rx_trimmed") == 1 and b.count("nack_sent") == 0
    assert b.count("tx_no_path_drop") == 2 and b.count("port_down_drop") == 0


def test_a_port_down_with_no_path_either_counts_as_port_down_only(a: Nic, b: Nic) -> None:
    remove(a, "path_template", 1, B.row)
    remove(a, "plane_port", 1)
    a.ports_down(1)
    assert a.probe(1) == []                       # EV 1: plane 1
    one(b.write(0))                               # B's slot 0 (plane 0): lost on the way
    data = one(b.write(1))                        # slot 1: plane 1, whose SACK is due on it
    assert list(by_port(a.receive(data.port, data.data))) == [HOST_PORT]
    a.ports_down(0, 1)
    assert a.write(0) == []                       # every port down
    assert a.count("port_down_drop") == 3 and a.count("tx_no_path_drop") == 0


def deliver(a: Nic, b: Nic, psn: int, **kw: object) -> dict[int, bytes]:
    sent = one(a.write(psn, **kw))  # type: ignore[arg-type]
    return by_port(b.receive(sent.port, sent.data))


def sack_of(out: dict[int, bytes]) -> dict:
    sacks = [f for p, d in out.items() if p != HOST_PORT and (f := sack_fields(d))]
    assert len(sacks) == 1, out
    return sacks[0]


def test_sack_bitmap_reports_holes_then_the_cumulative_point_jumps(a: Nic, b: Nic) -> None:
    for psn in (0, 1, 2, 3, 4):
        deliver(a, b, psn)
    deliver(a, b, 6)   # 5 missing
    got = sack_of(deliver(a, b, 8))   # 7 missing too
    assert got["cack_psn"] == 4
    assert psns_acked(got["cack_psn"], got["sack_offset"], got["sack_bitmap"]) == {4, 6, 8}
    got = sack_of(deliver(a, b, 5))
    assert got["cack_psn"] == 6 and got["ack_psn_offset"] == -1  # 5 - 6
    got = sack_of(deliver(a, b, 7))
    assert got["cack_psn"] == 8 and got["sack_bitmap"] == 0


def test_the_24_bit_psn_wraps(program: CheckedProgram) -> None:
    start = 0xFFFFFE
    a, b = Nic(program, A, B), Nic(program, B, A, initial_psn=start)
    deliver(a, b, start)
    got = sack_of(deliver(a, b, 0x000001))   # 0xFFFFFF and 0x000000 missing
    assert got["cack_psn"] == 0xFFFFFE
    assert psns_acked(got["cack_psn"], got["sack_offset"], got["sack_bitmap"]) == {
        0xFFFFFE, 0x000001}
    deliver(a, b, 0xFFFFFF)
    got = sack_of(deliver(a, b, 0x000000))
    assert got["cack_psn"] == 0x000001 and got["sack_bitmap"] == 0


def test_a_duplicate_is_sacked_not_delivered(a: Nic, b: Nic) -> None:
    deliver(a, b, 0)
    again = deliver(a, b, 0)
    assert HOST_PORT not in again and sack_of(again)["cack_psn"] == 0
    deliver(a, b, 2)
    again = deliver(a, b, 2)   # a duplicate inside the bitmap
    assert HOST_PORT not in again and b.count("rx_duplicate") == 2


def test_a_psn_beyond_the_bitmap_is_nacked_out_of_window(a: Nic, b: Nic) -> None:
    out = deliver(a, b, 64)
    assert HOST_PORT not in out
    [nack] = [nack_fields(d) for d in out.values()]
    assert nack is not None and nack["nack_reason"] == NackReason.PSN_OOR_WINDOW
    assert nack["nack_psn"] == 64 and b.count("rx_out_of_window") == 1


@pytest.mark.parametrize(("dscp", "reason"), [(DSCP["trimmed"], NackReason.TRIMMED),
                                              (DSCP["lasthop"], NackReason.TRIMMED_LASTHOP)])
def test_a_trimmed_packet_is_nacked_with_its_reason_and_not_delivered(
        a: Nic, b: Nic, dscp: int, reason: int) -> None:
    sent = one(a.write(3))
    out = by_port(b.receive(sent.port, trimmed(sent.data, dscp)))
    assert HOST_PORT not in out
    nack = nack_fields(out[sent.port])
    assert nack is not None
    assert (nack["nack_reason"], nack["nack_psn"], nack["dest_qp"]) == (reason, 3, A.qp)
    assert nack["entropy"] == outer(sent.data).fl
    assert outer(out[sent.port]).tc >> 2 == DSCP["control"] and len(out[sent.port]) == 134
    assert b.count("rx_trimmed") == 1 and b.count("rx_data") == 0


# -- sender: feedback moves EV state -------------------------------------------------------------


def sack_for(b: Nic, a: Nic, slot: int, m: int) -> bytes:
    """A SACK from B for a packet A sent on `slot`, with congestion mark `m` (A sends until
    its rotation comes to that slot; B acknowledges the one sent there)."""
    for psn in range(2 * EV_COUNT):
        sent = one(a.write(psn))
        if outer(sent.data).fl & 0xFF == slot:
            break
    else:
        raise AssertionError(f"slot {slot} never chosen")
    out = by_port(b.receive(sent.port, sent.data))
    sack = Ether(out[sent.port])
    sack[SETH].m = m
    return resealed(bytes(sack))


def test_skip_once_and_trimmed_nacks_skip_the_ev_lasthop_nacks_do_not(a: Nic, b: Nic) -> None:
    sack = sack_for(b, a, 0, SackM.SKIP_ONCE)
    out = one(a.receive(PLANE_PORT[0], sack))
    assert out.port == HOST_PORT and sack_fields(out.data) is not None   # handed to the host
    assert a.ev_state(0) == SKIP
    plain = sack_for(b, a, 1, SackM.NONE)
    a.receive(PLANE_PORT[1], plain)
    assert a.ev_state(1) == GOOD and a.count("rx_sack") == 2


@pytest.mark.parametrize(("dscp", "state"), [(DSCP["trimmed"], SKIP), (DSCP["lasthop"], GOOD)])
def test_nacks_for_trims(program: CheckedProgram, dscp: int, state: int) -> None:
    a, b = Nic(program, A, B), Nic(program, B, A)
    sent = one(a.write(0))
    trimmed = Ether(sent.data)
    trimmed[IPv6].tc = dscp << 2
    nack = by_port(b.receive(sent.port, bytes(trimmed)))[sent.port]
    out = one(a.receive(sent.port, nack))
    assert out.port == HOST_PORT and nack_fields(out.data) is not None
    assert a.ev_state(0) == state


def test_always_skip_makes_the_ev_assumed_bad_and_tells_the_controller(a: Nic, b: Nic) -> None:
    sack = sack_for(b, a, 2, SackM.ALWAYS_SKIP)
    a.receive(PLANE_PORT[0], sack)
    assert a.ev_state(2) == ASSUMED_BAD
    [event] = a.sw.digests
    assert tuple(event.values) == (A.conn, 1, 2, ASSUMED_BAD, 0)
    a.sw.digests.clear()
    a.receive(PLANE_PORT[0], sack)   # already ASSUMED_BAD: no second event
    assert a.sw.digests == []


def test_ev_min_active_keeps_enough_evs_in_service(program: CheckedProgram) -> None:
    a, b = Nic(program, A, B, ev_min_active=6), Nic(program, B, A)
    for slot in (0, 1, 2):
        a.receive(PLANE_PORT[slot % PLANES], sack_for(b, a, slot, SackM.ALWAYS_SKIP))
    # 8 slots, at least 6 active: only two may go
    assert [a.ev_state(s) for s in (0, 1, 2)] == [ASSUMED_BAD, ASSUMED_BAD, GOOD]
    assert a.count("ev_bad_suppressed") == 1 and len(a.sw.digests) == 2


# -- drops ---------------------------------------------------------------------------------------


def test_truncated_and_foreign_packets_are_dropped_and_counted(a: Nic, b: Nic) -> None:
    sent = one(a.write(0))
    assert b.receive(sent.port, sent.data[:14 + 40 + 40 + 8 + 6]) == []   # BTH cut short
    assert b.receive(sent.port, bytes(Ether() / IPv6() / UDP(dport=53))) == []
    assert b.receive(7, sent.data) == []            # not a plane port
    host_udp = Ether() / IPv6(src=A.address, dst=B.address) / UDP(dport=53)
    assert a.sw.process_packet(HOST_PORT, bytes(host_udp)) == []   # the host sends MRC only
    assert b.count("rx_malformed") == 3 and a.count("rx_malformed") == 1


# -- losses the host reports, probes, recovery -------------------------------------------------


def events(nic: Nic) -> list[tuple[int, ...]]:
    got = [tuple(d.values) for d in nic.sw.digests]
    nic.sw.digests.clear()
    return got


def test_a_loss_the_host_reports_makes_the_slot_that_carried_it_assumed_bad(a: Nic) -> None:
    sent = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(EV_COUNT)]
    echo = one(a.report_loss(3))   # back to the host, naming the EV it took out
    assert echo.port == HOST_PORT
    assert PETH(bytes(Ether(echo.data)[BTH].payload)).probe_id == ECHO_TOOK_OUT | sent[3]
    assert a.ev_state(sent[3]) == ASSUMED_BAD and a.count("host_report") == 1
    assert events(a) == [(A.conn, 1, sent[3], ASSUMED_BAD, 1)]   # one drop counted
    later = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(8, 16)]
    assert sent[3] not in later and later[3] == EV_COUNT + 1   # refilled: plane 1's backup 9
    assert [s % PLANES for s in later] == [p % PLANES for p in range(8)]   # planes still equal


def test_slots_are_refilled_from_their_planes_backups_while_there_are_any(a: Nic) -> None:
    for psn in range(EV_COUNT):
        one(a.write(psn))
    a.report_loss(0)   # EV 0 -> backup 8
    a.report_loss(2)   # EV 2 -> backup 10
    assert a.evs_in_slots() == [8, 1, 10, 3, 4, 5, 6, 7]
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(8, 16)]
    assert slots == [8, 1, 10, 3, 4, 5, 6, 7]
    a.report_loss(8)   # plane 0 has no spare backup left: the slot keeps its EV, and is skipped
    assert a.evs_in_slots() == [8, 1, 10, 3, 4, 5, 6, 7]
    slots = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(16, 24)]
    assert slots[0] == 10 and [s % PLANES for s in slots] == [p % PLANES for p in range(8)]


def test_a_denied_ev_hands_its_slot_to_a_backup(a: Nic) -> None:
    a.deny(1)
    assert outer(one(a.write(0)).data).fl & 0xFF == 0
    # slot 1's EV is DENIED: the slot takes backup 9, the packet is chosen again (slot 2)
    assert outer(one(a.write(1)).data).fl & 0xFF == 2
    assert a.evs_in_slots()[1] == EV_COUNT + 1
    evs = [outer(one(a.write(psn)).data).fl & 0xFF for psn in range(2, 12)]
    assert EV_COUNT + 1 in evs and 1 not in evs


def answer_probe(a: Nic, b: Nic, slot: int) -> dict:
    probe = one(a.probe(slot))
    assert outer(probe.data).fl == compact_ev(slot % PLANES, slot)
    out = by_port(b.receive(probe.port, probe.data))
    assert HOST_PORT not in out   # a probe carries nothing for the receiver's host
    sack = out[probe.port]
    assert one(a.receive(probe.port, sack)).port == HOST_PORT
    got = sack_fields(sack)
    assert got is not None
    return got


def probe_id(out: OutputPacket) -> int:
    assert out.port == HOST_PORT
    return int(PETH(bytes(Ether(out.data)[BTH].payload)).probe_id)


def test_an_echo_says_whether_its_report_took_the_ev_out(a: Nic) -> None:
    for psn in range(EV_COUNT + 4):
        one(a.write(psn))
    assert probe_id(one(a.report_loss(3))) == ECHO_TOOK_OUT | 3
    assert probe_id(one(a.report_loss(11))) == 3   # PSN 11 went on EV 3 too: out already


def test_a_query_is_answered_when_its_psns_ev_is_out_of_service(program: CheckedProgram) -> None:
    a = Nic(program, A, B, ev_min_active=2)
    a.set_path(4, 0, t1_index=1)   # EV 4 on EV 2's path
    for psn in range(EV_COUNT):
        one(a.write(psn))          # PSN p on EV p
    assert [a.query(psn) for psn in range(EV_COUNT)] == [[]] * EV_COUNT   # all in service
    one(a.report_loss(2))          # EV 2 out, its path bad
    answers = {psn: [probe_id(o) for o in a.query(psn)] for psn in range(EV_COUNT)}
    # PSN 2 left on EV 2 (ASSUMED_BAD), PSN 4 on EV 4 (GOOD, but on the bad path: the host is
    # to report it): answered, naming the EV; the rest are in service: dropped.
    assert answers == {p: {2: [REPORT_QUERY_FLAG | 2],
                           4: [REPORT_QUERY_FLAG | ANSWER_EV_GOOD | 4]}.get(p, [])
                       for p in answers}
    assert a.count("query_out") == 2 and a.count("query_in_service") == EV_COUNT + 6
    assert a.ev_state(4) == GOOD and events(a) == [(A.conn, 1, 2, ASSUMED_BAD, 1)]
    # A query changes nothing: no loss counted, no state, no event.
    assert a.count("host_report") == 1 and a.ev_state(2) == ASSUMED_BAD


def test_a_query_naming_a_probe_too_is_malformed(a: Nic) -> None:
    one(a.write(0))
    assert a._to_own_nic(OP_EV_REPORT, 0, REPORT_QUERY_FLAG | REPORT_PROBE_FLAG | 1) == []
    assert a.count("rx_malformed") == 1 and a.count("query_out") == 0


def test_probes_bring_an_assumed_bad_slot_back_after_k_answers_in_a_row(program) -> None:  # type: ignore[no-untyped-def]
    a, b = Nic(program, A, B, probe_successes=3), Nic(program, B, A)
    for psn in range(3):
        one(a.write(psn))
    a.report_loss(2)   # slot 2
    events(a)
    assert answer_probe(a, b, 2)["probe_response"] == 1
    answer_probe(a, b, 2)
    a.report_probe_timeout(2)   # an unanswered probe: the count starts over
    answer_probe(a, b, 2)
    answer_probe(a, b, 2)
    assert a.ev_state(2) == ASSUMED_BAD and events(a) == []
    answer_probe(a, b, 2)
    assert a.ev_state(2) == GOOD
    assert events(a) == [(A.conn, 1, 2, GOOD, 2)]   # two losses pinned on it so far
    assert a.count("tx_probe") == 5 and b.count("rx_probe") == 5


def test_a_loss_makes_its_path_bad_and_the_evs_seen_on_it_sit_out_until_it_answers(
        program: CheckedProgram) -> None:
    a, b = Nic(program, A, B, probe_successes=2), Nic(program, B, A)
    a.set_path(4, 0, t1_index=1)   # EV 4 on EV 2's path (plane 0, T1 1): one path, two EVs
    writes(a, range(EV_COUNT))     # a rotation: every EV's path seen
    a.report_loss(2)               # EV 2 ASSUMED_BAD, backup 8 takes its slot
    assert a.sw.register("bad_path").read(A.conn) != 0
    evs = [ev for _, ev in writes(a, range(8, 16))]
    # Slot 4's EV shares the lost packet's path: its turn goes to its plane's next slot (6);
    # its own state stays GOOD (no event: the evidence was EV 2's).
    assert evs == [0, 1, 8, 3, 6, 5, 6, 7]
    assert a.ev_state(4) == GOOD and a.count("tx_bad_path_passed") == 1
    assert [e[2] for e in events(a)] == [2]
    answer_probe(a, b, 2)
    answer_probe(a, b, 2)          # EV 2 answered back into service: its path is fine again
    assert a.ev_state(2) == GOOD and a.sw.register("bad_path").read(A.conn) == 0
    assert [ev for _, ev in writes(a, range(16, 24))][4] == 4


def test_a_loss_on_an_ev_its_path_marked_lately_takes_out_that_ev_only(
        program: CheckedProgram) -> None:
    a, b = Nic(program, A, B), Nic(program, B, A)
    now = [1000]
    a.sw.set_clock(lambda: now[0])   # the NIC's µs
    a.set_path(4, 0, t1_index=1)     # EV 4 on EV 2's path, EV 6 on EV 0's
    a.set_path(6, 0, t1_index=0)
    sent = [one(a.write(psn)) for psn in range(EV_COUNT)]   # PSN p on slot p
    for ev in (0, 2):
        sack = Ether(by_port(b.receive(sent[ev].port, sent[ev].data))[sent[ev].port])
        sack[SETH].m = SackM.SKIP_ONCE
        a.receive(sent[ev].port, resealed(bytes(sack)))   # both paths queue: ECN echoed at 1000 µs
    now[0] = 1100
    a.report_loss(2)                 # a loss found on EV 2 within 100 µs: a queue's as likely
    assert a.ev_state(2) == ASSUMED_BAD and a.sw.register("bad_path").read(A.conn) == 0
    assert [ev for _, ev in writes(a, range(8, 16))][4] == 4
    assert a.count("tx_bad_path_passed") == 0
    now[0] = 1101
    a.report_loss(0)                 # EV 0's echo is older than that: its path is bad
    assert a.sw.register("bad_path").read(A.conn) != 0
    # slot 6's EV 6 shares it: passed over to slot 0, where backup 10 replaced EV 0
    assert [ev for _, ev in writes(a, range(16, 24))][6] == 10


def test_a_loss_the_floor_keeps_in_service_marks_no_path(program: CheckedProgram) -> None:
    a = Nic(program, A, B, ev_min_active=EV_COUNT)
    a.set_path(4, 0, t1_index=1)
    writes(a, range(EV_COUNT))
    a.report_loss(2)
    assert a.ev_state(2) == GOOD and a.sw.register("bad_path").read(A.conn) == 0
    assert [ev for _, ev in writes(a, range(8, 16))] == list(range(EV_COUNT))


def test_a_denied_slot_is_not_probed(a: Nic) -> None:
    a.deny(4)
    assert a.probe(4) == [] and a.count("tx_probe") == 0
    assert a.count("tx_probe_denied_drop") == 1
    assert a.count("tx_denied_drop") == 0 and a.count("tx_no_path_drop") == 0
    a.ports_down(0)                               # its plane's port down too: still DENIED
    assert a.probe(4) == [] and a.count("tx_probe_denied_drop") == 2
    assert a.count("port_down_drop") == 0


def test_the_loss_injector_drops_what_arrives_on_a_plane_or_slot(a: Nic, b: Nic) -> None:
    b.inject_loss(ALWAYS, plane=1)
    got = {psn: by_port(b.receive(s.port, s.data))
           for psn in range(4) for s in [one(a.write(psn))]}
    assert [HOST_PORT in got[psn] for psn in range(4)] == [True, False, True, False]
    assert b.count("rx_injected_drop") == 2 and b.count("rx_data") == 2


def test_the_loss_injector_at_rate_zero_drops_nothing(a: Nic, b: Nic) -> None:
    b.inject_loss(0, slot=1)
    for psn in range(4):
        sent = one(a.write(psn))
        assert HOST_PORT in by_port(b.receive(sent.port, sent.data))
    assert b.count("rx_injected_drop") == 0



# -- port state: the NIC port-state bitmap in SACKs and NACKs -------------------------------------


def writes(nic: Nic, psns: range) -> list[tuple[int, int]]:
    """(port, slot) of the one packet each write becomes."""
    return [(sent.port, outer(sent.data).fl & 0xFF)
            for sent in (one(nic.write(psn)) for psn in psns)]


def peer_says(a: Nic, b: Nic, psn: int) -> int:
    """A sends `psn`, B receives it and A receives B's SACK: the bitmap it carried."""
    sent = one(a.write(psn))
    sack = by_port(b.receive(sent.port, sent.data))[sent.port]
    assert one(a.receive(sent.port, sack)).port == HOST_PORT
    fields = sack_fields(sack)
    assert fields is not None
    return fields["port_state"]


def test_sacks_and_nacks_carry_the_local_port_state(a: Nic, b: Nic) -> None:
    # A's writes take slots 0, 1, 2, ... in turn (A knows nothing of B's ports here).
    assert sack_of(deliver(a, b, 0))["port_state"] == 0          # nothing installed: all up
    b.ports_down(1)
    assert list(deliver(a, b, 1)) == [HOST_PORT]                 # slot 1: plane 1, no SACK
    assert sack_of(deliver(a, b, 2))["port_state"] == 0b10       # slot 2: plane 0
    deliver(a, b, 3)
    trimmed = Ether(one(a.write(4)).data)                        # slot 4: plane 0
    trimmed[IPv6].tc = DSCP["trimmed"] << 2
    nack = nack_fields(by_port(b.receive(PLANE_PORT[0], bytes(trimmed)))[PLANE_PORT[0]])
    assert nack is not None and nack["port_state"] == 0b10
    b.ports_down()
    assert sack_of(deliver(a, b, 5))["port_state"] == 0          # slot 5: plane 1 again


def test_a_peer_port_down_moves_the_sender_off_that_plane_without_touching_ev_state(
        a: Nic, b: Nic) -> None:
    b.ports_down(1)
    assert peer_says(a, b, 0) == 0b10
    before = a.ev_picture()
    sent = writes(a, range(1, 9))
    # Every first choice (slots 1, 3, 5, 7: plane 1) moves to the next slot, in plane 0, and
    # the cursor past it: plane 0's slots share the load equally.
    assert sent == [(PLANE_PORT[0], slot) for slot in (2, 4, 6, 0, 2, 4, 6, 0)]
    assert a.ev_picture() == before          # the paths are fine: no EV state changed
    assert a.count("tx_port_passed") == 8 and a.count("tx_fallback") == 0
    assert a.count("tx_data") == 9 and events(a) == []


def test_a_peer_port_back_up_is_used_again_after_the_next_sack(a: Nic, b: Nic) -> None:
    b.ports_down(1)
    peer_says(a, b, 0)
    assert {port for port, _ in writes(a, range(1, 5))} == {PLANE_PORT[0]}
    b.ports_down()                            # B's agent: the port is back; nothing on A
    assert peer_says(a, b, 5) == 0
    assert [port for port, _ in writes(a, range(6, 10))] == [PLANE_PORT[p] for p in (1, 0, 1, 0)]


def test_a_nack_carries_the_peer_port_state_too(a: Nic, b: Nic) -> None:
    b.ports_down(1)
    sent = one(a.write(0))
    trimmed = Ether(sent.data)
    trimmed[IPv6].tc = DSCP["trimmed"] << 2
    nack = by_port(b.receive(sent.port, bytes(trimmed)))[sent.port]
    a.receive(sent.port, nack)
    assert {port for port, _ in writes(a, range(1, 9))} == {PLANE_PORT[0]}


def test_a_local_port_down_sends_nothing_on_it(a: Nic, b: Nic) -> None:
    a.ports_down(1)
    before = a.ev_picture()
    sent = writes(a, range(8))
    assert sent == [(PLANE_PORT[0], slot) for slot in (0, 2, 4, 6, 0, 2, 4, 6)]
    assert a.ev_picture() == before and a.count("tx_port_passed") == 7   # all but the first
    # A probe of a plane-1 EV and the SACK for data that came in on plane 1 would leave on the
    # down port: neither does (the data itself is delivered).
    assert a.probe(1) == [] and a.count("tx_probe") == 0
    one(b.write(0))                               # B's slot 0 (plane 0): lost on the way
    data = one(b.write(1))                        # slot 1: plane 1
    assert data.port == PLANE_PORT[1]
    out = by_port(a.receive(data.port, data.data))
    assert list(out) == [HOST_PORT] and a.count("sack_sent") == 0
    assert a.count("port_down_drop") == 2 and a.count("tx_no_path_drop") == 0
    # Its SACKs on plane 0 tell B, which then leaves plane 1 alone too.
    assert peer_says(b, a, 2) == 0b10
    assert {port for port, _ in writes(b, range(3, 11))} == {PLANE_PORT[0]}


def test_a_local_port_back_up_is_used_again(a: Nic) -> None:
    a.ports_down(1)
    writes(a, range(4))
    a.ports_down()   # the cursor stands at 7 (past slot 6)
    assert writes(a, range(4, 8)) == [(PLANE_PORT[s % PLANES], s) for s in (7, 0, 1, 2)]


def test_every_plane_down_at_the_peer_ignores_the_peer_bitmap(a: Nic, b: Nic) -> None:
    # What no plane is usable for by the peer's word: its bitmap may be stale (it can only be
    # refreshed by feedback to packets sent), so the choice goes by this NIC's ports alone.
    sent = one(a.write(0))
    sack = Ether(by_port(b.receive(sent.port, sent.data))[sent.port])
    sack[SETH].port_state = 0b11
    a.receive(sent.port, resealed(bytes(sack)))
    assert writes(a, range(1, 8)) == [(PLANE_PORT[s % PLANES], s) for s in range(1, 8)]
    assert a.count("tx_port_passed") == 0
    # With plane 0 down here and plane 1 at the peer: plane 1 (the one this NIC can send on).
    a.ports_down(0)
    sack[SETH].port_state = 0b10
    a.receive(sent.port, resealed(bytes(sack)))
    assert {port for port, _ in writes(a, range(8, 12))} == {PLANE_PORT[1]}


def test_every_local_port_down_drops_and_counts(a: Nic) -> None:
    a.ports_down(0, 1)
    before = a.ev_picture()
    for psn in range(4):
        assert a.write(psn) == []
    assert a.count("port_down_drop") == 4 and a.count("tx_data") == 0
    assert a.ev_picture() == before
    a.ports_down()
    assert writes(a, range(4, 6)) == [(PLANE_PORT[0], 4), (PLANE_PORT[1], 5)]
