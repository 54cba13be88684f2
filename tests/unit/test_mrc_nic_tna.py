"""The TNA NIC (p4src/nic/tna/mrc_nic.p4) against the v1model one (p4src/nic/mrc_nic.p4): the
same control-plane names in P4Info, and on the engine, for the same packets in, the same packets
out (ports and bytes), EV events, counts and EV states — two NICs of each architecture wired
back to back, driven through scenarios inside what the TNA design keeps equal (no two failures
in one EV choice; see tna/mrc_nic.p4's design notes); and two of the documented differences,
pinned."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from nic_pair import (
    BACKUPS,
    COUNTER,
    DSCP,
    EV_COUNT,
    HOST_PORT,
    PLANE_PORT,
    PLANES,
    PROGRAM,
    R_KEY,
    SKIP_US,
    T0_MAC,
    A,
    B,
    Side,
    addr,
    locator,
    resealed,
    t1_usid,
    template,
)
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from controller.plan.nic_plan import (
    FEEDBACK_PRIORITY,
    NIC_HOST_SESSION,
    SACK_SESSION_BASE,
    TNA_FB_SESSION_BYTES,
)
from mrc_transport.wire import BTH, PETH, SETH, Opcode, data_packet
from softswitch.compiler import compile_file
from softswitch.engine.pre import MirrorSession
from softswitch.engine.switch import OutputPacket, Switch
from softswitch.engine.tables import ExactMatch
from softswitch.ir.checked import CheckedProgram
from softswitch.p4info.builder import build_p4info

TNA_PROGRAM = PROGRAM.parent / "tna" / "mrc_nic.p4"
OP_EV_REPORT = 0xDF
REPORT_PROBE_FLAG = 0x8000
REPORT_QUERY_FLAG = 0x4000
ECHO_TOOK_OUT = 0x2000
ANSWER_EV_GOOD = 0x2000
CONN_CELLS = 256


@pytest.fixture(scope="module")
def programs() -> dict[str, CheckedProgram]:
    return {"v1model": compile_file(PROGRAM), "tna": compile_file(TNA_PROGRAM)}


# -- P4Info -----------------------------------------------------------------------------------


def control_plane_names(program: CheckedProgram) -> dict[str, object]:
    """Everything the controller names in a P4Info: tables with their keys, actions and size,
    actions with their parameters, counters, registers, digests, controller headers."""
    info = build_p4info(program)
    actions = {a.preamble.id: a.preamble.name for a in info.actions}
    return {
        "tables": {
            t.preamble.name: (
                [(f.name, f.bitwidth, f.match_type) for f in t.match_fields],
                sorted(actions[r.id] for r in t.action_refs),
                t.size,
            )
            for t in info.tables
        },
        "actions": {
            a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in info.actions
        },
        "counters": {c.preamble.name: (c.spec.unit, c.size) for c in info.counters},
        "registers": {r.preamble.name: r.size for r in info.registers},
        "digests": sorted(d.preamble.name for d in info.digests),
        "controller_headers": {
            h.preamble.name: [(m.name, m.bitwidth) for m in h.metadata]
            for h in info.controller_packet_metadata
        },
    }


def test_the_tna_program_has_the_v1model_programs_control_plane_names(
    programs: dict[str, CheckedProgram],
) -> None:
    v1model, tna = (control_plane_names(programs[a]) for a in ("v1model", "tna"))
    assert build_p4info(programs["tna"]).pkg_info.arch == "tna"
    # v1model's alone: the port backlog its egress writes for its ingress (a Tofino ingress
    # reads neither a queue nor an egress register; p4src/README.md)
    assert v1model["registers"].pop("plane_backlog") == 8
    for kind, names in v1model.items():
        assert tna[kind] == names, kind


# -- the two programs side by side -----------------------------------------------------------


class Nic:
    """A NIC program with the baseline configuration towards one peer (as test_mrc_nic_program's),
    its clone sessions made as the architecture needs them."""

    def __init__(
        self,
        program: CheckedProgram,
        me: Side,
        peer: Side,
        *,
        ev_min_active: int = 2,
        initial_psn: int = 0,
        probe_successes: int = 2,
        backups: int = BACKUPS,
        hand_off: int = PLANES,
        rotation: int = 0,
        skip_us: int = SKIP_US,
    ) -> None:
        self.sw = Switch(program)
        self.me, self.peer = me, peer
        self.sw.set_clock(lambda: 1_000)   # the NIC's µs: still (a test sets its own to move it)
        sw = self.sw
        sw.table("tx_connection").add_entry(
            [ExactMatch(addr(peer.address)), ExactMatch(peer.qp)],
            "set_connection",
            [me.conn, 1, EV_COUNT - 1, PLANES, backups, ev_min_active, peer.row, peer.ua,
             hand_off, rotation, skip_us],
        )
        sw.table("local_qp").add_entry(
            [ExactMatch(me.qp)],
            "set_local_qp",
            [
                me.conn,
                1,
                EV_COUNT - 1,
                PLANES,
                backups,
                ev_min_active,
                probe_successes,
                initial_psn,
                peer.qp,
            ],
        )
        sw.table("rx_r_key").add_entry([ExactMatch(me.qp), ExactMatch(R_KEY)], "r_key_valid", [])
        for ev in range(EV_COUNT + BACKUPS * PLANES):
            sw.table("ev_path").add_entry(
                [ExactMatch(1), ExactMatch(ev)],
                "set_path",
                [ev % PLANES, t1_usid(ev % PLANES, ev // PLANES)],
            )
        length = TNA_FB_SESSION_BYTES if program.arch == "tna" else 0
        for plane in range(PLANES):
            sw.table("path_template").add_entry(
                [ExactMatch(plane), ExactMatch(peer.row)], "via_t1", [template(me, peer, plane)]
            )
            sw.table("plane_port").add_entry(
                [ExactMatch(plane)],
                "set_plane_port",
                [PLANE_PORT[plane], me.mac(plane), T0_MAC + plane, locator(me, plane)],
            )
            sw.table("port_plane").add_entry(
                [ExactMatch(PLANE_PORT[plane])], "set_rx_plane", [plane]
            )
            if program.arch == "tna":   # the SACK and NACK copies, in the control queue
                sw.pre.mirroring_add_session(
                    SACK_SESSION_BASE + plane,
                    MirrorSession(egress_port=PLANE_PORT[plane], packet_length_bytes=length,
                                  class_of_service=FEEDBACK_PRIORITY),
                )
        if program.arch != "tna":   # v1model: the host's copy of a received packet
            sw.pre.mirroring_add(NIC_HOST_SESSION, HOST_PORT)

    def __repr__(self) -> str:
        return f"Nic({self.me.name}, {self.sw.program.arch})"

    def deny(self, ev: int) -> None:
        table = self.sw.table("ev_path")
        found = table.find_entry([ExactMatch(1), ExactMatch(ev)])
        assert found is not None
        table.delete_entry(found.handle)
        table.add_entry([ExactMatch(1), ExactMatch(ev)], "deny_path")

    def set_path(self, ev: int, plane: int, t1_index: int) -> None:
        table = self.sw.table("ev_path")
        found = table.find_entry([ExactMatch(1), ExactMatch(ev)])
        assert found is not None
        table.delete_entry(found.handle)
        table.add_entry([ExactMatch(1), ExactMatch(ev)], "set_path",
                        [plane, t1_usid(plane, t1_index)])

    def ports_down(self, *planes: int) -> None:
        self.sw.table("local_port_state").set_default_action(
            "set_port_state", [sum(1 << p for p in planes)]
        )

    def write(self, psn: int, *, retransmit: bool = False) -> list[OutputPacket]:
        pkt = data_packet(
            src=self.me.address,
            dst=self.peer.address,
            dest_qp=self.peer.qp,
            psn=psn,
            opcode=Opcode.WRITE_ONLY,
            msn=psn & 0xFFFF,
            va=0x1000 + psn * 64,
            r_key=R_KEY,
            dma_length=64,
            payload=b"p" * 64,
            retransmit=retransmit,
        )
        return self.sw.process_packet(HOST_PORT, bytes(pkt))

    def to_own_nic(self, opcode: int, psn: int, probe_id: int) -> list[OutputPacket]:
        pkt = (
            Ether(src="02:00:00:00:00:10", dst="02:00:00:00:0f:00")
            / IPv6(src=self.me.address, dst=self.peer.address, nh=17)
            / UDP(dport=4791)
            / BTH(opcode=opcode, dest_qp=self.peer.qp, psn=psn)
            / PETH(probe_id=probe_id)
        )
        return self.sw.process_packet(HOST_PORT, bytes(pkt))


@dataclass(repr=False)  # a failing assertion must not print every packet
class Run:
    """One architecture's pair and what it did: every packet out, per step."""

    a: Nic
    b: Nic
    log: list[tuple[str, list[tuple[int, bytes]]]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Run({self.a!r}, {self.b!r}, {len(self.log)} steps)"

    def step(self, name: str, outputs: list[OutputPacket]) -> list[OutputPacket]:
        self.log.append((name, sorted((o.port, o.data) for o in outputs)))
        return outputs


Scenario = Callable[[Run], None]


def compare(programs: dict[str, CheckedProgram], scenario: Scenario, **config: int) -> Run:
    """Run `scenario` on a v1model pair and a TNA pair; everything observable must agree."""
    runs = {
        arch: Run(Nic(p, A, B, **config), Nic(p, B, A, **config)) for arch, p in programs.items()
    }
    for run in runs.values():
        scenario(run)
    v1, tna = runs["v1model"], runs["tna"]
    assert len(v1.log) == len(tna.log)
    for (name, want), (_, got) in zip(v1.log, tna.log):
        assert got == want, name
    for side in ("a", "b"):
        nic_v1, nic_tna = getattr(v1, side), getattr(tna, side)
        assert [d.values for d in nic_tna.sw.digests] == [d.values for d in nic_v1.sw.digests]
        counts_v1 = {n: nic_v1.sw.counter("nic_counter").read(i)[0] for n, i in COUNTER.items()}
        counts_tna = {n: nic_tna.sw.counter("nic_counter").read(i)[0] for n, i in COUNTER.items()}
        assert counts_tna == counts_v1, side
        me = nic_v1.me
        for reg in ("ev_state", "bad_count", "ev_drops", "retire_psn", "peer_port_state",
                    "tx_cursor"):
            size = CONN_CELLS if reg in ("ev_state", "ev_drops", "retire_psn") else 1
            base = me.conn * size
            assert [nic_tna.sw.register(reg).read(base + i) for i in range(size)] == [
                nic_v1.sw.register(reg).read(base + i) for i in range(size)
            ], (side, reg)
    return v1


def over_the_wire(
    run: Run,
    name: str,
    sender: Nic,
    outputs: list[OutputPacket],
    edit: Callable[[int, bytes], bytes | None] = lambda i, d: d,
) -> None:
    """Hand what `sender` put on its plane ports to the other NIC (`edit` may change or drop
    the i-th packet), and the other NIC's feedback back, each step logged."""
    other = run.b if sender is run.a else run.a
    planes = [o for o in outputs if o.port != HOST_PORT]
    for i, out in enumerate(planes):
        data = edit(i, out.data)
        if data is None:
            continue
        answer = run.step(
            f"{name}: {other.me.name} gets {i}", other.sw.process_packet(out.port, data)
        )
        for back in answer:
            if back.port != HOST_PORT:
                run.step(
                    f"{name}: {sender.me.name} gets feedback {i}",
                    sender.sw.process_packet(back.port, back.data),
                )


def set_tc(data: bytes, dscp: int, ecn: int) -> bytes:
    pkt = Ether(data)
    pkt[IPv6].tc = dscp << 2 | ecn
    return bytes(pkt)


# -- scenarios --------------------------------------------------------------------------------


def test_spraying_acknowledging_and_the_feedback_loop(programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        for psn in range(3 * EV_COUNT):
            sent = run.step(f"write {psn}", run.a.write(psn, retransmit=psn % 5 == 0))
            over_the_wire(run, f"psn {psn}", run.a, sent)

    compare(programs, scenario)


def test_the_receive_window_reordering_duplicates_wrap_and_nacks(
    programs: dict[str, CheckedProgram],
) -> None:
    order = [0, 2, 1, 5, 4, 4, 3, 9, 70, 8, 7, 6, 6, 71, 10, 69, 200, 11, 12, 13]

    def scenario(run: Run) -> None:
        sent = {psn: run.b.write(psn) for psn in range(256)}
        for i, psn in enumerate(order):
            [out] = [o for o in sent[psn] if o.port != HOST_PORT]
            data = out.data
            if i % 7 == 3:
                data = set_tc(data, DSCP["trimmable"], 3)  # congestion: CE
            if i == 9:
                data = set_tc(data, DSCP["trimmed"], 0)[:134]  # trimmed on the way
            if i == 15:
                data = set_tc(data, DSCP["lasthop"], 0)  # trimmed at the last hop
            run.step(f"data {psn} ({i})", run.a.sw.process_packet(out.port, data))

    compare(programs, scenario, initial_psn=0xFFFFF0)


def test_skip_assumed_bad_refill_probes_and_reports(programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        psn = 0
        for rotation in range(5):
            for _ in range(EV_COUNT):
                sent = run.step(f"write {psn}", a.write(psn))
                out = next(o for o in sent if o.port != HOST_PORT)
                ev = Ether(out.data)[IPv6].fl & 0xFF

                def edit(
                    i: int, data: bytes, ev: int = ev, rotation: int = rotation
                ) -> bytes | None:
                    if rotation == 1 and ev == 2:
                        return set_tc(data, DSCP["trimmable"], 3)  # CE: B's SACK says SKIP
                    return data

                if rotation == 2 and ev == 5:
                    # B's SACK for this one asks ALWAYS_SKIP: EV 5 goes ASSUMED_BAD
                    answer = b.sw.process_packet(out.port, out.data)
                    for back in run.step(f"psn {psn} to b", answer):
                        if back.port != HOST_PORT:
                            pkt = Ether(back.data)
                            pkt[SETH].m = 2
                            run.step(
                                f"psn {psn} always-skip",
                                a.sw.process_packet(back.port, resealed(bytes(pkt))),
                            )
                else:
                    over_the_wire(run, f"psn {psn}", a, sent, edit)
                psn += 1
        # The host reports PSN 3's loss (EV 3); data goes on (TNA refills EV 3's slot when the
        # rotation meets it, v1model at once: the same EVs on the wire once it has); then probes
        # of EV 3, answered by B, bring it back (a spare backup from then on).
        run.step("report psn 3", a.to_own_nic(OP_EV_REPORT, 3, 0))
        run.step("probe timeout ev 3", a.to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | 3))
        for _ in range(EV_COUNT):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
            psn += 1
        for answer in range(3):
            probe = run.step(f"probe {answer}", a.to_own_nic(Opcode.PROBE, 0, 3))
            over_the_wire(run, f"probe {answer}", a, probe)
        for later in range(psn, psn + 2 * EV_COUNT):
            over_the_wire(run, f"psn {later}", a, run.step(f"write {later}", a.write(later)))

    compare(programs, scenario)


def test_reports_echo_whether_they_took_the_ev_out_and_queries_name_out_of_service_evs(
    programs: dict[str, CheckedProgram],
) -> None:
    def scenario(run: Run) -> None:
        a = run.a
        a.set_path(4, 0, 1)   # EV 4 on EV 2's path
        rotation_over_the_wire(run)
        for psn in range(EV_COUNT):   # all in service: no answer
            run.step(f"query {psn}", a.to_own_nic(OP_EV_REPORT, psn, REPORT_QUERY_FLAG))
        run.step("report psn 2", a.to_own_nic(OP_EV_REPORT, 2, 0))   # echo: took EV 2 out
        run.step("report psn 2 again", a.to_own_nic(OP_EV_REPORT, 2, 0))   # echo: out already
        for psn in range(EV_COUNT):   # PSN 2 (ASSUMED_BAD) and 4 (on the bad path) answered
            run.step(f"query {psn} again", a.to_own_nic(OP_EV_REPORT, psn, REPORT_QUERY_FLAG))

    v1 = compare(programs, scenario)
    echoes = [int.from_bytes(Ether(d)[BTH].payload.load[:2]) for name, outs in v1.log
              if name.startswith(("report", "query")) for _, d in outs]
    assert echoes == [ECHO_TOOK_OUT | 2, 2, REPORT_QUERY_FLAG | 2,
                      REPORT_QUERY_FLAG | ANSWER_EV_GOOD | 4]


def test_a_late_packet_undoes_the_loss_that_took_its_ev_out(
    programs: dict[str, CheckedProgram],
) -> None:
    late = {2: 0, 11: 3, 20: 0}   # held PSN (EV = PSN mod 8) -> its ECN when it arrives at last

    def scenario(run: Run) -> None:
        a = run.a
        held = {}
        for psn in range(3 * EV_COUNT):
            sent = run.step(f"write {psn}", a.write(psn))
            if psn in late:
                held[psn] = sent   # behind a queue somewhere
            else:
                over_the_wire(run, f"psn {psn}", a, sent)
        for psn in late:   # the host's timers call them lost: EVs 2, 3 and 4 go out
            run.step(f"report {psn}", a.to_own_nic(OP_EV_REPORT, psn, 0))
        run.step("report 20 again", a.to_own_nic(OP_EV_REPORT, 20, 0))   # EV 4: a second loss
        for psn in range(3 * EV_COUNT, 4 * EV_COUNT):   # TNA refills the slots as it meets them
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
        for psn, ecn in late.items():   # they arrive after all: EV 2 back GOOD, EV 3 SKIP
            over_the_wire(run, f"late {psn}", a, held[psn],
                          lambda i, d, ecn=ecn: set_tc(d, DSCP["trimmable"], ecn) if ecn else d)
        for psn in range(4 * EV_COUNT, 6 * EV_COUNT):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))

    v1 = compare(programs, scenario)
    # EV events (ev, state): out, out, out; EV 2 and EV 3 back (EV 4's second loss kept it out)
    events = [(d.values[2], d.values[3]) for d in v1.a.sw.digests]
    assert events == [(2, 2), (3, 2), (4, 2), (2, 0), (3, 0)]
    assert v1.a.sw.counter("nic_counter").read(COUNTER["ev_loss_undone"])[0] == 2
    # GOOD, SKIP (the ECN echo; a spare backup now, no rotation spends it), ASSUMED_BAD
    assert [v1.a.sw.register("ev_state").read(A.conn * CONN_CELLS + ev) for ev in (2, 3, 4)] \
        == [0, 1, 2]


def test_port_state_at_both_ends(programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        psn = 0

        def burst(count: int) -> None:
            nonlocal psn
            for _ in range(count):
                over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
                psn += 1

        burst(4)
        b.ports_down(1)  # B's SACKs now say its plane-1 port is down
        burst(EV_COUNT + 3)
        b.ports_down()
        burst(EV_COUNT)
        a.ports_down(0)  # ours: nothing leaves on plane 0
        burst(EV_COUNT)
        run.step("probe on a down port", a.to_own_nic(Opcode.PROBE, 0, 2))
        a.ports_down(0, 1)
        burst(3)
        a.ports_down()
        b.ports_down(0, 1)  # every plane down at the peer: its bitmap is ignored
        burst(EV_COUNT + 1)

    compare(programs, scenario)


def test_a_loss_on_a_down_plane_is_the_ports_not_the_evs(
    programs: dict[str, CheckedProgram],
) -> None:
    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        for psn in range(EV_COUNT):   # lost on the way: only the host's timers will say
            run.step(f"write {psn}", a.write(psn))
        a.ports_down(1)
        run.step("report 1 (plane 1, ours down)", a.to_own_nic(OP_EV_REPORT, 1, 0))
        run.step("probe of EV 3 unanswered", a.to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | 3))
        run.step("report 2 (plane 0)", a.to_own_nic(OP_EV_REPORT, 2, 0))
        a.ports_down()
        b.ports_down(0)   # B's SACKs now say its plane-0 port is down
        for psn in range(EV_COUNT, EV_COUNT + 2):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
        run.step("report 4 (plane 0, the peer's down)", a.to_own_nic(OP_EV_REPORT, 4, 0))
        run.step("report 5 (plane 1)", a.to_own_nic(OP_EV_REPORT, 5, 0))

    v1 = compare(programs, scenario)
    outputs = dict(v1.log)
    for name in ("report 1 (plane 1, ours down)", "probe of EV 3 unanswered",
                 "report 4 (plane 0, the peer's down)"):
        assert outputs[name] == [], name   # consumed: no echo, nothing to probe
    assert [port for port, _ in outputs["report 5 (plane 1)"]] == [HOST_PORT]
    assert [(d.values[2], d.values[3]) for d in v1.a.sw.digests] == [(2, 2), (5, 2)]
    counter = v1.a.sw.counter("nic_counter")
    assert counter.read(COUNTER["report_port_down"])[0] == 3
    assert counter.read(COUNTER["host_report"])[0] == 2
    assert [v1.a.sw.register("ev_drops").read(A.conn * CONN_CELLS + ev)
            for ev in range(EV_COUNT)] == [0, 0, 1, 0, 0, 1, 0, 0]


def test_a_denied_ev_hands_its_slot_to_a_backup(programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a = run.a
        a.deny(3)
        a.deny(6)
        for psn in range(4 * EV_COUNT):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))

    compare(programs, scenario)


def test_the_feedback_bytes_are_v1models(programs: dict[str, CheckedProgram]) -> None:
    """One data packet each way: the SACK is 150 bytes and the NACK 134 on both."""

    def scenario(run: Run) -> None:
        [out] = [o for o in run.b.write(1) if o.port != HOST_PORT]
        run.step("nack", run.a.sw.process_packet(out.port, set_tc(out.data, DSCP["trimmed"], 0)))
        [out] = [o for o in run.b.write(0) if o.port != HOST_PORT]
        run.step("sack", run.a.sw.process_packet(out.port, out.data))

    v1 = compare(programs, scenario)
    [(_, [(_, nack)]), (_, packets)] = v1.log
    assert len(nack) == 134
    assert sorted(len(d) for port, d in packets if port != HOST_PORT) == [150]


def test_paths_come_from_the_tables(programs: dict[str, CheckedProgram]) -> None:
    """A probe that names an EV of each plane, and data to a peer with no template: no path."""

    def scenario(run: Run) -> None:
        for ev in (0, 1, 8, 11):
            over_the_wire(
                run,
                f"probe ev {ev}",
                run.a,
                run.step(f"probe {ev}", run.a.to_own_nic(Opcode.PROBE, 0, ev)),
            )
        table = run.a.sw.table("path_template")
        found = table.find_entry([ExactMatch(1), ExactMatch(run.b.me.row)])
        assert found is not None
        table.delete_entry(found.handle)
        for psn in range(4):
            run.step(f"write {psn}", run.a.write(psn))

    compare(programs, scenario)


def remove(nic: Nic, table: str, *key: int) -> None:
    """Delete the entry of `table` with this exact key (as the controller may)."""
    entries = nic.sw.table(table)
    found = entries.find_entry([ExactMatch(k) for k in key])
    assert found is not None
    entries.delete_entry(found.handle)


def test_no_path_and_probes_of_denied_evs_count_each_drop_once(
    programs: dict[str, CheckedProgram],
) -> None:
    """What is not sent for want of a path (data and a probe with no template, a SACK and a
    NACK with no plane port) counts `tx_no_path_drop`, a probe of a DENIED EV
    `tx_probe_denied_drop`; with its port down as well, a packet counts `port_down_drop` only.
    The same on both architectures (compare), and the counts are these."""

    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        a.deny(EV_COUNT)  # plane 0's first backup: in no slot, so no data meets it
        a.deny(EV_COUNT + 1)  # plane 1's
        run.step("probe of a DENIED EV", a.to_own_nic(Opcode.PROBE, 0, EV_COUNT))
        remove(a, "path_template", 1, b.me.row)  # A: no path to B on plane 1
        remove(b, "plane_port", 0)  # B: no port to answer on in plane 0
        for psn in range(4):  # slots 0..3: plane 0 reaches B (no SACK), plane 1 goes nowhere
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
        run.step("probe with no template", a.to_own_nic(Opcode.PROBE, 0, 3))
        sent = run.step("write 4", a.write(4))  # slot 4: plane 0
        [out] = [o for o in sent if o.port != HOST_PORT]
        assert out.port == PLANE_PORT[0]
        trimmed = set_tc(out.data, DSCP["trimmed"], 0)[:134]
        run.step("trimmed: its NACK has no plane port", b.sw.process_packet(out.port, trimmed))
        # Ports down on top of a missing path: counted as port down, and only as that.
        a.ports_down(1)
        run.step("probe: port down and no template", a.to_own_nic(Opcode.PROBE, 0, 1))
        run.step("probe of a DENIED EV on a down port", a.to_own_nic(Opcode.PROBE, 0, EV_COUNT + 1))
        b.ports_down(0)
        sent = run.step("write 5", a.write(5))  # slot 5 (plane 1, down here): slot 6, plane 0
        assert [o.port for o in sent] == [PLANE_PORT[0]]
        over_the_wire(run, "psn 5: SACK due on a down port with no plane port", a, sent)

    v1 = compare(programs, scenario)

    def counts(nic: Nic) -> dict[str, int]:
        names = ("tx_no_path_drop", "tx_probe_denied_drop", "port_down_drop", "tx_data",
                 "tx_probe", "sack_sent", "nack_sent", "rx_data", "rx_trimmed")
        return {n: nic.sw.counter("nic_counter").read(COUNTER[n])[0] for n in names}

    assert counts(v1.a) == {"tx_no_path_drop": 3, "tx_probe_denied_drop": 2,
                            "port_down_drop": 1, "tx_data": 4, "tx_probe": 0,
                            "sack_sent": 0, "nack_sent": 0, "rx_data": 0, "rx_trimmed": 0}
    assert counts(v1.b) == {"tx_no_path_drop": 3, "tx_probe_denied_drop": 0,
                            "port_down_drop": 1, "tx_data": 0, "tx_probe": 0,
                            "sack_sent": 0, "nack_sent": 0, "rx_data": 3, "rx_trimmed": 1}
    # Nothing left on plane 1 (A had no path there, then its port went down), and B sent no
    # feedback at all: every packet out of B went to its host.
    outs = [port for _, packets in v1.log for port, _ in packets]
    assert PLANE_PORT[1] not in outs
    assert outs.count(PLANE_PORT[0]) == 4 and outs.count(HOST_PORT) == 3


def test_the_tna_program_compiles_from_its_own_directory() -> None:
    assert Path(TNA_PROGRAM).is_file()
    assert compile_file(TNA_PROGRAM).arch == "tna"


# -- where the two differ (p4src/README.md, "The NIC on TNA"): pinned, so that a change shows ---


def ev_sent_on(outputs: list[OutputPacket]) -> int:
    """The EV of the one packet a NIC put on a plane port."""
    [out] = [o for o in outputs if o.port != HOST_PORT]
    return Ether(out.data)[IPv6].fl & 0xFF


def first_rotation_evs(run: Run, first_psn: int) -> list[int]:
    return [ev_sent_on(run.a.write(psn)) for psn in range(first_psn, first_psn + EV_COUNT)]


def rotation_over_the_wire(run: Run, marked: tuple[int, ...] = ()) -> None:
    """A's first rotation (PSNs 0..EV_COUNT-1) to B and B's SACKs back; the PSNs in `marked`
    arrive ECN-marked (CE), so their SACKs echo it."""
    for psn in range(EV_COUNT):

        def ce(i: int, data: bytes, psn: int = psn) -> bytes | None:
            return set_tc(data, DSCP["trimmable"], 3) if psn in marked else data

        over_the_wire(run, f"psn {psn}", run.a, run.a.write(psn), ce)


def test_two_skipped_slots_of_a_plane_v1model_tries_on_tna_falls_back(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        rotation_over_the_wire(run, marked=(2, 4))  # EVs 2 and 4 (both plane 0) SKIP
        got[arch] = (
            first_rotation_evs(run, EV_COUNT),
            run.a.sw.counter("nic_counter").read(COUNTER["tx_fallback"])[0],
        )
    # Slot 2's EV and its plane's next slot's (4) both SKIP: v1model goes on to slot 6, TNA
    # (two tries) sends on slot 2's EV, counted as a fallback. Both tries passed slot 4's EV
    # over: GOOD again when its own turn comes. Plane 1's slot 3 is never tried: the planes
    # keep their shares.
    assert got["v1model"] == ([0, 1, 6, 3, 4, 5, 6, 7], 0)
    assert got["tna"] == ([0, 1, 2, 3, 4, 5, 6, 7], 1)


def test_an_assumed_bad_ev_no_backup_replaced_hands_its_turn_within_its_plane(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B, backups=0), Nic(program, B, A, backups=0))
        rotation_over_the_wire(run)
        run.a.to_own_nic(OP_EV_REPORT, 2, 0)  # EV 2 ASSUMED_BAD, no backup to take its slot
        got[arch] = (
            first_rotation_evs(run, EV_COUNT),
            run.a.sw.counter("nic_counter").read(COUNTER["tx_fallback"])[0],
        )
    # Slot 2's turn goes to the next slot of plane 0 (4), not to slot 3 in plane 1: the
    # planes keep their shares (as a SKIP EV's turn does).
    assert got["v1model"] == got["tna"] == ([0, 1, 4, 3, 4, 5, 6, 7], 0)


def test_a_passed_over_turn_goes_hand_off_slots_on(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        step = 2 * PLANES   # the controller's step for this connection: two slots of plane 0 on
        run = Run(Nic(program, A, B, backups=0, hand_off=step),
                  Nic(program, B, A, backups=0, hand_off=step))
        rotation_over_the_wire(run, marked=(2,))  # EV 2 SKIP
        run.a.to_own_nic(OP_EV_REPORT, 4, 0)      # EV 4 ASSUMED_BAD, no backup for its slot
        got[arch] = (
            first_rotation_evs(run, EV_COUNT),
            run.a.sw.counter("nic_counter").read(COUNTER["tx_fallback"])[0],
        )
    # Slot 2's turn goes to slot 6, slot 4's to slot 0 (4 + 4 wraps in the 8 slots): each
    # within plane 0, `hand_off` slots on, not to the plane's next slot.
    assert got["v1model"] == got["tna"] == ([0, 1, 6, 3, 0, 5, 6, 7], 0)


def test_a_skip_holds_for_skip_us_and_is_spent_after(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        turns = []
        for waited in (SKIP_US, SKIP_US + 1):   # µs from the ECN echo to EV 2's next turn
            now = [1_000]
            run = Run(Nic(program, A, B), Nic(program, B, A))
            run.a.sw.set_clock(lambda now=now: now[0])
            rotation_over_the_wire(run, marked=(2,))   # EV 2 SKIP at 1,000 µs
            now[0] += waited
            turns.append(first_rotation_evs(run, EV_COUNT))
        got[arch] = turns
    # Within skip_us, 2's turn goes to its plane's next slot; after it, the turn is its own.
    # (TNA's clock counts 1.024 µs units: from 1,000 µs, 976, to 996 and 997.)
    within, after = [0, 1, 4, 3, 4, 5, 6, 7], list(range(EV_COUNT))
    assert got["v1model"] == got["tna"] == [within, after]


def test_a_connection_starts_its_rotation_at_its_own_slot(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B, rotation=5), Nic(program, B, A))
        got[arch] = (first_rotation_evs(run, 0), first_rotation_evs(run, EV_COUNT))
    # The controller's start for this connection (a hash of it), then a rotation as before:
    # QPs sharing a profile do not send on the same T1s in step (mrc-srv6.md §3.3).
    rotation = [5, 6, 7, 0, 1, 2, 3, 4]
    assert got["v1model"] == got["tna"] == (rotation, rotation)


def test_a_loss_sets_its_path_aside_until_an_ev_on_it_answers(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        run.a.set_path(4, 0, 1)  # EV 4 on EV 2's path (plane 0, T1 1)
        rotation_over_the_wire(run)  # SACKed: every EV's path seen
        run.a.to_own_nic(OP_EV_REPORT, 2, 0)  # PSN 2's loss: EV 2 out, its path bad
        passed_over = first_rotation_evs(run, EV_COUNT)
        for answer in range(2):  # EV 2's probes answered: back, and its path with it
            over_the_wire(run, f"probe {answer}", run.a, run.a.to_own_nic(Opcode.PROBE, 0, 2))
        got[arch] = (
            passed_over,
            first_rotation_evs(run, 2 * EV_COUNT)[4],
            run.a.sw.counter("nic_counter").read(COUNTER["tx_bad_path_passed"])[0],
        )
    # Slot 2 takes backup 8 (its path not seen yet); slot 4's EV 4 shares the bad path: its
    # turn goes to its plane's next slot (6). Then EV 4 is used again.
    assert got["v1model"] == got["tna"] == ([0, 1, 8, 3, 6, 5, 6, 7], 4, 1)


def test_a_loss_on_an_ev_whose_path_echoed_ecn_lately_sets_no_path_aside(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        run.a.sw.set_clock(lambda: 1000)  # everything within one µs of the NIC's clock
        run.a.set_path(4, 0, 1)  # EV 4 on EV 2's path
        rotation_over_the_wire(run, marked=(2,))  # EV 2: an ECN echo
        run.a.to_own_nic(OP_EV_REPORT, 2, 0)  # then PSN 2's loss: a queue's as likely
        got[arch] = first_rotation_evs(run, EV_COUNT)
    # EV 2 out (backup 8 in its slot), EV 4 still used: its path is not set aside
    assert got["v1model"] == got["tna"] == [0, 1, 8, 3, 4, 5, 6, 7]


def rotation_with_a_resend(run: Run, first_psn: int, resend_at: int, psn: int) -> list[int]:
    """The EVs of one rotation of new packets from `first_psn`, the `resend_at`-th of them
    (from 0) a resend of `psn` instead."""
    return [ev_sent_on(run.a.write(psn, retransmit=True) if i == resend_at
                       else run.a.write(first_psn + i)) for i in range(EV_COUNT)]


def test_a_resend_does_not_explore_a_backup_while_its_connection_has_a_bad_path(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        rotation_over_the_wire(run)             # every EV's path seen
        run.a.to_own_nic(OP_EV_REPORT, 2, 0)    # PSN 2 lost: EV 2 out, its path bad
        first = rotation_with_a_resend(run, EV_COUNT, 2, psn=2)
        second = []
        for psn in range(2 * EV_COUNT, 3 * EV_COUNT):   # over the wire: the backup's path seen
            out = run.a.write(psn)
            second.append(ev_sent_on(out))
            over_the_wire(run, f"psn {psn}", run.a, out)
        got[arch] = [first, second, rotation_with_a_resend(run, 3 * EV_COUNT, 2, psn=2)]
    # The resend of PSN 2 meets slot 2, whose backup (EV 8; v1model put it there when EV 2
    # went out, TNA would now) was never sent on: it may run over the failed element too, so
    # the resend goes to plane 0's next slot (EV 4). New data takes the backup at the next
    # turn; once its path is seen (not the bad one), a resend goes on it too.
    assert got["v1model"] == got["tna"] == [
        [0, 1, 4, 3, 4, 5, 6, 7], [0, 1, 8, 3, 4, 5, 6, 7], [0, 1, 8, 3, 4, 5, 6, 7]]


def test_a_resend_takes_the_backup_when_no_path_is_known_bad(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        run.a.sw.set_clock(lambda: 1000)
        rotation_over_the_wire(run, marked=(2,))   # EV 2 echoed ECN
        run.a.to_own_nic(OP_EV_REPORT, 2, 0)       # then PSN 2 lost: no path set aside
        got[arch] = rotation_with_a_resend(run, EV_COUNT, 2, psn=2)
    assert got["v1model"] == got["tna"] == [0, 1, 8, 3, 4, 5, 6, 7]


def test_an_ev_back_before_its_slot_is_met_keeps_it_on_tna(
    programs: dict[str, CheckedProgram],
) -> None:
    got = {}
    for arch, program in programs.items():
        run = Run(Nic(program, A, B), Nic(program, B, A))
        rotation_over_the_wire(run)
        run.a.to_own_nic(OP_EV_REPORT, 3, 0)  # EV 3 ASSUMED_BAD
        for answer in range(2):  # two probes answered: GOOD again
            over_the_wire(run, f"probe {answer}", run.a, run.a.to_own_nic(Opcode.PROBE, 0, 3))
        got[arch] = first_rotation_evs(run, EV_COUNT)
    # v1model gave slot 3 to plane 1's first backup (EV 9) when EV 3 went bad; TNA would have
    # at the rotation's next visit, and EV 3 came back first.
    assert got["v1model"] == [0, 1, 2, 9, 4, 5, 6, 7]
    assert got["tna"] == [0, 1, 2, 3, 4, 5, 6, 7]


# -- loss by one path's order -----------------------------------------------------------------


def sack_notes(run: Run) -> dict[int, int]:
    """The SACKs A's NIC handed its host: acknowledged PSN -> SETH spdcid (the NIC's note)."""
    notes = {}
    for name, outputs in run.log:
        for port, data in outputs:
            pkt = Ether(data)
            if port == HOST_PORT and "gets feedback" in name and pkt.haslayer(SETH):
                seth = pkt[SETH]
                notes[(seth.cack_psn + seth.ack_psn_offset) % (1 << 24)] = seth.spdcid
    return notes


def two_rotations_one_lost(run: Run, lost: int) -> None:
    """A's PSNs 0 .. 2 EV_COUNT - 1 to B (two rotations: PSN p and p + EV_COUNT share an EV),
    PSN `lost` lost on the wire, and B's SACKs back."""
    for psn in range(2 * EV_COUNT):
        over_the_wire(run, f"psn {psn}", run.a, run.a.write(psn),
                      lambda i, d, psn=psn: None if psn == lost else d)


def test_a_sack_names_the_packet_its_ev_carried_before_when_that_did_not_arrive(
    programs: dict[str, CheckedProgram],
) -> None:
    # PSN 2 lost: the SACK for PSN 10 (EV 2's next packet) reports it missing; the host is
    # told the gap back to it (8), on both architectures; every other SACK says nothing.
    run = compare(programs, lambda run: two_rotations_one_lost(run, 2))
    notes = sack_notes(run)
    assert notes.pop(10) == EV_COUNT
    assert set(notes) == set(range(2 * EV_COUNT)) - {2, 10} and set(notes.values()) == {0}


def test_a_lost_resend_is_named_by_the_next_packet_on_its_ev_and_wire_notes_are_not_kept(
    programs: dict[str, CheckedProgram],
) -> None:
    def scenario(run: Run) -> None:
        two_rotations_one_lost(run, 2)
        # PSN 2 resent and lost again, then a third rotation: the packet after the resend on
        # its EV names it (a gap back past older PSNs: a resend's turn on the path is its own).
        over_the_wire(run, "resend", run.a, run.a.write(2, retransmit=True), lambda i, d: None)
        for psn in range(2 * EV_COUNT, 3 * EV_COUNT):
            over_the_wire(run, f"psn {psn}", run.a, run.a.write(psn))
        # A SACK whose spdcid a peer set itself: what the host gets says nothing.
        [out] = [o for o in run.a.write(3 * EV_COUNT) if o.port != HOST_PORT]
        [sack] = [o for o in run.step("psn 24: B gets it", run.b.sw.process_packet(
            out.port, out.data)) if o.port != HOST_PORT]
        pkt = Ether(sack.data)
        pkt[SETH].spdcid = 0x1234
        run.step("psn 24: A gets feedback", run.a.sw.process_packet(
            sack.port, resealed(bytes(pkt))))

    notes = sack_notes(compare(programs, scenario))
    assert notes.pop(10) == EV_COUNT
    [(named_by, gap)] = [(psn, gap) for psn, gap in notes.items() if gap]
    assert named_by > 2 * EV_COUNT and named_by - gap == 2
    assert notes[3 * EV_COUNT] == 0


def test_oblivious_spraying_keeps_no_paths_order(programs: dict[str, CheckedProgram]) -> None:
    # ev_min_active = the whole set (the spray mode): no EV is ever passed over, and no note.
    run = compare(programs, lambda run: two_rotations_one_lost(run, 2), ev_min_active=EV_COUNT)
    notes = sack_notes(run)
    assert 10 in notes and set(notes.values()) == {0}
