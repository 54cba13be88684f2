"""Packets per second through softswitch's engine, one core, tracing off.

(a) ipv6_lpm: one LPM lookup over 4,096 routes of mixed prefix lengths.
(b) usid_forward: SRv6 uSID (F3216) my_sid LPM + uN shift + LPM route over 4,096 /48 routes.
"""

from __future__ import annotations

import ipaddress
import random
import time
from dataclasses import dataclass
from pathlib import Path

from softswitch.compiler import compile_file
from softswitch.engine.switch import Switch
from softswitch.engine.tables import LpmMatch

P4_DIR = Path(__file__).parent / "p4"
ROUTES = 4096
DISTINCT_PACKETS = 1024


@dataclass
class PacketRateResult:
    name: str
    packets: int
    seconds: float
    forwarded: int

    @property
    def packets_per_second(self) -> float:
        return self.packets / self.seconds


def _switch(program: str) -> Switch:
    path = P4_DIR / program
    return Switch(compile_file(path))


def _ipv6_packet(dst: int, payload: bytes = bytes(64)) -> bytes:
    eth = bytes.fromhex("000000000002" "000000000001" "86dd")
    src = int(ipaddress.IPv6Address("2001:db8::1"))
    first_word = (6 << 28).to_bytes(4, "big")
    ipv6 = first_word + len(payload).to_bytes(2, "big") + bytes([17, 64])
    ipv6 += src.to_bytes(16, "big") + dst.to_bytes(16, "big")
    return eth + ipv6 + payload


def _run(name: str, switch: Switch, packets: list[bytes], seconds: float) -> PacketRateResult:
    for data in packets[:100]:  # warm up
        switch.process_packet(1, data)
    count = forwarded = 0
    start = time.perf_counter()
    deadline = start + seconds
    process = switch.process_packet
    while True:
        for data in packets:
            forwarded += len(process(1, data))
        count += len(packets)
        if time.perf_counter() >= deadline:
            break
    return PacketRateResult(name, count, time.perf_counter() - start, forwarded)


def bench_ipv6_lpm(seconds: float) -> PacketRateResult:
    switch = _switch("ipv6_lpm.p4")
    table = switch.table("route_v6")
    rng = random.Random(1)
    destinations = []
    for i in range(ROUTES):
        prefix_len = rng.choice((32, 48, 56, 64, 128))
        value = (0x2001_0DB8 << 96) | (rng.getrandbits(96) & ~((1 << (128 - prefix_len)) - 1))
        value &= ((1 << prefix_len) - 1) << (128 - prefix_len)
        try:
            table.add_entry([LpmMatch(value, prefix_len)], "set_nexthop",
                            [1 + i % 8, 0x0A0000000000 + i, 0x0B0000000000])
        except Exception:  # a random duplicate prefix: skip it
            continue
        destinations.append(value | rng.getrandbits(128 - prefix_len) if prefix_len < 128 else value)
    packets = [_ipv6_packet(destinations[i % len(destinations)]) for i in range(DISTINCT_PACKETS)]
    return _run("ipv6_lpm", switch, packets, seconds)


BLOCK = 0xFCBB_BB00 << 96
MY_USID = 0x0100


def bench_usid_forward(seconds: float) -> PacketRateResult:
    switch = _switch("usid_forward.p4")
    switch.table("my_sid").add_entry([LpmMatch(BLOCK | (MY_USID << 80), 48)], "usid_un", [])
    routes = switch.table("route_v6")
    for usid in range(ROUTES):
        routes.add_entry([LpmMatch(BLOCK | ((0x1000 + usid) << 80), 48)], "forward",
                         [1 + usid % 8, 0x0A0000000000 + usid, 0x0B0000000000])
    rng = random.Random(2)
    packets = []
    for _ in range(DISTINCT_PACKETS):
        next_usid = 0x1000 + rng.randrange(ROUTES)
        last_usid = 0x1000 + rng.randrange(ROUTES)
        carrier = BLOCK | (MY_USID << 80) | (next_usid << 64) | (last_usid << 48)
        packets.append(_ipv6_packet(carrier))
    return _run("usid_forward", switch, packets, seconds)
