"""Random variants of the matrix's classes: checks of our own that nobody tuned for.

The matrix (scenarios/matrix/) fixes one cable, one switch, one NIC and one moment per class,
and many of its runs draw nothing at random (the same run at every seed). This draws, per
class and per variant (seeded by class and number: the same files every time), the fabric
(tiny.yaml or a generated 2-plane radix-8 Clos of 16 NICs), the element that fails, when, for
how long, and the workload's size; then `mrc-ctl sweep --invariants` holds mrc to the issue's
invariants on them.

    python -m bench.matrix_random -n 4 -o out/random              # every class, 4 variants each
    python -m bench.matrix_random -n 8 --class cable-loss -o out/random
    mrc-ctl sweep out/random/*.yaml --seeds 1 --jobs 2 --invariants -o out/random-eval

What it found on 2026-12-06 (the README's section has the numbers): (a) held on every variant
drawn, and no healthy element was named; (b) fails against ECMP where ECMP's pinned flows miss
the failed element (the failed path costs sprayed traffic about reorder_us) and where a NIC port
down halves one ring link (pipelined messages queue at the sender; ECMP's one plane never had
more); one (e) was a one-bin tie at a run's end.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "topologies" / "tiny.yaml"


@dataclass(frozen=True)
class Fabric:
    """Where a variant runs: a Clos whose T0 i's port half + j goes up to T1 j (tiny.yaml is
    wired so too), `half` NICs per T0."""

    topology: Any          # a path (str) or a generate mapping
    planes: int
    half: int              # NICs per T0, T1s per plane, uplinks per T0
    nics: int

    @property
    def t0s(self) -> int:
        return self.nics // self.half

    def uplink(self, rng: random.Random) -> tuple[int, int, int, str]:
        """A T0-T1 cable: (plane, T0, T1, its T0-side name)."""
        plane, t0, t1 = rng.randrange(self.planes), rng.randrange(self.t0s), rng.randrange(self.half)
        return plane, t0, t1, f"p{plane}-t0-{t0}:{self.half + t1}"

    def uplinks(self) -> list[str]:
        """Every T0-T1 cable, by its T0-side name."""
        return [f"p{plane}-t0-{t0}:{self.half + t1}" for plane in range(self.planes)
                for t0 in range(self.t0s) for t1 in range(self.half)]

    def nic_under(self, t0: int, rng: random.Random) -> int:
        return t0 * self.half + rng.randrange(self.half)


FABRICS = (Fabric(str(TINY), 2, 2, 4),
           Fabric({"generate": {"planes": 2, "radix": 8, "nics": 16}}, 2, 4, 16))
RING = {"kind": "ring_allreduce"}
TIMING = {"rto_us": 100, "reorder_us": 30}

ONLY_LARGE = {"incast"}   # tiny.yaml has too few NICs for senders beside a victim
Draw = Callable[[random.Random, Fabric], dict[str, Any]]


def _ring(rng: random.Random) -> dict[str, Any]:
    return {**RING, "bytes": rng.choice([262144, 524288])}


def _workload(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.5:
        return _ring(rng)
    return {"kind": "permutation", "bytes": 131072, "iterations": 4}


def burst(rng: random.Random, f: Fabric) -> dict[str, Any]:
    return {"transport": {"rto_us": rng.choice([150, 200]), "reorder_us": 30},
            "workload": {"kind": "all_to_all", "bytes": rng.choice([65536, 131072]),
                         "iterations": 2}}


def cable_cut(rng: random.Random, f: Fabric) -> dict[str, Any]:
    return {"workload": _workload(rng), "failures": [
        {"at_us": rng.randrange(20, 150), "kind": "link_down", "link": f.uplink(rng)[3]}]}


def cable_blackhole(rng: random.Random, f: Fabric) -> dict[str, Any]:
    return {"workload": _workload(rng), "failures": [
        {"at_us": rng.randrange(20, 150), "kind": "blackhole", "link": f.uplink(rng)[3]}]}


def t1_blackhole_reboot(rng: random.Random, f: Fabric) -> dict[str, Any]:
    plane, _, t1, _ = f.uplink(rng)
    at, until = rng.randrange(20, 150), rng.randrange(250, 450)
    switch = f"p{plane}-t1-{t1}"
    return {"workload": _workload(rng), "failures": [
        {"at_us": at, "kind": "blackhole", "switch": switch, "until_us": until},
        {"at_us": until, "kind": "switch_reboot", "switch": switch,
         "down_us": rng.randrange(100, 400)}]}


def cable_loss(rng: random.Random, f: Fabric) -> dict[str, Any]:
    return {"workload": _ring(rng), "failures": [
        {"at_us": 0, "kind": "loss", "link": f.uplink(rng)[3],
         "percent": rng.choice([5, 10, 15, 20]), "direction": rng.choice(["out", "in"])}]}


def ev_loss(rng: random.Random, f: Fabric) -> dict[str, Any]:
    # EVs 0-15: each NIC's first 16 cover every (plane, T1) on both fabrics
    return {"workload": _ring(rng), "failures": [
        {"at_us": 0, "kind": "ev_loss", "nic": f"nic{rng.randrange(f.nics)}",
         "ev": rng.randrange(16), "percent": 20}]}


def ecn_one_path(rng: random.Random, f: Fabric) -> dict[str, Any]:
    plane, t0, t1, link = f.uplink(rng)
    src = f.nic_under(t0, rng)
    # a destination under another T0, and not the ring's next rank (its messages would share
    # the pinned flow's connection, and so its path)
    dst = rng.choice([n for n in range(f.nics)
                      if n // f.half != t0 and n != (src + 1) % f.nics])
    return {"cables": [{"link": link, "rate_gbps": rng.choice([3, 5])}],
            "qos": {"ecn_threshold": rng.choice([2, 4]), "trim_threshold": 200},
            "workload": [_ring(rng), {"kind": "flow", "name": "background", "src": f"nic{src}",
                                      "dst": f"nic{dst}", "bytes": 524288,
                                      "path": [plane, t1]}]}


def slow_plane(rng: random.Random, f: Fabric) -> dict[str, Any]:
    plane, rate = rng.randrange(f.planes), rng.choice([3, 5])
    cables = [{"link": link, "rate_gbps": rate} for link in f.uplinks()
              if link.startswith(f"p{plane}-")]
    cables += [{"link": f"nic{n}:{plane}", "rate_gbps": rate} for n in range(f.nics)]
    return {"cables": cables, "workload": _ring(rng)}


def nic_port_down_up(rng: random.Random, f: Fabric) -> dict[str, Any]:
    at = rng.randrange(20, 150)
    return {"workload": _workload(rng), "failures": [
        {"at_us": at, "kind": "nic_port_down", "nic": f"nic{rng.randrange(f.nics)}",
         "plane": rng.randrange(f.planes), "until_us": at + rng.randrange(100, 400)}]}


def t1_reboot_permutation(rng: random.Random, f: Fabric) -> dict[str, Any]:
    plane, _, t1, _ = f.uplink(rng)
    return {"workload": {"kind": "permutation", "bytes": 131072, "iterations": 4},
            "failures": [{"at_us": rng.randrange(20, 150), "kind": "switch_reboot",
                          "switch": f"p{plane}-t1-{t1}", "down_us": rng.randrange(100, 400)}]}


def flap_storm(rng: random.Random, f: Fabric) -> dict[str, Any]:
    return {"workload": _workload(rng), "failures": [
        {"at_us": rng.randrange(20, 150), "kind": "flap", "link": f.uplink(rng)[3],
         "count": rng.randrange(2, 8), "down_us": rng.randrange(30, 100),
         "up_us": rng.randrange(20, 80)}]}


def incast(rng: random.Random, f: Fabric) -> dict[str, Any]:
    # the victim writes to the receiver's neighbour (under the same T0: it shares the
    # receiver's downlinks), from a NIC that is not a sender
    receiver = rng.randrange(f.nics)
    neighbour = rng.choice([n for n in range(f.nics)
                            if n // f.half == receiver // f.half and n != receiver])
    others = [n for n in range(f.nics) if n not in (receiver, neighbour)]
    senders = rng.sample(others, min(len(others) - 1, rng.choice([3, 5, 7, 11])))
    victim = rng.choice([n for n in others if n not in senders])
    return {"workload": {"kind": "incast", "bytes": rng.choice([16384, 32768, 65536]),
                         "senders": [f"nic{n}" for n in senders], "receiver": f"nic{receiver}",
                         "victim": [f"nic{victim}", f"nic{neighbour}"],
                         "victim_bytes": 131072}}


def ring_loss(rng: random.Random, f: Fabric) -> dict[str, Any]:
    percent = rng.choice([0.1, 0.5, 1.0])
    return {"workload": _ring(rng), "failures": [
        {"at_us": 0, "kind": "loss", "link": link, "percent": percent} for link in f.uplinks()]}


CLASSES: dict[str, Draw] = {
    "burst-a2a": burst, "cable-cut": cable_cut, "cable-blackhole": cable_blackhole,
    "t1-blackhole-reboot": t1_blackhole_reboot, "cable-loss": cable_loss, "ev-loss": ev_loss,
    "ecn-one-path": ecn_one_path, "slow-plane": slow_plane,
    "nic-port-down-up": nic_port_down_up, "t1-reboot-permutation": t1_reboot_permutation,
    "flap-storm": flap_storm, "incast": incast, "ring-loss": ring_loss}


def scenario(kind: str, number: int) -> dict[str, Any]:
    """Variant `number` of class `kind`, as scenario YAML data."""
    rng = random.Random(f"{kind}/{number}")
    fabric = rng.choice(FABRICS) if kind not in ONLY_LARGE else FABRICS[-1]
    drawn = CLASSES[kind](rng, fabric)
    name = f"{kind}-r{number}"
    return {"name": name, "description": f"random variant {number} of the {kind} class",
            "topology": fabric.topology, "links": {"rate_gbps": 10, "delay_ns": 500},
            "seed": rng.randrange(1, 1000), "duration_us": 6000,
            "transport": drawn.pop("transport", TIMING), **drawn}


def write(out: Path, count: int, kinds: list[str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in kinds:
        for number in range(count):
            target = out / f"{kind}-r{number}.yaml"
            target.write_text(yaml.safe_dump(scenario(kind, number), sort_keys=False))
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--count", type=int, default=4, help="variants per class")
    parser.add_argument("--class", dest="kinds", action="append", choices=sorted(CLASSES),
                        help="only this class (repeat for several; default: all)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    for path in write(args.output, args.count, args.kinds or list(CLASSES)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
