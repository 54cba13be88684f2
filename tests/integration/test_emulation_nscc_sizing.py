"""NSCC's window as the spec sizes it (max_cwnd = 1.5 x line rate x base RTT), per connection
in a run: the line rate is the NIC ports the connection sends on (every plane when sprayed,
one when pinned to a path or hashed by ECMP), and a slow cable inside the fabric lengthens the
base RTT by its own path only. (It was the slowest cable's rate times the planes for every
connection: a 5 Gb/s cable in the fabric halved every NIC's window.)"""

from __future__ import annotations

import pytest
from emulated import scenario

from controller.devices.session import Program
from emulation.command import NIC_PROGRAM
from emulation.modes import mode
from emulation.network import Network
from emulation.run import RunState
from emulation.workloads import connections, messages

WORKLOAD = ("[{kind: flow, src: nic0, dst: nic2, bytes: 4096}, "
            "{kind: flow, name: background, src: nic1, dst: nic3, bytes: 4096, path: [0, 0]}]")


@pytest.mark.parametrize("mode_name", ["spray", "ecmp"])
def test_each_connection_s_window_is_sized_by_the_nic_ports_it_sends_on(
        switch_program: Program, mode_name: str) -> None:
    s = scenario(WORKLOAD, lines=("links: {rate_gbps: 10, delay_ns: 500}",
                                  "cables: [{link: 'p0-t0-0:2', rate_gbps: 5}, "
                                  "{link: 'nic2:1', rate_gbps: 5}]"))
    chosen = mode(mode_name, s.profile)
    schedule = messages(s.workloads, s.seed)
    with Network.of(s, switch_program, str(NIC_PROGRAM), chosen,
                    connections(schedule)) as network:
        state = RunState(s, chosen, network, schedule)
        gbps = {pair: end.sender.cc.config.linkspeed_gbps   # type: ignore[union-attr]
                for pair, end in state.by_peer.items()}
        ccs = [end.sender.cc for end in state.by_peer.values()]
        hashed = {(nic, network.nics[nic].connections[c].peer): path.plane
                  for (nic, c), path in network.pinned.items()}
    # Sprayed, nic0 <-> nic2 sends on both planes, at the lower end's rate (the spec's BDP:
    # nic2's plane-1 cable is 5 Gb/s): 15. ECMP hashes each way onto one plane: 10 or 5. The
    # pinned flow (either way) is on plane 0: 10. The 5 Gb/s fabric cable is no NIC's.
    for pair in (("nic0", "nic2"), ("nic2", "nic0")):
        expected = 15 if mode_name == "spray" else (5 if hashed[pair] == 1 else 10)
        assert gbps.pop(pair) == expected, (pair, hashed)
    assert gbps == {("nic1", "nic3"): 10, ("nic3", "nic1"): 10}
    rtt = s.longest_path_rtt_us()
    # Each plane's longest path has one 5 Gb/s cable (3.13 µs, the others 2.07): the fabric
    # cable in plane 0, nic2's in plane 1; not four cables at the slowest rate (12.5 µs).
    assert 9.3 < rtt < 9.4
    for cc in ccs:
        assert cc is not None and cc.config.base_rtt_us == pytest.approx(rtt)
        assert cc.max_cwnd == pytest.approx(1.5 * cc.config.linkspeed_gbps * 125 * rtt, abs=1)
