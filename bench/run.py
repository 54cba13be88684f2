"""Run every benchmark, print a table, write bench/results/<name>.json."""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bench import (
    controller_plan,
    controller_push,
    emulation,
    engine_rate,
    mrc_completion,
    mrc_repair,
    nic_rate,
    packet_rate,
    runtime_interference,
    runtime_rate,
)

RESULTS = Path(__file__).parent / "results"


def _save(name: str, record: dict[str, object]) -> None:
    record.update(python=platform.python_version(), machine=platform.machine(),
                  date=time.strftime("%Y-%m-%d"))
    (RESULTS / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")


Row = tuple[str, int, float, float, str]


def interference_rows() -> list[Row]:
    """bench/runtime_interference.py: one row per phase (the rate column is the worst probe
    delay in ms), saved as runtime_interference_<phase>.json."""
    rows: list[Row] = []
    for phase in runtime_interference.run_all():
        name = f"runtime_interference.{phase.name}"
        rows.append((name, phase.sent, phase.seconds, phase.max_ms, phase.summary))
        memory = phase.memory
        _save(f"runtime_interference_{phase.name}", {
            "benchmark": name, "work": phase.work, "seconds": round(phase.seconds, 3),
            "probes_sent": phase.sent, "lost": phase.lost,
            "probe_interval_ms": runtime_interference.PROBE_INTERVAL * 1000,
            "delay_p50_ms": round(phase.p50_ms, 3), "delay_p99_ms": round(phase.p99_ms, 3),
            "delay_max_ms": round(phase.max_ms, 3),
            **({} if memory is None else {
                "switch_rss_before_kib": memory.before_kib,
                "switch_rss_peak_kib": memory.peak_kib,
                "switch_rss_growth_kib": memory.growth_kib,
                "peak_reset": memory.peak_reset}),
        })
    return rows


def nic_rate_rows(seconds: float) -> list[Row]:
    """bench/nic_rate.py: the MRC NIC program's TX, RX and feedback paths, saved as
    nic_rate_<name>.json with the configuration and the output counts that check the run."""
    rows: list[Row] = []
    for r in nic_rate.run_all(seconds):
        name = f"nic_rate.{r.name}"
        rows.append((name, r.packets, r.seconds, r.packets_per_second, "packets/s"))
        _save(f"nic_rate_{r.name}", {
            "benchmark": name, "packets": r.packets, "seconds": round(r.seconds, 3),
            "packets_per_second": round(r.packets_per_second), **nic_rate.CONFIGURATION,
            **r.outputs,
        })
    return rows


def engine_rate_rows(seconds: float) -> list[Row]:
    """bench/engine_rate.py: the real switch program (T0 and T1 roles) and the NIC program
    (tx, rx, feedback), v1model and TNA, on each engine (per call, batched, C bursts),
    packets per CPU-second, saved as engine_rate_<program>_<path>_<engine>.json; an engine
    that cannot run is a row saying why."""
    rows: list[Row] = []
    for r in engine_rate.run_all(seconds):
        name = f"engine_rate.{r.name}.{r.engine}"
        record: dict[str, object] = {"benchmark": name, "engine": r.engine, "arch": r.arch,
                                     **engine_rate.CONFIGURATION}
        if r.unavailable:
            rows.append((name, 0, 0.0, 0.0, r.unavailable))
            record["unavailable"] = r.unavailable
        else:
            rows.append((name, r.packets, r.cpu_seconds, r.packets_per_second,
                         "packets/CPU-s"))
            record.update(packets=r.packets, cpu_seconds=round(r.cpu_seconds, 3),
                          packets_per_cpu_second=round(r.packets_per_second), **r.outputs)
            if r.name.startswith("mrc_nic"):
                record.update(nic_rate.CONFIGURATION)
        _save(f"engine_rate_{r.name.replace('.', '_')}_{r.engine}", record)
    return rows


def completion_rows() -> list[Row]:
    """bench/mrc_completion.py: a 1 MiB write on the tiny fabric, clean and with a cut link
    (the rate column is the completion time in virtual µs), saved as mrc_completion_<name>.json."""
    rows: list[Row] = []
    for scenario, c in mrc_completion.run_all():
        name = f"mrc_completion.{scenario}"
        state = "intact" if c.intact else "CORRUPT"
        rows.append((name, c.sent, c.wall_seconds, c.virtual_us,
                     f"µs virtual to complete 1 MiB, {c.retransmitted} retransmitted, {state}"))
        _save(f"mrc_completion_{scenario}", {
            "benchmark": name, "bytes": mrc_completion.SIZE, "virtual_us": c.virtual_us,
            "wall_seconds": round(c.wall_seconds, 3), "packets": c.sent,
            "retransmitted": c.retransmitted, "assumed_bad_evs": c.assumed_bad,
            "intact": c.intact, "link_pps": 1_000_000,
        })
    return rows


def emulation_rows() -> list[Row]:
    """bench/emulation.py: the emulation's packet-hops per CPU-second through the real P4
    programs (ring-link-cut in mode mrc, setup apart, with a cProfile breakdown by component),
    the permutations on 16, 64 and 128 NICs, the largest fabric a 10-minute run carries
    (measured: the 256-NIC scenario; the rate column is its NICs), and the sweep's speed-up
    with 2 jobs (the rate column is that factor); C engine, native fabric core; saved as
    emulation_<name>.json."""
    rows, records = emulation.rows_and_records(emulation.run_all())
    for name, record in records.items():
        _save(name, record)
    return rows


def repair_rows() -> list[Row]:
    """bench/mrc_repair.py: the repair loop's time on the medium fabric (the rate column is
    the controller's milliseconds from the first EV event to the last NIC rewritten)."""
    r = mrc_repair.run_with_verdict()
    _save("mrc_repair_medium", {"benchmark": "mrc_repair.medium", **r.__dict__,
                                "declared": list(r.declared),
                                "idle_declared": list(r.idle_declared)})
    return [("mrc_repair.medium", r.entries, r.controller_ms / 1000, r.controller_ms,
             f"ms controller time, {r.nics} NICs rewritten"
             + ("" if r.intact else ", DATA LOST")
             + f"; cut -> verdict {r.verdict_us} µs virtual (probe-confirmed), "
             f"{r.idle_verdict_us} µs for a cut no traffic crosses (idle sweep)")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per packet benchmark")
    parser.add_argument("--entries", type=int, default=20_000,
                        help="table entries written in the P4Runtime write benchmark")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)

    rows: list[Row] = []
    for bench in (packet_rate.bench_ipv6_lpm, packet_rate.bench_usid_forward):
        r = bench(args.seconds)
        rows.append((f"packet_rate.{r.name}", r.packets, r.seconds, r.packets_per_second,
                     "packets/s"))
        _save(f"packet_rate_{r.name}", {
            "benchmark": f"packet_rate.{r.name}", "packets": r.packets,
            "forwarded": r.forwarded, "seconds": round(r.seconds, 3),
            "packets_per_second": round(r.packets_per_second),
        })
    rows.extend(nic_rate_rows(args.seconds))
    rows.extend(engine_rate_rows(args.seconds))
    rows.extend(completion_rows())
    rows.extend(emulation_rows())
    rows.extend(repair_rows())
    skipped: list[runtime_rate.Skipped] = []
    for r in runtime_rate.run_all(args.seconds, args.entries):
        if isinstance(r, runtime_rate.Skipped):
            skipped.append(r)
            continue
        rows.append((f"runtime.{r.name}", r.count, r.seconds, r.rate, r.unit))
        _save(f"runtime_{r.name}", {
            "benchmark": f"runtime.{r.name}", "count": r.count, "seconds": round(r.seconds, 3),
            "rate": round(r.rate), "unit": r.unit,
        })
    rows.extend(interference_rows())
    for push_rate in controller_push.run_all():
        rows.append((f"controller.{push_rate.name}", push_rate.count, push_rate.seconds,
                     push_rate.rate, push_rate.unit + push_rate.cpu_text))
        cpu = {key: round(value, 1) for key, value in (
            ("client_cpu_us_per_entry", push_rate.client_cpu_us),
            ("server_cpu_us_per_entry", push_rate.server_cpu_us)) if value is not None}
        _save(f"controller_{push_rate.name}", {
            "benchmark": f"controller.{push_rate.name}", "count": push_rate.count,
            "seconds": round(push_rate.seconds, 3), "rate": round(push_rate.rate),
            "unit": push_rate.unit, **cpu, **push_rate.extra,
        })

    plan = controller_plan.bench_plan_check()  # 131,072 NICs: target < 60 s and < 4 GiB
    rows.append((f"controller.{plan.name}", plan.entries, plan.seconds,
                 plan.entries / plan.seconds, f"entries/s, peak {plan.peak_mib:.0f} MiB"
                 + ("" if plan.ok else ", CHECK FAILED")))
    kept = plan.nic_row_templates + plan.nic_profile_paths
    rows.append((f"controller.nic_plan_{plan.nics}_nics", kept, plan.nic_plan_seconds,
                 kept / max(plan.nic_plan_seconds, 1e-9),
                 f"entries kept/s ({plan.nic_entries_each} per NIC once pushed)"))
    _save(f"controller_{plan.name}", {"benchmark": f"controller.{plan.name}", **plan.__dict__})

    print(f"{'benchmark':<36} {'count':>9} {'seconds':>8} {'rate':>10}  unit")
    for name, count, seconds, rate, unit in rows:
        shown = f"{rate:>10.0f}" if rate >= 100 else f"{rate:>10.1f}"   # delays in ms are small
        print(f"{name:<36} {count:>9} {seconds:>8.2f} {shown}  {unit}")
    for skip in skipped:
        print(f"{'runtime.' + skip.name:<36} {'skipped':>9}  {skip.reason}")
    print(f"results in {RESULTS}/")


if __name__ == "__main__":
    main()
