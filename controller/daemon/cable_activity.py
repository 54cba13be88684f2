"""Which T0-T1 cables carried traffic lately, from the T0s' own port counters.

Idle monitoring (idle_probes.py) probes the cables nothing crosses: where traffic crosses a
cable, a failure of it raises EV events from the NICs sending over it, and a probe there would
only add a packet to the queues data shares. The T0 counts both directions of each of its
uplinks in the plan's port-role tables (p4src/switch/port_role.p4, one entry per port, each with
a direct counter; the plan installs them on every switch):

- up, T0 -> T1: `egress_port_role`'s counter. The controller's own PacketOuts skip that table
  (the egress pipeline leaves packets from the CPU alone), so it counts traffic only;
- down, T1 -> T0: `port_role`'s counter (ingress). A probe coming back is counted there too: the
  sweep takes its own answers off, and those still out (one may be counted before its PacketIn
  is read).

A cable is idle over a window when neither count grew beyond that. Read once per window,
one P4Runtime Read per T0 (both tables).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from controller.daemon.probes import t0_port
from controller.plan.plan import FabricPlan
from controller.repair.correlate import FabricLink
from p4rt import SwitchConnection, TableEntry
from p4rt.matches import ExactMatch
from p4rt.resources import DirectCounterEntry

PortCounts = dict[int, tuple[int, int]]   # T0 port -> (packets out to it, packets in from it)
UP_TABLE = "egress_port_role"
DOWN_TABLE = "port_role"


def read_t0_ports(session: SwitchConnection) -> PortCounts:
    """Packets out of and into each port of a switch, from its port-role tables' direct
    counters (one Read)."""
    schema = session.schema
    assert schema is not None
    found = session.read([DirectCounterEntry(TableEntry(schema, UP_TABLE)),
                          DirectCounterEntry(TableEntry(schema, DOWN_TABLE))])
    out: dict[int, list[int]] = {}
    for entry in found:
        if not isinstance(entry, DirectCounterEntry) or entry.data is None:
            continue
        table = entry.table_entry.name
        match = entry.table_entry.matches.get("port")
        if not isinstance(match, ExactMatch):
            continue
        cell = out.setdefault(match.value, [0, 0])
        cell[0 if table == UP_TABLE else 1] = entry.data.packet_count
    return {port: (up, down) for port, (up, down) in out.items()}


@dataclass
class CableActivity:
    """The cables busy over each window: `look` with every T0's counts (None: unreadable, so
    its cables count as busy) returns those that carried traffic since the last look."""

    plan: FabricPlan
    cables: list[FabricLink]
    _last: dict[FabricLink, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ports: dict[FabricLink, int] = {
            link: port for link in self.cables if (port := t0_port(self.plan, link)) is not None}
        self.t0s = sorted({link[1] for link in self.ports})

    def look(self, read: Callable[[str], PortCounts | None], answered: Mapping[FabricLink, int],
             outstanding: Mapping[FabricLink, int]) -> set[FabricLink]:
        """Read every T0 (`read(t0)`) and return the cables busy since the last look (all of
        them on the first look: there is nothing to compare with). `answered`: the sweep's
        probes back over each cable since the last look; `outstanding`: its probes still out."""
        counts = {t0: read(t0) for t0 in self.t0s}
        busy: set[FabricLink] = set()
        for link, port in self.ports.items():
            now = (counts.get(link[1]) or {}).get(port)
            before = self._last.get(link)
            if now is None:
                busy.add(link)
                self._last.pop(link, None)
                continue
            self._last[link] = now
            if before is None:
                busy.add(link)
                continue
            up, down = now[0] - before[0], now[1] - before[1]
            probes = answered.get(link, 0) + outstanding.get(link, 0)
            if up > 0 or down > probes or up < 0 or down < 0:   # < 0: the switch was reset
                busy.add(link)
        return busy
