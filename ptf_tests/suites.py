"""The PTF suites of this repository: one place saying which program and switch options each
suite runs with (used by `make ptf`, `make ptf-veth` and tests/integration/test_ptf_suites.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Suite:
    program: Path
    test_dir: Path
    switch_args: str = ""  # simple_switch_grpc options, as the runner's --switch-args takes them


SUITES: dict[str, Suite] = {
    "runtime": Suite(ROOT / "ptf_tests/runtime/p4/runtime_basics.p4", ROOT / "ptf_tests/runtime"),
    # Eight priority queues (the switch maps DSCPs to 0-7) and a slow port 3 for the trimming,
    # ECN and QoS tests, which need a queue to build up.
    "switch": Suite(ROOT / "p4src/switch/srv6_switch.p4", ROOT / "ptf_tests/switch",
                    "--priority-queues 8 --queue-rate 3:50"),
    # The MRC NIC: host port 1, plane ports 2 and 3 (ptf_tests/nic/nic_base.py).
    "nic": Suite(ROOT / "p4src/nic/mrc_nic.p4", ROOT / "ptf_tests/nic"),
}
