"""Run every benchmark, print a table, write bench/results/<name>.json."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bench import packet_rate

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per packet benchmark")
    args = parser.parse_args()

    RESULTS.mkdir(exist_ok=True)
    rows = []
    for bench in (packet_rate.bench_ipv6_lpm, packet_rate.bench_usid_forward):
        result = bench(args.seconds)
        rows.append(result)
        record = {
            "benchmark": f"packet_rate.{result.name}",
            "packets": result.packets,
            "forwarded": result.forwarded,
            "seconds": round(result.seconds, 3),
            "packets_per_second": round(result.packets_per_second),
            "python": platform.python_version(),
            "machine": platform.machine(),
            "date": time.strftime("%Y-%m-%d"),
        }
        (RESULTS / f"packet_rate_{result.name}.json").write_text(json.dumps(record, indent=2) + "\n")

    print(f"{'benchmark':<28} {'packets':>10} {'forwarded':>10} {'seconds':>8} {'packets/s':>10}")
    for r in rows:
        print(f"{'packet_rate.' + r.name:<28} {r.packets:>10} {r.forwarded:>10} "
              f"{r.seconds:>8.2f} {r.packets_per_second:>10.0f}")
    print(f"results in {RESULTS}/")


if __name__ == "__main__":
    main()
