"""bench/matrix_variants.py: the matrix's tiny-fabric scenarios written again for another fabric,
the same failures and workloads on the same roles, each a scenario the emulator loads (its
loader checks every cable and NIC named against the fabric)."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.matrix_variants import MATRIX, main
from emulation.scenario import load

ROOT = Path(__file__).resolve().parents[2]


def test_the_matrix_on_8_planes_of_4_t1s_loads_with_its_failures_on_the_same_roles(
        tmp_path: Path) -> None:
    assert main(["--planes", "8", "--radix", "8", "-o", str(tmp_path)]) == 0
    written = {p.stem for p in tmp_path.glob("*.yaml")}
    tiny = {p.stem for p in MATRIX.glob("*.yaml")
            if Path(str(yaml.safe_load(p.read_text())["topology"])).name == "tiny.yaml"}
    assert written == tiny - {"slow-plane"} and "cable-cut" in written
    for path in sorted(tmp_path.glob("*.yaml")):
        scenario = load(path)                      # every cable and NIC exists on the fabric
        assert scenario.topology.planes == 8 and scenario.name.endswith("-8p")
    cut = load(tmp_path / "cable-cut.yaml")
    original = load(MATRIX / "cable-cut.yaml")
    (failure,) = cut.failures
    assert failure.link == ("p0-t0-0", 4)          # tiny's port 2: the uplink to T1 0
    assert cut.workload.nics == ("nic0", "nic1", "nic4", "nic5")
    assert cut.workload.bytes == original.workload.bytes * 4   # 8 planes against tiny's 2


def test_the_matrix_on_medium_keeps_a_burst_a_burst_and_a_pinned_flow_its_size(
        tmp_path: Path) -> None:
    assert main(["--topology", str(ROOT / "topologies" / "medium.yaml"),
                 "-o", str(tmp_path)]) == 0
    burst, original = load(tmp_path / "burst-a2a.yaml"), load(MATRIX / "burst-a2a.yaml")
    assert burst.topology.planes == 4 and burst.workload.bytes == original.workload.bytes
    port_down = yaml.safe_load((tmp_path / "nic-port-down-up.yaml").read_text())
    assert "nic1" in str(port_down["failures"])    # tiny's nic1 stays second under T0 0
    ev = load(tmp_path / "ev-loss.yaml")
    assert ev.failures[0].nic == "nic0"
    # ecn-one-path's background flow is pinned to one path: no faster on 4 planes
    ecn = yaml.safe_load((tmp_path / "ecn-one-path.yaml").read_text())
    tiny = yaml.safe_load((MATRIX / "ecn-one-path.yaml").read_text())
    (ring, pinned), (tiny_ring, tiny_pinned) = ecn["workload"], tiny["workload"]
    assert "path" in pinned and pinned["bytes"] == tiny_pinned["bytes"]
    assert ring["bytes"] == 2 * tiny_ring["bytes"]
