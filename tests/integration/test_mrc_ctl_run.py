"""`mrc-ctl run` as an operator runs it: a separate process against a `softswitch run` switch
and a `softswitch run` NIC (from a NIC inventory file). It programs both; the switch is killed and a blank one started on the same address, and
the controller re-programs it with no operator action; `mrc-ctl status` shows what it did; a
SIGTERM stops it cleanly."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from controller.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_switch(port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "softswitch.cli", "run", "--no-p4", "--device-id", "0", "--",
             "--grpc-server-addr", f"127.0.0.1:{port}", "--cpu-port", "255"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)


def wait_for(done: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"not {what} within {seconds:g} s"
        time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def test_mrc_ctl_run_programs_a_switch_and_again_after_it_is_replaced(
        tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    port, t1_port = free_port(), free_port()
    topology = tmp_path / "two.yaml"
    topology.write_text(
        "name: two\nplanes: 1\nradix: 4\nswitches:\n"
        "  - {name: t0, tier: T0, plane: 0, index: 0,\n"
        f"     endpoint: {{grpc: \"127.0.0.1:{port}\", device_id: 0}}}}\n"
        "  - {name: t1, tier: T1, plane: 0, index: 0,\n"
        f"     endpoint: {{grpc: \"127.0.0.1:{t1_port}\", device_id: 0}}}}\n"
        "nics:\n  - {name: nic0, ports: [t0:0]}\nlinks:\n  - [t0:2, t1:0]\n")
    t1 = start_switch(t1_port, tmp_path / "t1.log")
    switch = start_switch(port, tmp_path / "switch.log")
    nic_port = free_port()
    nic = start_switch(nic_port, tmp_path / "nic.log")   # blank: the controller pushes the NIC
    inventory = tmp_path / "nics.yaml"
    inventory.write_text(f"nics:\n  nic0: {{grpc: '127.0.0.1:{nic_port}', device_id: 0}}\n")
    ctl_log = tmp_path / "mrc-ctl.log"
    with ctl_log.open("wb") as sink:
        ctl = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", str(topology), "--program",
             str(PROGRAM), "--nics", str(inventory), "--ev-count", "16", "--backups", "1",
             "--ev-min-active", "4", "--state", str(tmp_path / "state"),
             "--connect-timeout", "1"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "device_ready device=nic0" in ctl_log.read_text(), "nic0 programmed")
        assert "failed=0" in ctl_log.read_text().split("device_ready device=nic0")[1]
        def readies() -> int:
            return ctl_log.read_text(errors="replace").count("device_ready device=t0")

        wait_for(lambda: readies() == 1, "t0 programmed")
        assert "pipeline_pushed=True" in ctl_log.read_text()
        assert stop(switch, signal.SIGKILL) != 0        # the switch dies: tables gone
        switch = start_switch(port, tmp_path / "switch.log")
        wait_for(lambda: readies() == 2, "t0 programmed again")
        text = ctl_log.read_text()
        assert "device_lost device=t0" in text or "device_down device=t0" in text
        last = text[text.rindex("device_ready device=t0"):].splitlines()[0]
        assert "pipeline_pushed=True" in last and "failed=0" in last
        wait_for(lambda: (tmp_path / "state" / "status.json").exists(), "status written")

        def idle_sent() -> int:
            status = json.loads((tmp_path / "state" / "status.json").read_text() or "{}")
            return int(status.get("idle_probes", {}).get("sent", 0))

        # The one cable carries nothing, so the idle sweep probes it. (These processes are not
        # wired to each other: the probe never comes back, and the cable stays a suspect, with
        # no other cable whose answer would let the controller blame it.)
        wait_for(lambda: idle_sent() >= 1, "the idle cable probed")
        assert main(["status", str(topology), "--state", str(tmp_path / "state")]) == 0
        shown = capsys.readouterr().out
        assert "devices programmed: 3 of 3" in shown and "event=device_ready" in shown
        assert "idle probes: every idle cable each 0.1 s" in shown
        assert stop(ctl) == 0
    finally:
        for proc in (ctl, switch, t1, nic):
            if proc.poll() is None:
                stop(proc)
