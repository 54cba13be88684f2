"""controller/repair/operator.py: deny-list targets, persistence, and their refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.repair.operator import DenyList, OperatorError, parse_target, state_dir
from controller.topology.yaml_io import load

TINY = Path(__file__).resolve().parents[2] / "topologies" / "tiny.yaml"


@pytest.fixture(scope="module")
def topo():
    return load(TINY)


def test_targets_are_cables_between_a_t0_and_a_t1_or_t1s(topo) -> None:
    assert parse_target(topo, "p0-t1-1:p0-t0-1") == (0, "p0-t0-1", "p0-t1-1")
    assert parse_target(topo, "p1-t1-0") == "p1-t1-0"
    for text, reason in (("p0-t0-0", "not a T1"), ("p0-t0-0:p1-t1-0", "no cable"),
                         ("p0-t0-0:p0-t0-1", "joins a T0 and a T1"),
                         ("nic0:p0-t1-0", "'nic0' is not a switch")):
        with pytest.raises(OperatorError, match=reason):
            parse_target(topo, text)


def test_the_deny_list_survives_a_restart_and_refuses_a_corrupt_file(tmp_path: Path, topo) -> None:
    denied = DenyList.load(tmp_path)
    denied.deny(parse_target(topo, "p0-t0-0:p0-t1-0"))
    denied.deny("p1-t1-1")
    again = DenyList.load(tmp_path)
    assert again.links == {(0, "p0-t0-0", "p0-t1-0")} and again.switches == {"p1-t1-1"}
    assert again.allow("p1-t1-1") and not again.allow("p1-t1-1")
    assert DenyList.load(tmp_path).switches == set()
    (tmp_path / "denied.json").write_text("{not json")
    with pytest.raises(OperatorError, match="not a deny-list"):
        DenyList.load(tmp_path)
    assert state_dir("/x/topo.yaml") == Path("/x/.mrc-ctl")
