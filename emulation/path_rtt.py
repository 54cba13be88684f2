"""NSCC's base RTT for a scenario: the unloaded round trip of an MTU packet over the fabric's
longest path (the spec's definition), from each cable's own rate and delay.

A path is NIC-T0-T1-T0-NIC in one plane: two NIC cables and two T0-T1 cables, up to a T1 and
down from it to another T0. A cable costs its delay both ways plus the data packet's and its
SACK's serialization at its rate (store and forward). The longest path takes, per plane, the
two dearest NIC cables and the two dearest cables of one T1, the largest sum over the planes
(an upper bound when the dearest cables cannot all be on one path: a slow cable makes every
connection's base RTT its path's, as the spec's fabric-wide knob is). With every cable alike
it is 4 cables' worth, as it always was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from controller.topology.model import Tier, Topology

FRAME_OVERHEAD = 160   # bytes around a data payload: Ethernet, 2 IPv6, SRH, UDP, BTH, RETH
SACK_FRAME = 150       # a SACK's bytes

# (switch or NIC, port or plane) -> (rate in Gb/s, delay in ns): one end's cable
CableOf = Callable[[tuple[str, int], tuple[str, int]], tuple[float, float]]


def longest_path_rtt_us(topology: Topology, mtu: int, cable: CableOf) -> float:
    """`cable(end_a, end_b)`: the rate and delay of the cable between those two ends."""
    bits = (mtu + FRAME_OVERHEAD + SACK_FRAME) * 8

    def cost(a: tuple[str, int], b: tuple[str, int]) -> float:
        rate_gbps, delay_ns = cable(a, b)
        return 2 * delay_ns / 1e3 + bits / rate_gbps / 1e3

    t1s = {s.name for p in range(topology.planes) for s in topology.switches_of(p, Tier.T1)}
    nic_names = {n.name for n in topology.nics}
    by_t1: dict[str, list[float]] = {}
    by_plane: dict[int, list[float]] = {}
    for link in topology.iter_links():
        a, b = (link.a, link.a_port), (link.b, link.b_port)
        if link.b in nic_names:
            by_plane.setdefault(link.b_port, []).append(cost(a, b))
        elif link.a in nic_names:
            by_plane.setdefault(link.a_port, []).append(cost(a, b))
        for end in (link.a, link.b):
            if end in t1s:
                by_t1.setdefault(end, []).append(cost(a, b))
    up_down: dict[int, float] = {}   # plane -> its dearest way up to a T1 and down again
    for name, costs in by_t1.items():
        plane = topology.switch(name).plane
        up_down[plane] = max(up_down.get(plane, 0.0), _two_dearest(costs))
    return max((_two_dearest(nic_cables) + up_down.get(plane, 0.0)
                for plane, nic_cables in by_plane.items()), default=0.0)


def _two_dearest(costs: Iterable[float]) -> float:
    """The two largest costs together (one counted twice when there is only one)."""
    top = sorted(costs, reverse=True)[:2]
    return sum(top) if len(top) == 2 else 2 * sum(top)
