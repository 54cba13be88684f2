"""The draw that decides a packet's fate on a lossy cable, paired across modes.

Drawn from one random stream in transmit order, a lossy cable would lose different packets
in every mode (a probe or a path chosen differently moves every later draw), and two modes
would be compared on two different strokes of luck. Here the draw is a function of the seed
and of the packet itself: its connection and PSN (the inner IPv6 addresses, the BTH's opcode,
destination QP and PSN), how many switches it has crossed (the outer hop limit: the same hop
of any path), and which time this is that such a packet reaches a lossy cable at that hop.
So the k-th transmission of a PSN meets the same luck at its second hop in `spray` as in
`mrc`, whichever T1 each sent it to: where the modes' paths cross equally lossy cables, they
lose the same transmissions, and what differs between them is what they do about it. Frames
that are not an IPv6 packet of ours are drawn from their bytes (and their count) alike.
"""

from __future__ import annotations

from collections import Counter
from hashlib import blake2b

ETHERNET = 14
IPV6 = 40
UDP = 8
PROTO_IPV6 = 41
PROTO_ROUTING = 43
PROTO_UDP = 17
_SCALE = float(1 << 64)


def packet_key(data: bytes) -> bytes:
    """What identifies this transmission's packet (not its path): the outer hop limit, the
    inner addresses and the BTH's opcode, destination QP and PSN; the bytes for any other
    frame."""
    if len(data) < ETHERNET + IPV6 or data[12:14] != b"\x86\xdd":
        return b"raw" + data
    outer = ETHERNET
    hop_limit = data[outer + 7]
    next_header, at = data[outer + 6], outer + IPV6
    if next_header == PROTO_ROUTING and len(data) >= at + 2:
        next_header, at = data[at], at + (data[at + 1] + 1) * 8
    if next_header != PROTO_IPV6 or len(data) < at + IPV6 + UDP + 12:
        return b"raw" + data
    inner = data[at + 8:at + IPV6]             # source and destination
    bth = at + IPV6 + UDP
    return bytes([hop_limit]) + inner + data[bth:bth + 1] + data[bth + 5:bth + 8] \
        + data[bth + 9:bth + 12]


class PacketDraw:
    """A uniform draw in [0, 1) per packet reaching a lossy cable (see the module docstring);
    one per run, shared by every lossy cable of it."""

    def __init__(self, seed: int) -> None:
        self._salt = seed.to_bytes(8, "little", signed=True)
        self._seen: Counter[bytes] = Counter()

    def __call__(self, data: bytes) -> float:
        key = packet_key(data)
        count = self._seen[key]
        self._seen[key] = count + 1
        digest = blake2b(key + count.to_bytes(4, "little"), digest_size=8,
                         key=self._salt).digest()
        return int.from_bytes(digest, "little") / _SCALE
