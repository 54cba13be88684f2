"""bench/runtime_rate.py's veth packet benchmark: skipped with a reason without root; with root
it forwards every packet and leaves no veth interface behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # bench/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from bench import runtime_rate  # noqa: E402


def _our_veths() -> list[str]:
    tag = f"{os.getpid() % 0xFFFF:04x}"
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    return [line for line in links.stdout.splitlines()
            if f"bs{tag}" in line or f"bh{tag}" in line]


def test_veth_benchmark_is_skipped_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_rate.os, "geteuid", lambda: 1000)
    result = runtime_rate.bench_veth_packets(0.1)
    assert isinstance(result, runtime_rate.Skipped)
    assert result.name == "veth_packets_lossless" and "root" in result.reason


@pytest.mark.skipif(runtime_rate.veth_skip_reason() is not None,
                    reason=str(runtime_rate.veth_skip_reason()))
def test_veth_benchmark_forwards_and_cleans_up() -> None:
    result = runtime_rate.bench_veth_packets(0.3, window=8)
    assert isinstance(result, runtime_rate.RateResult)
    assert result.count >= 8 and result.count % 8 == 0
    assert result.rate > 100
    assert _our_veths() == []


@pytest.mark.skipif(runtime_rate.veth_skip_reason() is not None,
                    reason=str(runtime_rate.veth_skip_reason()))
def test_veth_pairs_are_deleted_on_error() -> None:
    with pytest.raises(RuntimeError), runtime_rate.veth_pairs(2) as pairs:
        assert len(pairs) == 2 and len(_our_veths()) == 4
        raise RuntimeError
    assert _our_veths() == []


def test_veth_benchmark_is_skipped_when_veths_cannot_be_made(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: str) -> None:
        raise runtime_rate.VethError(f"ip {' '.join(args)}: Operation not permitted")

    monkeypatch.setattr(runtime_rate.os, "geteuid", lambda: 0)
    monkeypatch.setattr(runtime_rate.shutil, "which", lambda name: f"/sbin/{name}")
    monkeypatch.setattr(runtime_rate, "_ip", refuse)
    result = runtime_rate.bench_veth_packets(0.1)
    assert isinstance(result, runtime_rate.Skipped)
    assert "Operation not permitted" in result.reason
