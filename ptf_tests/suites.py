"""The PTF suites of this repository: one place saying which program and switch options each
suite runs with (used by `make ptf`, `make ptf-veth` and tests/integration/test_ptf_suites.py).

A suite runs the same tests on every architecture it has a program for: `program` is the
v1model one, `tna_program` the TNA variant (`--arch tna`, softswitch only).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ("v1model", "tna")


@dataclass(frozen=True)
class Suite:
    program: Path
    test_dir: Path
    switch_args: str = ""  # simple_switch_grpc options, as the runner's --switch-args takes them
    tna_program: Path | None = None

    def program_for(self, arch: str) -> Path | None:
        """The suite's program for `arch` ("v1model" or "tna"); None when it has none."""
        return self.program if arch == "v1model" else self.tna_program


SUITES: dict[str, Suite] = {
    "runtime": Suite(ROOT / "ptf_tests/runtime/p4/runtime_basics.p4", ROOT / "ptf_tests/runtime"),
    # Eight priority queues (the switch maps DSCPs to 0-7) and a slow port 3 for the trimming,
    # ECN and QoS tests, which need a queue to build up.
    "switch": Suite(ROOT / "p4src/switch/srv6_switch.p4", ROOT / "ptf_tests/switch",
                    "--priority-queues 8 --queue-rate 3:50",
                    tna_program=ROOT / "p4src/switch/tna/srv6_switch.p4"),
    # The MRC NIC: host port 1, plane ports 2 and 3 (ptf_tests/nic/nic_base.py); eight
    # priority queues, as its SACKs and NACKs leave in queue 7 (the control class).
    "nic": Suite(ROOT / "p4src/nic/mrc_nic.p4", ROOT / "ptf_tests/nic", "--priority-queues 8",
                 tna_program=ROOT / "p4src/nic/tna/mrc_nic.p4"),
}


def suites_for(arch: str) -> list[str]:
    """The suites that have a program for `arch`, in SUITES order."""
    return [name for name, suite in SUITES.items() if suite.program_for(arch) is not None]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m ptf_tests.suites [--arch A]`: the suite names for A, one line (for make)."""
    parser = argparse.ArgumentParser(prog="python -m ptf_tests.suites")
    parser.add_argument("--arch", choices=ARCHS, default="v1model")
    print(" ".join(suites_for(parser.parse_args(argv).arch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
