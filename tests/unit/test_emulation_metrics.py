"""The summary rules (emulation/metrics.py) on hand-built runs: an undelivered message is an
infinite completion time that every percentile and the CDF count; the report, report.json
and `--check` (emulation/command.py) say so; and the drop causes (emulation/drops.py) are
the P4 programs' own."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from emulation import drops
from emulation.command import check
from emulation.metrics import (
    NOT_DONE,
    ConnectionFate,
    MessageRecord,
    RunResult,
    Series,
    json_safe,
    percentile,
)
from emulation.report import INFINITE, cell, markdown, report_json, summary_table
from emulation.scenario import load

ROOT = Path(__file__).resolve().parents[2]
TINY_RING = ROOT / "tests" / "scenarios" / "tiny-ring.yaml"


def record(mid: int, mct: float | None, *, intact: bool = True, src: str = "nic0",
           dst: str = "nic1", flow: str = "main") -> MessageRecord:
    """A message posted at 10 µs that took `mct` µs (None: never arrived)."""
    arrived = None if mct is None else 10.0 + mct
    return MessageRecord(mid, src, dst, 1000, flow, 10.0, arrived, arrived is not None and intact)


def run(mode: str, mcts: list[float | None], **fields: object) -> RunResult:
    messages = [record(k, t) for k, t in enumerate(mcts)]
    return RunResult(mode, 5000.0, all(t is not None for t in mcts), messages, Series(50),
                     {"wire_hops": 1, "host_handoffs": 0}, [], **fields)  # type: ignore[arg-type]


def strict_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in report JSON")
    return json.loads(text, parse_constant=refuse)


def test_a_mode_that_lost_a_quarter_is_not_done_and_never_better() -> None:
    lossy = run("mrc", [20.0, 30.0, 40.0, None])        # 25 % never arrived
    whole = run("ecmp", [500.0, 600.0, 700.0, 800.0])   # slower, but everything arrived
    s = lossy.summary()
    assert s["undelivered"] == 1 and s["completed"] == 3 and s["bytes_lost"] == 1000
    assert s["mct_p99_us"] == math.inf and s["mct_max_us"] == math.inf
    assert s["mct_p50_us"] == 30.0                      # half of them arrived: finite
    assert cell(s["mct_p99_us"]) == INFINITE
    table = summary_table([lossy, whole])
    mrc_row = next(line for line in table.splitlines() if line.startswith("| mrc |"))
    assert f"| 30.0 | {INFINITE} |" in mrc_row and "| 3/4 |" in mrc_row
    passed, problems = check([lossy, whole])
    assert any("not below ecmp's 800.0 µs" in p for p in problems), problems
    assert any("mrc did not deliver 1 of 4 messages" in p for p in problems), problems
    assert not any("below ecmp" in p for p in passed)


def test_check_counts_ecmp_not_done_as_slower_than_anything_done() -> None:
    passed, problems = check([run("ecmp", [5.0, None, 7.0]), run("mrc", [900.0, 950.0, 990.0])])
    assert problems == []
    assert passed == ["mrc delivered every message intact (3 of 3)",
                      f"mrc's p99 completion time 990.0 µs is below ecmp's {INFINITE}"]
    # both not done: mrc is not below
    _, problems = check([run("ecmp", [None]), run("mrc", [None])])
    assert any("not below" in p for p in problems)
    # both done: the faster p99 wins, strictly
    _, problems = check([run("ecmp", [100.0]), run("mrc", [100.0])])
    assert problems == ["mrc's p99 completion time 100.0 µs is not below ecmp's 100.0 µs"]


def test_check_names_each_undelivered_message_with_its_connection_and_fate() -> None:
    fates = [ConnectionFate("nic0", "nic1", 0x100, "gave_up", 1717.0, 16, (0, 4),
                            "PSN 0x00000c unacknowledged after 16 retransmissions", (1, 2)),
             ConnectionFate("nic1", "nic2", 0x101, "open", 5000.0, 0, (),
                            "1 of 1 messages not delivered", (3,))]
    lossy = RunResult("mrc_no_controller", 5000.0, False,
                      [record(0, 5.0), record(1, None), record(2, 9.0, intact=False),
                       record(3, None, src="nic1", dst="nic2")],
                      Series(50), {}, [], connections=fates)
    passed, problems = check([lossy])
    assert passed == [] and len(problems) == 1
    lines = problems[0].splitlines()
    assert lines[0] == "mrc_no_controller did not deliver 3 of 4 messages:"
    assert lines[1] == ("  nic0 -> nic1 (QP 0x100): messages 1, 2: its transport gave up at "
                        "1,717.0 µs (PSN 0x00000c unacknowledged after 16 retransmissions); "
                        "EVs out of service: 0, 4")
    assert lines[2].startswith("  nic1 -> nic2 (QP 0x101): message 3: still open when the run "
                               "ended at 5,000.0 µs")
    assert lossy.summary()["connections_lost"] == 2
    md = markdown(load(TINY_RING), [lossy])
    assert ("| mrc_no_controller | nic0 -> nic1 (QP 0x100) | gave up | 1,717.0 | 16 | 0, 4 "
            "| 1, 2 | PSN 0x00000c unacknowledged after 16 retransmissions |") in md


def test_an_undelivered_message_is_never_left_out_of_p99() -> None:
    # 1 of 100 missing is 1 %: p99 is still a time; 2 of 100 is more than 1 %: not done
    one = run("mrc", [10.0] * 99 + [None])
    two = run("mrc", [10.0] * 98 + [None, None])
    assert one.summary()["mct_p99_us"] == 10.0
    assert two.summary()["mct_p99_us"] == math.inf
    # a message that arrived corrupt did not complete either
    corrupt = RunResult("mrc", 100.0, True, [record(0, 10.0), record(1, 12.0, intact=False)],
                        Series(50), {}, [])
    assert corrupt.completion_times() == [10.0, math.inf]
    assert corrupt.summary()["mct_p50_us"] == 10.0
    assert corrupt.summary()["mct_p99_us"] == math.inf
    # more than half missing: p50 too
    assert run("mrc", [10.0, None, None]).summary()["mct_p50_us"] == math.inf
    assert percentile([1.0, 2.0, math.inf], 50) == 2.0


def test_the_victim_follows_the_same_rule() -> None:
    messages = [record(0, 10.0), record(1, None, flow="victim"), record(2, 4.0, flow="victim")]
    s = RunResult("mrc", 100.0, False, messages, Series(50), {}, []).summary()
    assert s["victim_undelivered"] == 1
    assert s["victim_mct_p50_us"] == 4.0 and s["victim_mct_max_us"] == math.inf
    assert s["undelivered"] == 1 and list(s["flows"]) == ["main", "victim"]  # type: ignore[call-overload]
    assert s["flows"]["victim"] == {"messages": 2, "undelivered": 1, "mct_p50_us": 4.0,  # type: ignore[index]
                                    "mct_p99_us": math.inf, "mct_max_us": math.inf}


def test_the_cdf_of_a_run_that_lost_messages_never_reaches_one() -> None:
    times, total = run("ecmp", [3.0, None, 1.0, None]).cdf()
    assert times == [1.0, 3.0] and total == 4
    assert max((k + 1) / total for k in range(len(times))) == 0.5
    times, total = run("mrc", [2.0, 1.0]).cdf()
    assert (times, total) == ([1.0, 2.0], 2)


def test_report_json_writes_not_done_never_infinity() -> None:
    lossy = run("ecmp", [5.0, None], connections=[
        ConnectionFate("nic0", "nic1", 0x100, "gave_up", 12.5, 16, (3,), "why", (1,))],
        drops={"cut cable": 7, "nic: port down": 0})
    data = strict_json(report_json(load(TINY_RING), [lossy]))
    mode = data["modes"]["ecmp"]  # type: ignore[index]
    summary = mode["summary"]
    assert summary["mct_p99_us"] == NOT_DONE and summary["mct_max_us"] == NOT_DONE
    assert summary["undelivered"] == 1 and summary["mct_p50_us"] == 5.0
    assert summary["drops"] == {"cut cable": 7, "nic: port down": 0}
    assert [m["completion_us"] for m in mode["messages"]] == [5.0, NOT_DONE]
    assert mode["connections"] == [{"src": "nic0", "dst": "nic1", "qp": 256, "fate": "gave_up",
                                    "at_us": 12.5, "retries": 16, "evs": [3], "reason": "why",
                                    "undelivered": [1]}]
    with pytest.raises(ValueError):
        json_safe({"x": [math.nan]})


def test_the_drop_causes_are_the_programs_own() -> None:
    """The labels' indexes are the P4 constants they name (a renumbered reason would count
    under the wrong label)."""
    defines = (ROOT / "p4src" / "include" / "defines.p4").read_text()
    reasons = {int(v): n for n, v in re.findall(r"const bit<4> DROP_(\w+) = (\d+);", defines)}
    assert int(re.search(r"DROP_REASONS = (\d+);", defines)[1]) == drops.DROP_REASONS  # type: ignore[index]
    named = {"TRUNCATED": "truncated", "SRH_TYPE": "SRH type", "SRH_LENGTH": "SRH length",
             "SRH_SEGMENTS_LEFT": "SRH segments left", "SRH_TOO_LONG": "SRH too long",
             "HOP_LIMIT": "hop limit", "NO_ROUTE": "no route", "EXTERNAL_SR": "external SR",
             "SID_NO_NEXT": "SID with nothing next", "DECAP": "decap", "NOT_IPV6": "not IPv6",
             "IP_VERSION": "IP version", "PACKET_OUT_PORT": "PacketOut port"}
    assert {v: named[n] for v, n in reasons.items() if n != "NONE"} == drops.SWITCH_REASONS
    assert next(v for v, n in reasons.items() if n == "HOP_LIMIT") == drops.HOP_LIMIT
    types = (ROOT / "p4src" / "nic" / "nic_types.p4").read_text()
    events = {n: int(v) for n, v in re.findall(r"const bit<32> NIC_(\w+) = (\d+);", types)}
    dropping = {"TX_DENIED_DROP": "DENIED path", "TX_NO_CONNECTION": "no connection",
                "RX_OUT_OF_WINDOW": "out of window", "RX_UNKNOWN_QP": "unknown QP",
                "RX_MALFORMED": "malformed", "RX_INJECTED_DROP": "loss injector",
                "PORT_DOWN_DROP": "port down", "TX_NO_PATH_DROP": "no path",
                "TX_PROBE_DENIED_DROP": "probe of a DENIED EV"}
    assert {events[n]: label for n, label in dropping.items()} == drops.NIC_DROPS
    assert events["RX_DUPLICATE"] == drops.NIC_RX_DUPLICATE
    # every cause once, the fabric's first
    causes = drops.labels(["switch_power", "blackhole"])
    assert len(causes) == len(set(causes)) and causes[0] == "queue overflow"
    assert "blackhole" in causes and "switch powered off" in causes


def test_drops_add_up_by_cause_and_device() -> None:
    counted = drops.Drops(drops.labels())
    counted.add("cut cable", 3)
    counted.add("nic: port down", 2, "nic1")
    counted.add("nic: port down", 1, "nic1")
    counted.add("queue overflow", 0, "p0-t0-0")   # nothing: no site
    assert counted.dropped == 6 and counted.total["nic: port down"] == 3
    assert counted.at == {"nic: port down": {"nic1": 3}}
