"""The lossy cable's draw (emulation/loss_draw.py): a function of the packet, not of the order
packets came in, so modes that send a PSN over different T1s meet the same luck."""

from __future__ import annotations

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from emulation.loss_draw import PacketDraw, packet_key
from mrc_transport.wire import BTH


def carried(psn: int, *, ev: int = 1, hops: int = 62, retransmit: int = 0,
            carrier: str = "fcbb:bbbb:100:200::") -> bytes:
    """A data packet inside the NIC's SRv6 carrier, `hops` its outer hop limit."""
    inner = (IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=ev, dport=4791)
             / BTH(opcode=0x2A, dest_qp=0x101, psn=psn, retransmit=retransmit) / bytes(64))
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IPv6(src="fcbb:bbbb:1::", dst=carrier, fl=ev, hlim=hops) / inner)


def test_the_same_transmission_meets_the_same_luck_on_any_path() -> None:
    one, other = PacketDraw(7), PacketDraw(7)
    mine = [one(carried(psn)) for psn in range(50)]
    # the other mode: each PSN on another EV and another T1, in another order
    theirs = [other(carried(psn, ev=9, carrier="fcbb:bbbb:100:300::"))
              for psn in reversed(range(50))]
    assert mine == theirs[::-1]
    # its resend (the NIC sets the BTH's retransmit bit: not part of the key) is a new draw
    again = one(carried(3, retransmit=1))
    assert again != mine[3] and other(carried(3, retransmit=1)) == again
    # another hop, another seed: other draws
    assert PacketDraw(7)(carried(3, hops=61)) != mine[3]
    assert PacketDraw(8)(carried(3)) != mine[3]


def test_draws_are_uniform_and_other_frames_are_drawn_too() -> None:
    draw = PacketDraw(1)
    values = [draw(carried(psn)) for psn in range(2000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert 0.08 < sum(v < 0.1 for v in values) / len(values) < 0.12
    assert 0.45 < sum(values) / len(values) < 0.55
    assert packet_key(b"\x00" * 20).startswith(b"raw")
    assert draw(b"\x00" * 20) != draw(b"\x00" * 20)   # counted: the next one draws again
