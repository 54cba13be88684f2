"""`make demo`'s fabric part: bring a topology up as softswitches, push the plan over P4Runtime,
then send a packet from every NIC to every other NIC over every plane and T1, printing each path.

    python -m controller.demo [TOPO]      (default topologies/tiny.yaml)
"""

from __future__ import annotations

import sys
from pathlib import Path

from controller import traffic
from controller.devices.session import Program
from controller.fabric_up import fabric_up
from controller.plan.checker import check
from controller.plan.plan import build_plan
from controller.topology import yaml_io

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"


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
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
