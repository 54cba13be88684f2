"""Completion time of one 1 MiB MRC write on the tiny fabric (topologies/tiny.yaml), nic0 ->
nic2, through the real switch and NIC programs in virtual time (controller.nic_fabric): every
port drains at 1M packets/s (1 KiB payloads: about 8.7 Gb/s per port, two planes).

- `clean`: nothing goes wrong.
- `link_cut`: the T0-T1 link p0-t0-0 <-> p0-t1-0 is cut 250 µs into the write; the sender finds
  the dead EVs by timeouts and finishes on the others.

Reported: virtual µs from the write to its completion (the same on every machine), the wall
seconds the emulation took (what this machine costs), packets retransmitted, and the EVs that
ended ASSUMED_BAD. `python -m bench.mrc_completion` runs these only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from controller.nic_fabric import NicFabric, WriteResult, timed_write
from controller.plan.nic_plan import EvProfile
from controller.topology.yaml_io import load

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGY = ROOT / "topologies" / "tiny.yaml"
SWITCH_P4 = ROOT / "p4src" / "switch" / "srv6_switch.p4"
NIC_P4 = ROOT / "p4src" / "nic" / "mrc_nic.p4"
PROFILE = EvProfile(ev_count=16, backups=2, ev_min_active=4)
SIZE = 1 << 20
CUT_AT_US = 250
CUT = ("p0-t0-0", 2)


def run(name: str, cut: bool) -> tuple[str, WriteResult]:
    with NicFabric(load(TOPOLOGY), SWITCH_P4, NIC_P4, [("nic0", "nic2")],
                   profile=PROFILE) as fab:
        return name, timed_write(fab, "nic0", "nic2", SIZE, cut=CUT if cut else None,
                                 cut_at_us=CUT_AT_US)


def run_all() -> list[tuple[str, WriteResult]]:
    return [run("clean", cut=False), run("link_cut", cut=True)]


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    for name, c in run_all():
        print(f"{name:<10} {c.virtual_us:>8} µs virtual  {c.wall_seconds:6.2f} s wall  "
              f"retransmitted {c.retransmitted}  ASSUMED_BAD {c.assumed_bad}  "
              f"{'intact' if c.intact else 'CORRUPT'}")


if __name__ == "__main__":
    main()
