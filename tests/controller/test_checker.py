"""The plan checker: correct plans pass in both modes, broken plans are caught and named."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from plan_fixtures import clos

from controller.cli import main
from controller.plan.checker import check
from controller.plan.entries import PlannedEntry
from controller.plan.plan import FabricPlan
from controller.topology.model import Link, PortRole, Topology

MODES = ("paths", "per-hop")
Edit = Callable[[str, list[PlannedEntry]], list[PlannedEntry]]


class EditedPlan(FabricPlan):
    """A plan with one switch's entries changed, as a bug in the planner would."""

    def __init__(self, topology: Topology, edit: Edit, usids: dict[str, int] | None = None):
        super().__init__(topology, usids)
        self.edit = edit

    def switch(self, name: str) -> list[PlannedEntry]:
        return self.edit(name, super().switch(name))


def _route_key(plan: FabricPlan, usid: int) -> tuple[int, int]:
    return plan.block | usid << 80, 48


def _edit_route(plan: FabricPlan, switch: str, target: str,
                change: Callable[[PlannedEntry], PlannedEntry | None]) -> Edit:
    """Edit `switch`'s route to `target`'s uSID (None removes it)."""
    key = _route_key(plan, plan.usid(target))

    def edit(name: str, entries: list[PlannedEntry]) -> list[PlannedEntry]:
        if name != switch:
            return entries
        out = []
        for e in entries:
            if e.table == "route_v6" and e.match[0][1] == key:
                e = change(e)
            if e is not None:
                out.append(e)
        return out
    return edit


def _with_port(e: PlannedEntry, port: int) -> PlannedEntry:
    params = dict(e.params)
    params["port"] = port
    return dataclasses.replace(e, params=tuple(sorted(params.items())))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("explicit", [False, True])
def test_correct_plans_pass(mode: str, explicit: bool) -> None:
    topo = clos(planes=2, radix=4, explicit=explicit)
    result = check(topo, FabricPlan(topo), mode=mode, workers=1)
    assert result.ok, result.errors
    # 8 NICs, 2 per T0: per plane, pairs under one T0 have 1 path, the others 2 (one per T1).
    assert result.paths == 2 * (4 * 2 + (8 * 7 - 4 * 2) * 2)
    assert result.templates == 32 and result.entries == 372


def test_both_modes_agree_on_a_partial_fabric() -> None:
    topo = clos(planes=3, radix=8, nics=21)
    a = check(topo, FabricPlan(topo), mode="paths")
    b = check(topo, FabricPlan(topo), mode="per-hop", workers=2)
    assert a.ok and b.ok and a.paths == b.paths > 0 and b.facts > 0


@pytest.mark.parametrize("mode", MODES)
def test_missing_route(mode: str) -> None:
    topo = clos(planes=2, radix=4)
    base = FabricPlan(topo)
    plan = EditedPlan(topo, _edit_route(base, "p1-t0-00", "p1-t1-01", lambda e: None))
    result = check(topo, plan, mode=mode, workers=1)
    assert not result.ok
    first = result.errors[0]
    assert first.startswith("NIC n0 → n")
    assert "plane 1 via T1 p1-t1-01: p1-t0-00 has no route for uSID 0x2801" in first


@pytest.mark.parametrize("mode", MODES)
def test_route_to_the_wrong_port(mode: str) -> None:
    topo = clos(planes=2, radix=4)
    base = FabricPlan(topo)
    # T1 0 of plane 0 sends T0 2's traffic to T0 3 (port 3).
    plan = EditedPlan(topo, _edit_route(base, "p0-t1-00", "p0-t0-02", lambda e: _with_port(e, 3)))
    result = check(topo, plan, mode=mode, workers=1)
    assert not result.ok
    assert "plane 0 via T1 p0-t1-00" in result.errors[0]
    assert ("p0-t1-00 sends it out of port 3" in result.errors[0]
            or "p0-t0-03 has no route" in result.errors[0])


@pytest.mark.parametrize("mode", MODES)
def test_usid_collision(mode: str) -> None:
    topo = clos(planes=2, radix=4)
    usids = FabricPlan(topo).usids
    usids["p1-t1-01"] = usids["p1-t1-00"]
    result = check(topo, FabricPlan(topo, usids), mode=mode, workers=1)
    assert not result.ok
    assert result.errors[0] == "uSID 0x2800 is allocated to both p1-t1-00 and p1-t1-01"


def test_usid_outside_its_plane() -> None:
    topo = clos(planes=2, radix=4)
    usids = FabricPlan(topo).usids
    usids["p1-t0-00"] = 0x1007  # a plane-0 T0 number
    result = check(topo, FabricPlan(topo, usids))
    assert "does not encode plane 1" in result.errors[0]


@pytest.mark.parametrize("mode", MODES)
def test_loop(mode: str) -> None:
    topo = clos(planes=1, radix=4)
    base = FabricPlan(topo)
    t0, t1, dst = "p0-t0-00", "p0-t1-00", "p0-t0-01"
    # The T1 sends T0 1's traffic back down to T0 0, which sends it up again.
    back = _edit_route(base, t1, dst, lambda e: _with_port(e, 0))
    up = PlannedEntry("route_v6", (("dst_addr", _route_key(base, base.usid(dst))),), "forward",
                      (("dmac", 0x025300001800), ("port", 2), ("smac", 0x025300001000)))

    def edit(name: str, entries: list[PlannedEntry]) -> list[PlannedEntry]:
        entries = back(name, entries)
        return [*entries, up] if name == t0 else entries

    result = check(topo, EditedPlan(topo, edit), mode=mode, workers=1)
    assert not result.ok
    if mode == "paths":
        assert any("loops (p0-t0-00 → p0-t1-00 → p0-t0-00" in e for e in result.errors)
    else:  # per hop: the first hop that breaks the chain is named
        assert any("p0-t1-00 sends it out of port 0 (to p0-t0-00), not to p0-t0-01" in e
                   for e in result.errors)


@pytest.mark.parametrize("mode", MODES)
def test_path_crossing_planes(mode: str) -> None:
    topo = clos(planes=2, radix=4, explicit=True)
    topo.links.append(Link("p0-t0-00", 7, "p1-t1-00", 7))  # a miscabled extra link
    base = FabricPlan(topo)
    plan = EditedPlan(topo, _edit_route(base, "p0-t0-00", "p0-t1-00", lambda e: _with_port(e, 7)))
    result = check(topo, plan, mode=mode, workers=1)
    assert not result.ok
    if mode == "paths":
        assert "leaves plane 0 at p0-t0-00 → p1-t1-00 (plane 1)" in result.errors[0]
    else:
        assert "p0-t0-00 sends it out of port 7 (to p1-t1-00), not to p0-t1-00" in \
            result.errors[0]


@pytest.mark.parametrize("mode", MODES)
def test_missing_last_hop_and_wrong_mac(mode: str) -> None:
    topo = clos(planes=1, radix=4)
    base = FabricPlan(topo)

    def drop_ua(name: str, entries: list[PlannedEntry]) -> list[PlannedEntry]:
        return [e for e in entries if not (name == "p0-t0-01" and e.action == "usid_ua_combined"
                                           and dict(e.params)["port"] == 1)]
    result = check(topo, EditedPlan(topo, drop_ua), mode=mode, workers=1)
    assert not result.ok and "→ n3, plane 0" in result.errors[0]
    assert "p0-t0-01 has no route for uSID 0xfe01" in result.errors[0]

    mac = _edit_route(base, "p0-t1-01", "p0-t0-03",
                      lambda e: dataclasses.replace(e, params=(("dmac", 1), *e.params[1:])))
    result = check(topo, EditedPlan(topo, mac), mode=mode, workers=1)
    assert not result.ok and "destination MAC 0x000000000001 is not p0-t0-03's" in result.errors[0]


def test_port_roles_and_duplicates_are_checked() -> None:
    topo = clos(planes=1, radix=4)
    topo.port_roles[("p0-t1-00", 2)] = PortRole.EXTERNAL
    result = check(topo, FabricPlan(topo), mode="paths")
    assert not result.ok and any("p0-t1-00 drops it: port 2 is EXTERNAL" in e
                                 for e in result.errors)
    assert "p0-t1-00 port 2 (p0-t0-02) is not a FABRIC port" in check(
        topo, FabricPlan(topo), mode="per-hop", workers=1).errors[0]

    topo = clos(planes=1, radix=4)
    base = FabricPlan(topo)
    dup = _edit_route(base, "p0-t0-00", "p0-t1-00", lambda e: _with_port(e, 3))

    def twice(name: str, entries: list[PlannedEntry]) -> list[PlannedEntry]:
        return entries + dup(name, [e for e in entries if e.table == "route_v6"])[:1] \
            if name == "p0-t0-00" else entries
    result = check(topo, EditedPlan(topo, twice), mode="paths")
    assert any("p0-t0-00 has two entries for route_v6" in e for e in result.errors)


def test_cli_check(tmp_path, capsys) -> None:
    from controller.topology import yaml_io
    from controller.topology.generate import generate

    path = tmp_path / "t.yaml"
    path.write_text(yaml_io.dumps(generate(2, 8, 12)))
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.startswith("OK (paths): 14 switches")
    assert main(["check", str(path), "--mode", "per-hop", "--workers", "1"]) == 0
    assert "per-hop facts" in capsys.readouterr().out
