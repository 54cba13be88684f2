"""The fabric switch's control-plane API is the same on both architectures.

p4src/switch/srv6_switch.p4 (v1model) and p4src/switch/tna/srv6_switch.p4 (TNA) must give P4Info
with the same tables (keys, actions, sizes, direct counters, defaults), actions (parameters),
counters and controller packet metadata, by name — what the controller and the PTF suite use.
Ids are not compared: bf-p4c hashes them from names with the pipe in front, p4c without.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.compiler import compile_file
from softswitch.p4info import build_p4info

SWITCH = Path(__file__).resolve().parents[2] / "p4src" / "switch"
V1MODEL = SWITCH / "srv6_switch.p4"
TNA = SWITCH / "tna" / "srv6_switch.p4"


@pytest.fixture(scope="module")
def infos() -> tuple[p4info_pb2.P4Info, p4info_pb2.P4Info]:
    return build_p4info(compile_file(V1MODEL)), build_p4info(compile_file(TNA))


def _names(info: p4info_pb2.P4Info) -> dict[int, str]:
    """Every P4 id of the P4Info -> its name (to compare references by name)."""
    out: dict[int, str] = {}
    for group in (
        info.tables,
        info.actions,
        info.counters,
        info.direct_counters,
        info.meters,
        info.direct_meters,
        info.registers,
        info.digests,
        info.action_profiles,
    ):
        for item in group:
            out[item.preamble.id] = item.preamble.name
    return out


def _api(info: p4info_pb2.P4Info) -> dict[str, Any]:
    """The P4Info as the control plane sees it, ids replaced by names."""
    name = _names(info)
    tables = {
        t.preamble.name: {
            "keys": [(m.name, m.bitwidth, m.match_type) for m in t.match_fields],
            "actions": sorted((name[a.id], a.scope) for a in t.action_refs),
            "default": name.get(t.const_default_action_id),
            "direct": sorted(name[i] for i in t.direct_resource_ids),
            "size": t.size,
        }
        for t in info.tables
    }
    return {
        "tables": tables,
        "actions": {
            a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in info.actions
        },
        "counters": {c.preamble.name: (c.spec.unit, c.size) for c in info.counters},
        "direct_counters": {
            c.preamble.name: (c.spec.unit, name[c.direct_table_id]) for c in info.direct_counters
        },
        "controller_headers": {
            h.preamble.name: [(m.name, m.bitwidth) for m in h.metadata]
            for h in info.controller_packet_metadata
        },
        "meters": sorted(m.preamble.name for m in info.meters),
        "registers": sorted(r.preamble.name for r in info.registers),
        "digests": sorted(d.preamble.name for d in info.digests),
    }


@pytest.mark.parametrize(
    "part",
    [
        "tables",
        "actions",
        "counters",
        "direct_counters",
        "controller_headers",
        "meters",
        "registers",
        "digests",
    ],
)
def test_tna_switch_has_the_v1model_control_plane_api(
    infos: tuple[p4info_pb2.P4Info, p4info_pb2.P4Info], part: str
) -> None:
    v1model, tna = (_api(info)[part] for info in infos)
    assert tna == v1model


def test_the_api_is_the_one_the_readme_documents(
    infos: tuple[p4info_pb2.P4Info, p4info_pb2.P4Info],
) -> None:
    # A guard against comparing two empty P4Infos: the tables and counters of p4src/README.md.
    api = _api(infos[1])
    assert set(api["tables"]) == {
        "port_role",
        "egress_port_role",
        "sid_block",
        "my_sid",
        "route_v6",
        "hop_limit_policy",
        "encap_v6",
        "dscp_priority",
        "trim_config",
        "trimmable_dscp",
        "ecn_config",
    }
    assert set(api["counters"]) == {"drop_counter", "trim_counter", "ecn_counter"}
    assert api["direct_counters"]["route_v6_counter"][1] == "route_v6"
    assert api["controller_headers"]["packet_in"] == [
        ("ingress_port", 9),
        ("reason", 8),
        ("pad", 7),
    ]
    assert infos[1].pkg_info.arch == "tna" and infos[0].pkg_info.arch == "v1model"
