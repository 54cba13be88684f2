"""A sweep's worker processes end with it: `mrc-ctl sweep` killed outright (SIGKILL, no chance
to shut its pool down) leaves no worker running the runs it had queued."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "ring-link-cut.yaml"


def workers_of(parent: int) -> set[int]:
    """The pool workers (multiprocessing's spawned children) of process `parent`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue   # gone meanwhile
        if ppid == parent and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_sweep_takes_its_workers_with_it(tmp_path: Path) -> None:
    sweep = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "sweep", str(SCENARIO), "--seeds", "1-8",
         "--jobs", "2", "-o", str(tmp_path / "out")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2:
            assert time.monotonic() < deadline, "the sweep started no workers within 60 s"
            assert sweep.poll() is None, "the sweep ended before its workers started"
            time.sleep(0.2)
            workers = workers_of(sweep.pid)
        time.sleep(2)   # into their first runs
        sweep.kill()
        sweep.wait()
        deadline = time.monotonic() + 20
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, "workers still running 20 s after the sweep"
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):   # whatever is left of the test's own
            os.killpg(sweep.pid, signal.SIGKILL)
