"""A whole plane slower (the matrix's slow-plane class, mrc-nic.md §4.1 on ECN as a
load-balancing signal, here the NIC's own port as the congested hop): every cable of plane 1,
the NICs' included, at half the rate of plane 0's. The NIC's EV choice sees its ports' backlog
(v1model's plane_backlog) and gives the busier port fewer packets, so `mrc` sends about two
thirds of its bytes on plane 0 and finishes well before oblivious spraying, which keeps half
on each and queues the rest at the slow port. With the fixed window: NSCC's keeps the slow
port's queue too short for the rule to act, and there mrc and spray tie."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from controller.devices.session import Program
from emulation.command import NIC_PROGRAM
from emulation.metrics import RunResult
from emulation.network import Network
from emulation.run import run_mode
from emulation.scenario import Scenario, loads
from softswitch.fabric import Delivery

TINY = Path(__file__).resolve().parents[2] / "topologies" / "tiny.yaml"
SLOW = ("p1-t0-0:2", "p1-t0-0:3", "p1-t0-1:2", "p1-t0-1:3",
        "nic0:1", "nic1:1", "nic2:1", "nic3:1")


def slow_plane() -> Scenario:
    lines = ["name: slow-plane", f"topology: {TINY}", "links: {rate_gbps: 10, delay_ns: 500}",
             "cables:", *(f"  - {{link: \"{link}\", rate_gbps: 5}}" for link in SLOW),
             "seed: 1", "duration_us: 20000",
             # The fixed window, whose packets queue at the slow port: NSCC's window keeps
             # that queue below the balance margin, and both modes then tie (README).
             "transport: {rto_us: 100, reorder_us: 30, cc_algorithm: fixed}",
             "workload: {kind: ring_allreduce, bytes: 262144}"]
    return loads("\n".join(lines) + "\n", "slow-plane.yaml")


def run(mode: str, program: Program) -> tuple[RunResult, Counter[int]]:
    """One mode's run and the data bytes the NICs put on each plane's cable."""
    sent: Counter[int] = Counter()

    def phase(name: str, network: Network) -> None:
        if name != "built":
            return
        nics = set(network.nics)

        def on_wire(d: Delivery) -> None:
            if (d.sender in nics and d.receiver is not None and d.receiver.startswith("p")
                    and len(d.data) > 500):
                sent[int(d.receiver[1])] += len(d.data)   # to "p<plane>-t0-<i>"
        network.fabric.add_observer(on_wire)
    return run_mode(slow_plane(), mode, program, str(NIC_PROGRAM), phase=phase), sent


def test_a_slower_plane_gets_its_share_of_the_line_rate_and_mrc_finishes_first(
        switch_program: Program) -> None:
    mrc, mrc_sent = run("mrc_no_controller", switch_program)
    spray, spray_sent = run("spray", switch_program)
    for result in (mrc, spray):
        summary = result.summary()
        assert summary["bytes_lost"] == 0 and summary["completed"] == summary["messages"]
    # spray keeps half on each plane whatever the rates; mrc moves towards 2:1 (10 vs 5 Gb/s)
    # while the ports are busy (not all the time: a ring step starts with both queues empty)
    assert abs(spray_sent[0] / spray_sent[1] - 1) < 0.05
    assert 1.15 < mrc_sent[0] / mrc_sent[1] < 2.2, (mrc_sent, spray_sent)
    # ... its packets do not wait at the slow port long enough to be resent, and it finishes
    # first (measured: 391.5 against 434.1 µs, p99 68.5 against 75.4; before SACKs left the
    # NIC's ports ahead of data, spray's SACKs waited behind the slow port's queue too and it
    # resent 130 packets: 64.3 against 83.9)
    assert mrc.totals["retransmitted"] == 0
    assert mrc.end_us < 0.95 * spray.end_us
    assert mrc.summary()["mct_p99_us"] < spray.summary()["mct_p99_us"]
