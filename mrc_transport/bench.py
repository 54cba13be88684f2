"""Per-packet cost of the host transport, without a NIC: `python -m mrc_transport.bench`.

Per frame, best of `--repeat` runs, in µs of this machine's time:

- the frames alone, scapy (wire.py, what the transport did before fastwire) against fastwire:
  building a 1 KiB data packet, a probe or EV report; reading a delivered write and a SACK;
- the transport end to end: `Sender.write` of 256 KiB (1 KiB MTU) and the `poll`s that hand out
  its 256 packets, per packet; `Host.on_frame` of each of them at the receiver (placement
  included); `Host.on_frame` of one SACK per packet at the sender (each acknowledging the next
  PSN, the bookkeeping included).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_transport.config import ConnectionConfig
from mrc_transport.fastwire import FrameBuilder, parse
from mrc_transport.host import Host
from mrc_transport.sender import OP_EV_REPORT, Sender
from mrc_transport.wire import (
    BTH,
    HOST_MAC,
    METH,
    NIC_MAC,
    PETH,
    RETH,
    SETH,
    CCState,
    Opcode,
    compact_ev,
    data_packet,
    dissect,
    sack_fields,
)

KIB = 1024
SIZE = 256 * KIB
A = ConnectionConfig("2001:db8::a", "2001:db8::b", 0x11, 0x22, window=1024)
B = ConnectionConfig("2001:db8::b", "2001:db8::a", 0x22, 0x11, window=1024)
PAYLOAD = bytes(range(256)) * 4


def _data_frames() -> list[bytes]:
    sender = Sender(A)
    sender.write(bytes(range(256)) * (SIZE // 256), 0x1000)
    frames: list[bytes] = []
    while len(frames) < SIZE // A.mtu:
        frames += sender.poll(0)
    return frames


def _sacks(count: int) -> list[bytes]:
    return [bytes(Ether(src=NIC_MAC, dst=HOST_MAC) / IPv6(src=B.local_addr, dst=A.local_addr, nh=17)
                  / UDP(sport=0, dport=4791) / BTH(opcode=Opcode.SACK, dest_qp=A.local_qp)
                  / SETH(entropy=compact_ev(i % 2, i % 8), cack_psn=i) / CCState())
            for i in range(count)]


def _best(run: Callable[..., int], repeat: int, setup: Callable[[], Any] | None = None,
          ) -> float:
    """µs per item of the fastest of `repeat` runs (`run` returns its item count; with `setup`,
    it is given what setup returns, made before the clock starts)."""
    best = float("inf")
    for _ in range(repeat):
        args = () if setup is None else (setup(),)
        start = time.perf_counter()
        items = run(*args)
        best = min(best, (time.perf_counter() - start) / items)
    return best * 1e6


def frames_alone(repeat: int) -> dict[str, tuple[float, float]]:
    """(scapy µs, fastwire µs) per frame."""
    builder = FrameBuilder(src=A.local_addr, dst=A.peer_addr, dest_qp=A.peer_qp, r_key=A.r_key)
    write = _data_frames()[7]
    sack = _sacks(8)[7]
    fields = dict(psn=7, opcode=Opcode.WRITE_MIDDLE, msn=0, va=0x1000 + 7 * KIB,
                  dma_length=SIZE, payload=PAYLOAD)
    n = 200

    def scapy_build() -> int:
        for _ in range(n):
            bytes(data_packet(src=A.local_addr, dst=A.peer_addr, dest_qp=A.peer_qp,
                              r_key=A.r_key, **fields))
        return n

    def fast_build() -> int:
        for _ in range(n * 20):
            builder.data(**fields)
        return n * 20

    def scapy_control() -> int:
        for i in range(n):
            bytes(Ether(src=HOST_MAC, dst=NIC_MAC) / IPv6(src=A.local_addr, dst=A.peer_addr, nh=17)
                  / UDP(sport=0, dport=4791) / BTH(opcode=OP_EV_REPORT, dest_qp=A.peer_qp, psn=i)
                  / PETH(probe_id=0))
        return n

    def fast_control() -> int:
        for i in range(n * 20):
            builder.control(OP_EV_REPORT, i, 0)
        return n * 20

    def scapy_write() -> int:   # what Host and Receiver read off a write before
        for _ in range(n):
            pkt = dissect(write)
            bth, meth, reth = pkt.getlayer(BTH), pkt.getlayer(METH), pkt.getlayer(RETH)
            _ = (bth.opcode, bth.dest_qp, meth.msn, reth.virtual_address, reth.r_key,
                 reth.dma_length, reth.payload.load)
        return n

    def scapy_sack() -> int:
        for _ in range(n):
            sack_fields(dissect(sack))
        return n

    def fast(frame: bytes) -> Callable[[], int]:
        def run() -> int:
            for _ in range(n * 20):
                parse(frame)
            return n * 20
        return run

    return {"build data packet (1 KiB)": (_best(scapy_build, repeat), _best(fast_build, repeat)),
            "build probe / EV report": (_best(scapy_control, repeat),
                                        _best(fast_control, repeat)),
            "parse write (1 KiB)": (_best(scapy_write, repeat), _best(fast(write), repeat)),
            "parse SACK": (_best(scapy_sack, repeat), _best(fast(sack), repeat))}


def transport(repeat: int) -> dict[str, float]:
    """µs per packet or frame of the transport as it is."""
    frames = _data_frames()
    sacks = _sacks(len(frames))

    def build() -> int:
        sender = Sender(A)
        sender.write(bytes(SIZE), 0x1000)
        sent = 0
        while sent < len(frames):
            sent += len(sender.poll(0))
        return sent

    def receiver() -> Host:
        return Host(B, 0x1000 + SIZE)

    def receive(host: Host) -> int:
        for frame in frames:
            host.on_frame(frame, 0)
        assert host.receiver.counters["placed"] == len(frames)
        return len(frames)

    def sender() -> Host:
        host = Host(A, 0)
        host.sender.write(bytes(SIZE), 0x1000)
        host.poll(0)
        return host

    def acknowledge(host: Host) -> int:
        for sack in sacks:
            host.on_frame(sack, 1)
        assert host.sender.done
        return len(sacks)

    return {"Sender write + poll, per packet": _best(build, repeat),
            "Host.on_frame write (receiver)": _best(receive, repeat, receiver),
            "Host.on_frame SACK (sender)": _best(acknowledge, repeat, sender)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'frames alone':32} {'scapy µs':>10} {'fastwire µs':>12}")
    for name, (slow, quick) in frames_alone(args.repeat).items():
        print(f"  {name:30} {slow:10.1f} {quick:12.2f}")
    print("transport end to end              µs")
    for name, us in transport(args.repeat).items():
        print(f"  {name:30} {us:10.2f}")


if __name__ == "__main__":
    main()
