"""Every PTF suite under ptf_tests/, run by the PTF runner against a fresh `softswitch run`, on
each architecture it has a program for (the TNA variants as `make ptf ARCH=tna` runs them).

Each suite runs in a subprocess exactly as `make ptf` runs it (nanomsg ports, no root); the
suite's ptf output is shown on failure, with the folder holding the switch log and the pcap.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ptf_tests/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))
from ptf_tests.suites import ARCHS, SUITES, suites_for  # noqa: E402 - needs the sys.path entry above

SUITE_TIMEOUT = 180  # seconds; a suite normally takes well under a minute


def _missing_runtime() -> str | None:
    """Why `softswitch run` cannot start yet, or None when it can."""
    for module in ("softswitch.runtime.run", "softswitch.runtime.server.server", "p4rt.client"):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return f"{module} is not importable yet, so `softswitch run` cannot serve PTF tests"
    return None


@pytest.mark.parametrize(("suite", "arch"), [(suite, arch) for arch in ARCHS
                                             for suite in suites_for(arch)])
def test_ptf_suite(suite: str, arch: str, tmp_path: Path) -> None:
    reason = _missing_runtime()
    if reason is not None:
        pytest.skip(reason)
    cmd = [sys.executable, "-m", "ptf_tests.runner", "--suite", suite, "--arch", arch,
           "--out-dir", str(tmp_path / suite)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=SUITE_TIMEOUT,
                          check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"PTF suite '{suite}' ({arch}) failed:\n{output}"
    # ptf reports "OK" only when every test ran and passed; make sure tests did run.
    assert "\nOK" in output, output
    assert "Ran 0 tests" not in output, output


# -- the runner's command lines (the bmv2 and veth paths cannot run everywhere) ------------------

def _plan(*extra: str) -> object:
    from ptf_tests.runner import make_plan

    plan = make_plan(["--suite", "runtime", *extra])
    plan.grpc_port = 50001
    plan.p4info = plan.out_dir / "p.p4info.txtpb"
    plan.config = plan.out_dir / "p.json"
    return plan


def test_runner_test_params_are_python_assignments() -> None:
    from ptf_tests.runner import test_params

    namespace: dict[str, object] = {}
    exec(test_params(_plan()), namespace)  # what ptf does with --test-params
    assert namespace["grpcaddr"] == "127.0.0.1:50001"
    assert namespace["device_id"] == 0 and namespace["cpu_port"] == 255
    assert str(namespace["p4info"]).endswith("p.p4info.txtpb")
    assert namespace["pipeline_pushed"] is False


def test_runner_switch_command_matches_simple_switch_grpc() -> None:
    from ptf_tests.runner import VethPair, switch_command

    plan = _plan()
    cmd = switch_command(plan, "ipc:///tmp/x/pkt.ipc", {})
    assert cmd[1:4] == ["-m", "softswitch.cli", "run"]
    tail = cmd[cmd.index("--"):]
    assert tail == ["--", "--grpc-server-addr", "127.0.0.1:50001", "--cpu-port", "255"]
    assert cmd[cmd.index("--packet-in") + 1] == "ipc:///tmp/x/pkt.ipc"
    assert "--no-p4" in cmd
    veth = switch_command(plan, None, {1: VethPair("s1", "t1"), 0: VethPair("s0", "t0")})
    assert "--packet-in" not in veth
    assert [veth[i + 1] for i, arg in enumerate(veth) if arg == "-i"] == ["0@s0", "1@s1"]


def test_runner_ptf_command_nanomsg_and_veth() -> None:
    from ptf_tests.runner import VethPair, ptf_command

    plan = _plan("--ports", "3", "--ptf-args", "--failfast")
    cmd = ptf_command(plan, "ipc:///tmp/x/pkt.ipc", {})
    assert cmd[cmd.index("--device-socket") + 1] == "0-{0,1,2}@ipc:///tmp/x/pkt.ipc"
    assert cmd[cmd.index("--platform") + 1] == "nn"
    assert cmd[-1] == "--failfast"
    veth = ptf_command(plan, None, {0: VethPair("s0", "t0")})
    assert veth[veth.index("--platform") + 1] == "eth"
    assert veth[veth.index("--interface") + 1] == "0-0@t0"


def test_runner_refuses_ir_json_for_bmv2(tmp_path: Path) -> None:
    from ptf_tests.runner import RunnerError, compile_program, make_plan

    program = tmp_path / "prog.json"
    program.write_text("{}")
    plan = make_plan(["--program", str(program), "--test-dir", str(tmp_path),
                      "--target", "bmv2", "--out-dir", str(tmp_path / "out")])
    with pytest.raises(RunnerError, match="needs P4 source"):
        compile_program(plan)


def test_runner_arch_tna_picks_the_tna_program_on_softswitch_only(tmp_path: Path) -> None:
    from ptf_tests.runner import RunnerError, compile_program, make_plan

    plan = make_plan(["--suite", "switch", "--arch", "tna", "--out-dir", str(tmp_path)])
    assert plan.program == SUITES["switch"].tna_program and plan.arch == "tna"
    compile_program(plan)   # softswitch compile --arch tna
    assert 'arch: "tna"' in plan.p4info.read_text()
    assert make_plan(["--suite", "switch", "--arch", "tna"]).out_dir.name == "switch-softswitch-tna"
    with pytest.raises(RunnerError, match="needs --target softswitch"):
        make_plan(["--suite", "switch", "--arch", "tna", "--target", "bmv2"])
    with pytest.raises(RunnerError, match="suite 'runtime' has no tna program"):
        make_plan(["--suite", "runtime", "--arch", "tna"])
