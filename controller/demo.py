"""`make demo`'s fabric part: bring a topology up as softswitches, push the plan over P4Runtime,
then send a packet from every NIC to every other NIC over every plane and T1, printing each path;
then the MRC NICs: a 1 MiB write from nic0 to nic2 with a T0-T1 cable cut mid-transfer, in
virtual time (controller.nic_fabric), and the EVs the sender took out of service.

    python -m controller.demo [TOPO]      (default topologies/tiny.yaml)
"""

from __future__ import annotations

import sys
from pathlib import Path

from controller import traffic
from controller.devices.session import Program
from controller.fabric_up import fabric_up
from controller.nic_fabric import NicFabric, timed_write
from controller.plan.checker import check
from controller.plan.nic_plan import EvProfile
from controller.plan.plan import build_plan
from controller.topology import yaml_io
from controller.topology.model import Topology

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
NIC_PROGRAM = ROOT / "p4src" / "nic" / "mrc_nic.p4"
CUT = ("p0-t0-0", 2)   # tiny.yaml: p0-t0-0 <-> p0-t1-0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    topology = yaml_io.load(args[0] if args else ROOT / "topologies" / "tiny.yaml")
    plan = build_plan(topology)
    result = check(topology, plan)
    print(f"plan check: {'OK' if result.ok else 'FAILED'}")
    if not result.ok:
        return 1
    with fabric_up(topology, plan, Program.compile(PROGRAM), ephemeral_ports=True) as up:
        assert up.report is not None
        print(up.report.summary())
        lost = 0
        for delivery in traffic.sweep(up, plan):
            print(delivery.describe())
            lost += not delivery.delivered
    print("every NIC reached every NIC over every plane and T1" if not lost
          else f"{lost} packet(s) lost")
    if lost:
        return 1
    return mrc_write(topology)


def mrc_write(topology: Topology) -> int:
    """1 MiB nic0 -> nic2 over the MRC NICs, the cable CUT 250 µs in."""
    print(f"MRC: 1 MiB nic0 -> nic2, 16 EVs over 2 planes x 2 T1s, {CUT[0]} port {CUT[1]} cut "
          "at 250 µs (virtual time)")
    with NicFabric(topology, PROGRAM, NIC_PROGRAM, [("nic0", "nic2")],
                   profile=EvProfile(ev_count=16, backups=2, ev_min_active=4)) as fab:
        result = timed_write(fab, "nic0", "nic2", 1 << 20, cut=CUT)
        paths = fab.ev_t1("nic0")
        events = fab.events("nic0")
    bad = ", ".join(f"EV {ev} (plane {paths[ev][0]}, {paths[ev][1]})" for ev in result.assumed_bad)
    print(f"  completed in {result.virtual_us} µs of virtual time ({result.wall_seconds:.1f} s "
          f"here), {result.retransmitted} of {result.sent} packets retransmitted, "
          f"{'every byte intact' if result.intact else 'DATA CORRUPT'}")
    print(f"  ASSUMED_BAD: {bad or 'none'}; {len(events)} EV event(s) seen over P4Runtime")
    return 0 if result.intact else 1


if __name__ == "__main__":
    sys.exit(main())
