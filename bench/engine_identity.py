"""The emulator's report.json on both softswitch engines (issue 26, 3): every scenario run with
`mrc-ctl emulate --engine python` and `--engine c` at one seed, the two report.json compared
byte for byte. Virtual time makes the runs deterministic, so any difference is a bug in one
engine. Prints a table (scenario, identical or differing, CPU seconds per engine) and writes
it as JSON; exit 1 when a pair differs or a run fails.

    python -m bench.engine_identity [SCENARIO.yaml ...] [--seed 1] [-o out/engine_identity]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("python", "c")


def scenarios() -> list[Path]:
    """Every scenario of scenarios/ and scenarios/matrix/."""
    return sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
        (ROOT / "scenarios" / "matrix").glob("*.yaml"))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def emulate(scenario: Path, engine: str, seed: int, out: Path) -> tuple[Path, float, str]:
    """One `mrc-ctl emulate` run: its report.json, CPU seconds and error output ("" if ok)."""
    report_dir = out / scenario.stem / engine
    before = children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "emulate", str(scenario), "--engine", engine,
         "--seed", str(seed), "--quiet", "-o", str(report_dir)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    error = "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["failed"])[-1]
    return report_dir / "report.json", children_cpu() - before, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", type=Path, help="default: every scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "out" / "engine_identity")
    args = parser.parse_args()
    rows = []
    bad = 0
    for scenario in [s.resolve() for s in args.scenarios] or scenarios():
        runs = {e: emulate(scenario, e, args.seed, args.output) for e in ENGINES}
        errors = {e: r[2] for e, r in runs.items() if r[2]}
        if errors:
            verdict = "failed: " + "; ".join(f"{e}: {m}" for e, m in errors.items())
        else:
            same = runs["python"][0].read_bytes() == runs["c"][0].read_bytes()
            verdict = "identical" if same else "DIFFERENT"
        bad += verdict != "identical"
        row = {"scenario": str(scenario.relative_to(ROOT)), "verdict": verdict,
               **{f"cpu_{e}": round(r[1], 1) for e, r in runs.items()}}
        rows.append(row)
        print(f"{row['scenario']:<45} {verdict:<10} python {row['cpu_python']:>7.1f} s  "
              f"c {row['cpu_c']:>7.1f} s", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "identity.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
