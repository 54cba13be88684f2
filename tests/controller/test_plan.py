"""The planner: uSID layout, per-switch entries, path templates, JSON, `mrc-ctl plan`."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from pathlib import Path

import pytest
from plan_fixtures import clos

from controller.cli import main
from controller.plan.entries import PlannedEntry
from controller.plan.plan import build_plan
from controller.plan.templates import Slot
from controller.plan.usid import (
    LOCAL_MIN,
    NIC_DECAP_USID,
    PlanError,
    decode_usid,
    nic_mac,
    switch_mac,
    switch_usid,
    ua_usid,
)
from controller.topology.errors import TopologyError
from controller.topology.model import Link, PortRole, Switch, Tier, Topology

BLOCK = int(ipaddress.IPv6Address("fcbb:bbbb::"))


def _lpm(*usids: int) -> tuple[int, int]:
    value = BLOCK
    for i, u in enumerate(usids):
        value |= u << (80 - 16 * i)
    return value, 32 + 16 * len(usids)


def _by_table(entries: list[PlannedEntry], table: str) -> list[PlannedEntry]:
    return [e for e in entries if e.table == table]


def test_usid_layout_fits_the_largest_fabric() -> None:
    seen: set[int] = set()
    for plane in range(8):
        for tier, count in ((Tier.T0, 512), (Tier.T1, 256)):
            for i in range(count):
                u = switch_usid(Switch("s", tier, plane, i))
                assert 0 < u < LOCAL_MIN
                assert decode_usid(u) == (plane, tier, i)
                seen.add(u)
    assert len(seen) == 8 * 768
    assert switch_usid(Switch("s", Tier.T0, 0, 3)) == 0x1003
    assert switch_usid(Switch("s", Tier.T1, 2, 5)) == 0x3805
    # Local SIDs live above every global one and never collide with each other.
    assert ua_usid(0) == 0xFE00 and ua_usid(511) == 0xFFFF
    assert decode_usid(ua_usid(7)) is None and decode_usid(NIC_DECAP_USID) is None
    with pytest.raises(PlanError, match="plane 14"):
        switch_usid(Switch("s", Tier.T0, 14, 0))
    with pytest.raises(PlanError, match="port 512"):
        ua_usid(512)


def test_t0_entries() -> None:
    topo = clos(planes=2, radix=4)  # T0: ports 0-1 to NICs, 2-3 to T1 0-1
    plan = build_plan(topo)
    entries = plan.switch("p1-t0-01")
    me = plan.usid("p1-t0-01")
    assert me == 0x2001
    tables = [e.table for e in entries]
    assert tables == sorted(tables, key=["port_role", "egress_port_role", "sid_block", "my_sid",
                                         "route_v6", "hop_limit_policy", "dscp_priority",
                                         "trimmable_dscp", "trim_config", "ecn_config"].index)
    roles = {e.match[0][1]: dict(e.params)["role"] for e in _by_table(entries, "port_role")}
    assert roles == {0: 1, 1: 1, 2: 2, 3: 2}
    assert roles == {e.match[0][1]: dict(e.params)["role"]
                     for e in _by_table(entries, "egress_port_role")}
    assert [e.match[0][1] for e in _by_table(entries, "sid_block")] == [(BLOCK, 32)]

    my_sid = {e.match[0][1]: e for e in _by_table(entries, "my_sid")}
    assert my_sid[_lpm(me)].action == "usid_un"
    nic = topo.nics[3]  # T0 1, port 1
    want = {"port": 1, "smac": switch_mac(me), "dmac": nic_mac(nic, 1)}
    combined = my_sid[_lpm(me, 0xFE01)]
    assert combined.action == "usid_ua_combined" and dict(combined.params) == want
    assert my_sid[_lpm(0xFE01)].action == "usid_ua" and dict(my_sid[_lpm(0xFE01)].params) == want
    assert len(my_sid) == 5

    routes = {e.match[0][1]: e for e in _by_table(entries, "route_v6")}
    assert routes[(BLOCK, 32)].action == "drop"
    for j, port in ((0, 2), (1, 3)):
        t1 = plan.usid(f"p1-t1-{j:02d}")
        assert dict(routes[_lpm(t1)].params) == {"port": port, "smac": switch_mac(me),
                                                 "dmac": switch_mac(t1)}
    assert len(routes) == 3

    hop = _by_table(entries, "hop_limit_policy")
    assert len(hop) == 1 and hop[0].is_default and hop[0].action == "punt_hop_limit"
    prio = {e.match[0][1]: dict(e.params)["prio"] for e in _by_table(entries, "dscp_priority")}
    q = topo.qos
    assert prio[q.dscp_control] == prio[q.dscp_trimmed] == prio[q.dscp_trimmed_lasthop] == 7
    assert prio[q.dscp_trimmable] == prio[q.dscp_trimmable_retx] == 0
    assert {e.match[0][1] for e in _by_table(entries, "trimmable_dscp")} == {
        q.dscp_trimmable, q.dscp_trimmable_retx}
    trim = {e.match[0][1]: dict(e.params) for e in _by_table(entries, "trim_config")}
    assert trim[0]["trimmed_dscp"] == q.dscp_trimmed_lasthop
    assert trim[2]["trimmed_dscp"] == q.dscp_trimmed
    assert trim[3] == {"threshold": q.trim_threshold, "trim_bytes": q.trim_bytes,
                       "trimmed_dscp": q.dscp_trimmed}
    assert {e.match[0][1] for e in _by_table(entries, "ecn_config")} == {2, 3}


def test_t1_routes_every_t0_of_its_plane() -> None:
    plan = build_plan(clos(planes=2, radix=4))
    entries = plan.switch("p0-t1-01")
    routes = {e.match[0][1]: dict(e.params) for e in _by_table(entries, "route_v6")
              if e.action == "forward"}
    assert routes == {_lpm(0x1000 + i): {"port": i, "smac": switch_mac(0x1801),
                                         "dmac": switch_mac(0x1000 + i)} for i in range(4)}
    assert [e.action for e in _by_table(entries, "my_sid")] == ["usid_un"]
    trimmed = {dict(e.params)["trimmed_dscp"] for e in _by_table(entries, "trim_config")}
    assert trimmed == {plan.topology.qos.dscp_trimmed}
    assert len(_by_table(entries, "ecn_config")) == 4


def test_plan_is_deterministic_and_wiring_form_independent() -> None:
    a = build_plan(clos(planes=2, radix=4))
    b = build_plan(clos(planes=2, radix=4, explicit=True))
    for name in a.switch_names:
        assert a.switch(name) == b.switch(name) == a.switch(name)
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())


def test_port_role_overrides() -> None:
    topo = clos(planes=1, radix=4)
    topo.port_roles[("p0-t0-00", 1)] = PortRole.EXTERNAL
    topo.port_roles[("p0-t0-00", 9)] = PortRole.EXTERNAL  # an uncabled port toward outside
    entries = build_plan(topo).switch("p0-t0-00")
    roles = {e.match[0][1]: dict(e.params)["role"] for e in _by_table(entries, "port_role")}
    assert roles == {0: 1, 1: 3, 2: 2, 3: 2, 9: 3}
    assert {e.match[0][1] for e in _by_table(entries, "trim_config")} == {0, 2, 3}
    assert all(dict(e.params)["port"] != 1 for e in _by_table(entries, "my_sid")
               if e.action != "usid_un")


def test_templates_and_carriers() -> None:
    topo = clos(planes=2, radix=4)
    plan = build_plan(topo)
    assert plan.templates.count() == 2 * 4 * 4
    tpl = plan.template(1, "p1-t0-00", "p1-t0-02")
    assert tpl.segments == (0x2000, Slot.T1, 0x2002, Slot.DST_PORT, NIC_DECAP_USID)
    assert tpl.t1_choices == (("p1-t1-00", 0x2800), ("p1-t1-01", 0x2801))
    assert tpl.hops == 3
    # n0 sits on T0 0 port 0, n5 on T0 2 port 1.
    addr = plan.carrier("n0", "n5", 1, "p1-t1-01")
    assert str(ipaddress.IPv6Address(addr)) == "fcbb:bbbb:2000:2801:2002:fe01:fd00:0"
    same = plan.carrier("n0", "n1", 0, None)
    assert str(ipaddress.IPv6Address(same)) == "fcbb:bbbb:1000:fe01:fd00::"
    assert plan.template(0, "p0-t0-01", "p0-t0-01").hops == 1
    with pytest.raises(PlanError, match="not a T1"):
        plan.carrier("n0", "n5", 1, "p0-t1-01")
    paths = plan.templates.paths(topo.nics[0], topo.nics[7], 0)
    assert [t1 for t1, _ in paths] == ["p0-t1-00", "p0-t1-01"]
    # Templates are shared per T0 pair, not per NIC pair: the T1 tuple is one object per plane.
    assert plan.template(0, "p0-t0-00", "p0-t0-01").t1_choices is \
        plan.template(0, "p0-t0-03", "p0-t0-02").t1_choices
    js = tpl.to_json()
    assert js["segments"] == ["0x2000", "T1", "0x2002", "uA(dst port)", "0xfd00"]


def test_partial_t1_cabling_limits_choices() -> None:
    topo = clos(planes=1, radix=4, explicit=True)
    topo.links = [link for link in topo.links
                  if not (link.a == "p0-t0-03" and link.b == "p0-t1-00")]
    plan = build_plan(topo)
    assert [n for n, _ in plan.template(0, "p0-t0-00", "p0-t0-03").t1_choices] == ["p0-t1-01"]
    assert [n for n, _ in plan.template(0, "p0-t0-00", "p0-t0-01").t1_choices] == [
        "p0-t1-00", "p0-t1-01"]


def test_bad_topologies_raise_plan_errors() -> None:
    topo = clos(planes=1, radix=4)
    with pytest.raises(PlanError, match="/32"):
        build_plan(dataclasses.replace(topo, sid_block="fcbb::/16"))
    with pytest.raises(PlanError, match="no switch"):
        build_plan(topo).switch("nope")
    dup = clos(planes=1, radix=4, explicit=True)
    dup.links.append(dataclasses.replace(dup.links[0], b="p0-t1-01"))
    with pytest.raises(PlanError, match="cabled twice"):
        build_plan(dup)


def test_generated_topology_plans(tmp_path, capsys) -> None:
    from controller.topology import yaml_io
    from controller.topology.generate import generate

    topo = generate(2, 4, 4)
    path = tmp_path / "t.yaml"
    path.write_text(yaml_io.dumps(topo))
    assert main(["plan", str(path), "--switch", "p0-t1-9"]) == 2
    assert "no switch" in capsys.readouterr().err
    name = topo.switches_of(0, Tier.T0)[0].name
    assert main(["plan", str(path), "--json", "--switch", name]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["usids"] == {name: "0x1000"}
    entries = out["switches"][name]
    assert {"table": "my_sid", "match": {"dst_addr": "fcbb:bbbb:1000::/48"},
            "action": "usid_un", "params": {}} in entries
    assert all(t["src_t0"] == name for t in out["templates"])
    assert main(["plan", str(path)]) == 0
    text = capsys.readouterr().out
    assert "usid_ua_combined" in text and "templates: 8" in text


def _broken(kind: str) -> Topology:
    topo = clos(planes=1, radix=4, explicit=True)
    if kind == "switch twice":
        topo.switches.append(dataclasses.replace(topo.switches[0], index=9))
    elif kind == "name twice":
        topo.nics.append(dataclasses.replace(topo.nics[0], name=topo.switches[0].name))
    elif kind == "unknown switch":
        topo.links.append(dataclasses.replace(topo.links[0], a="nope"))
    elif kind == "two NICs":
        topo.links.append(Link(topo.nics[0].name, 0, topo.nics[1].name, 0))
    elif kind == "cabled twice":
        topo.links.append(dataclasses.replace(topo.links[0], b="p0-t1-01"))
    else:
        topo.wiring = "mesh"
    return topo


@pytest.mark.parametrize(("kind", "message"), [
    ("switch twice", "switch 'p0-t0-00' is defined twice"),
    ("name twice", "name 'p0-t0-00' is used twice"),
    ("unknown switch", "a link names unknown switch 'nope'"),
    ("two NICs", "link n0 - n1 joins two NICs"),
    ("cabled twice", "p0-t0-00 port 2 is cabled twice (p0-t1-00 and p0-t1-01)"),
    ("wiring", "unknown wiring 'mesh'"),
])
def test_hand_built_topologies_are_validated(kind: str, message: str) -> None:
    # The loader reports these with a location; a Topology built in code gets them from the
    # model's index, and the planner as PlanErrors.
    with pytest.raises(TopologyError, match=re.escape(message)):
        _broken(kind).has_node("p0-t0-00")
    with pytest.raises(PlanError, match=re.escape(f"<memory>: {message}")):
        build_plan(_broken(kind))


def test_plan_and_check_of_one_nic(capsys) -> None:
    tiny = str(Path(__file__).resolve().parents[2] / "topologies" / "tiny.yaml")
    assert main(["plan", tiny, "--nic", "nic0", "--peer", "nic3", "--ev-count", "8",
                 "--backups", "0", "--ev-min-active", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tables = [e["table"] for e in out["entries"]]
    assert out["peers"] == ["nic3"]
    assert out["clone_sessions"] == {"bmv2": {"99": 1}, "tofino": {"100": 2, "101": 3}}
    assert tables.count("ev_path") == 8 and tables.count("path_template") == 4  # 2 planes x 2 rows
    assert tables.count("tx_connection") == tables.count("local_qp") == 1
    assert main(["check", tiny, "--nic", "nic0"]) == 0      # a peer under every T0 row
    text = capsys.readouterr().out
    assert "NIC nic0: 544 EV paths (forward and return) checked: OK" in text
    assert main(["check", tiny, "--nic", "nic0", "--ev-count", "12"]) == 2
    assert "power of two" in capsys.readouterr().err
    assert main(["plan", tiny, "--nic", "nic9"]) == 2
    assert "no NIC 'nic9'" in capsys.readouterr().err
