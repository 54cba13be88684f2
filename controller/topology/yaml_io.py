"""Topology YAML: load (validated, every error at FILE:LINE:COL with its field) and save.

The schema is documented field by field in topologies/README.md. The file is composed to PyYAML
nodes (not plain Python values) so every value keeps the line it came from.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from yaml.nodes import Node, ScalarNode, SequenceNode

from controller.topology.bounds import MAX_PLANES, MAX_RADIX, MAX_SWITCH_INDEX
from controller.topology.errors import TopologyError
from controller.topology.generate import (
    DEFAULT_BASE_PORT,
    DEFAULT_HOST,
    DEFAULT_SID_BLOCK,
    check_clos_shape,
    clos_nics,
    clos_switches,
)
from controller.topology.model import (
    TARGETS,
    Endpoint,
    Link,
    Nic,
    PortRole,
    QosConfig,
    RoleConfig,
    Switch,
    Tier,
    Topology,
)
from controller.topology.reach import Reach
from controller.topology.yaml_nodes import (
    BOOL,
    INT,
    NodeReader,
    compose,
    kind,
    read_text,
)

_QOS_LIMITS = {"trim_threshold": (0, (1 << 19) - 1), "ecn_threshold": (0, (1 << 19) - 1),
               "trim_bytes": (0, 0xFFFF), "tofino_cells_per_packet": (1, 1 << 10)}

# Strings written without quotes: they start with a letter, so YAML cannot read them as numbers.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/\-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})

TOP_KEYS = ("name", "description", "planes", "radix", "sid_block", "wiring", "qos", "endpoints",
            "switches", "nics", "links", "port_roles")


def load(path: str | Path) -> Topology:
    """Read and validate a topology file; raises TopologyError naming FILE:LINE and the field."""
    return loads(read_text(path, TopologyError, "topology"), str(path))


def loads(text: str, source: str = "<string>") -> Topology:
    return _Reader(source).topology(compose(text, source, TopologyError, "topology"))


def save(topology: Topology, path: str | Path) -> None:
    Path(path).write_text(dumps(topology), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class _Rule:
    """The `endpoints` rule: switch k listens on host:(base_port + k), device id base + k."""

    host: str
    base_port: int
    device_id_base: int
    election_id: tuple[int, int]
    role: str
    tls: tuple[str | None, str | None, str | None]
    role_config: RoleConfig | None

    def endpoint(self, k: int) -> Endpoint:
        return Endpoint(f"{self.host}:{self.base_port + k}", self.device_id_base + k,
                        self.election_id, self.role, *self.tls, role_config=self.role_config)


class _Reader(NodeReader):
    """Turns a composed YAML node tree into a Topology, failing at the first bad value."""

    error = TopologyError

    # -- sections ----------------------------------------------------------------------------

    def topology(self, root: Node) -> Topology:
        top = self.mapping(root, "", TOP_KEYS, ("name", "planes", "radix"))
        name = self.name(top["name"][1], "name")
        if "description" in top:
            self.str_(top["description"][1], "description")
        planes = self.int_(top["planes"][1], "planes", 1, MAX_PLANES)
        radix_node = top["radix"][1]
        radix = self.int_(radix_node, "radix", 2, MAX_RADIX)
        sid_block = DEFAULT_SID_BLOCK
        if "sid_block" in top:
            sid_block = self.sid_block(top["sid_block"][1])
        wiring = "explicit"
        if "wiring" in top:
            wnode = top["wiring"][1]
            wiring = self.str_(wnode, "wiring")
            if wiring not in ("explicit", "clos"):
                raise self.fail(wnode, "wiring", f"must be 'explicit' or 'clos', not '{wiring}'")
        qos = self.qos(top["qos"][1]) if "qos" in top else QosConfig()
        rule = self.rule(top["endpoints"][1]) if "endpoints" in top else None
        topo = Topology(name=name, planes=planes, radix=radix, sid_block=sid_block, qos=qos,
                        wiring=wiring, source=self.source)
        if wiring == "clos":
            self.clos(topo, top, rule, radix_node)
        else:
            self.explicit(topo, top, rule)
        if "port_roles" in top:
            self.port_roles(topo, top["port_roles"][1])
        topo.reindex()
        if wiring == "explicit":
            self.reachable(topo)
        return topo

    def reachable(self, topo: Topology) -> None:
        """Explicit wiring may leave T0-T1 cables out (the planner routes around them), but
        every two T0s with NICs under both need a T1 cabled to both in their plane."""
        for problem in Reach(topo).unjoined():
            node, field = self._nic_ports[(problem.nic_b, problem.plane)]
            raise self.fail(node, field, problem.describe())

    def sid_block(self, node: Node) -> str:
        text = self.str_(node, "sid_block")
        try:
            net = ipaddress.IPv6Network(text)
        except ValueError as exc:
            raise self.fail(node, "sid_block", f"'{text}' is not an IPv6 prefix ({exc})") from None
        if net.prefixlen != 32:
            raise self.fail(node, "sid_block", f"the SID block must be a /32 (F3216), not "
                                               f"/{net.prefixlen}")
        return str(net)

    def qos(self, node: Node) -> QosConfig:
        names = tuple(f.name for f in fields(QosConfig))
        got = self.mapping(node, "qos", names)
        values: dict[str, int] = {}
        for key, (_, value) in got.items():
            lo, hi = _QOS_LIMITS.get(key, (0, 63))
            values[key] = self.int_(value, f"qos.{key}", lo, hi)
        return QosConfig(**values)

    def election(self, node: Node, field: str) -> tuple[int, int]:
        if isinstance(node, SequenceNode):
            items = self.seq(node, field)
            if len(items) != 2:
                raise self.fail(node, field, "expected an integer or [high, low]")
            return (self.int_(items[0], f"{field}[0]", 0, (1 << 64) - 1),
                    self.int_(items[1], f"{field}[1]", 0, (1 << 64) - 1))
        return (0, self.int_(node, field, 0, (1 << 64) - 1))

    def tls(self, node: Node, field: str) -> tuple[str | None, str | None, str | None]:
        got = self.mapping(node, field, ("ca", "cert", "key"))
        ca, cert, key = (self.str_(got[k][1], f"{field}.{k}") if k in got else None
                         for k in ("ca", "cert", "key"))
        if (cert is None) != (key is None):
            raise self.fail(node, field, "'cert' and 'key' go together (mutual TLS)")
        return ca, cert, key

    def role_config(self, node: Node, field: str) -> RoleConfig:
        """`{exclusive: [NAME...], shared: [NAME...], packet_ins: BOOL, push_pipeline: BOOL}`:
        P4Info object names, resolved against the program when the controller connects."""
        got = self.mapping(node, field, ("exclusive", "shared", "packet_ins", "push_pipeline"))

        def names(key: str) -> tuple[str, ...]:
            if key not in got:
                return ()
            return tuple(self.str_(item, f"{field}.{key}[{i}]")
                         for i, item in enumerate(self.seq(got[key][1], f"{field}.{key}")))

        def flag(key: str) -> bool:
            if key not in got:
                return False
            value = got[key][1]
            if not isinstance(value, ScalarNode) or value.tag != BOOL:
                raise self.fail(value, f"{field}.{key}", f"expected true or false, found "
                                f"{kind(value)}")
            return bool(self.constructor.construct_yaml_bool(value))

        return RoleConfig(names("exclusive"), names("shared"), flag("packet_ins"),
                          flag("push_pipeline"))

    def common_endpoint(self, got: dict[str, tuple[Node, Node]], field: str
                        ) -> tuple[tuple[int, int], str, tuple[str | None, str | None, str | None],
                                   RoleConfig | None]:
        election = (self.election(got["election_id"][1], f"{field}.election_id")
                    if "election_id" in got else (0, 1))
        role = self.str_(got["role"][1], f"{field}.role") if "role" in got else ""
        tls = self.tls(got["tls"][1], f"{field}.tls") if "tls" in got else (None, None, None)
        config = (self.role_config(got["role_config"][1], f"{field}.role_config")
                  if "role_config" in got else None)
        if config is not None and not role:
            raise self.fail(got["role_config"][0], f"{field}.role_config",
                            "a role config needs a role name (`role:`)")
        return election, role, tls, config

    def rule(self, node: Node) -> _Rule:
        got = self.mapping(node, "endpoints", ("host", "base_port", "device_id_base",
                                               "election_id", "role", "role_config", "tls"),
                           ("base_port",))
        host = self.str_(got["host"][1], "endpoints.host") if "host" in got else DEFAULT_HOST
        base = self.int_(got["base_port"][1], "endpoints.base_port", 0, 65535)
        dev = (self.int_(got["device_id_base"][1], "endpoints.device_id_base", 0, (1 << 63))
               if "device_id_base" in got else 1)
        return _Rule(host, base, dev, *self.common_endpoint(got, "endpoints"))

    def endpoint(self, node: Node, field: str) -> Endpoint:
        got = self.mapping(node, field, ("grpc", "device_id", "election_id", "role",
                                         "role_config", "tls"), ("grpc",))
        gnode = got["grpc"][1]
        grpc = self.str_(gnode, f"{field}.grpc")
        host, sep, port = grpc.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise self.fail(gnode, f"{field}.grpc", f"'{grpc}' is not HOST:PORT")
        dev = (self.int_(got["device_id"][1], f"{field}.device_id", 0, (1 << 64) - 1)
               if "device_id" in got else 1)
        election, role, tls, config = self.common_endpoint(got, field)
        return Endpoint(grpc, dev, election, role, *tls, role_config=config)

    def explicit(self, topo: Topology, top: dict[str, tuple[Node, Node]],
                 rule: _Rule | None) -> None:
        if "switches" not in top:
            raise self.fail(top["name"][0], "switches",
                            "explicit wiring needs a 'switches' list (or use wiring: clos)")
        self._nic_ports: dict[tuple[str, int], tuple[Node, str]] = {}   # for later errors
        places: dict[tuple[int, Tier, int], str] = {}
        names: dict[str, Node] = {}
        for i, snode in enumerate(self.seq(top["switches"][1], "switches")):
            field = f"switches[{i}]"
            got = self.mapping(snode, field, ("name", "tier", "plane", "index", "endpoint",
                                              "radix", "target"),
                               ("name", "tier", "plane", "index"))
            name = self.unique(got["name"][1], f"{field}.name", names)
            tnode = got["tier"][1]
            tier_text = self.str_(tnode, f"{field}.tier")
            if tier_text not in ("T0", "T1"):
                raise self.fail(tnode, f"{field}.tier", f"must be T0 or T1, not '{tier_text}'")
            tier = Tier(tier_text)
            plane = self.int_(got["plane"][1], f"{field}.plane", 0, topo.planes - 1)
            index = self.int_(got["index"][1], f"{field}.index", 0, MAX_SWITCH_INDEX)
            where = (plane, tier, index)
            if where in places:
                raise self.fail(got["index"][1], f"{field}.index",
                                f"plane {plane} already has {tier} {index}: {places[where]}")
            places[where] = name
            radix = (self.int_(got["radix"][1], f"{field}.radix", 1, MAX_RADIX)
                     if "radix" in got else 0)
            if "endpoint" in got:
                ep: Endpoint | None = self.endpoint(got["endpoint"][1], f"{field}.endpoint")
            else:
                ep = rule.endpoint(i) if rule is not None else None
            topo.switches.append(Switch(name, tier, plane, index, ep, radix,
                                        self.target(got, field)))
        switches = {s.name: s for s in topo.switches}
        used: dict[tuple[str, int], str] = {}
        if "nics" in top:
            self.nic_list(topo, top["nics"][1], switches, names, used)
        if "links" in top:
            nic_names = {n.name for n in topo.nics}
            for i, lnode in enumerate(self.seq(top["links"][1], "links")):
                topo.links.append(self.link(lnode, f"links[{i}]", topo, switches, used,
                                            nic_names))

    def target(self, got: dict[str, tuple[Node, Node]], field: str) -> str:
        """A switch's `target` (default bmv2)."""
        if "target" not in got:
            return "bmv2"
        return self.choice(got["target"][1], f"{field}.target", TARGETS)

    def unique(self, node: Node, field: str, names: dict[str, Node]) -> str:
        name = self.name(node, field)
        if name in names:
            first = names[name].start_mark.line + 1
            raise self.fail(node, field, f"duplicate name '{name}' (first used on line {first})")
        names[name] = node
        return name

    def switch_port(self, node: Node, field: str, topo: Topology, switches: dict[str, Switch],
                    used: dict[tuple[str, int], str], what: str) -> tuple[Switch, int]:
        """A `switch:port` reference that is in range and not cabled yet; marks it used."""
        name, port = self.port_ref(node, field)
        sw = switches.get(name)
        if sw is None:
            raise self.fail(node, field, f"unknown switch '{name}'")
        radix = sw.radix or topo.radix
        if port >= radix:
            raise self.fail(node, field, f"port {port} of {name} is outside 0..{radix - 1} "
                                         f"(radix {radix})")
        if (name, port) in used:
            raise self.fail(node, field, f"port {name}:{port} is already used by "
                                         f"{used[(name, port)]}")
        used[(name, port)] = what
        return sw, port

    def nic_list(self, topo: Topology, node: Node, switches: dict[str, Switch],
                 names: dict[str, Node], used: dict[tuple[str, int], str]) -> None:
        indices: dict[int, str] = {}
        for i, nnode in enumerate(self.seq(node, "nics")):
            field = f"nics[{i}]"
            got = self.mapping(nnode, field, ("name", "index", "mac", "ports"),
                               ("name", "ports"))
            name = self.unique(got["name"][1], f"{field}.name", names)
            index = self.int_(got["index"][1], f"{field}.index", 0, MAX_SWITCH_INDEX) if "index" in got else i
            if index in indices:
                raise self.fail(got.get("index", got["name"])[1], f"{field}.index",
                                f"NIC index {index} is already {indices[index]}'s")
            indices[index] = name
            mac = self.mac(got["mac"][1], f"{field}.mac") if "mac" in got else 0
            pnode = got["ports"][1]
            ports = self.seq(pnode, f"{field}.ports")
            if len(ports) != topo.planes:
                raise self.fail(pnode, f"{field}.ports",
                                f"a NIC has one port per plane: expected {topo.planes} "
                                f"(T0:PORT for planes 0..{topo.planes - 1}), found {len(ports)}")
            atts = []
            for plane, port_node in enumerate(ports):
                pfield = f"{field}.ports[{plane}]"
                sw, port = self.switch_port(port_node, pfield, topo, switches, used,
                                            f"{name} (plane {plane})")
                if sw.tier != Tier.T0 or sw.plane != plane:
                    raise self.fail(port_node, pfield, f"port {plane} of a NIC goes to a T0 of "
                                                       f"plane {plane}; {sw.name} is a "
                                                       f"{sw.tier} of plane {sw.plane}")
                atts.append((sw.name, port))
                self._nic_ports[(name, plane)] = (port_node, pfield)
            topo.nics.append(Nic(name, index, tuple(atts), mac))

    def mac(self, node: Node, field: str) -> int:
        if isinstance(node, ScalarNode) and node.tag == INT:
            return self.int_(node, field, 0, (1 << 48) - 1)
        text = self.str_(node, field)
        if not re.fullmatch(r"[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}", text):
            raise self.fail(node, field, f"'{text}' is not a MAC address (aa:bb:cc:dd:ee:ff)")
        return int(text.replace(":", ""), 16)

    def link(self, node: Node, field: str, topo: Topology, switches: dict[str, Switch],
             used: dict[tuple[str, int], str], nic_names: set[str]) -> Link:
        ends = self.seq(node, field)
        if len(ends) != 2:
            raise self.fail(node, field, "a link is [SWITCH:PORT, SWITCH:PORT]")
        refs = [self.port_ref(e, f"{field}[{k}]") for k, e in enumerate(ends)]
        for k, (name, _) in enumerate(refs):
            if name not in switches and name in nic_names:
                raise self.fail(ends[k], f"{field}[{k}]", f"'{name}' is a NIC: NIC cables "
                                                          "are given by the NIC's 'ports'")
        a, ap = self.switch_port(ends[0], f"{field}[0]", topo, switches, used, f"link {field}")
        b, bp = self.switch_port(ends[1], f"{field}[1]", topo, switches, used, f"link {field}")
        if a.plane != b.plane:
            raise self.fail(node, field, f"planes share no switches: {a.name} is in plane "
                                         f"{a.plane}, {b.name} in plane {b.plane}")
        if a.tier == b.tier:
            raise self.fail(node, field, f"a two-tier Clos links a T0 to a T1; {a.name} and "
                                         f"{b.name} are both {a.tier}")
        return Link(a.name, ap, b.name, bp)

    def clos(self, topo: Topology, top: dict[str, tuple[Node, Node]], rule: _Rule | None,
             radix_node: Node) -> None:
        if "links" in top:
            raise self.fail(top["links"][0], "links", "clos wiring implies every link; "
                                                      "use wiring: explicit to list them")
        count = topo.radix * topo.radix // 2
        count_node = radix_node
        if "nics" in top:
            count_node = top["nics"][1]
            if isinstance(count_node, SequenceNode):
                raise self.fail(count_node, "nics", "with clos wiring 'nics' is a count, "
                                                    "not a list")
            count = self.int_(count_node, "nics", 1)
        try:
            check_clos_shape(topo.planes, topo.radix, count)
        except TopologyError as exc:
            raise self.fail(count_node, exc.field or "nics", exc.message) from None
        rule = rule or _Rule(DEFAULT_HOST, DEFAULT_BASE_PORT, 1, (0, 1), "", (None, None, None),
                             None)
        switches = clos_switches(topo.planes, topo.radix, count, host=rule.host,
                                 base_port=rule.base_port, device_id_base=rule.device_id_base,
                                 election_id=rule.election_id, role=rule.role, tls=rule.tls)
        if rule.role_config is not None:
            switches = [replace(s, endpoint=rule.endpoint(k)) for k, s in enumerate(switches)]
        if rule.base_port + len(switches) - 1 > 65535:
            raise self.fail(top["endpoints"][1] if "endpoints" in top else radix_node,
                            "endpoints.base_port", f"{len(switches)} switches from port "
                                                   f"{rule.base_port} run past 65535")
        if "switches" in top:
            position = {s.name: k for k, s in enumerate(switches)}
            seen: dict[str, Node] = {}
            for i, snode in enumerate(self.seq(top["switches"][1], "switches")):
                field = f"switches[{i}]"
                got = self.mapping(snode, field, ("name", "endpoint", "target"), ("name",))
                name = self.unique(got["name"][1], f"{field}.name", seen)
                if name not in position:
                    raise self.fail(got["name"][1], f"{field}.name", f"no switch '{name}' in "
                                    "this clos fabric (names are p<plane>-t0-<i>, p<plane>-t1-<j>)")
                k = position[name]
                old = switches[k]
                ep = (self.endpoint(got["endpoint"][1], f"{field}.endpoint")
                      if "endpoint" in got else old.endpoint)
                switches[k] = replace(old, endpoint=ep, target=self.target(got, field))
        topo.switches = switches
        topo.nics = clos_nics(topo.planes, topo.radix, count)

    def port_roles(self, topo: Topology, node: Node) -> None:
        switches = {s.name: s for s in topo.switches}
        for i, rnode in enumerate(self.seq(node, "port_roles")):
            field = f"port_roles[{i}]"
            got = self.mapping(rnode, field, ("port", "role"), ("port", "role"))
            name, port = self.port_ref(got["port"][1], f"{field}.port")
            sw = switches.get(name)
            if sw is None:
                raise self.fail(got["port"][1], f"{field}.port", f"unknown switch '{name}'")
            radix = sw.radix or topo.radix
            if port >= radix:
                raise self.fail(got["port"][1], f"{field}.port",
                                f"port {port} of {name} is outside 0..{radix - 1}")
            rtext = self.str_(got["role"][1], f"{field}.role")
            try:
                role = PortRole(rtext)
            except ValueError:
                raise self.fail(got["role"][1], f"{field}.role",
                                f"must be host, fabric or external, not '{rtext}'") from None
            if (name, port) in topo.port_roles:
                raise self.fail(got["port"][1], f"{field}.port",
                                f"{name}:{port} already has a role")
            topo.port_roles[(name, port)] = role


# ---------------------------------------------------------------------------------------------
# Writing


def dumps(topo: Topology) -> str:
    """The YAML text of a topology; `loads(dumps(t))` equals `t` (but for `source`)."""
    out: list[str] = [f"# {topo.name}: {topo.planes} planes, radix {topo.radix}, "
                      f"{len(topo.nics)} NICs, {len(topo.switches)} switches "
                      "(schema: topologies/README.md)"]
    put = out.append
    put(f"name: {_q(topo.name)}")
    put(f"planes: {topo.planes}")
    put(f"radix: {topo.radix}")
    put(f"sid_block: {_q(topo.sid_block)}")
    put(f"wiring: {topo.wiring}")
    put("qos:")
    for f in fields(QosConfig):
        put(f"  {f.name}: {getattr(topo.qos, f.name)}")
    if topo.wiring == "clos":
        _dump_clos(topo, put)
    else:
        _dump_explicit(topo, put)
    if topo.port_roles:
        put("port_roles:")
        for (sw, port), role in sorted(topo.port_roles.items()):
            put(f"  - {{port: {_q(f'{sw}:{port}')}, role: {role.value}}}")
    return "\n".join(out) + "\n"


def _dump_clos(topo: Topology, put: Callable[[str], None]) -> None:
    put(f"nics: {len(topo.nics)}")
    first = topo.switches[0].endpoint if topo.switches else None
    rule = None
    if first is not None:
        host, _, port = first.grpc_address.rpartition(":")
        if port.isdigit():
            rule = _Rule(host, int(port), first.device_id, first.election_id, first.role,
                         (first.tls_ca, first.tls_cert, first.tls_key), first.role_config)
    if rule is not None:
        put("endpoints: " + _flow(_rule_dict(rule)))
    overrides = [s for k, s in enumerate(topo.switches)
                 if rule is None or s.endpoint != rule.endpoint(k) or s.target != "bmv2"]
    if any(s.endpoint is None for s in overrides):
        raise TopologyError("a clos topology gives every switch an endpoint")
    if overrides:
        put("switches:  # endpoints that differ from the rule, targets other than bmv2")
        for s in overrides:
            assert s.endpoint is not None
            target = f", target: {s.target}" if s.target != "bmv2" else ""
            put(f"  - {{name: {_q(s.name)}, endpoint: {_flow(_endpoint_dict(s.endpoint))}"
                f"{target}}}")


def _dump_explicit(topo: Topology, put: Callable[[str], None]) -> None:
    put("switches:")
    for s in topo.switches:
        item: dict[str, Any] = {"name": s.name, "tier": s.tier.value, "plane": s.plane,
                                "index": s.index}
        if s.radix:
            item["radix"] = s.radix
        if s.endpoint is not None:
            item["endpoint"] = _endpoint_dict(s.endpoint)
        if s.target != "bmv2":
            item["target"] = s.target
        put(f"  - {_flow(item)}")
    put("nics:")
    for k, n in enumerate(topo.nics):
        item = {"name": n.name}
        if n.index != k:
            item["index"] = n.index
        if n.mac:
            item["mac"] = ":".join(f"{n.mac:012x}"[i:i + 2] for i in range(0, 12, 2))
        item["ports"] = [f"{sw}:{port}" for sw, port in n.attachments]
        put(f"  - {_flow(item)}")
    put("links:" if topo.links else "links: []")
    for link in topo.links:
        put(f"  - [{_q(f'{link.a}:{link.a_port}')}, {_q(f'{link.b}:{link.b_port}')}]")


def _rule_dict(rule: _Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"host": rule.host, "base_port": rule.base_port,
                           "device_id_base": rule.device_id_base}
    return out | _common_dict(rule.election_id, rule.role, rule.tls, rule.role_config)


def _endpoint_dict(ep: Endpoint) -> dict[str, Any]:
    out: dict[str, Any] = {"grpc": ep.grpc_address, "device_id": ep.device_id}
    return out | _common_dict(ep.election_id, ep.role, (ep.tls_ca, ep.tls_cert, ep.tls_key),
                              ep.role_config)


def _common_dict(election: tuple[int, int], role: str,
                 tls: tuple[str | None, str | None, str | None],
                 role_config: RoleConfig | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if election != (0, 1):
        out["election_id"] = list(election)
    if role:
        out["role"] = role
    if role_config is not None:
        out["role_config"] = {"exclusive": list(role_config.exclusive),
                              "shared": list(role_config.shared),
                              "packet_ins": role_config.receives_packet_ins,
                              "push_pipeline": role_config.can_push_pipeline}
    if any(tls):
        out["tls"] = {k: v for k, v in zip(("ca", "cert", "key"), tls) if v is not None}
    return out


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, int):
        return str(value)
    return _q(str(value))


def _q(text: str) -> str:
    """A scalar that reads back as this exact string."""
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS and not text.endswith(":"):
        return text
    return json.dumps(text)
