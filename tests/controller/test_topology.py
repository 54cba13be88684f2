"""Topologies: the example files, validation errors with their lines, generate/save/load, sizing,
the Topology link lookups and the `mrc-ctl topo` commands."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller import cli
from controller.topology import sizing, yaml_io
from controller.topology.bounds import MAX_PLANES, MAX_RADIX
from controller.topology.errors import TopologyError
from controller.topology.generate import generate
from controller.topology.model import Endpoint, Link, PortRole, Tier, Topology

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "topologies" / "tiny.yaml"
MEDIUM = ROOT / "topologies" / "medium.yaml"


def _same(a: Topology, b: Topology) -> bool:
    return dataclasses.replace(a, source="x") == dataclasses.replace(b, source="x")


# --- the example files ----------------------------------------------------------------------


def test_tiny_example() -> None:
    topo = yaml_io.load(TINY)
    assert (topo.planes, topo.radix, topo.wiring) == (2, 4, "explicit")
    assert len(topo.nics) == 4
    for plane in range(2):
        assert [s.name for s in topo.switches_of(plane, Tier.T0)] == [f"p{plane}-t0-0",
                                                                      f"p{plane}-t0-1"]
        assert len(topo.switches_of(plane, Tier.T1)) == 2
    assert topo.link_count() == 8 + 4 * 2
    assert topo.switch("p1-t1-1").endpoint == Endpoint("127.0.0.1:50007", 8)
    assert topo.source == str(TINY)
    # Explicit file and the generator describe the same fabric.
    assert _same(topo, generate(2, 4, 4, wiring="explicit", name="tiny"))


def test_medium_example() -> None:
    topo = yaml_io.load(MEDIUM)
    assert (topo.planes, topo.radix, len(topo.nics), len(topo.switches)) == (4, 8, 32, 48)
    assert topo.switches[0].endpoint == Endpoint("127.0.0.1:51000", 1)
    assert topo.switches[47].endpoint == Endpoint("127.0.0.1:51047", 48)
    size = sizing.size_of(topo)
    assert (size.t0_per_plane, size.t1_per_plane, size.links) == (8, 4, 4 * 8 * 4 + 32 * 4)


# --- the model's link lookups ---------------------------------------------------------------


@pytest.mark.parametrize("wiring", ["clos", "explicit"])
def test_links_peer_neighbors(wiring: str) -> None:
    topo = generate(2, 8, 10, wiring=wiring)  # 3 T0 (the last with 2 NICs), 4 T1 per plane
    assert len(topo.switches_of(0, Tier.T0)) == 3
    links = list(topo.iter_links())
    assert len(links) == topo.link_count() == 2 * 3 * 4 + 10 * 2
    assert len(set(links)) == len(links)
    # Every link is seen from both ends, and no port carries two cables.
    ends: set[tuple[str, int]] = set()
    for link in links:
        assert topo.peer(link.a, link.a_port) == (link.b, link.b_port)
        assert topo.peer(link.b, link.b_port) == (link.a, link.a_port)
        assert (link.a, link.a_port) not in ends
        ends.add((link.a, link.a_port))
    # T0 i's up-port R/2 + j <-> T1 j's port i; NIC n's plane-p port <-> T0 n // 4 port n % 4.
    assert Link("p1-t0-2", 4 + 3, "p1-t1-3", 2) in links
    assert topo.peer("nic9", 1) == ("p1-t0-2", 1)
    assert topo.peer("p1-t0-2", 1) == ("nic9", 1)
    assert topo.peer("p1-t0-2", 2) is None  # T0 2 has only nic8 and nic9
    assert topo.peer("p0-t1-0", 3) is None  # T1 port 3: no T0 3
    assert topo.neighbors("p0-t0-2") == [(0, "nic8", 0), (1, "nic9", 0), (4, "p0-t1-0", 2),
                                         (5, "p0-t1-1", 2), (6, "p0-t1-2", 2),
                                         (7, "p0-t1-3", 2)]
    assert topo.neighbors("p0-t1-1") == [(0, "p0-t0-0", 5), (1, "p0-t0-1", 5),
                                         (2, "p0-t0-2", 5)]
    assert topo.port_roles_of("p0-t0-2") == {0: PortRole.HOST, 1: PortRole.HOST,
                                             4: PortRole.FABRIC, 5: PortRole.FABRIC,
                                             6: PortRole.FABRIC, 7: PortRole.FABRIC}
    assert topo.port_role("p0-t0-2", 2) is None
    # Every neighbour stays in the switch's plane.
    for sw in topo.switches:
        for _, peer, peer_port in topo.neighbors(sw.name):
            plane = peer_port if peer.startswith("nic") else topo.switch(peer).plane
            assert plane == sw.plane


def test_clos_and_explicit_agree_everywhere() -> None:
    clos, explicit = generate(3, 8, 13), generate(3, 8, 13, wiring="explicit")
    assert list(clos.iter_links()) == list(explicit.iter_links())
    for sw in clos.switches:
        assert clos.neighbors(sw.name) == explicit.neighbors(sw.name)
        assert clos.port_roles_of(sw.name) == explicit.port_roles_of(sw.name)
        for port in range(clos.radix + 1):
            assert clos.peer(sw.name, port) == explicit.peer(sw.name, port)


def test_nic_cables_listed_in_links_count_once() -> None:
    topo = generate(1, 4, 2, wiring="explicit")
    topo.links.append(Link("p0-t0-0", 1, "nic1", 0))
    assert topo.link_count() == len(set(topo.iter_links())) == 2 + 2


def test_index_follows_list_changes() -> None:
    topo = generate(1, 4, 4, wiring="explicit")
    assert topo.peer("p0-t0-0", 2) == ("p0-t1-0", 0)
    topo.links.pop(0)
    assert topo.peer("p0-t0-0", 2) is None
    with pytest.raises(KeyError):
        topo.switch("nope")


def test_configured_port_role_wins() -> None:
    topo = yaml_io.loads(TINY.read_text().replace(
        "links:", "port_roles:\n  - {port: p0-t0-0:1, role: external}\nlinks:", 1))
    assert topo.port_role("p0-t0-0", 1) == PortRole.EXTERNAL
    assert topo.port_roles_of("p0-t0-0")[1] == PortRole.EXTERNAL
    assert topo.port_role("p0-t0-0", 0) == PortRole.HOST
    assert _same(yaml_io.loads(yaml_io.dumps(topo)), topo)


# --- generate / save / load -----------------------------------------------------------------


@pytest.mark.parametrize(("planes", "radix", "nics", "wiring"), [
    (2, 4, 4, "explicit"), (2, 4, 4, "clos"), (4, 8, None, "clos"), (3, 6, 7, "explicit"),
    (8, 16, 100, "clos"),
])
def test_round_trip(tmp_path: Path, planes: int, radix: int, nics: int | None,
                    wiring: str) -> None:
    topo = generate(planes, radix, nics, wiring=wiring)
    path = tmp_path / "t.yaml"
    yaml_io.save(topo, path)
    back = yaml_io.load(path)
    assert back.source == str(path)
    assert _same(back, topo)
    assert list(back.iter_links()) == list(topo.iter_links())


def test_round_trip_endpoint_overrides() -> None:
    topo = generate(2, 4, 4)
    topo.switches[3] = dataclasses.replace(
        topo.switches[3], endpoint=Endpoint("sw3.lab:9559", 7, (1, 2), "ctl", "ca.pem", "c.pem",
                                            "k.pem"))
    topo.reindex()
    text = yaml_io.dumps(topo)
    assert "p0-t1-1" in text and "sw3.lab:9559" in text
    assert _same(yaml_io.loads(text), topo)
    explicit = generate(2, 4, 4, wiring="explicit")
    explicit.nics[1] = dataclasses.replace(explicit.nics[1], mac=0x02AB00000001)
    explicit.switches[0] = dataclasses.replace(explicit.switches[0], endpoint=None, radix=6)
    explicit.reindex()
    assert _same(yaml_io.loads(yaml_io.dumps(explicit)), explicit)


def test_generate_rejects_bad_shapes() -> None:
    with pytest.raises(TopologyError, match="radix must be even"):
        generate(2, 5)
    with pytest.raises(TopologyError, match=r"R²/2"):
        generate(2, 4, 9)
    with pytest.raises(TopologyError, match="planes"):
        generate(0, 4)


@pytest.mark.parametrize(("planes", "radix", "nics", "message"), [
    (8, 65536, None, "radix 65536 is above 512, the most ports a bit<9> port number addresses"),
    (1, 65536, 1_000_000, "radix 65536 is above 512"),   # was generated: 3.5 s, 490 MB
    (15, 4, None, "planes must be 1..14 (the uSID's plane nibble), not 15"),
])
def test_generate_refuses_a_fabric_beyond_the_bounds_before_building_it(
        planes: int, radix: int, nics: int | None, message: str) -> None:
    with pytest.raises(TopologyError, match=re.escape(message)):
        generate(planes, radix, nics)


def test_the_largest_fabric_within_the_bounds_is_generated() -> None:
    topo = generate(MAX_PLANES, MAX_RADIX)
    assert (len(topo.nics), len(topo.switches)) == (131_072, 10_752)


@pytest.mark.parametrize(("old", "new", "where"), [
    ("radix: 4", "radix: 65536", "3:8: error: radix: 65536 is out of range (2..512)"),
    ("planes: 2", "planes: 4096", "2:9: error: planes: 4096 is out of range (1..14)"),
])
def test_a_topology_file_beyond_the_bounds_is_refused_at_the_field(
        old: str, new: str, where: str) -> None:
    with pytest.raises(TopologyError, match=re.escape(where)):
        yaml_io.loads(GOOD_CLOS.replace(old, new), "big.yaml")


# --- validation: every error names the file, line and field ---------------------------------

GOOD_CLOS = """\
name: c
planes: 2
radix: 4
wiring: clos
nics: 4
"""


def _error(text: str) -> TopologyError:
    with pytest.raises(TopologyError) as info:
        yaml_io.loads(text, "topo.yaml")
    return info.value


def _tiny_with(old: str, new: str) -> str:
    text = TINY.read_text()
    assert old in text
    return text.replace(old, new, 1)


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("old", "new", "needle", "field", "message"), [
    ("planes: 2", "planes: two", "planes:", "planes", "expected an integer"),
    ("radix: 4", "radix: 4\ncolour: blue", "colour", "colour", "unknown key 'colour'"),
    ("radix: 4", "radix: 4\nradix: 8", "radix: 8", "radix", "duplicate key 'radix'"),
    ("name: p0-t1-0,", "name: p0-t0-0,", "name: p0-t0-0, tier: T1", "switches[2].name",
     "duplicate name 'p0-t0-0' (first used on line"),
    ("tier: T1, plane: 0, index: 0", "tier: T2, plane: 0, index: 0", "T2",
     "switches[2].tier", "must be T0 or T1"),
    ("name: p1-t1-1, tier: T1, plane: 1", "name: p1-t1-1, tier: T1, plane: 2", "plane: 2",
     "switches[7].plane", "out of range (0..1)"),
    ("name: p1-t1-1, tier: T1, plane: 1, index: 1", "name: p1-t1-1, tier: T1, plane: 1, index: 0",
     "name: p1-t1-1", "switches[7].index", "plane 1 already has T1 0: p1-t1-0"),
    ("{name: nic2, ports: [p0-t0-1:0, p1-t0-1:0]}", "{name: nic2, ports: [p0-t0-1:0]}",
     "name: nic2", "nics[2].ports", "one port per plane: expected 2"),
    ("ports: [p0-t0-1:0, p1-t0-1:0]", "ports: [p0-t0-1:0, p0-t0-1:2]", "name: nic2",
     "nics[2].ports[1]", "goes to a T0 of plane 1"),
    ("ports: [p0-t0-1:1, p1-t0-1:1]", "ports: [p0-t0-1:0, p1-t0-1:1]", "name: nic3",
     "nics[3].ports[0]", "port p0-t0-1:0 is already used by nic2 (plane 0)"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:2, p0-t1-9:0]", "p0-t1-9", "links[0][1]",
     "unknown switch 'p0-t1-9'"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:7, p0-t1-0:0]", "p0-t0-0:7", "links[0][0]",
     "port 7 of p0-t0-0 is outside 0..3 (radix 4)"),
    ("- [p0-t0-0:3, p0-t1-1:0]", "- [p0-t0-0:2, p0-t1-1:0]", "[p0-t0-0:2, p0-t1-1:0]",
     "links[1][0]", "port p0-t0-0:2 is already used by link links[0]"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:2, p1-t1-0:3]", "p1-t1-0:3", "links[0]",
     "planes share no switches"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:2, p0-t0-1:3]", "p0-t0-1:3", "links[0]",
     "both T0"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:2, nic1:0]", "nic1:0", "links[0][1]",
     "is a NIC"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0:2]", "- [p0-t0-0:2]", "links[0]",
     "a link is [SWITCH:PORT, SWITCH:PORT]"),
    ("- [p0-t0-0:2, p0-t1-0:0]", "- [p0-t0-0-2, p0-t1-0:0]", "p0-t0-0-2", "links[0][0]",
     "is not SWITCH:PORT"),
    ('grpc: "127.0.0.1:50001"', 'grpc: "127.0.0.1"', '"127.0.0.1"', "switches[1].endpoint.grpc",
     "is not HOST:PORT"),
    ("device_id: 3}", "device_id: -3}", "device_id: -3", "switches[2].endpoint.device_id",
     "out of range"),
    ("device_id: 4}", "device_id: 4, tls: {cert: c.pem}}", "tls:", "switches[3].endpoint.tls",
     "'cert' and 'key' go together"),
    ("sid_block: fcbb:bbbb::/32", "sid_block: fcbb:bbbb::/48", "sid_block", "sid_block",
     "must be a /32"),
    ("sid_block: fcbb:bbbb::/32", "sid_block: fcbb:zz::/32", "sid_block", "sid_block",
     "not an IPv6 prefix"),
    ("  dscp_control: 46", "  dscp_control: 64", "dscp_control", "qos.dscp_control",
     "out of range (0..63)"),
    ("  trim_bytes: 160", "  trim_byte: 160", "trim_byte", "qos.trim_byte",
     "unknown key 'trim_byte'"),
    ("links:", "port_roles:\n  - {port: p0-t0-0:1, role: spine}\nlinks:", "spine",
     "port_roles[0].role", "must be host, fabric or external"),
    ("links:", "port_roles:\n  - {port: p9:1, role: host}\nlinks:", "p9:1",
     "port_roles[0].port", "unknown switch 'p9'"),
    ("wiring: explicit", "wiring: mesh", "wiring:", "wiring", "must be 'explicit' or 'clos'"),
    ("radix: 4", "radix: 2", "- [p0-t0-0:2", "links[0][0]", "outside 0..1 (radix 2)"),
])
def test_validation_errors(old: str, new: str, needle: str, field: str, message: str) -> None:
    text = _tiny_with(old, new)
    err = _error(text)
    assert err.file == "topo.yaml"
    assert err.field == field, str(err)
    assert message in err.message, str(err)
    assert err.line == _line_of(text, needle), str(err)
    assert str(err).startswith(f"topo.yaml:{err.line}:{err.column}: error: {field}: ")


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    (GOOD_CLOS.replace("nics: 4", "nics: 9"), 5, "nics", "do not fit"),
    (GOOD_CLOS.replace("radix: 4", "radix: 5").replace("nics: 4\n", ""), 3, "radix",
     "even"),
    (GOOD_CLOS + "links: []\n", 6, "links", "clos wiring implies every link"),
    (GOOD_CLOS.replace("nics: 4", "nics: [a]"), 5, "nics", "a count, not a list"),
    (GOOD_CLOS + "switches:\n  - {name: p0-t0-7, endpoint: {grpc: 'h:1'}}\n", 7,
     "switches[0].name", "no switch 'p0-t0-7'"),
    (GOOD_CLOS + "endpoints: {base_port: 65530}\n", 6, "endpoints.base_port", "past 65535"),
    (GOOD_CLOS.replace("name: c\n", ""), 1, "<top>", "missing required key 'name'"),
    (GOOD_CLOS + "switches: [\n", 7, None, "bad YAML"),
    ("- 1\n", 1, None, "expected a mapping"),
    ("", 1, None, "empty"),
    (GOOD_CLOS.replace("planes: 2", "planes: 0"), 2, "planes", "out of range"),
])
def test_clos_and_syntax_errors(text: str, line: int, field: str | None, message: str) -> None:
    err = _error(text)
    assert message in str(err)
    assert err.line == line, str(err)
    if field is not None:
        assert err.field == field


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TopologyError, match=r"nope\.yaml: error: cannot read"):
        yaml_io.load(tmp_path / "nope.yaml")


# --- sizing ---------------------------------------------------------------------------------


def test_sizing_paper_numbers() -> None:
    size = sizing.size_for(51.2, 800, 8)
    assert (size.radix, size.nics, size.t0_per_plane, size.t1_per_plane) == (512, 131072, 512,
                                                                              256)
    assert size.switches == 6144
    assert size.links == 2 * 8 * 131072
    assert (size.paths_per_plane, size.paths_total) == (256, 2048)
    assert size.single_radix == 64
    assert size.two_tier_max_nics == 2048 and size.two_tier_switches is None
    assert size.three_tier_switches == 10240
    assert round(size.switch_ratio() or 0, 2) == 0.6
    assert round(size.link_ratio(), 2) == 0.67
    text = sizing.render(size)
    for figure in ("131,072", "6,144", "10,240", "0.60x", "0.67x", "2,048"):
        assert figure in text
    one = sizing.size_for(51.2, 800, 1)
    assert (one.nics, one.switches, one.two_tier_switches) == (2048, 96, 96)
    four = sizing.size_for(51.2, 800, 4)
    assert (four.radix, four.nics, four.switches) == (256, 32768, 1536)
    with pytest.raises(TopologyError, match="even whole number"):
        sizing.size_for(51.2, 300, 1)


def test_sizing_of_a_topology_matches_the_formula() -> None:
    full = sizing.size_of(generate(4, 16))  # 1.6T switch, 400G NIC over 4 planes: R = 16
    formula = sizing.size_for(1.6, 400, 4)
    assert full == dataclasses.replace(formula, switch_tbps=None, nic_gbps=None)
    assert (full.nics, full.switches, full.links) == (128, 96, 1024)
    partial = sizing.size_of(generate(2, 8, 10))
    assert (partial.nics, partial.t0_per_plane, partial.t1_per_plane) == (10, 3, 4)
    assert partial.links == 2 * 3 * 4 + 10 * 2


# --- the command line -----------------------------------------------------------------------


def test_cli_generate_size_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["topo", "generate", "--planes", "8", "--radix", "32"]) == 0
    assert "512 switches" not in capsys.readouterr().out
    assert yaml_io.load(tmp_path / cli.DEFAULT_TOPOLOGY).planes == 8
    assert cli.main(["topo", "size"]) == 0
    out = capsys.readouterr().out
    assert "NICs                            512\n" in out  # 32²/2
    assert "switches total                  384\n" in out  # 1.5 * 8 * 32
    assert cli.main(["topo", "size", "--switch-tbps", "51.2", "--nic-gbps", "800",
                     "--planes", "8"]) == 0
    out = capsys.readouterr().out
    assert "131,072" in out and "6,144" in out
    assert cli.main(["topo", "generate", "--planes", "2", "--radix", "4", "--nics", "4",
                     "--explicit", "--name", "tiny", "-o", "t.yaml"]) == 0
    assert yaml_io.load("t.yaml") == dataclasses.replace(yaml_io.load(TINY), source="t.yaml")
    capsys.readouterr()
    assert cli.main(["topo", "show", str(TINY), "--switch", "p1-t0-1"]) == 0
    out = capsys.readouterr().out
    assert "nic3 plane 1" in out and "p1-t1-1:1" in out
    assert cli.main(["topo", "show", str(MEDIUM)]) == 0
    assert "32 NICs, 48 switches, 256 links" in capsys.readouterr().out


def test_cli_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["topo", "size"]) == 2
    assert "no topology given" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD_CLOS.replace("radix: 4", "radix: x"))
    assert cli.main(["topo", "show", str(bad)]) == 2
    assert f"{bad}:3:8: error: radix: expected an integer" in capsys.readouterr().err
    assert cli.main(["topo", "size", "--planes", "8"]) == 2
    assert cli.main(["topo", "generate", "--planes", "2", "--radix", "3"]) == 2


def test_cli_module_entry_point(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "controller.cli", "topo", "generate",
                          "--planes", "2", "--radix", "4", "-o", "-"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert _same(yaml_io.loads(run.stdout), generate(2, 4))


def test_a_role_config_is_read_written_back_and_refused_when_malformed() -> None:
    from p4rt.role_config import RoleConfig

    text = ("name: r\nwiring: clos\nplanes: 1\nradix: 4\nendpoints: {base_port: 50000, role: fabric, "
            "role_config: {exclusive: [route_v6, my_sid], packet_ins: true, "
            "push_pipeline: true}}\nnics: 2\n")
    topo = yaml_io.loads(text)
    assert {s.endpoint.role_config for s in topo.switches} == {  # type: ignore[union-attr]
        RoleConfig(("route_v6", "my_sid"), (), True, True)}
    assert _same(yaml_io.loads(yaml_io.dumps(topo)), topo)
    with pytest.raises(TopologyError, match=r"role_config.packet_ins: expected true or false"):
        yaml_io.loads(text.replace("packet_ins: true", "packet_ins: 3"))
    with pytest.raises(TopologyError, match="a role config needs a role name"):
        yaml_io.loads(text.replace("role: fabric, ", ""))
