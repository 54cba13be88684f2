"""The emulator's report.json on both softswitch engines (issue 26, 3): every scenario run with
`mrc-ctl emulate --engine python` and `--engine c` at one seed, the two report.json compared
byte for byte. Virtual time makes the runs deterministic, so any difference is a bug in one
engine. Prints a table (scenario, identical or differing, CPU seconds per engine) and writes
it as JSON; exit 1 when a pair differs or a run fails.

`--fabric` compares the fabric cores instead (issue 26, 2): both runs on the C engine, one
with the Python fabric, one with the native core (`--fabric native`). `--transport` compares the
host transports: both on the C engine and the native core, one with the Python transport
($MRC_TRANSPORT_NATIVE=python), one with its modules compiled by mypyc (mrc_transport/compiled.py,
built first when missing).

    python -m bench.engine_identity [SCENARIO.yaml ...] [--seed 1] [--fabric | --transport]
                                    [-o out/engine_identity]
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
# the two runs compared: (label, mrc-ctl emulate options, environment changes)
Run = tuple[str, tuple[str, ...], dict[str, str]]
ENGINE_RUNS: tuple[Run, Run] = (("python", ("--engine", "python"), {}),
                                ("c", ("--engine", "c"), {}))
FABRIC_RUNS: tuple[Run, Run] = (("python", ("--engine", "c", "--fabric", "python"), {}),
                                ("native", ("--engine", "c", "--fabric", "native"), {}))
_FAST = ("--engine", "c", "--fabric", "native")
TRANSPORT_RUNS: tuple[Run, Run] = (("python", _FAST, {"MRC_TRANSPORT_NATIVE": "python"}),
                                   ("compiled", _FAST, {"MRC_TRANSPORT_NATIVE": "compiled"}))


def scenarios() -> list[Path]:
    """Every scenario of scenarios/ and scenarios/matrix/."""
    return sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
        (ROOT / "scenarios" / "matrix").glob("*.yaml"))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def emulate(scenario: Path, label: str, options: tuple[str, ...], seed: int,
            out: Path, env: dict[str, str] | None = None) -> tuple[Path, float, str]:
    """One `mrc-ctl emulate` run: its report.json, CPU seconds and error output ("" if ok)."""
    report_dir = out / scenario.stem / label
    before = children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "emulate", str(scenario), *options,
         "--seed", str(seed), "--quiet", "-o", str(report_dir)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})})
    error = "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["failed"])[-1]
    return report_dir / "report.json", children_cpu() - before, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", type=Path, help="default: every scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fabric", action="store_true",
                        help="compare the Python and native fabric cores (both on the C engine)")
    parser.add_argument("--transport", action="store_true",
                        help="compare the Python and the compiled transport (both on the C "
                             "engine and the native core)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="default out/engine_identity (out/fabric_identity with --fabric, "
                             "out/transport_identity with --transport)")
    args = parser.parse_args()
    kind = "fabric" if args.fabric else "transport" if args.transport else "engine"
    pair = {"fabric": FABRIC_RUNS, "transport": TRANSPORT_RUNS, "engine": ENGINE_RUNS}[kind]
    output = args.output or ROOT / "out" / f"{kind}_identity"
    if kind == "transport":
        from mrc_transport import compiled
        try:
            compiled.build()
        except compiled.BuildError as exc:   # nothing to compare against: say why
            print(f"error: {exc}", file=sys.stderr)
            return 1
    (a, _, _), (b, _, _) = pair
    rows = []
    bad = 0
    for scenario in [s.resolve() for s in args.scenarios] or scenarios():
        runs = {label: emulate(scenario, label, options, args.seed, output, env)
                for label, options, env in pair}
        errors = {e: r[2] for e, r in runs.items() if r[2]}
        if errors:
            verdict = "failed: " + "; ".join(f"{e}: {m}" for e, m in errors.items())
        else:
            same = runs[a][0].read_bytes() == runs[b][0].read_bytes()
            verdict = "identical" if same else "DIFFERENT"
        bad += verdict != "identical"
        row = {"scenario": str(scenario.relative_to(ROOT)), "verdict": verdict,
               **{f"cpu_{e}": round(r[1], 1) for e, r in runs.items()}}
        rows.append(row)
        print(f"{row['scenario']:<45} {verdict:<10} {a} {row[f'cpu_{a}']:>7.1f} s  "
              f"{b} {row[f'cpu_{b}']:>7.1f} s", flush=True)
    output.mkdir(parents=True, exist_ok=True)
    (output / "identity.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
