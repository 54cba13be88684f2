"""The scenario matrix moved onto another fabric: checks of our own beyond tiny.yaml.

The matrix (scenarios/matrix/) runs on the tiny fabric, where one NIC's 16 EVs cover every
(plane, T1). On a fabric with more planes or T1s they only sample them (nic_plan.py), and
failures can land where no traffic goes; on one with more T0s a T1's cables outnumber its
reporting NICs. This writes each tiny-fabric scenario of the matrix again for another fabric,
the same classes, failures and workloads on the same roles:

- tiny's NICs 0-1 (first T0) and 2-3 (second T0) become the first two NICs of the first two
  T0s; a T0's ports 2 and 3 (to T1s 0 and 1) become its first two uplink ports;
- workload sizes grow with the planes (tiny has 2; `--scale`), so that the runs last past the
  failures (issue 23's checks of 2026-12-05 ran 8 planes with `--scale 8`, medium with 2); a
  flow pinned to one path keeps its size (its path is no faster);
- `slow-plane` is left out (it slows every cable of a plane on tiny: a list the target fabric
  outgrows), and so are the scenarios not on tiny.yaml.

    python -m bench.matrix_variants --planes 8 --radix 8 -o out/m8      # 8 planes of 4 T1s
    python -m bench.matrix_variants --topology topologies/medium.yaml -o out/medium
    mrc-ctl sweep out/m8/*.yaml --seeds 1-2 --jobs 2 --invariants -o out/m8-eval
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import yaml

from controller.topology.yaml_io import load as load_topology

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "scenarios" / "matrix"
TINY_HALF = 2          # tiny.yaml: radix 4, two NICs and two uplinks per T0
TINY_PLANES = 2
LEFT_OUT = {"slow-plane"}
_NIC = re.compile(r"\bnic([0-3])\b")
_T0_PORT = re.compile(r"\b(p\d+-t0-\d+):([23])\b")


def variant(scenario: dict[str, Any], topology: Any, half: int, scale: int,
            suffix: str) -> dict[str, Any]:
    """`scenario` (a tiny-fabric matrix scenario, as YAML data) on a fabric with `half` NICs
    and uplinks per T0, given as `topology` (a path or a generate mapping), its workloads'
    sizes times `scale`."""
    def nic(match: re.Match[str]) -> str:
        return _nic_name(int(match.group(1)), half)

    def fix(text: str) -> str:
        text = _NIC.sub(nic, text)
        return _T0_PORT.sub(lambda m: f"{m.group(1)}:{half + int(m.group(2)) - TINY_HALF}", text)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return fix(node) if isinstance(node, str) else node

    out = walk({k: v for k, v in scenario.items() if k != "topology"})
    out = {"name": f"{scenario['name']}-{suffix}", "topology": topology, **{
        k: v for k, v in out.items() if k != "name"}}
    workloads = out["workload"] if isinstance(out["workload"], list) else [out["workload"]]
    ring = [_nic_name(i, half) for i in range(2 * TINY_HALF)]
    for w in workloads:
        if w.get("kind") in ("ring_allreduce", "all_to_all", "permutation") and "nics" not in w:
            w["nics"] = ring
        # A burst stays a burst; a flow pinned to one path (`path`) has that path's rate on
        # any fabric: more bytes would only outlast the run (a pinned 4 MiB at 5 Gb/s: 6.7 ms).
        if "bytes" in w and w.get("kind") != "all_to_all" and "path" not in w:
            w["bytes"] = w["bytes"] * scale
    return out


def _nic_name(tiny_index: int, half: int) -> str:
    """Tiny's NIC `tiny_index` on a fabric with `half` NICs per T0: the same place under the
    same T0."""
    return f"nic{tiny_index // TINY_HALF * half + tiny_index % TINY_HALF}"


def write_variants(out: Path, topology: Any, half: int, scale: int, suffix: str) -> list[Path]:
    """Every tiny-fabric matrix scenario (but LEFT_OUT) as a variant in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(MATRIX.glob("*.yaml")):
        scenario = yaml.safe_load(path.read_text())
        if path.stem in LEFT_OUT or Path(str(scenario["topology"])).name != "tiny.yaml":
            continue
        target = out / path.name
        target.write_text(yaml.safe_dump(variant(scenario, topology, half, scale, suffix),
                                         sort_keys=False, allow_unicode=True))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topology", type=Path, help="a topology file (e.g. medium.yaml)")
    parser.add_argument("--planes", type=int, help="or a generated Clos: planes...")
    parser.add_argument("--radix", type=int, help="...switch radix...")
    parser.add_argument("--nics", type=int, help="...and NICs (default: radix)")
    parser.add_argument("--scale", type=int, default=None,
                        help="workload sizes times this (default: planes / 2, tiny's planes)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.topology is not None:
        topo = load_topology(args.topology)
        topology: Any = str(args.topology.resolve())
        planes, radix, suffix = topo.planes, topo.radix, args.topology.stem
    elif args.planes and args.radix:
        planes, radix, suffix = args.planes, args.radix, f"{args.planes}p"
        topology = {"generate": {"planes": planes, "radix": radix,
                                 "nics": args.nics or radix}}
    else:
        parser.error("give --topology, or --planes and --radix")
    scale = args.scale or max(1, planes // TINY_PLANES)
    for path in write_variants(args.output, topology, radix // 2, scale, suffix):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
