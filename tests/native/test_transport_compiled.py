"""The transport compiled by mypyc (mrc_transport/compiled.py) against the Python transport it is
compiled from: loaded in place of the Python modules when built, kept out when asked, and the
same report.json byte for byte on scenarios that drive every path of the sender and receiver
(trims and NACKs, SACK holes, timeouts, EV reports and probes, port-down notices, NSCC)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mrc_transport import compiled
from softswitch.native.build import compiler_available

ROOT = Path(__file__).resolve().parents[2]
# One scenario per family of transport paths, in the modes that drive them: retransmission
# timeouts and connections given up (ecmp and spray over a cut cable), trims, NACKs and NSCC's
# quick adapt (incast), the port-down notice and EV reports and probes (mrc).
SCENARIOS = (("cable-cut", ("ecmp", "spray")), ("incast-7to1", ("mrc",)),
             ("nic-port-down-up", ("mrc",)), ("ev-loss", ("mrc",)))


@pytest.fixture(scope="module")
def build() -> Path:
    if compiler_available() is None:
        pytest.skip("no C compiler ($CC or cc): the transport runs as Python")
    try:
        import mypyc  # noqa: F401
    except ImportError:
        pytest.skip("mypyc (mypy) is not installed: the transport runs as Python")
    return compiled.build()   # cached: `make install` built it (a type error fails here)


def python(code: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


LOADED = ("from mrc_transport import compiled, sender, nscc, wire; "
          "print(compiled.status()); print(sender.__file__, nscc.__file__, wire.__file__)")


def test_the_built_modules_load_in_place_of_the_python_ones(build: Path) -> None:
    status, files = python(LOADED, MRC_TRANSPORT_NATIVE="").splitlines()
    assert status == f"compiled: {build}"
    sender, nscc, wire = files.split()
    assert sender.startswith(str(build)) and sender.endswith(".so")
    assert nscc.startswith(str(build)) and nscc.endswith(".so")
    assert wire == str(ROOT / "mrc_transport" / "wire.py")   # scapy layers stay Python


def test_python_keeps_them_out(build: Path) -> None:
    status, files = python(LOADED, MRC_TRANSPORT_NATIVE="python").splitlines()
    assert status == "python: $MRC_TRANSPORT_NATIVE=python"
    assert files.split()[0] == str(ROOT / "mrc_transport" / "sender.py")


def test_compiled_without_a_build_for_these_sources_fails_naming_why(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import mrc_transport"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MRC_TRANSPORT_NATIVE": "compiled",
                               "SOFTSWITCH_CACHE": str(tmp_path)})
    assert done.returncode != 0
    assert "MRC_TRANSPORT_NATIVE=compiled" in done.stderr
    assert "not built for these sources" in done.stderr


# Every scenario's report.json, in one process per transport (the NIC program compiled once).
DRIVER = """
import json, sys
from controller.devices.session import Program
from emulation import scenario
from emulation.command import NIC_PROGRAM, SWITCH_PROGRAM
from emulation.report import report_json
from emulation.run import run_mode
from mrc_transport import compiled
program = Program.compile(SWITCH_PROGRAM)
reports = {}
for name, modes in json.loads(sys.argv[1]):
    chosen = scenario.load(f"scenarios/matrix/{name}.yaml")
    reports[name] = report_json(chosen, [run_mode(chosen, m, program, str(NIC_PROGRAM))
                                         for m in modes])
print(json.dumps({"status": compiled.status(), "reports": reports}))
"""


def test_both_transports_write_the_same_reports(build: Path) -> None:
    got = {}
    for transport in ("python", "compiled"):
        done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(SCENARIOS)], cwd=ROOT,
                              capture_output=True, text=True, timeout=900,
                              env={**os.environ, "MRC_TRANSPORT_NATIVE": transport,
                                   "SOFTSWITCH_ENGINE": "c", "SOFTSWITCH_FABRIC": "native",
                                   "PYTHONHASHSEED": "0"})
        assert done.returncode == 0, done.stderr
        got[transport] = json.loads(done.stdout)
    assert got["python"]["status"].startswith("python: ")
    assert got["compiled"]["status"] == f"compiled: {build}"
    python, native = got["python"]["reports"], got["compiled"]["reports"]
    assert list(python) == list(native) == [name for name, _ in SCENARIOS]
    for name, _ in SCENARIOS:
        assert python[name] == native[name], f"{name}: the reports differ"


def test_a_damaged_build_means_the_python_modules_and_says_why(build: Path,
                                                                tmp_path: Path) -> None:
    copy = tmp_path / build.name
    shutil.copytree(build, copy)
    group = next(copy.glob(f"{compiled.GROUP}__mypyc.*.so"))
    group.write_bytes(bytes(group.stat().st_size))   # not a shared library any more
    env = {"SOFTSWITCH_CACHE": str(tmp_path)}
    status, files = python(LOADED, MRC_TRANSPORT_NATIVE="", **env).splitlines()
    assert status.startswith(f"python: the build in {copy} does not load")
    assert "--force" in status
    assert files.split()[0] == str(ROOT / "mrc_transport" / "sender.py")
    done = subprocess.run([sys.executable, "-c", "import mrc_transport"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MRC_TRANSPORT_NATIVE": "compiled", **env})
    assert done.returncode != 0 and "does not load" in done.stderr
