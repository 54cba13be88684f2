"""bench/matrix_random.py: random variants of the matrix's classes, each a scenario the emulator
loads (its loader checks every cable, switch and NIC named against the fabric), the same files
for the same class and number."""

from __future__ import annotations

from pathlib import Path

from bench.matrix_random import CLASSES, main, scenario
from emulation.scenario import load


def test_every_class_draws_scenarios_the_emulator_loads(tmp_path: Path) -> None:
    assert main(["-n", "3", "-o", str(tmp_path)]) == 0
    paths = sorted(tmp_path.glob("*.yaml"))
    assert len(paths) == 3 * len(CLASSES)
    fabrics = set()
    for path in paths:
        loaded = load(path)
        fabrics.add(loaded.topology.name)
        kind = path.stem.rsplit("-r", 1)[0]
        hard = kind in ("cable-cut", "cable-blackhole", "t1-blackhole-reboot",
                        "nic-port-down-up", "t1-reboot-permutation", "flap-storm")
        assert bool(loaded.failures) == (hard or kind in ("cable-loss", "ev-loss", "ring-loss"))
    assert len(fabrics) == 2                      # tiny.yaml and the generated 16-NIC Clos


def test_a_variant_is_the_same_every_time_and_variants_differ() -> None:
    assert scenario("cable-cut", 1) == scenario("cable-cut", 1)
    drawn = {str(scenario("cable-cut", n)["failures"]) for n in range(6)}
    assert len(drawn) > 1


def test_an_incast_victim_writes_to_the_receivers_neighbour_from_no_sender(
        tmp_path: Path) -> None:
    main(["-n", "4", "--class", "incast", "-o", str(tmp_path)])
    for path in tmp_path.glob("*.yaml"):
        loaded = load(path)
        w = loaded.workload
        assert w.victim is not None and w.victim[0] not in w.senders
        assert w.receiver not in w.senders and w.victim[1] != w.receiver
        t0s = [[t0 for t0, _ in loaded.topology.nic(n).attachments]
               for n in (w.victim[1], w.receiver)]
        assert t0s[0] == t0s[1]   # the neighbour: under the receiver's T0 in every plane
