"""Run an STF script against a Switch and compare what came out with what was expected.

Behaviour follows p4c's bmv2stf.py: commands run in order; output packets are collected per port
for the whole script and compared, in order, with that port's ``expect`` lines at the end; a port
whose packet count differs fails; ``expect PORT`` with no data leaves that port unchecked.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from softswitch.engine.pre import MirrorSession
from softswitch.engine.switch import Switch
from softswitch.engine.tables import (
    LpmMatch,
    Match,
    OptionalMatch,
    RangeMatch,
    Table,
    TernaryMatch,
)
from softswitch.errors import ControlPlaneError, StfError
from softswitch.stf import script as stf


@dataclass
class StfResult:
    """The outcome of one script: `problems` is empty when everything matched."""

    problems: list[str] = field(default_factory=list)
    packets_sent: int = 0
    packets_received: int = 0

    @property
    def passed(self) -> bool:
        return not self.problems


def _resolve(name: str, candidates: Sequence[str], what: str, where: stf.StfLocation) -> str:
    """`name` itself or the unique candidate it is a dot-suffix of."""
    if name in candidates:
        return name
    matches = [c for c in candidates if c.endswith("." + name)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise StfError(f"{where}: unknown {what} {name!r} (known: {', '.join(candidates)})")
    raise StfError(f"{where}: {what} {name!r} is ambiguous: {', '.join(matches)}")


def _canonical_key_name(name: str) -> str:
    """One spelling for key names: bmv2stf writes stack elements as ``NAME$N`` and validity keys
    as ``NAME.$valid$`` or ``NAME.valid``; our key fields say ``NAME[N]`` and ``NAME.isValid()``."""
    name = re.sub(r"\$(\d+)", r"[\1]", name)
    if name.endswith(".isValid()"):
        return name[: -len(".isValid()")] + ".$valid$"
    if name.endswith(".valid"):
        return name[: -len(".valid")] + ".$valid$"
    return name


class StfRunner:
    """Drives one Switch through the commands of one or more STF scripts."""

    def __init__(self, switch: Switch) -> None:
        self.switch = switch
        self.expected: dict[int, list[stf.ExpectPattern]] = defaultdict(list)
        self.unchecked_ports: set[int] = set()
        self.received: dict[int, list[bytes]] = defaultdict(list)
        self.result = StfResult()
        self._node_handles: dict[int, int] = {}
        self._entry_handles: dict[str, tuple[Table, int]] = {}

    # -- commands ---------------------------------------------------------------------------

    def run(self, commands: Sequence[stf.Command]) -> StfResult:
        for command in commands:
            try:
                self.execute(command)
            except ControlPlaneError as exc:
                raise StfError(f"{command.where}: {exc}") from exc
        self._compare()
        return self.result

    def execute(self, c: stf.Command) -> None:
        sw = self.switch
        if isinstance(c, stf.Packet):
            self.result.packets_sent += 1
            for out in sw.process_packet(c.port, c.data):
                self.received[out.port].append(out.data)
                self.result.packets_received += 1
        elif isinstance(c, stf.Expect):
            if c.pattern is None:
                self.unchecked_ports.add(c.port)
            else:
                self.expected[c.port].append(c.pattern)
        elif isinstance(c, stf.AddEntry):
            self._add(c)
        elif isinstance(c, stf.SetDefault):
            table = self._table(c.table, c.where)
            action = _resolve(c.action.name, table.action_names, "action", c.where)
            table.set_default_action(action, dict(c.action.args))
        elif isinstance(c, stf.McMgrpCreate):
            sw.pre.mc_mgrp_create(c.group)
        elif isinstance(c, stf.McNodeCreate):
            handle = sw.pre.mc_node_create(c.rid, c.ports)
            self._node_handles[len(self._node_handles)] = handle
        elif isinstance(c, stf.McNodeUpdate):
            sw.pre.mc_node_update(self._node(c.handle, c.where), c.ports)
        elif isinstance(c, stf.McNodeAssociate):
            sw.pre.mc_node_associate(c.group, self._node(c.handle, c.where))
        elif isinstance(c, stf.MirroringAdd):
            if c.length or c.cos:
                sw.pre.mirroring_add_session(c.session, MirrorSession(
                    egress_port=c.port, class_of_service=c.cos, packet_length_bytes=c.length))
            else:
                sw.pre.mirroring_add(c.session, c.port)
        elif isinstance(c, stf.MirroringAddMc):
            sw.pre.mirroring_add_mc(c.session, c.group)
        elif isinstance(c, stf.MirroringDelete):
            sw.pre.mirroring_delete(c.session)
        elif isinstance(c, stf.CounterWrite):
            sw.counter(c.counter).write(c.index, c.packets, c.bytes)
        elif isinstance(c, stf.RegisterWrite):
            sw.register(c.register).write(c.index, c.value)
        elif isinstance(c, stf.RegisterReset):
            sw.register(c.register).reset()
        elif isinstance(c, stf.MeterSetRates | stf.MeterArraySetRates):
            self._set_meter_rates(c)
        elif isinstance(c, stf.RemoveAll):
            for name in sw.table_names():
                table = sw.table(name)
                if not table.const_entries:
                    table.clear()
        # wait, check_counter, counter_read, register_read, meter_get_rates, mirroring_get:
        # bmv2stf runs these for their output only; nothing to do for the comparison.

    def _table(self, name: str, where: stf.StfLocation) -> Table:
        return self.switch.table(_resolve(name, self.switch.table_names(), "table", where))

    def _node(self, stf_handle: int, where: stf.StfLocation) -> int:
        try:
            return self._node_handles[stf_handle]
        except KeyError:
            raise StfError(f"{where}: no multicast node with handle {stf_handle}") from None

    def _add(self, c: stf.AddEntry) -> None:
        table = self._table(c.table, c.where)
        fields = table.key_fields
        names = [_canonical_key_name(f.name) for f in fields]
        given: dict[str, stf.KeyField] = {}
        for key in c.keys:
            name = _resolve(_canonical_key_name(key.name), names, f"key field of {table.name}",
                            c.where)
            given[name] = key
        matches = []
        for f, name in zip(fields, names):
            key = given.get(name)
            if key is None:
                if f.match_kind == "exact":
                    raise StfError(f"{c.where}: exact key field {f.name!r} of {table.name} missing")
                matches.append(_wildcard(f.match_kind, f.width))
                continue
            matches.append(stf.resolve_key(key, f.match_kind, f.width, c.where))
        action = _resolve(c.action.name, table.action_names, "action", c.where)
        needs_priority = any(f.match_kind in ("ternary", "range", "optional") for f in fields)
        priority = c.priority if c.priority is not None else (1 if needs_priority else None)
        handle = table.add_entry(matches, action, dict(c.action.args), priority)
        if c.handle is not None:
            self._entry_handles[c.handle] = (table, handle)

    def _set_meter_rates(self, c: stf.MeterSetRates | stf.MeterArraySetRates) -> None:
        meter = self.switch.meter(c.meter)
        if len(c.rates) != 2:
            raise StfError(f"{c.where}: a meter takes two rates (committed, peak)")
        committed, peak = c.rates
        indices = [c.index] if isinstance(c, stf.MeterSetRates) else range(meter.size)
        for index in indices:
            meter[index].set_rates_per_us(
                committed.per_unit, committed.burst, peak.per_unit, peak.burst
            )

    # -- comparison -------------------------------------------------------------------------

    def _compare(self) -> None:
        for port in sorted(set(self.expected) | set(self.received)):
            if port in self.unchecked_ports:
                continue
            report = stf.check_port(port, self.expected.get(port, []), self.received.get(port, []))
            if report is not None:
                self.result.problems.append(report)


def _wildcard(match_kind: str, width: int) -> Match:
    if match_kind == "lpm":
        return LpmMatch(0, 0)
    if match_kind == "ternary":
        return TernaryMatch(0, 0)
    if match_kind == "range":
        return RangeMatch(0, (1 << width) - 1)
    return OptionalMatch(None)


def run_stf(switch: Switch, commands: Sequence[stf.Command]) -> StfResult:
    """Run one parsed STF script against `switch`."""
    return StfRunner(switch).run(commands)
