"""Every packet the emulated network destroyed, by cause.

Outside the P4 programs (the devices and wires of softswitch/fabric.py, and the emulated
failures): "queue overflow" (an egress queue full), "input buffer full" (a device's input or
recirculation buffer), "cut cable", "lossy cable", "unconnected port", "switch powered off"
(what a switch held when it lost power, and what reached it while it was off), and whatever
else `Failures.injected_drops()` names. Inside them, every drop the programs count:
the switch's `drop_counter` by reason (DROP_* in p4src/include/defines.p4) and the NIC's
`nic_counter` events that drop a packet (p4src/nic/nic_types.p4). The plan punts hop-limit
packets to the controller instead of dropping them, and the controller's link probes
(controller/daemon/probes.py) come back that way by design: a probe a switch hands its
controller is no drop (taken off "switch: hop limit" when the switch hands it over); any other
punted packet never reaches its destination and stays a drop. "nic: out of window" is data the
receiver threw away (it answers with a NACK, as for a trimmed packet, and the sender sends
it again); a duplicate the receiver already had is no loss: counted apart
(`duplicates`), not among the drops.

The NIC counts a probe of a DENIED EV it refuses ("nic: probe of a DENIED EV") and a packet
with no path template or plane port for its plane ("nic: no path") among its drops too.

The P4 counters are read from the engines each bin (cheap) and over P4Runtime at the end of
the run (the numbers a collector gets); both read the same cells. A switch that loses power
loses its counters with its pipeline: every engine a device has had is kept, and what a
replaced one counted stays in the totals (read from it directly: its P4Runtime server went
with it, as a collector polls a switch before it goes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from finsy.proto import p4r

from controller.daemon.probes import MAGIC as PROBE_MAGIC
from emulation.failures import Failures
from emulation.network import Network
from p4rt import SwitchConnection
from p4rt.resources import CounterEntry
from softswitch.engine.switch import Switch
from softswitch.runtime.device import Device

DROP_REASONS = 16   # drop_counter index = ingress_port * DROP_REASONS + reason
SWITCH_COUNTER = "drop_counter"
NIC_COUNTER = "nic_counter"
# defines.p4 DROP_* (tests/unit/test_emulation_metrics.py checks them against the file).
SWITCH_REASONS: dict[int, str] = {
    1: "truncated", 2: "SRH type", 3: "SRH length", 4: "SRH segments left", 5: "SRH too long",
    6: "hop limit", 7: "no route", 8: "external SR", 9: "SID with nothing next", 10: "decap",
    11: "not IPv6", 12: "IP version", 13: "PacketOut port",
}
# nic_types.p4 NIC_* counter indexes that drop the packet (checked against the file too).
NIC_DROPS: dict[int, str] = {
    2: "DENIED path", 3: "no connection", 6: "out of window", 10: "unknown QP",
    11: "malformed", 15: "loss injector", 20: "port down", 24: "no path",
    25: "probe of a DENIED EV",
}
NIC_RX_DUPLICATE = 5
HOP_LIMIT = 6
FABRIC_CAUSES = ("queue overflow", "input buffer full", "cut cable", "lossy cable",
                 "unconnected port", "switch powered off")
INJECTED_LABELS = {"switch_power": "switch powered off", "ev_loss": "EV loss"}


def switch_label(reason: int) -> str:
    return f"switch: {SWITCH_REASONS.get(reason, f'reason {reason}')}"


def nic_label(index: int) -> str:
    return f"nic: {NIC_DROPS[index]}"


def injected_label(key: str) -> str:
    return INJECTED_LABELS.get(key, key.replace("_", " "))


def labels(injected: Iterable[str] = ()) -> list[str]:
    """Every cause, in the report's order."""
    out = list(FABRIC_CAUSES)
    out += [label for key in injected if (label := injected_label(key)) not in out]
    out += [switch_label(r) for r in SWITCH_REASONS]
    out += [nic_label(i) for i in NIC_DROPS]
    return out


class Drops:
    """Cumulative counts per cause (`total`), per (cause, device) where a device did it
    (`at`), and the duplicates the NICs threw away."""

    def __init__(self, causes: Iterable[str]) -> None:
        self.total: dict[str, int] = dict.fromkeys(causes, 0)
        self.at: dict[str, dict[str, int]] = {}
        self.duplicates = 0

    def add(self, cause: str, amount: int, device: str | None = None) -> None:
        if not amount:
            return
        self.total[cause] = self.total.get(cause, 0) + amount
        if device is not None:
            where = self.at.setdefault(cause, {})
            where[device] = where.get(device, 0) + amount

    @property
    def dropped(self) -> int:
        return sum(self.total.values())


class DropCounter:
    """See the module docstring. `note()` whenever a device may have been replaced (a switch
    powered off or on): it keeps every device and engine seen."""

    def __init__(self, network: Network, failures: Failures) -> None:
        self.net = network
        self.failures = failures
        # Every NIC of the topology: those no workload uses run the NIC program too.
        self.nics = {n.name for n in network.topology.nics}
        self._devices: dict[str, list[Device]] = {}
        self._engines: dict[str, list[Switch]] = {}
        self._probes: dict[str, int] = {}   # link probes each switch handed its controller
        self._down: set[str] = set()
        self.note()

    def note(self) -> None:
        for node in self.net.fabric.switches:
            devices = self._devices.setdefault(node.name, [])
            if not devices or devices[-1] is not node.device:
                devices.append(node.device)
                if node.name not in self.nics:
                    node.device.add_packet_in_listener(self._punted(node.name))
            engine = node.device.switch
            engines = self._engines.setdefault(node.name, [])
            if engine is not None and (not engines or engines[-1] is not engine):
                engines.append(engine)

    def _punted(self, name: str) -> Callable[[bytes], None]:
        def punted(data: bytes) -> None:
            if PROBE_MAGIC in data:
                self._probes[name] = self._probes.get(name, 0) + 1
        return punted

    def watch(self) -> None:
        """Cheap: `note()` only when the set of switches without power changed."""
        if self.failures.down_switches != self._down:
            self._down = set(self.failures.down_switches)
            self.note()

    # -- reading ---------------------------------------------------------------------------

    def read(self) -> Drops:
        """Every cause, the P4 counters read from the engines."""
        drops = self._outside()
        for name, engines in sorted(self._engines.items()):
            self._count(drops, name, [self._engine_cells(name, e) for e in engines])
        return drops

    def read_p4runtime(self) -> Drops:
        """Every cause, the P4 counters of each device's current pipeline read over
        P4Runtime (those of pipelines a power cut replaced: from their engines)."""
        drops = self._outside()
        for name, engines in sorted(self._engines.items()):
            node = self.net.fabric.switch(name)
            current = node.device.switch if node.powered else None
            # A NIC no workload uses has no session open: its engine is read instead.
            readable = name not in self.nics or name in self.net.nics
            self._count(drops, name, [self._p4runtime_cells(name)
                                      if engine is current and readable
                                      else self._engine_cells(name, engine)
                                      for engine in engines])
        return drops

    def _outside(self) -> Drops:
        fabric = self.net.fabric
        injected = self.failures.injected_drops()
        drops = Drops(labels(injected))
        for name, devices in sorted(self._devices.items()):
            for device in devices:
                drops.add("queue overflow", device.queues.dropped, name)
                drops.add("input buffer full",
                          device.dropped_input_full + device.dropped_recirculation_full, name)
                drops.add("switch powered off", device.dropped_no_pipeline, name)
        drops.add("cut cable", fabric.link_down_drops)
        drops.add("lossy cable", fabric.loss_drops)
        drops.add("unconnected port", fabric.unlinked_drops)
        for key, n in sorted(injected.items()):
            drops.add(injected_label(key), n)
        return drops

    def _count(self, drops: Drops, name: str, engines: Sequence[Mapping[int, int]]) -> None:
        """Add what device `name`'s engines counted (each: counter index -> packets)."""
        cells: dict[int, int] = {}
        for counted in engines:
            for index, n in counted.items():
                cells[index] = cells.get(index, 0) + n
        if name in self.nics:
            for index, label in NIC_DROPS.items():
                drops.add(f"nic: {label}", cells.get(index, 0), name)
            drops.duplicates += cells.get(NIC_RX_DUPLICATE, 0)
            return
        by_reason: dict[int, int] = {}
        for index, n in cells.items():
            by_reason[index % DROP_REASONS] = by_reason.get(index % DROP_REASONS, 0) + n
        by_reason[HOP_LIMIT] = by_reason.get(HOP_LIMIT, 0) - self._probes.get(name, 0)
        for reason, n in sorted(by_reason.items()):
            drops.add(switch_label(reason), n, name)

    def _engine_cells(self, name: str, engine: Switch) -> dict[int, int]:
        """The nonzero packet counts of the device's drop counter (index -> packets)."""
        if name in self.nics:
            packets = engine.counter(NIC_COUNTER).packets
            return {i: packets[i] for i in (*NIC_DROPS, NIC_RX_DUPLICATE) if packets[i]}
        packets = engine.counter(SWITCH_COUNTER).packets
        if not any(packets):   # most switches, most bins: nothing dropped
            return {}
        return {i: n for i, n in enumerate(packets) if n}

    def _p4runtime_cells(self, name: str) -> dict[int, int]:
        """The device's counter cells over P4Runtime: the NIC's whole `nic_counter`; of the
        switch's `drop_counter`, the cells of the ports a packet can arrive on (its cables
        and its CPU port: the other 500 ports' 8,000 cells would cost 60 ms a switch). That
        no other cell counted is proven where the run compares this with the engines', which
        sum every cell."""
        if name in self.nics:
            session = self.net.nics[name].session
            assert session.schema is not None
            return _read(session, [CounterEntry(session.schema, NIC_COUNTER).to_entity()])
        node = self.net.fabric.switch(name)
        cpu = node.device.cpu_port
        ports = sorted({*node.links, *([cpu] if cpu is not None else [])})
        schema = self.net.switch_program.schema
        counter_id = CounterEntry(schema, SWITCH_COUNTER).to_entity().counter_entry.counter_id
        cells = [_cell(counter_id, port * DROP_REASONS + r)
                 for port in ports for r in range(DROP_REASONS)]
        opened = self.net.t0s.get(name)   # the controller's session to a T0 (mode mrc)
        if opened is not None:
            return _read(opened[0], cells)
        endpoint = self.net.running.switch(name).endpoint
        assert endpoint is not None
        session = SwitchConnection(endpoint.grpc_address, endpoint.device_id, schema=schema)
        try:
            return _read(session, cells)
        finally:
            session.close()


def _cell(counter_id: int, index: int) -> p4r.Entity:
    """The Read entity of one counter cell (built as a message: a collector reading thousands
    of cells at the run's end should not pay for a builder object each)."""
    return p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=counter_id,
                                                     index=p4r.Index(index=index)))


def _read(session: SwitchConnection, entities: Sequence[p4r.Entity]) -> dict[int, int]:
    """The counter cells `entities` name (no index: every cell), in one Read: index ->
    packets, nonzero only (the answer read as messages, not decoded into builders)."""
    cells: dict[int, int] = {}
    for entity in session.read_raw(entities):
        entry = entity.counter_entry
        if entry.data.packet_count:
            cells[entry.index.index] = entry.data.packet_count
    return cells
