"""The extended scenario schema on the tiny fabric, in virtual time with the real programs:
each new failure really happens (and only it), cable overrides really change the wire, a
pinned flow keeps its path, workloads start when told, and a failure at 0 comes first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from controller.devices.session import Program
from controller.plan.nic_plan import nic_address
from controller.topology import yaml_io
from emulation.command import NIC_PROGRAM, SWITCH_PROGRAM
from emulation.failures import sent_ev
from emulation.metrics import RunResult
from emulation.modes import mode
from emulation.network import Network
from emulation.run import RunState
from emulation.scenario import Scenario, loads
from emulation.workloads import connections, messages
from softswitch.fabric import Delivery

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGY = "topologies/tiny.yaml"
T0S = {"p0-t0-0", "p0-t0-1", "p1-t0-0", "p1-t0-1"}
T1S = {"p0-t1-0", "p0-t1-1", "p1-t1-0", "p1-t1-1"}
TINY = yaml_io.load(ROOT / TOPOLOGY)
NIC_TX_PORT_PASSED = 19   # nic_counter: the first slot's plane was down (nic_types.p4)
FLOW = "{kind: flow, src: nic0, dst: nic2, bytes: 65536}"   # nic0 under p*-t0-0, nic2 -t0-1


def scenario(workload: str, *lines: str, transport: str = "") -> Scenario:
    """`transport`: more keys of `transport` ("key: value, ...")."""
    more = f", {transport}" if transport else ""
    text = "\n".join(["name: schema", f"topology: {ROOT / TOPOLOGY}", "duration_us: 5000",
                      f"transport: {{rto_us: 100, reorder_us: 30{more}}}",
                      f"workload: {workload}",
                      *lines]) + "\n"
    return loads(text, "schema.yaml")


def _dst_is(frame: bytes, nic: str) -> bool:
    """The inner IPv6 destination (after Ethernet and the NIC's outer IPv6) is `nic`'s."""
    return int.from_bytes(frame[14 + 40 + 24:14 + 40 + 40], "big") == nic_address(TINY.nic(nic))


@dataclass
class Ran:
    state: RunState
    result: RunResult
    wire: list[Delivery]   # every packet put on a wire, in order

    def count(self, sender: str, port: int | None = None,
              receivers: set[str] | None = None) -> Counter[int | None]:
        """Packets `sender` put on wires (out of `port`, to `receivers`), by the EV sent on."""
        return Counter(sent_ev(d.data) for d in self.wire if d.sender == sender
                       and (port is None or d.sender_port == port)
                       and (receivers is None or d.receiver in receivers))


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.compile(SWITCH_PROGRAM)


def run(s: Scenario, mode_name: str, program: Program,
        during: Callable[[RunState], None] | None = None) -> Ran:
    chosen = mode(mode_name, s.profile)
    schedule = messages(s.workloads, s.seed)
    with Network.of(s, program, str(NIC_PROGRAM), chosen, connections(schedule)) as network:
        wire: list[Delivery] = []
        network.fabric.add_observer(wire.append)
        state = RunState(s, chosen, network, schedule)
        if during is not None:
            during(state)
        return Ran(state, state.run(), wire)


def delivered(ran: Ran) -> dict[str, object]:
    summary = ran.result.summary()
    assert ran.result.finished and summary["completed"] == summary["messages"], summary
    return summary


# -- blackhole ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("target", "ports"), [
    ("switch: p0-t1-0", [("p0-t1-0", 0), ("p0-t1-0", 1)]),
    ("link: 'p0-t1-0:1'", [("p0-t1-0", 1), ("p0-t0-1", 2)]),
    # the receiver's NIC cable: every EV of that plane goes ASSUMED_BAD; the NIC still falls
    # back within the plane, but each lost resend is found from the SACKs of the packets sent
    # after it (RACK), one round trip later, not one RTO
    ("link: 'nic0:0'", [("nic0", 2), ("p0-t0-0", 0)]),
], ids=["switch", "cable", "nic_cable"])
def test_a_blackhole_swallows_silently(target: str, ports: list[tuple[str, int]],
                                       program: Program) -> None:
    """Everything it receives vanishes (counted), its links stay up, the switch keeps its
    server and tables, and ecmp's routing never reconverges: the connections pinned through
    it wait for the end of the blackhole."""
    s = scenario("{kind: ring_allreduce, bytes: 32768}",
                 f"failures:\n  - {{at_us: 20, kind: blackhole, {target}, until_us: 600}}")
    seen: list[object] = []

    def look(state: RunState) -> None:
        fabric = state.net.fabric
        state.agenda.at(30, lambda: seen.extend([
            [fabric.link_is_up(*end) for end in ports],
            fabric.switch("p0-t1-0").server is not None,
            fabric.switch("p0-t1-0").device.switch is not None,
            fabric.blackhole_drops]))

    ecmp = run(s, "ecmp", program, look)
    assert seen[:3] == [[True, True], True, True] and seen[3] > 0   # type: ignore[operator]
    failures = ecmp.state.failures
    assert failures.injected_drops()["blackhole"] >= seen[3] > 0   # type: ignore[operator]
    assert failures.rewrites == 0 and not failures.down_links and not failures.down_switches
    delivered(ecmp)
    late = max(r.arrived_us or 0.0 for r in ecmp.result.messages)
    assert late > 600   # stuck behind the blackhole until it ended
    # sprayed with EVs taken out of service, the ring goes around it long before that
    spray = run(s, "mrc_no_controller", program)
    assert delivered(spray)["mct_p99_us"] < 600   # type: ignore[operator]
    assert spray.state.failures.injected_drops()["blackhole"] > 0


# -- ev_loss -----------------------------------------------------------------------------------

def test_ev_loss_drops_only_that_ev_at_about_that_rate(program: Program) -> None:
    s = scenario("{kind: flow, src: nic0, dst: nic2, bytes: 262144}",
                 "profile: {ev_count: 2, backups: 0, ev_min_active: 2}",
                 "failures:\n  - {at_us: 0, kind: ev_loss, nic: nic0, ev: 1, percent: 30}")
    ran = run(s, "spray", program)   # spray: the lossy EV stays in use, so it is measured
    delivered(ran)
    sent = ran.count("nic0", receivers=T0S)
    up = ran.count("p0-t0-0", receivers=T1S) + ran.count("p1-t0-0", receivers=T1S)
    lost = ran.state.failures.injected_drops()["ev_loss"]
    assert set(sent) == {0, 1} and sent[1] > 128   # EV 1: plane 1, half the packets
    assert {ev: sent[ev] - up[ev] for ev in range(2)} == {0: 0, 1: lost}
    # binomial over about 150 draws: 30 % within three standard deviations (0.11)
    assert 0.19 < lost / sent[1] < 0.41
    # every loss resent, but for a lost spurious resend (its first transmission had arrived)
    assert ran.result.totals["retransmitted"] >= 0.9 * lost


# -- loss direction ----------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["out", "in"])
def test_loss_direction_picks_what_the_named_end_sends_or_receives(direction: str,
                                                                   program: Program) -> None:
    s = scenario(FLOW, "failures:\n  - {at_us: 0, kind: loss, link: 'nic0:0', percent: 30, "
                       f"direction: {direction}}}")
    ran = run(s, "spray", program)
    delivered(ran)
    sent = sum(ran.count("nic0", port=2).values())          # nic0's plane 0
    forwarded = sum(ran.count("p0-t0-0", receivers=T1S).values())
    back = sum(ran.count("p0-t0-0", receivers={"nic0"}).values())
    lost = ran.state.net.fabric.loss_drops
    assert sent > 20 and back > 5 and lost > 0
    if direction == "out":   # nic0's packets lost on the way to its T0, nothing else
        assert sent - forwarded == lost
    else:                    # all of them arrive; what nic0 receives on plane 0 is lost
        assert sent == forwarded and lost <= back


# -- cables, and a pinned flow ---------------------------------------------------------------

def test_a_slower_cable_takes_longer_and_a_shallow_one_drops(program: Program) -> None:
    def mct(ran: Ran) -> float:
        return delivered(ran)["mct_max_us"]   # type: ignore[return-value]

    base = run(scenario(FLOW), "spray", program)
    slow_lines = ["cables:", "  - {link: 'nic2:0', rate_gbps: 1, queue_packets: 4}",
                  "  - {link: 'nic2:1', rate_gbps: 1, queue_packets: 4}",
                  "failures:\n  - {at_us: 5, kind: switch_reboot, switch: p0-t0-1, down_us: 5}"]
    # The PSN window alone (no NSCC: its window is sized for nic2's 2 Gb/s and would not fill
    # the shallow queues this checks).
    slow = run(scenario(FLOW, *slow_lines, transport="cc_algorithm: fixed"), "spray", program)
    assert mct(slow) > 5 * mct(base)   # nic2's two cables at a tenth of the rate
    queues = {n.name: n.device.queues for n in slow.state.net.fabric.switches}
    assert queues["p0-t0-1"].line_rate(0) == queues["nic2"].line_rate(3) == 1e9
    assert queues["p0-t0-1"].line_rate(2) == 10e9   # the others as `links` say
    # a queue of 4 drops what one of 512 holds (the reboot's blank T0 got it back too)
    assert queues["p1-t0-1"].dropped > 0 and queues["p0-t0-1"].dropped > 0
    assert sum(n.device.queues.dropped for n in base.state.net.fabric.switches) == 0
    far = run(scenario(FLOW, "cables:", "  - {link: 'nic2:0', delay_ns: 40000}",
                       "  - {link: 'nic2:1', delay_ns: 40000}"), "spray", program)
    # the last byte comes 40 µs later, less the 0.5 µs of `links` the override replaces
    assert mct(far) >= mct(base) + 39.5 - 0.01


@pytest.mark.parametrize("mode_name", ["spray", "ecmp"])
def test_a_flow_with_a_path_takes_only_that_path(mode_name: str, program: Program) -> None:
    s = scenario("{kind: flow, src: nic0, dst: nic2, bytes: 32768, path: [1, 1]}")
    ran = run(s, mode_name, program)
    delivered(ran)
    assert sum(ran.count("nic0", port=2).values()) == 0 < sum(ran.count("nic0", 3).values())
    assert sum(ran.count("p1-t0-0", receivers={"p1-t1-0"}).values()) == 0
    assert sum(ran.count("p1-t0-0", receivers={"p1-t1-1"}).values()) > 20
    assert sum(ran.count("p1-t0-1", receivers={"p1-t1-0"}).values()) == 0   # feedback too
    # the pinned path is programmed, not handed to a controller to rewrite
    managed = {dict(e.match)["profile"] for n in ran.state.net.nics.values()
               for e in n.plan.entries if e.table == "ev_path"}
    assert managed == ({s.profile.profile_id} if mode_name == "spray" else set())


@pytest.mark.parametrize(("workload", "mode_name", "planes"), [
    ("{kind: ring_allreduce, bytes: 8192}", "mrc", 2),
    ("{kind: ring_allreduce, bytes: 8192}", "ecmp", 1),
    ("{kind: flow, src: nic0, dst: nic2, bytes: 4096, path: [1, 1]}", "spray", 1),
], ids=["sprayed", "hashed", "pinned"])
def test_a_transport_judges_lateness_over_the_planes_its_connection_uses(
        workload: str, mode_name: str, planes: int, program: Program) -> None:
    # (mrc_transport/README.md: lateness waits for a round trip timed on every plane in use)
    seen: list[int] = []
    run(scenario(workload), mode_name, program, during=lambda state: seen.extend(
        end.sender.config.planes for ends in state.ends.values() for end in ends))
    assert seen and set(seen) == {planes}


# -- when things start -------------------------------------------------------------------------

def test_a_later_workload_starts_at_its_start_us(program: Program) -> None:
    s = scenario("\n  - {kind: ring_allreduce, bytes: 8192}\n"
                 "  - {kind: flow, src: nic1, dst: nic3, bytes: 4096, start_us: 300}")
    ran = run(s, "spray", program)
    delivered(ran)
    flow = [r for r in ran.result.messages if r.flow == "flow1"]
    assert [(r.src, r.dst, r.posted_us) for r in flow] == [("nic1", "nic3", 300.0)]
    assert flow[0].arrived_us > 300   # type: ignore[operator]
    ring = [r for r in ran.result.messages if r.flow == "main"]
    assert len(ring) == 24 and min(r.posted_us for r in ring) == 0.0   # type: ignore[type-var]
    assert max(r.arrived_us for r in ring) < 300   # type: ignore[type-var]
    # nic1 -> nic3 is the flow's connection alone: nothing on it before 300 µs
    assert min(d.time_ns for d in ran.wire if d.sender == "nic1"
               and sent_ev(d.data) is not None and d.receiver in {"p0-t0-0", "p1-t0-0"}
               and _dst_is(d.data, "nic3")) >= 300_000


@pytest.mark.parametrize("at_us", [0, 1])
def test_a_failure_at_zero_comes_before_the_first_packet(at_us: int, program: Program) -> None:
    """nic0's plane-0 port goes down at 0: before the first packet, so nothing ever leaves
    nic0 by it; at 1 µs the first packets have already left by it."""
    s = scenario("{kind: ring_allreduce, bytes: 8192}",
                 f"failures:\n  - {{at_us: {at_us}, kind: nic_port_down, nic: nic0, plane: 0}}")
    ran = run(s, "spray", program)
    delivered(ran)
    on_port = sum(ran.count("nic0", port=2).values())
    assert (on_port == 0) == (at_us == 0)


# -- a NIC's cable cut or flapping --------------------------------------------------------------

def test_a_nic_cable_flap_is_the_nic_port_going_down_and_up(program: Program) -> None:
    """`flap` of NIC:PLANE cuts the NIC's cable (nothing crosses it, counted as a cut cable) and
    tells the NIC, as its PHY would: while it is down the NIC sends nothing into that plane."""
    s = scenario("{kind: ring_allreduce, bytes: 262144}",
                 "failures:\n  - {at_us: 20, kind: flap, link: 'nic0:0', count: 2, "
                 "down_us: 150, up_us: 100}")
    seen: list[object] = []

    def look(state: RunState) -> None:
        fabric = state.net.fabric
        state.agenda.at(100, lambda: seen.extend([fabric.link_is_up("nic0", 2),
                                                  fabric.link_is_up("nic0", 3)]))
        state.agenda.at(200, lambda: seen.append(fabric.link_is_up("nic0", 2)))

    ran = run(s, "mrc_no_controller", program, look)
    assert seen == [False, True, True]   # down in the first cut, up between the cuts
    delivered(ran)
    down = [(20_000, 170_000), (270_000, 420_000)]
    into_plane0 = [d for d in ran.wire if d.sender == "nic0" and d.sender_port == 2
                   and any(a < d.time_ns < b for a, b in down)]
    assert not into_plane0   # nothing crossed the cut cable
    # the NIC knew its port was down: it moved what its EV choice put there to the other plane
    moved = ran.state.net.fabric.switch("nic0").engine.counter("nic_counter").read(
        NIC_TX_PORT_PASSED)[0]
    assert moved > 0
    assert ran.result.drops.get("cut cable", 0) + ran.result.drops.get("nic: port down", 0) > 0
