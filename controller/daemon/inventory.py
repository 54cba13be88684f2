"""The NIC inventory `mrc-ctl run --nics` reads: each NIC's P4Runtime endpoint and target, and
the connections the hosts run (the topology knows NICs only as cabling).

    nics:                       # each NIC's P4Runtime server (target: default bmv2)
      nic0: {grpc: "10.0.1.10:9559", device_id: 1}
      nic1: {grpc: "10.0.1.11:9559", device_id: 1, target: tofino-stratum}
    connections:                # the connections the hosts run (state index in order)
      - [nic0, nic2]

Every error names FILE:LINE:COL and the field (topology/yaml_nodes.py), as the topology's do.
"""

from __future__ import annotations

from pathlib import Path

from yaml.nodes import MappingNode, Node, SequenceNode

from controller.plan.nic_plan import QP_BASE, NicConnection
from controller.topology.errors import TopologyError
from controller.topology.model import TARGETS, Endpoint, Topology
from controller.topology.yaml_nodes import NodeReader, compose, read_text

Inventory = tuple[dict[str, Endpoint], dict[str, list[NicConnection]], dict[str, str]]


def load_nics(path: str | Path, topology: Topology) -> Inventory:
    """(endpoint per NIC, connections per NIC, target per NIC) from a NIC inventory file;
    TopologyError naming the file, the line and the field otherwise."""
    source = str(path)
    text = read_text(path, TopologyError, "NIC inventory")
    return _Reader(source, topology).inventory(compose(text, source, TopologyError,
                                                       "NIC inventory"))


class _Reader(NodeReader):
    error = TopologyError

    def __init__(self, source: str, topology: Topology) -> None:
        super().__init__(source)
        self.topology = topology

    def inventory(self, root: Node) -> Inventory:
        try:
            top = self.mapping(root, "", ("nics", "connections"), ("nics",))
        except TopologyError as error:
            raise self.error(f"expected a mapping with `nics:` (NIC name -> endpoint): "
                             f"{error.message}", self.source, error.line, error.column) from None
        endpoints: dict[str, Endpoint] = {}
        targets: dict[str, str] = {}
        for key, spec in self.pairs(top["nics"][1], "nics"):
            name = self.str_(key, "nics")
            where = f"nics.{name}"
            if not self.topology.is_nic(name):
                raise self.fail(key, where, f"no NIC {name!r} in {self.topology.source}")
            got = self.mapping(spec, where, ("grpc", "device_id", "target"), ())
            if "grpc" not in got:
                raise self.fail(spec, where, "expected {grpc: HOST:PORT, device_id: N}")
            device_id = (self.int_(got["device_id"][1], f"{where}.device_id", 0, (1 << 64) - 1)
                         if "device_id" in got else 1)
            endpoints[name] = Endpoint(self.str_(got["grpc"][1], f"{where}.grpc"), device_id)
            targets[name] = (self.choice(got["target"][1], f"{where}.target", TARGETS)
                             if "target" in got else "bmv2")
        connections: dict[str, list[NicConnection]] = {}
        pairs = self.seq(top["connections"][1], "connections") if "connections" in top else []
        for i, node in enumerate(pairs):
            where = f"connections[{i}]"
            ends = node.value if isinstance(node, SequenceNode) else []
            names = [self.str_(end, where) for end in ends]
            if len(names) != 2 or not all(n in endpoints for n in names):
                raise self.fail(node, where, "expected [NIC, NIC], both listed under nics")
            if names[0] == names[1]:
                # Both ends would be one NIC's two entries for one key: it could never be
                # programmed.
                raise self.fail(node, where, f"a connection from {names[0]} to itself")
            for me, peer in (names, names[::-1]):
                mine = connections.setdefault(me, [])
                mine.append(NicConnection(len(mine), peer, QP_BASE + i, QP_BASE + i))
        return endpoints, connections, targets

    def pairs(self, node: Node, field: str) -> list[tuple[Node, Node]]:
        """A mapping's (key, value) nodes, any keys (checked by the caller)."""
        keys = tuple(str(k.value) for k, _ in node.value) if isinstance(node, MappingNode) else ()
        return list(self.mapping(node, field, keys).values())
