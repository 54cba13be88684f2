"""Packets per second of the MRC NIC program (p4src/nic/mrc_nic.p4) in softswitch's engine, one
core, tracing off. Two NICs back to back (what A sends on a plane port is what B receives there),
one connection A -> B with 128 EVs over 8 planes (2 backups per plane) and 1024-byte payloads
(the host transport's default MTU, mrc_transport/config.py).

(a) nic_tx: host writes into NIC A: connection lookup, EV choice, SRv6 encapsulation.
(b) nic_rx: what A sent, into NIC B on its plane ports: receiver window and bitmap,
    decapsulation to the host, the SACK (an I2E clone).
(c) nic_feedback: B's SACKs into NIC A: EV state lookup, decapsulation to the host.

Every run counts what came out on which port, so a NIC that stopped delivering or SACKing shows
in the result instead of as a faster rate. `python -m bench.nic_rate [--seconds S]` runs these
only.
"""

from __future__ import annotations

import argparse
import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from controller.plan import usid
from controller.plan.nic_plan import (
    FEEDBACK_PRIORITY,
    NIC_HOST_SESSION,
    SACK_SESSION_BASE,
    EvProfile,
)
from controller.topology.model import Switch as FabricSwitch
from controller.topology.model import Tier
from mrc_transport.config import ConnectionConfig
from mrc_transport.wire import Opcode, data_packet
from softswitch.compiler import compile_file
from softswitch.engine.pre import MirrorSession
from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch
from softswitch.ir.checked import CheckedProgram

PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "nic" / "mrc_nic.p4"
HOST_PORT = 1                       # NIC_HOST_PORT
PLANES = 8                          # the 131,072-NIC fabric's plane count
EV_COUNT = 128                      # active EVs; EV e is in plane e % PLANES
BACKUPS = 2                         # backup EVs per plane
# the default MTU (a field's default: the class may be compiled, mrc_transport/compiled.py)
PAYLOAD_BYTES: int = next(f.default for f in fields(ConnectionConfig)  # type: ignore[misc]
                          if f.name == "mtu")
BLOCK = usid.parse_block("fcbb:bbbb::/32")
PROFILE = 1
EV_MIN_ACTIVE = 2
PROBE_SUCCESSES = 3
R_KEY = 7                           # the memory key the writes carry (rx_r_key)
# One pass over this many consecutive PSNs, then again: the TX side cycles PSNs freely (its
# PSN -> EV memory is a ring of 1024); the RX side has its window reset between passes (below).
DISTINCT_PACKETS = 1024
# nic_counter indexes (p4src/nic/nic_types.p4)
TX_DATA, TX_FALLBACK, RX_DATA, RX_DUPLICATE, RX_OUT_OF_WINDOW, RX_SACK, SACK_SENT = (
    0, 1, 4, 5, 6, 8, 12)


@dataclass(frozen=True)
class Side:
    """One NIC: its host address, T0 row (the same T0 index in every plane), T0 port, and the
    connection index and QP of its end of the connection."""

    address: str
    row: int
    t0_port: int
    conn: int
    qp: int


A = Side("2001:db8::a", row=0, t0_port=0, conn=3, qp=0x11)
B = Side("2001:db8::b", row=1, t0_port=0, conn=5, qp=0x22)


@dataclass
class NicRateResult:
    """One benchmark: packets in, wall time, and what came out (by kind) to check it."""

    name: str
    packets: int
    seconds: float
    outputs: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0

    @property
    def packets_per_second(self) -> float:
        return self.packets / self.seconds


def _addr(text: str) -> int:
    return int(ipaddress.IPv6Address(text))


def _fabric_usid(tier: Tier, plane: int, index: int) -> int:
    return usid.switch_usid(FabricSwitch(f"{tier}-{plane}-{index}", tier, plane, index))


def plane_port(plane: int) -> int:
    """The NIC port of `plane` (the host is port 1)."""
    return 2 + plane


def configure(sw: Switch, me: Side, peer: Side) -> None:
    """What the controller installs on `me`'s NIC for its one connection with `peer`
    (p4src/README.md, "The MRC NIC: control-plane API")."""
    peer_ua = usid.ua_usid(peer.t0_port)
    sw.table("tx_connection").add_entry(
        [ExactMatch(_addr(peer.address)), ExactMatch(peer.qp)], "set_connection",
        [me.conn, PROFILE, EV_COUNT - 1, PLANES, BACKUPS, EV_MIN_ACTIVE, peer.row, peer_ua,
         PLANES, 0, EvProfile().skip_us])
    sw.table("local_qp").add_entry(
        [ExactMatch(me.qp)], "set_local_qp",
        [me.conn, PROFILE, EV_COUNT - 1, PLANES, BACKUPS, EV_MIN_ACTIVE, PROBE_SUCCESSES, 0,
         peer.qp])
    sw.table("rx_r_key").add_entry([ExactMatch(me.qp), ExactMatch(R_KEY)], "r_key_valid", [])
    t1s = EV_COUNT // PLANES   # one T1 per EV and plane: no two active EVs share a path
    for ev in range(EV_COUNT + BACKUPS * PLANES):
        plane = ev % PLANES
        sw.table("ev_path").add_entry(
            [ExactMatch(PROFILE), ExactMatch(ev)], "set_path",
            [plane, _fabric_usid(Tier.T1, plane, (ev // PLANES) % t1s)])
    for plane in range(PLANES):
        base = usid.carrier(BLOCK, [_fabric_usid(Tier.T0, plane, me.row), 0,
                                    _fabric_usid(Tier.T0, plane, peer.row), 0,
                                    usid.NIC_DECAP_USID])
        sw.table("path_template").add_entry([ExactMatch(plane), ExactMatch(peer.row)],
                                            "via_t1", [base])
        t0_mac = usid.switch_mac(_fabric_usid(Tier.T0, plane, me.row))
        sw.table("plane_port").add_entry(
            [ExactMatch(plane)], "set_plane_port",
            [plane_port(plane), 0x02_4E_00_00_00_00 | plane << 24 | me.row, t0_mac,  # usid.nic_mac
             usid.carrier(BLOCK, [_fabric_usid(Tier.T0, plane, me.row),  # its locator
                                  usid.ua_usid(me.t0_port), usid.NIC_DECAP_USID])])
        sw.table("port_plane").add_entry([ExactMatch(plane_port(plane))], "set_rx_plane",
                                         [plane])
        if sw.arch == "tna":
            sw.pre.mirroring_add_session(SACK_SESSION_BASE + plane, MirrorSession(
                egress_port=plane_port(plane), class_of_service=FEEDBACK_PRIORITY))
    if sw.arch != "tna":
        sw.pre.mirroring_add(NIC_HOST_SESSION, HOST_PORT)


def nic_pair(program: CheckedProgram | None = None,
             make: Callable[[CheckedProgram], Switch] = Switch) -> tuple[Switch, Switch]:
    """NICs A and B (engines `make` builds), configured for their connection with each
    other."""
    program = program or compile_file(PROGRAM)
    a, b = make(program), make(program)
    configure(a, A, B)
    configure(b, B, A)
    return a, b


def host_write(psn: int) -> bytes:
    """The write packet A's host transport hands its NIC for `psn`: one MTU-sized segment, the
    PSN's low byte repeated (a wrong segment delivered would show)."""
    payload = bytes([psn & 0xFF]) * PAYLOAD_BYTES
    return bytes(data_packet(src=A.address, dst=B.address, dest_qp=B.qp, psn=psn,
                             opcode=Opcode.WRITE_ONLY, msn=psn & 0xFFFF,
                             va=0x10_0000 + psn * len(payload), r_key=R_KEY,
                             dma_length=len(payload), payload=payload))


def nic_count(sw: Switch, index: int) -> int:
    """Packets `nic_counter[index]` has counted."""
    return sw.counter("nic_counter").read(index)[0]


def reset_receiver(b: Switch) -> None:
    """B's window back to "expecting PSN 0, nothing ahead", as if the PSN space wrapped after
    the batch: the batch's PSNs are then new and in window again (a PSN 64 or more ahead would
    be NACKed out of window, one behind taken for a duplicate)."""
    b.register("rx_expected").write(B.conn, 0)
    b.register("rx_bitmap").write(B.conn, 0)


Wire = list[tuple[int, bytes]]   # (port, frame): what arrives where


def transmit(a: Switch, writes: list[bytes]) -> Wire:
    """A's TX path once over `writes`: the encapsulated packets and the plane port of each."""
    wire: Wire = []
    for data in writes:
        [out] = a.process_packet(HOST_PORT, data)
        wire.append((out.port, out.data))
    return wire


def receive(b: Switch, wire: Wire) -> tuple[list[bytes], Wire]:
    """B's RX path once over `wire`: what it delivered to its host, and its SACKs (with the
    plane port they leave on, the one their data came in on)."""
    delivered: list[bytes] = []
    sacks: Wire = []
    for port, data in wire:
        for out in b.process_packet(port, data):
            if out.port == HOST_PORT:
                delivered.append(out.data)
            else:
                sacks.append((out.port, out.data))
    return delivered, sacks


def _timed(seconds: float, one_pass: Callable[[], None]) -> tuple[int, float, float]:
    """Passes of `one_pass` (each over the whole batch) until `seconds` have gone: the passes,
    the wall and the CPU seconds (this process's) they took."""
    passes = 0
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        one_pass()
        passes += 1
        if time.perf_counter() >= deadline:
            return passes, time.perf_counter() - start, time.process_time() - cpu


@dataclass
class Batch:
    """The packets the benchmarks replay, each kind made by the NIC path before it: host writes,
    A's encapsulated packets (`wire`), B's SACKs. Making them runs A's TX and B's RX paths over
    the whole batch once, which is the warm-up too."""

    a: Switch
    b: Switch
    writes: list[bytes]
    wire: Wire
    delivered: list[bytes]
    sacks: Wire

    @classmethod
    def build(cls, program: CheckedProgram | None = None, packets: int = DISTINCT_PACKETS,
              make: Callable[[CheckedProgram], Switch] = Switch) -> Batch:
        a, b = nic_pair(program, make)
        writes = [host_write(psn) for psn in range(packets)]
        wire = transmit(a, writes)
        delivered, sacks = receive(b, wire)
        if len(delivered) != len(wire) or len(sacks) != len(wire):
            raise RuntimeError(f"NIC B delivered {len(delivered)} and SACKed {len(sacks)} of "
                               f"{len(wire)} packets")
        reset_receiver(b)
        return cls(a, b, writes, wire, delivered, sacks)


def bench_nic_tx(seconds: float, batch: Batch | None = None) -> NicRateResult:
    """Host writes into NIC A; counts the packets leaving on each plane port."""
    batch = batch or Batch.build()
    a, writes = batch.a, batch.writes
    by_port = {plane_port(p): 0 for p in range(PLANES)}
    other = 0
    sent_before, fallback_before = nic_count(a, TX_DATA), nic_count(a, TX_FALLBACK)
    process = a.process_packet

    def one_pass() -> None:
        nonlocal other
        for data in writes:
            for out in process(HOST_PORT, data):
                if out.port in by_port:
                    by_port[out.port] += 1
                else:
                    other += 1

    passes, elapsed, cpu = _timed(seconds, one_pass)
    return NicRateResult("nic_tx", passes * len(writes), elapsed, {
        "encapsulated": sum(by_port.values()), "other_outputs": other,
        "min_per_plane": min(by_port.values()), "max_per_plane": max(by_port.values()),
        "counted_sent": nic_count(a, TX_DATA) - sent_before,
        "fallback": nic_count(a, TX_FALLBACK) - fallback_before}, cpu)


def bench_nic_rx(seconds: float, batch: Batch | None = None) -> NicRateResult:
    """A's packets into NIC B; counts host deliveries and SACKs (on the data's own port). B's
    window is reset after every pass (two register writes per batch, inside the timing)."""
    batch = batch or Batch.build()
    b, wire = batch.b, batch.wire
    delivered = sacked = other = 0
    before = {i: nic_count(b, i) for i in (RX_DATA, RX_DUPLICATE, RX_OUT_OF_WINDOW, SACK_SENT)}
    process = b.process_packet

    def one_pass() -> None:
        nonlocal delivered, sacked, other
        for port, data in wire:
            for out in process(port, data):
                if out.port == HOST_PORT:
                    delivered += 1
                elif out.port == port:
                    sacked += 1
                else:
                    other += 1
        reset_receiver(b)

    passes, elapsed, cpu = _timed(seconds, one_pass)
    counted = {i: nic_count(b, i) - n for i, n in before.items()}
    return NicRateResult("nic_rx", passes * len(wire), elapsed, {
        "delivered": delivered, "sacked": sacked, "other_outputs": other,
        "counted_received": counted[RX_DATA], "duplicates": counted[RX_DUPLICATE],
        "out_of_window": counted[RX_OUT_OF_WINDOW], "counted_sacks_sent": counted[SACK_SENT]}, cpu)


def bench_nic_feedback(seconds: float, batch: Batch | None = None) -> NicRateResult:
    """B's SACKs into NIC A; counts the SACKs handed to A's host (and EV events: none, as
    every SACK is unmarked)."""
    batch = batch or Batch.build()
    a, sacks = batch.a, batch.sacks
    delivered = other = 0
    before, events_before = nic_count(a, RX_SACK), len(a.digests)
    process = a.process_packet

    def one_pass() -> None:
        nonlocal delivered, other
        for port, data in sacks:
            for out in process(port, data):
                if out.port == HOST_PORT:
                    delivered += 1
                else:
                    other += 1

    passes, elapsed, cpu = _timed(seconds, one_pass)
    return NicRateResult("nic_feedback", passes * len(sacks), elapsed, {
        "delivered": delivered, "other_outputs": other,
        "counted_sacks_received": nic_count(a, RX_SACK) - before,
        "ev_events": len(a.digests) - events_before}, cpu)


CONFIGURATION: dict[str, int] = {
    "evs": EV_COUNT, "planes": PLANES, "backups_per_plane": BACKUPS,
    "payload_bytes": PAYLOAD_BYTES, "distinct_packets": DISTINCT_PACKETS}


def run_all(seconds: float) -> list[NicRateResult]:
    """Every NIC benchmark over one batch (making it takes a few seconds, mostly scapy)."""
    batch = Batch.build()
    return [bench(seconds, batch) for bench in (bench_nic_tx, bench_nic_rx, bench_nic_feedback)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per benchmark")
    args = parser.parse_args()
    print(CONFIGURATION)
    for r in run_all(args.seconds):
        print(f"{r.name:<14} {r.packets:>8} {r.seconds:>6.2f} s {r.packets_per_second:>8.0f}"
              f" packets/s  {r.outputs}")


if __name__ == "__main__":
    main()
