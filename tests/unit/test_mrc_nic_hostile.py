"""The NIC against feedback and packets it must not believe (issue 24, defects 4-7), on both
architectures side by side (test_mrc_nic_tna's pairs: the same packets out, counts, EV states
and events), then what each architecture counted:

- a SACK or NACK naming a PSN this NIC was never given to send (a ghost) or an EV outside the
  connection's EV set is refused (`rx_forged`): not delivered, no EV state, no event;
- a probe or probe-timeout report from the host naming an EV the connection lacks is malformed;
- an EV report (0xDF, host to its own NIC) arriving on a plane port is malformed, not a probe;
- a write whose memory key its QP lacks (rx_r_key) is neither acknowledged nor delivered;
- a corrupt packet (its UDP checksum fails) is neither acknowledged nor delivered
  (`rx_corrupt`): feedback and probes on both architectures, data on v1model (a Tofino parser
  never reaches the payload: p4src/README.md).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from nic_pair import COUNTER, DSCP, EV_COUNT, HOST_PORT, PLANE_PORT, PROGRAM, R_KEY, A, B, resealed
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from test_mrc_nic_tna import (
    OP_EV_REPORT,
    REPORT_PROBE_FLAG,
    TNA_PROGRAM,
    Nic,
    Run,
    compare,
    over_the_wire,
)

from mrc_transport.wire import BTH, NETH, SETH, Opcode, SackM, compact_ev, data_packet
from softswitch.compiler import compile_file
from softswitch.engine.switch import OutputPacket
from softswitch.ir.checked import CheckedProgram


def count(nic: Nic, name: str) -> int:
    return nic.sw.counter("nic_counter").read(COUNTER[name])[0]


def to_host(outputs: list[OutputPacket]) -> list[OutputPacket]:
    return [o for o in outputs if o.port == HOST_PORT]


def on_plane(outputs: list[OutputPacket]) -> OutputPacket:
    """The first of `outputs` that leaves on a plane port."""
    return next(o for o in outputs if o.port != HOST_PORT)


def send_and_answer(run: Run, psn: int) -> bytes:
    """A sends `psn`; B's SACK for it (not yet handed back to A)."""
    sent = run.step(f"write {psn}", run.a.write(psn))
    out = on_plane(sent)
    answer = run.step(f"b gets {psn}", run.b.sw.process_packet(out.port, out.data))
    return on_plane(answer).data


def edited(frame: bytes, change: Callable[[Ether], None]) -> bytes:
    """`frame` with `change` made and its checksum sealed again, as a forger would."""
    pkt = Ether(frame)
    change(pkt)
    return resealed(bytes(pkt))


@pytest.fixture(scope="module")
def programs() -> dict[str, CheckedProgram]:
    return {"v1model": compile_file(PROGRAM), "tna": compile_file(TNA_PROGRAM)}


def test_ghost_feedback_is_refused_and_the_real_feedback_still_counts(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a = run.a
        sack = send_and_answer(run, 0)    # A has handed over PSNs 0..3; B saw PSN 0
        for psn in range(1, 4):
            run.step(f"write {psn}", a.write(psn))
        port = PLANE_PORT[0]
        for ghost in (4, 100, 0x7FFFFF):   # past PSN 3: never sent

            def cack(p: Ether, ghost: int = ghost) -> None:
                p[SETH].cack_psn = ghost

            assert run.step(f"ghost {ghost}", a.sw.process_packet(port, edited(sack, cack))) == []
        # A NACK of PSN 9 (never sent) and one of PSN 2 (sent): only the second is believed.
        for psn in (9, 2):
            out = run.step(f"nack {psn}", a.sw.process_packet(port, nack_of(sack, psn)))
            assert len(to_host(out)) == (psn == 2)
        assert len(to_host(run.step("genuine", a.sw.process_packet(port, sack)))) == 1

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_forged") == 4
    assert count(v1.a, "rx_sack") == 1 and count(v1.a, "rx_nack") == 1


def test_feedback_before_anything_was_sent_is_a_ghost_but_a_probe_answer_is_not(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        probe = on_plane(run.step("probe", a.to_own_nic(Opcode.PROBE, 0, 1)))
        answer = on_plane(run.step("answer", b.sw.process_packet(probe.port, probe.data)))
        assert len(run.step("probe answer", a.sw.process_packet(answer.port, answer.data))) == 1

        def not_an_answer(p: Ether) -> None:
            p[SETH].probe_response = 0

        out = a.sw.process_packet(answer.port, edited(answer.data, not_an_answer))
        assert run.step("sack of nothing", out) == []

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_forged") == 1 and count(v1.a, "rx_sack") == 1


def nack_of(sack: bytes, psn: int) -> bytes:
    """A trimmed-NACK of `psn` from where B's SACK came from (its addresses, its EV), sealed."""
    pkt = Ether(sack)
    entropy = pkt[SETH].entropy
    bth = pkt[BTH]
    bth.opcode = Opcode.NACK
    bth.remove_payload()
    bth.add_payload(NETH(nack_reason=1, entropy=entropy, nack_psn=psn))
    for layer in (pkt[IPv6], pkt[IPv6][1]):
        layer.plen = None
    pkt[UDP].len = None
    return resealed(bytes(pkt))


def test_feedback_naming_evs_the_connection_lacks_cannot_use_up_its_floor(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a = run.a
        sack = send_and_answer(run, 0)
        for psn in range(1, 4):
            run.step(f"write {psn}", a.write(psn))
        for ev in range(200, 206):   # ALWAYS_SKIP for EVs 200..205: no such EVs (12 exist)

            def always_skip(p: Ether, ev: int = ev) -> None:
                p[SETH].m = SackM.ALWAYS_SKIP
                p[SETH].entropy = compact_ev(ev % 2, ev)

            out = a.sw.process_packet(PLANE_PORT[0], edited(sack, always_skip))
            assert run.step(f"always-skip ev {ev}", out) == []
        # A genuine ALWAYS_SKIP on EV 0 still takes it out of service (floor: 2 of 8 left).
        def real(p: Ether) -> None:
            p[SETH].m = SackM.ALWAYS_SKIP
        run.step("always-skip ev 0", a.sw.process_packet(PLANE_PORT[0], edited(sack, real)))
        for psn in range(4, 4 + EV_COUNT):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_forged") == 6
    assert v1.a.sw.register("ev_state").read(v1.a.me.conn * 256) == 2   # EV 0 ASSUMED_BAD
    assert v1.a.sw.register("bad_count").read(v1.a.me.conn) == 1
    assert [d.values[2] for d in v1.a.sw.digests] == [0]                 # one event: EV 0


def test_the_host_cannot_probe_or_report_an_ev_the_connection_lacks(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a = run.a
        for psn in range(EV_COUNT):
            over_the_wire(run, f"psn {psn}", a, run.step(f"write {psn}", a.write(psn)))
        assert run.step("probe ev 12", a.to_own_nic(Opcode.PROBE, 0, 12)) == []
        assert run.step("probe ev 200", a.to_own_nic(Opcode.PROBE, 0, 200)) == []
        assert run.step("report ev 12", a.to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | 12)) == []
        # EV 11 is the last backup: it exists (probed on its path, its report answered).
        assert len(run.step("probe ev 11", a.to_own_nic(Opcode.PROBE, 0, 11))) == 1
        assert len(run.step("report ev 11",
                            a.to_own_nic(OP_EV_REPORT, 0, REPORT_PROBE_FLAG | 11))) == 1

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_malformed") == 3
    assert count(v1.a, "tx_probe") == 1 and count(v1.a, "host_report") == 1


def test_an_ev_report_from_a_plane_port_is_malformed_not_a_probe(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        probe = on_plane(run.step("probe", run.a.to_own_nic(Opcode.PROBE, 0, 1)))
        pkt = Ether(probe.data)
        pkt[BTH].opcode = OP_EV_REPORT
        out = run.b.sw.process_packet(probe.port, resealed(bytes(pkt)))
        assert run.step("report on a plane port", out) == []
        assert len(run.step("the probe", run.b.sw.process_packet(probe.port, probe.data))) == 1

    v1 = compare(programs, scenario)
    assert count(v1.b, "rx_malformed") == 1 and count(v1.b, "rx_probe") == 1


def flip(frame: bytes, at: int) -> bytes:
    return frame[:at] + bytes([frame[at] ^ 0x01]) + frame[at + 1:]


def test_corrupt_feedback_and_probes_are_dropped_and_counted(
        programs: dict[str, CheckedProgram]) -> None:
    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        sack = send_and_answer(run, 0)
        for psn in range(1, 4):
            run.step(f"write {psn}", a.write(psn))
        # A bit of the SACK bitmap flipped on the way: it would acknowledge PSN 1..
        bad = flip(sack, len(sack) - 9)
        assert run.step("corrupt sack", a.sw.process_packet(PLANE_PORT[0], bad)) == []
        probe = on_plane(run.step("probe", a.to_own_nic(Opcode.PROBE, 0, 1)))
        assert run.step("corrupt probe", b.sw.process_packet(probe.port, flip(probe.data, -3))) == []
        assert len(to_host(run.step("sack", a.sw.process_packet(PLANE_PORT[0], sack)))) == 1

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_corrupt") == 1 and count(v1.b, "rx_corrupt") == 1
    assert count(v1.a, "rx_sack") == 1 and count(v1.b, "rx_probe") == 0


def test_corrupt_data_is_not_acknowledged_and_the_real_packet_is_delivered_on_v1model(
        programs: dict[str, CheckedProgram]) -> None:
    runs = {arch: Run(Nic(p, A, B), Nic(p, B, A)) for arch, p in programs.items()}
    for arch, run in runs.items():
        sent = on_plane(run.a.write(0))
        corrupt = flip(sent.data, len(sent.data) - 1)   # the payload's last byte
        out = run.b.sw.process_packet(sent.port, corrupt)
        if arch == "v1model":
            assert out == [] and count(run.b, "rx_corrupt") == 1
            out = run.b.sw.process_packet(sent.port, sent.data)   # the resend, intact
            assert len(to_host(out)) == 1 and count(run.b, "rx_data") == 1
        else:
            # A Tofino parser never reaches the payload: delivered (the host's memory
            # registration and the link's FCS are the checks left; p4src/README.md).
            assert len(to_host(out)) == 1 and count(run.b, "rx_corrupt") == 0


def test_a_trimmed_packet_with_no_checksum_is_still_nacked(
        programs: dict[str, CheckedProgram]) -> None:
    """A switch that trims a packet zeroes its UDP checksum (the payload it covered is gone):
    the NIC NACKs it as before."""
    def scenario(run: Run) -> None:
        sent = on_plane(run.step("write", run.a.write(0)))
        pkt = Ether(sent.data)
        pkt[IPv6].tc = DSCP["trimmed"] << 2
        pkt[UDP].chksum = 0
        trimmed = bytes(pkt)[:14 + 40 + 40 + 8 + 12 + 16 + 16]   # through RETH
        out = run.step("trimmed", run.b.sw.process_packet(sent.port, trimmed))
        assert [o.port for o in out] == [sent.port]
        assert Ether(out[0].data)[BTH].opcode == Opcode.NACK

    v1 = compare(programs, scenario)
    assert count(v1.b, "rx_trimmed") == 1 and count(v1.b, "rx_corrupt") == 0


def test_a_write_with_a_memory_key_its_qp_lacks_is_not_acknowledged(
        programs: dict[str, CheckedProgram]) -> None:
    """The spoofed packet of defect 5: a well-formed write of PSN 0 with a memory key B's host
    never registered (rx_r_key) is neither SACKed nor delivered, so the genuine PSN 0 after it
    is placed (not taken for a duplicate of the spoof)."""
    def write(nic: Nic, psn: int, r_key: int) -> list[OutputPacket]:
        pkt = data_packet(src=nic.me.address, dst=nic.peer.address, dest_qp=nic.peer.qp,
                          psn=psn, opcode=Opcode.WRITE_ONLY, msn=psn, va=0x1000, r_key=r_key,
                          dma_length=64, payload=b"s" * 64)
        return nic.sw.process_packet(HOST_PORT, bytes(pkt))

    def scenario(run: Run) -> None:
        spoof = on_plane(run.step("spoof", write(run.a, 0, R_KEY + 1)))
        assert run.step("b gets the spoof", run.b.sw.process_packet(spoof.port, spoof.data)) == []
        real = on_plane(run.step("write", write(run.a, 0, R_KEY)))
        out = run.step("b gets the write", run.b.sw.process_packet(real.port, real.data))
        assert sorted(o.port for o in out) == sorted([HOST_PORT, real.port])   # placed, SACKed

    v1 = compare(programs, scenario)
    assert count(v1.b, "rx_bad_r_key") == 1 and count(v1.b, "rx_data") == 1
    assert count(v1.b, "rx_duplicate") == 0


def test_an_ipv6_header_whose_version_is_not_6_is_malformed(
        programs: dict[str, CheckedProgram]) -> None:
    """The EtherType or next header says IPv6; a header with version 4 is not read as one: from
    the host (its IPv6 header) or a plane port (the outer or the inner header)."""
    def with_version(frame: bytes, at: int, version: int) -> bytes:
        return frame[:at] + bytes([version << 4 | frame[at] & 0x0F]) + frame[at + 1:]

    def scenario(run: Run) -> None:
        a, b = run.a, run.b
        pkt = data_packet(src=a.me.address, dst=a.peer.address, dest_qp=a.peer.qp, psn=0,
                          opcode=Opcode.WRITE_ONLY, msn=0, va=0x1000, r_key=R_KEY,
                          dma_length=64, payload=b"v" * 64)
        host_v4 = with_version(bytes(pkt), 14, 4)
        assert run.step("host v4", a.sw.process_packet(HOST_PORT, host_v4)) == []
        sent = on_plane(run.step("write", a.write(0)))
        for name, at in (("outer", 14), ("inner", 14 + 40)):
            out = b.sw.process_packet(sent.port, with_version(sent.data, at, 4))
            assert run.step(f"{name} v4", out) == []
        assert len(run.step("v6", b.sw.process_packet(sent.port, sent.data))) == 2

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_malformed") == 1 and count(v1.b, "rx_malformed") == 2
    assert count(v1.a, "tx_data") == 1 and count(v1.b, "rx_data") == 1


def test_after_a_restart_of_the_nic_resends_teach_it_what_was_sent(
        programs: dict[str, CheckedProgram]) -> None:
    """A NIC whose registers start over (a pipeline pushed again) mid-connection knows of no
    PSN sent: feedback is a ghost until the host's resends, which count as sent too, reach
    the PSNs it names."""
    def scenario(run: Run) -> None:
        a = run.a
        sacks = [send_and_answer(run, psn) for psn in range(4)]   # B SACKs PSNs 0..3
        fresh = Nic(a.sw.program, a.me, a.peer)                    # A's NIC starts over
        port = PLANE_PORT[0]
        assert run.step("sack 3, nothing known", fresh.sw.process_packet(port, sacks[3])) == []
        run.step("resend 1", fresh.write(1, retransmit=True))
        assert run.step("sack 3, up to 1 known", fresh.sw.process_packet(port, sacks[3])) == []
        assert len(run.step("sack 1", fresh.sw.process_packet(port, sacks[1]))) == 1
        run.step("resend 3", fresh.write(3, retransmit=True))
        run.step("resend 2", fresh.write(2, retransmit=True))     # behind: the mark stays at 3
        assert len(run.step("sack 3", fresh.sw.process_packet(port, sacks[3]))) == 1
        run.a = fresh   # what compare() reads

    v1 = compare(programs, scenario)
    assert count(v1.a, "rx_forged") == 2 and count(v1.a, "rx_sack") == 2
