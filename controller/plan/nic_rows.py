"""How a NIC names the destination of a connection: a `path_template` row and a uA.

The NIC's `tx_connection` gives each connection one `dst_row` and one `dst_ua`; `path_template`
is keyed (plane, dst_row), and the NIC ORs the connection's uA into the template's carrier
(p4src/nic/path.p4). So a row must lead to the peer's T0 in every plane, and one uA must fit
every plane, or the template must carry the uA itself:

- a *regular* peer sits under T0s of the same index in every plane, on the same port (every NIC
  of a Clos): its row is that index, its uA the port's, and the templates of a row are shared by
  every peer under those T0s (`row_templates`);
- any other peer (explicit wiring allows a NIC under a different T0, or on a different port, per
  plane) gets a row of its own kind, numbered after the highest T0 index: one per tuple of
  per-plane T0s when its port is the same in every plane (the uA stays the connection's), one
  per tuple of per-plane (T0, port) otherwise, with each plane's uA in the template and the
  connection's uA 0.

Rows are allocated over the whole topology in NIC order, so every NIC's plan and every checker
agrees on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.plan.usid import PlanError, ua_usid
from controller.topology.model import Nic, Tier, Topology

MAX_ROW = 0xFFFF  # dst_row is bit<16>

# An irregular row's key: the destination T0 per plane, and the port per plane when the port is
# not the same in every plane (then baked into the templates).
RowKey = tuple[tuple[str, ...], tuple[int, ...] | None]


@dataclass(frozen=True, slots=True)
class Destination:
    """A connection's `dst_row` and `dst_ua`, and what the row's templates lead to: the T0 per
    plane and, when the uA is in the templates (`dst_ua` 0), the port per plane."""

    row: int
    ua: int
    t0s: tuple[str, ...]
    ports: tuple[int, ...] | None = None


class RowBook:
    """The rows of one topology (see the module docstring)."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self._irregular: dict[RowKey, int] | None = None

    def regular(self, nic: Nic) -> bool:
        """Under T0s of one index in every plane, on one port."""
        switch = self.topology.switch
        return (len({port for _, port in nic.attachments}) == 1
                and len({switch(t0).index for t0, _ in nic.attachments}) == 1)

    def destination(self, peer: Nic) -> Destination:
        t0s = tuple(t0 for t0, _ in peer.attachments)
        first_port = peer.attachments[0][1]
        if self.regular(peer):
            return Destination(self.topology.switch(t0s[0]).index, ua_usid(first_port), t0s)
        key = _key(peer)
        row = self.irregular()[key]
        if key[1] is None:
            return Destination(row, ua_usid(first_port), t0s)
        return Destination(row, 0, t0s, key[1])

    def irregular(self) -> dict[RowKey, int]:
        """Every irregular row of the topology, by key, numbered in NIC order."""
        if self._irregular is None:
            topo = self.topology
            rows: dict[RowKey, int] = {}
            if topo.wiring != "clos":   # a Clos has no irregular NIC: not walked
                first = 1 + max((s.index for s in topo.switches if s.tier == Tier.T0),
                                default=-1)
                for nic in topo.nics:
                    if not self.regular(nic):
                        rows.setdefault(_key(nic), first + len(rows))
                if rows and first + len(rows) - 1 > MAX_ROW:
                    raise PlanError(f"{topo.source}: {len(rows)} destinations under other T0s "
                                    f"or ports per plane, after {first} T0 rows, exceed the "
                                    f"NIC's {MAX_ROW + 1} destination rows")
            self._irregular = rows
        return self._irregular


def _key(nic: Nic) -> RowKey:
    t0s = tuple(t0 for t0, _ in nic.attachments)
    ports = tuple(port for _, port in nic.attachments)
    return t0s, (ports if len(set(ports)) > 1 else None)
