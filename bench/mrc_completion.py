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
import random
import time
from dataclasses import dataclass
from pathlib import Path

from controller.nic_fabric import NicFabric
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
VA = 0x1000


@dataclass(frozen=True)
class Completion:
    name: str
    virtual_us: int
    wall_seconds: float
    packets: int
    retransmitted: int
    assumed_bad: list[int]
    intact: bool


def run(name: str, cut: bool) -> Completion:
    with NicFabric(load(TOPOLOGY), SWITCH_P4, NIC_P4, [("nic0", "nic2")],
                   profile=PROFILE) as fab:
        data = random.Random(7).randbytes(SIZE)
        started = time.perf_counter()
        sender = fab.host("nic0").sender
        sender.write(data, VA)
        if cut:
            fab.run_for(CUT_AT_US)
            fab.fabric.set_link_up(*CUT, False)
        fab.run(limit_us=1_000_000)
        wall = time.perf_counter() - started
        memory = fab.host("nic2").receiver.memory
        bad = [ev for ev, state in fab.ev_states("nic0").items() if state == "ASSUMED_BAD"]
        return Completion(name, fab.now, wall, sender.counters["sent"],
                          sender.counters["retransmitted"], bad,
                          bytes(memory[VA:VA + SIZE]) == data)


def run_all() -> list[Completion]:
    return [run("clean", cut=False), run("link_cut", cut=True)]


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    for c in run_all():
        print(f"{c.name:<10} {c.virtual_us:>8} µs virtual  {c.wall_seconds:6.2f} s wall  "
              f"retransmitted {c.retransmitted}  ASSUMED_BAD {c.assumed_bad}  "
              f"{'intact' if c.intact else 'CORRUPT'}")


if __name__ == "__main__":
    main()
