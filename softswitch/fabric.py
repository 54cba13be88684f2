"""In-process fabrics: softswitch devices joined by in-memory links, with hosts at the edges.

    fabric = Fabric()
    fabric.add_switch("A", program="leaf.p4", grpc_address="127.0.0.1:0")
    fabric.add_switch("B", program=checked_program)
    fabric.link("A", 3, "B", 1)
    h1 = fabric.add_host("h1", "A", 1)
    h1.send(frame); fabric.run_until_idle(); print(h1.received)

Two ways to run it: synchronously (`run_until_idle` steps the devices until no packet can
move: deterministic, for tests) or threaded (`start`/`stop` or ``with fabric:``: one dataplane
thread per device, what a controller talking gRPC to the switches needs).
A link delivers a transmitted packet straight into the peer's input queue, so by default a
fabric has no link delay; give ports a drain rate (`set_queue_rate`, packets/s) or a line rate
(`set_line_rate`, bits/s) to model link bandwidth.

Virtual time (stepped mode only): built with a `softswitch.clock.VirtualClock`, a fabric moves
packets on wires in ns. A link may then have a propagation delay (`link(..., delay_ns=...)`),
and a port with a line rate is store-and-forward: a packet departs when its port is free and
arrives at departure + bytes * 8 / rate + delay (its last bit), times rounded to the nearest
ns. Packets on the wire wait in a heap ordered by (arrival, transmit order), and
`run_until_idle` delivers those due by the clock's now; `next_event_ns` says when the next
thing can move, so a loop steps the whole fabric exactly:

    clock = VirtualClock(); fabric = Fabric(clock=clock)
    ...
    while (t := fabric.next_event_ns()) is not None:
        clock.advance_to(t)
        fabric.run_until_idle()

In virtual time an instant steps only the devices that have something to do — a packet
received, a queue's departure due, a reconfiguration — kept by softswitch/schedule.py, in the
order a scan of every device would take, so the cost of an instant follows the packets that
move, not the size of the fabric.
`wire_hops` counts the packets put on cables between two devices, `host_handoffs` those
between a device and a host, each a plain integer per wire (no observer needed).
Observers (`add_observer`, or `capture()` for a list) see every packet that crosses a link, a
host attachment or an unlinked port, as a `Delivery` — a tap on every wire at once — when it is
put on the wire (with its transmit time, `Delivery.time_ns`). A measurement that needs only
counts takes a `tally` (softswitch/wire_tally.py: packets, bytes and packets of chosen DSCPs
per wire and time bin), which costs the native core no Python per packet.
`set_link_up(switch, port, False)` cuts a cable (both directions drop, counted in
`link_down_drops`, and so are the packets in flight on it, as on a cut fibre) until it is set
up again. Silent failures leave every link up: `set_link_blackhole` makes a cable eat both
directions, `set_blackhole` a switch swallow whatever reaches it (both counted in
`blackhole_drops`), `set_link_loss` loses packets at random (one direction or both), and
`set_wire_filter` drops the packets a predicate picks out of what one port sends.
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from heapq import heapify, heappop, heappush
from operator import index
from pathlib import Path
from typing import Any

from softswitch.clock import VirtualClock
from softswitch.engine.switch import Switch
from softswitch.ir.checked import CheckedProgram
from softswitch.program_memo import ProgramMemo
from softswitch.runtime.device import Device, ForwardingPipeline
from softswitch.runtime.queues import EPSILON_US
from softswitch.schedule import DeviceSchedule
from softswitch.wire_tally import WireTally

ProgramSource = str | Path | CheckedProgram
BURST = 64  # steps a device takes before the next device's turn (a pass interleaves them)
# Threads the P4Runtime servers' unary calls share (streaming calls get threads of their own:
# runtime/server/worker_pool.py). The servers run under this process's one GIL: more threads
# would not answer faster, only wake more.
RPC_WORKERS = 16


@dataclass(frozen=True, slots=True)
class Delivery:
    """One packet on a wire: sent by `sender` (a switch, out of `sender_port`; or a host, port
    None) to `receiver` on `receiver_port` (a host: its switch-side port; None: nothing there).
    `time_ns`: when it was put on the wire, in ns — a switch's packet at its departure from the
    egress queue (sending device's clock), a host's at the fabric clock's now (0 with no clock
    given to the fabric)."""

    sender: str
    sender_port: int | None
    receiver: str | None
    receiver_port: int | None
    data: bytes
    time_ns: int = 0


@dataclass(slots=True, eq=False)
class _Wire:
    """One direction of a cable or host attachment: where packets out of a port go."""

    receiver: str
    receiver_port: int
    target: Callable[[bytes], None]
    delay_ns: int = 0
    up: bool = True
    loss: float = 0.0                   # the chance each packet is lost on the way
    draw: Callable[[bytes], float] | None = None   # a packet's draw in [0, 1) (seeded)
    blackhole: bool = False             # up, yet everything sent on it vanishes
    drop: Callable[[bytes], bool] | None = None   # True: this packet is lost (the caller counts)
    to_host: bool = False               # a host attachment, not a cable between two devices
    carried: int = 0                    # packets put on it (wire_hops, host_handoffs)


# a packet on a wire: (arrival ns, transmit sequence number, wire, data)
_InFlight = tuple[int, int, _Wire, bytes]


class Capture:
    """Deliveries recorded in order while attached (`Fabric.capture()`; `detach` to stop)."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.deliveries: list[Delivery] = []

    def __call__(self, delivery: Delivery) -> None:
        self.deliveries.append(delivery)  # list.append is atomic: device threads may call this

    def between(self, sender: str, receiver: str) -> list[bytes]:
        """What `sender` sent to `receiver`, in order."""
        return [d.data for d in self.deliveries if d.sender == sender and d.receiver == receiver]

    def path(self) -> list[str]:
        """The nodes in delivery order: the first sender, then each receiver (a single packet's
        walk through the fabric reads as its path)."""
        if not self.deliveries:
            return []
        return [self.deliveries[0].sender, *(d.receiver or "-" for d in self.deliveries)]

    def clear(self) -> None:
        self.deliveries.clear()

    def detach(self) -> None:
        self.fabric.remove_observer(self)


@dataclass(frozen=True)
class _Compiled:
    program: CheckedProgram
    p4info: Any
    device_config: bytes


# Programs loaded from files by the fabrics of this process, and each program's P4Info and IR
# bytes: made once (the program's, kept weakly, as engine/compiled.py keeps its code).
PROGRAMS = ProgramMemo()
_compiled: weakref.WeakKeyDictionary[CheckedProgram, _Compiled] = weakref.WeakKeyDictionary()
_compiled_lock = threading.Lock()


class Host:
    """An end host on one switch port: `send` frames in, read what the fabric delivers."""

    def __init__(self, fabric: Fabric, name: str, switch: str, port: int) -> None:
        self.fabric = fabric
        self.name = name
        self.switch = switch
        self.port = port
        self.received: list[bytes] = []
        self._read = 0
        self._lock = threading.RLock()   # (taken directly where nobody is woken: cheaper)
        self._cond = threading.Condition(self._lock)
        self._waiting = 0   # threads in `_wait`, counted under the lock: a delivery wakes them
        self._waker: Callable[[], None] | None = None

    def set_waker(self, wake: Callable[[], None] | None) -> None:
        """Call `wake` after each packet delivered here: a stepping loop then reads only the
        hosts that had packets (emulation/run.py), not every host at every instant."""
        self._waker = wake

    def send(self, data: bytes) -> None:
        self.fabric._inject(self.switch, self.port, data)

    def _deliver(self, data: bytes) -> None:
        with self._lock:
            self.received.append(data)
            if self._waiting:
                self._cond.notify_all()
        if self._waker is not None:
            self._waker()

    @contextmanager
    def _wait(self, timeout: float, run_fabric: bool = True) -> Iterator[None]:
        """Hold the lock once an unread packet is there or `timeout` s have passed; with
        `run_fabric`, a fabric that is not running threads is first run until idle."""
        if run_fabric and not self.fabric.running:
            with self._cond:
                ready = self._read < len(self.received)
            if not ready:
                self.fabric.run_until_idle()
        with self._cond:
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: self._read < len(self.received), timeout)
            finally:
                self._waiting -= 1
            yield

    def receive(self, timeout: float = 1.0) -> bytes | None:
        """The next packet not yet returned by `receive`; None if none comes within `timeout`
        s. A fabric that is not running threads is first run until idle."""
        with self._wait(timeout):
            if self._read >= len(self.received):
                return None
            self._read += 1
            return self.received[self._read - 1]

    def take(self, timeout: float = 0.0) -> list[bytes]:
        """Every packet not yet returned, waiting up to `timeout` s for one (a stepped fabric is
        run first when `timeout` > 0); they (and those already read) are forgotten, so a
        long-running reader keeps no history."""
        # Only a caller that waits makes a stepped fabric move: a stepping loop (NicFabric)
        # takes what is there after its own run_until_idle, without running every device again.
        if timeout <= 0:
            if not self.received:
                return []   # the stepping loops' common case: no lock (a list's length is atomic)
            with self._lock:
                return self._take()
        with self._wait(timeout):
            return self._take()

    def _take(self) -> list[bytes]:
        out = self.received[self._read:]
        self.received.clear()
        self._read = 0
        return out

    def clear(self) -> None:
        with self._cond:
            self.received.clear()
            self._read = 0

    def __repr__(self) -> str:
        return f"Host({self.name!r} on {self.switch}:{self.port})"


@dataclass
class FabricSwitch:
    """A switch of the fabric: its Device, and its P4Runtime server when it has an address."""

    name: str
    device: Device
    server: Any = None
    links: dict[int, tuple[str, int]] = field(default_factory=dict)  # port → (peer, peer port)
    make_device: Callable[[], Device] | None = None  # a blank device like this one (power_on)
    powered: bool = True

    @property
    def engine(self) -> Switch:
        """The engine Switch of the installed program (direct control-plane access)."""
        sw = self.device.switch
        if sw is None:
            raise RuntimeError(f"switch {self.name!r} has no P4 program")
        return sw

    @property
    def grpc_port(self) -> int | None:
        return None if self.server is None else int(self.server.port)

    @property
    def grpc_address(self) -> str | None:
        return None if self.server is None else f"127.0.0.1:{self.server.port}"


class Fabric:
    """Switches, links and hosts in one process."""

    def __init__(self, *, clock: VirtualClock | Callable[[], int] | None = None,
                 trace: Callable[[str, str], None] | None = None,
                 native: bool | None = None) -> None:
        """`clock` (µs) is shared by every device (tests step it by hand); a `VirtualClock`
        also gives the fabric virtual time in ns (see the module docstring). `trace`, when
        given, receives ``(switch name, line)`` for each device's BMv2-style log line.
        `native` (None: ``$SOFTSWITCH_FABRIC == "native"``): stepped virtual time runs in
        the native fabric core (softswitch/native/fabric_core.py) when every device runs
        the C engine; otherwise, or when it cannot, the Python core does
        (`native_reason` says why). Native with a virtual clock, the devices share one lock
        (`device_lock`, the core's): threaded, they then step one at a time."""
        if native is None:
            native = os.environ.get("SOFTSWITCH_FABRIC", "python") == "native"
        self.native = native
        self.native_reason: str | None = None if native else "not asked for"
        self._native: Any = None   # the FabricCore once attached
        self.clock = clock
        self._vclock = clock if isinstance(clock, VirtualClock) else None
        # The devices the native core may run share one lock (the core's): a run holds it,
        # so a P4Runtime write waits for the instant to end, at one acquire per instant.
        self.device_lock = threading.RLock() if native and self._vclock is not None else None
        self._tally: WireTally | None = None
        self._wires: dict[str, dict[int, _Wire]] = {}  # switch → its port → where packets go
        self._heap: list[_InFlight] = []  # packets on wires (virtual time), by arrival
        self._wire_seq = 0
        self._timed = self._vclock is not None  # stepped virtual time: wires take time
        self.trace = trace
        self._switches: dict[str, FabricSwitch] = {}
        self._nodes: list[FabricSwitch] = []  # the switches by index (order of addition)
        self._schedule = DeviceSchedule()  # stepped virtual time: which devices to step
        self._hosts: dict[str, Host] = {}
        self._observers: list[Callable[[Delivery], None]] = []
        # The devices' P4Runtime servers share what is made with the first: one ProgramCache
        # (a controller pushes the same program to each, checked and its code made once), one
        # WorkerPool (threads for their calls) and one DigestSweeper (one thread for all their
        # digest timeouts), so a fabric of N servers runs N + RPC_WORKERS + 1 threads for
        # them, plus two per open stream.
        self._programs: Any = None
        self._server_pool: Any = None
        self._sweeper: Any = None
        self._running = False
        self._moves = 0  # deliveries so far; tells a quiet fabric from one between two steps
        self.unlinked_drops = 0  # packets sent out of a port with nothing attached
        self.link_down_drops = 0  # packets sent onto a cut cable
        self.loss_drops = 0  # packets lost on lossy cables (set_link_loss)
        self.blackhole_drops = 0  # packets blackholed cables and switches swallowed
        self._injected = 0  # packets hosts handed their switch (host_handoffs)
        self._blackholed: set[str] = set()  # switches that swallow what they receive

    # -- building -------------------------------------------------------------------------------

    def add_switch(self, name: str, program: ProgramSource | None = None, *,
                   device_id: int | None = None, cpu_port: int | None = None,
                   grpc_address: str | None = None, priority_queues: int = 1,
                   drop_port: int = 511, dump_packet_data: int = 0) -> FabricSwitch:
        """A new switch running `program` (a .p4 file, an IR .json file or a checked program;
        None: no program, as ``--no-p4``, for a controller to install). `device_id` defaults
        to 1, 2, 3... in order of addition. With `grpc_address` ("127.0.0.1:0" picks a free
        port) a P4Runtime server serves the switch."""
        if name in self._switches or name in self._hosts:
            raise ValueError(f"fabric already has a node named {name!r}")
        self._not_native("add a switch")
        if device_id is None:
            device_id = len(self._switches) + 1
        trace = self._named_trace(name)
        fine_clock = None if self._vclock is None else self._vclock.us
        self._wires.setdefault(name, {})
        # its index in the schedule once added below (a failed add_switch leaves none)
        wake = None if self._vclock is None else partial(self._schedule.post,
                                                         len(self._nodes))

        device_class: Callable[..., Device] = Device
        if self.native:
            from softswitch.native.fabric_device import FabricDevice
            device_class = partial(FabricDevice, lock=self.device_lock)

        def make_device() -> Device:
            device = device_class(device_id, cpu_port=cpu_port, drop_port=drop_port,
                                  priority_queues=priority_queues, trace=trace,
                                  dump_packet_data=dump_packet_data, clock=self.clock,
                                  fine_clock=fine_clock)
            device.set_output(self._output_fn(name, device))
            device.set_waker(wake)
            return device

        device = make_device()
        node = FabricSwitch(name, device, make_device=make_device)
        if program is not None:
            device.commit(self._pipeline(program, drop_port, trace))
        if grpc_address is not None:
            node.server = self._serve(device, grpc_address)
        self._switches[name] = node
        self._nodes.append(node)
        self._schedule.add()
        if self._running:
            device.start()
        return node

    def _named_trace(self, name: str) -> Callable[[str], None] | None:
        fabric_trace = self.trace
        if fabric_trace is None:
            return None

        def trace(line: str) -> None:
            fabric_trace(name, line)
        return trace

    def _pipeline(self, program: ProgramSource, drop_port: int,
                  trace: Callable[[str], None] | None) -> ForwardingPipeline:
        compiled = self._compile(program)
        switch = Switch(compiled.program, drop_port=drop_port, trace=trace)
        return ForwardingPipeline(compiled.p4info, compiled.device_config, 0, switch,
                                  compiled.program)

    def _compile(self, program: ProgramSource) -> _Compiled:
        """Compile once per program: every switch running it shares P4Info and IR bytes, in
        this fabric and the next ones of this process (a program file compiled once while it
        is unchanged: program_memo.py)."""
        from softswitch.ir.serialize import dumps_ir
        from softswitch.p4info import build_p4info

        checked = program if isinstance(program, CheckedProgram) else PROGRAMS.load(program)
        with _compiled_lock:
            compiled = _compiled.get(checked)
        if compiled is None:
            compiled = _Compiled(checked, build_p4info(checked), dumps_ir(checked).encode())
            with _compiled_lock:
                compiled = _compiled.setdefault(checked, compiled)
        return compiled

    def link(self, a: str, a_port: int, b: str, b_port: int, delay_ns: int = 0) -> None:
        """A bidirectional link between port `a_port` of switch `a` and `b_port` of `b`, with a
        propagation delay of `delay_ns` each way. A delay needs virtual time (the fabric built
        with a `VirtualClock`) and stepped mode; with 0 a packet reaches the peer at once (or,
        on a line-rate port in virtual time, when its last bit is sent)."""
        delay_ns = index(delay_ns)
        if delay_ns < 0:
            raise ValueError(f"a link delay cannot be negative ({delay_ns} ns)")
        if delay_ns and self._vclock is None:
            raise ValueError("a link with a delay needs virtual time: Fabric(clock=VirtualClock())")
        if delay_ns and self._running:
            raise NotImplementedError("links with a delay run only in stepped mode")
        self._not_native("add a cable")
        sa, sb = self.switch(a), self.switch(b)
        for sw, port in ((sa, a_port), (sb, b_port)):
            if port in self._wires[sw.name]:
                raise ValueError(f"port {port} of {sw.name!r} is already connected")
        self._wires[a][a_port] = _Wire(b, b_port, self._receiver(sb, b_port), delay_ns)
        self._wires[b][b_port] = _Wire(a, a_port, self._receiver(sa, a_port), delay_ns)
        sa.links[a_port] = (b, b_port)
        sb.links[b_port] = (a, a_port)

    def _cable(self, switch: str, port: int) -> tuple[_Wire, _Wire]:
        """Both directions of the switch-to-switch cable on `port` of `switch`."""
        wire = self._wires.get(switch, {}).get(port)
        if wire is None or wire.receiver not in self._switches:
            raise ValueError(f"port {port} of {switch!r} has no link to a switch")
        return wire, self._wires[wire.receiver][wire.receiver_port]

    def set_link_up(self, switch: str, port: int, up: bool) -> None:
        """Cut (`up=False`) or mend the cable on `port` of `switch`: while cut, what either end
        sends on it is lost, as on a pulled fibre. Packets already delivered are not recalled;
        packets in flight on it (virtual time: arriving after now) are lost at the cut, counted
        in `link_down_drops`."""
        wires = self._cable(switch, port)
        for wire in wires:
            wire.up = up
        self._native_wires(wires)
        if not up:
            self.link_down_drops += self._purge(wires)

    def _purge(self, wires: tuple[_Wire, ...]) -> int:
        """Take the packets in flight on `wires` (virtual time: arriving after now) off them,
        as lost; how many there were."""
        if self._native is not None:
            return int(self._native.purge(wires))
        heap = self._heap
        if not heap or self._vclock is None:
            return 0
        now = self._vclock.now_ns
        kept = [e for e in heap if e[0] <= now or not any(e[2] is w for w in wires)]
        lost = len(heap) - len(kept)
        if lost:
            heap[:] = kept
            heapify(heap)
        return lost

    def set_link_loss(self, switch: str, port: int, probability: float,
                      rng: random.Random | Callable[[bytes], float],
                      direction: str = "both") -> None:
        """Lose each packet sent on the cable at `port` of `switch` with `probability` (0 ends
        it): lost when its draw is below it, drawn from `rng` in transmit order (seed it for a
        run that repeats), or `rng(packet)` (a draw of the packet's own); counted in
        `loss_drops`. `direction`: "both" ways, "out" (what `switch` sends on it) or "in"
        (what it receives on it)."""
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"a loss probability is in [0, 1], not {probability}")
        out, back = self._cable(switch, port)
        chosen = {"both": (out, back), "out": (out,), "in": (back,)}.get(direction)
        if chosen is None:
            raise ValueError(f"a loss direction is both, out or in, not {direction!r}")
        draw = (lambda _packet, r=rng: r.random()) if isinstance(rng, random.Random) else rng
        for wire in chosen:
            wire.loss, wire.draw = probability, draw
        self._native_wires(chosen)

    def set_link_delay(self, switch: str, port: int, delay_ns: int) -> None:
        """The propagation delay of the cable at `port` of `switch`, both ways, from now on
        (packets already on it keep their arrival time)."""
        delay_ns = index(delay_ns)
        if delay_ns < 0:
            raise ValueError(f"a link delay cannot be negative ({delay_ns} ns)")
        if delay_ns and self._vclock is None:
            raise ValueError("a link with a delay needs virtual time: Fabric(clock=VirtualClock())")
        for wire in self._cable(switch, port):
            wire.delay_ns = delay_ns
        self._native_wires(self._cable(switch, port))

    def set_link_blackhole(self, switch: str, port: int, on: bool) -> None:
        """A silent failure of the cable at `port` of `switch`: while on, what either end sends
        on it vanishes (counted in `blackhole_drops`, as are the packets in flight on it when
        it starts), yet the link stays up (`link_is_up`) and nothing is told."""
        wires = self._cable(switch, port)
        for wire in wires:
            wire.blackhole = on
        self._native_wires(wires)
        if on:
            self.blackhole_drops += self._purge(wires)

    def set_blackhole(self, name: str, on: bool) -> None:
        """A silent failure of switch `name`: while on, it keeps its P4Runtime server, ports
        and tables, but whatever reaches it (or waits in it) goes nowhere, counted in
        `blackhole_drops`; its links stay up."""
        self.switch(name)
        (self._blackholed.add if on else self._blackholed.discard)(name)
        if self._native is not None:
            self._native.set_blackholed(name, on)

    def set_wire_filter(self, switch: str, port: int,
                        drop: Callable[[bytes], bool] | None) -> None:
        """Call `drop` on each packet `switch` sends out of `port` (None: stop): the packets it
        answers True for are lost on the wire (the caller counts them; observers saw them)."""
        wire = self._wires.get(switch, {}).get(port)
        if wire is None:
            raise ValueError(f"port {port} of {switch!r} is not connected")
        wire.drop = drop
        self._native_wires((wire,))

    def link_is_up(self, switch: str, port: int) -> bool:
        wire = self._wires.get(switch, {}).get(port)
        return wire is None or wire.up

    def power_off(self, name: str) -> None:
        """Switch `name` off, as a pulled power cord: its P4Runtime server stops (every stream
        ends), it forwards nothing, and its pipeline and tables are gone. `power_on` brings it
        back blank, on the same P4Runtime address, for a controller to program again."""
        node = self.switch(name)
        if not node.powered:
            return
        node.powered = False
        if node.server is not None:
            node.server.stop(0)
        node.device.stop()
        assert node.make_device is not None
        old = node.device
        node.device = node.make_device()   # no pipeline: drops whatever still reaches it
        if self._native is not None:
            self._native.replace(self._nodes.index(node), old, node.device)
        self._schedule.post(self._nodes.index(node))   # what the old device had is gone

    def power_on(self, name: str, program: ProgramSource | None = None) -> None:
        """Boot a switch switched off by `power_off`: running `program` (None: no program, as
        `--no-p4`) with empty tables, its P4Runtime server listening where it did before."""
        node = self.switch(name)
        if node.powered:
            return
        if program is not None:
            node.device.commit(self._pipeline(program, node.device.drop_port, node.device.trace))
        if node.server is not None:
            node.server = self._serve(node.device, f"127.0.0.1:{node.server.port}")
        node.powered = True
        if self._running:
            node.device.start()

    def add_host(self, name: str, switch: str, port: int) -> Host:
        """A host attached to `port` of `switch`."""
        if name in self._switches or name in self._hosts:
            raise ValueError(f"fabric already has a node named {name!r}")
        self._not_native("add a host")
        self.switch(switch)
        if port in self._wires[switch]:
            raise ValueError(f"port {port} of {switch!r} is already connected")
        host = Host(self, name, switch, port)
        self._hosts[name] = host
        self._wires[switch][port] = _Wire(name, port, host._deliver, to_host=True)
        return host

    def _receiver(self, node: FabricSwitch, port: int) -> Callable[[bytes], None]:
        blackholed = self._blackholed

        def deliver(data: bytes) -> None:
            if blackholed and node.name in blackholed:
                self.blackhole_drops += 1
                return
            node.device.receive(port, data)   # looked up per packet: power_on swaps the device
        return deliver

    def _output_fn(self, name: str, device: Device) -> Callable[[int, bytes], None]:
        """What `device` (switch `name`) calls for each packet it transmits."""
        wires = self._wires[name]
        heap = self._heap
        vclock = self._vclock
        blackholed = self._blackholed

        def output(port: int, data: bytes) -> None:
            self._moves += 1
            if blackholed and name in blackholed:   # what it held when it went silent
                self.blackhole_drops += 1
                return
            wire = wires.get(port)
            if wire is None:
                if self._observers:
                    self._observe(Delivery(name, port, None, None, data,
                                           round(device.tx_start_us * 1000)))
                self.unlinked_drops += 1
                return
            if not wire.up:
                self.link_down_drops += 1
                return
            wire.carried += 1
            if self._tally is not None:
                self._tally.count((name, port, wire.receiver, wire.receiver_port),
                                  round(device.tx_start_us * 1000), data)
            if self._observers:
                self._observe(Delivery(name, port, wire.receiver, wire.receiver_port, data,
                                       round(device.tx_start_us * 1000)))
            if wire.blackhole:
                self.blackhole_drops += 1
                return
            if wire.drop is not None and wire.drop(data):
                return
            if wire.loss and wire.draw is not None and wire.draw(data) < wire.loss:
                self.loss_drops += 1
                return
            if self._timed and vclock is not None:
                arrival = round(device.tx_end_us * 1000) + wire.delay_ns
                if arrival > vclock.now_ns:
                    self._wire_seq += 1
                    heappush(heap, (arrival, self._wire_seq, wire, data))
                    return
            wire.target(data)
        return output

    def _inject(self, switch: str, port: int, data: bytes) -> None:
        self._moves += 1
        self._injected += 1
        if self._observers or self._tally is not None:
            wire = self._wires.get(switch, {}).get(port)
            host = wire.receiver if wire else "?"
            if self._tally is not None:
                self._tally.count((host, None, switch, port), self._now_ns(), data)
            if self._observers:
                self._observe(Delivery(host, None, switch, port, data, self._now_ns()))
        if switch in self._blackholed:
            self.blackhole_drops += 1
            return
        self.switch(switch).device.receive(port, data)

    def _now_ns(self) -> int:
        if self._vclock is not None:
            return self._vclock.now_ns
        return 0 if self.clock is None else self.clock() * 1000

    def _deliver_due(self, now_ns: int) -> bool:
        """Hand the packets on wires that arrived by `now_ns` to their receivers, in order."""
        heap = self._heap
        if not heap or heap[0][0] > now_ns:
            return False
        while heap and heap[0][0] <= now_ns:
            entry = heappop(heap)
            self._moves += 1
            entry[2].target(entry[3])
        return True

    @property
    def wire_hops(self) -> int:
        """Packets put on cables between two devices (switch to switch, NIC to switch and back:
        a packet-level simulator's hops), lost on the way or not; not those onto a cut cable."""
        carried = self._carried
        return sum(carried(w) for wires in self._wires.values() for w in wires.values()
                   if not w.to_host)

    @property
    def host_handoffs(self) -> int:
        """Packets between a device and a host attached to it (`add_host`), both ways: in the
        emulator, a NIC's host port and its transport; exact in stepped mode."""
        carried = self._carried
        return self._injected + sum(carried(w) for wires in self._wires.values()
                                    for w in wires.values() if w.to_host)

    def _carried(self, wire: _Wire) -> int:
        return wire.carried if self._native is None else int(self._native.carried(wire))

    @property
    def in_flight(self) -> int:
        """Packets on wires that have not arrived yet (virtual time)."""
        return len(self._heap) if self._native is None else int(self._native.in_flight())

    # -- the native core ------------------------------------------------------------------------

    def _serve(self, device: Device, address: str) -> Any:
        """A started P4Runtime server for `device` on `address`, with what the fabric's
        servers share (made with the first)."""
        from softswitch.runtime.server.server import P4RuntimeServer  # not needed otherwise

        if self._programs is None:
            from softswitch.runtime.program_cache import ProgramCache

            self._programs = ProgramCache()
        if self._server_pool is None:
            from softswitch.runtime.server.digest_sweeper import DigestSweeper
            from softswitch.runtime.server.worker_pool import WorkerPool

            self._server_pool = WorkerPool(RPC_WORKERS)
            self._sweeper = DigestSweeper()
        server = P4RuntimeServer(device, address, programs=self._programs,
                                 pool=self._server_pool, sweeper=self._sweeper)
        server.start()
        return server

    def attach_native(self) -> bool:
        """Attach the native core now, when the fabric is built, instead of at the first step
        (its set-up then counts as setup, not as the run); whether it runs, as `_use_native`.
        Nothing may add cables or hosts afterwards."""
        return self._vclock is not None and self._use_native()

    def _use_native(self) -> bool:
        """Whether stepped virtual time runs in the native core (attached at the first step
        that finds the fabric able; else `native_reason` says why not, once, and the Python
        core runs)."""
        if self._native is not None:
            return True
        if not self.native or self.native_reason is not None:
            return False
        from softswitch.native.fabric_core import attach

        self._native, self.native_reason = attach(self)
        if self._native is None:
            import logging

            logging.getLogger("softswitch.fabric").warning(
                "native fabric core not used: %s", self.native_reason)
            return False
        return True

    def _not_native(self, what: str) -> None:
        if self._native is not None:
            raise NotImplementedError(f"cannot {what} once the native fabric core runs")

    def _native_wires(self, wires: tuple[_Wire, ...]) -> None:
        if self._native is not None:
            for wire in wires:
                self._native.wire_changed(wire)

    # -- observing ------------------------------------------------------------------------------

    def add_observer(self, fn: Callable[[Delivery], None]) -> None:
        """Call `fn` for every packet put on a wire (from any device thread, before delivery)."""
        self._observers = [*self._observers, fn]  # copy: device threads iterate the old list
        if self._native is not None:
            self._native.observers(True)

    def remove_observer(self, fn: Callable[[Delivery], None]) -> None:
        self._observers = [o for o in self._observers if o != fn]  # bound methods: ==
        if self._native is not None:
            self._native.observers(bool(self._observers))

    def tally(self, bin_ns: int, dscps: Iterable[int] = ()) -> WireTally:
        """Count what every wire carries per bin of `bin_ns` (softswitch/wire_tally.py),
        `dscps` apart, from now on; `take()` the counts. A fabric keeps one tally."""
        if self._tally is not None:
            raise ValueError("this fabric already keeps a tally (one per fabric)")
        tally = WireTally(bin_ns, dscps)
        self._tally = tally
        if self._native is not None:
            self._native.set_tally(tally)
        return tally

    def capture(self) -> Capture:
        """A new `Capture`, attached until `detach()`."""
        cap = Capture(self)
        self.add_observer(cap)
        return cap

    def _observe(self, delivery: Delivery) -> None:
        for fn in self._observers:
            fn(delivery)

    # -- access ---------------------------------------------------------------------------------

    def switch(self, name: str) -> FabricSwitch:
        node = self._switches.get(name)
        if node is None:
            known = ", ".join(self._switches) or "none"
            raise KeyError(f"no switch named {name!r} (switches: {known})")
        return node

    def host(self, name: str) -> Host:
        return self._hosts[name]

    @property
    def switches(self) -> list[FabricSwitch]:
        return list(self._switches.values())

    @property
    def hosts(self) -> list[Host]:
        return list(self._hosts.values())

    @property
    def running(self) -> bool:
        return self._running

    # -- running --------------------------------------------------------------------------------

    def run_until_idle(self, timeout: float = 5.0) -> None:
        """Move packets until none can move (threaded: wait until the devices are quiet).
        Rate-limited queues are waited for with the real clock; with an injected clock this
        returns when nothing may leave at the current time (in virtual time: no device can
        move and no packet on a wire has arrived by now). TimeoutError after `timeout` s."""
        native = self._native
        if native is not None:   # (attached: virtual time, never threaded)
            native.run_instant(native.clock.now_ns)
            return
        deadline = time.monotonic() + timeout
        if self._running:
            self._wait_quiet([s.device for s in self._switches.values()], deadline)
            return
        if self._vclock is not None:
            if self._use_native():
                self._native.run_instant(self._vclock.now_ns)
                return
            self._run_instant(self._vclock, deadline, timeout)
            return
        devices = [s.device for s in self._switches.values()]
        while True:
            moved = True
            while moved:
                moved = False
                for dev in devices:
                    for _ in range(BURST):
                        if not dev.step():
                            break
                        moved = True
                if time.monotonic() > deadline:
                    raise TimeoutError(f"fabric still busy after {timeout} s")
            if self.clock is not None:  # the caller moves the clock
                return
            when = [t for t in (d.next_departure() for d in devices) if t is not None]
            if not when:
                return
            wait = (min(when) - devices[0].now_us()) / 1e6
            if time.monotonic() + wait > deadline:
                raise TimeoutError(f"fabric queues still draining after {timeout} s")
            time.sleep(max(wait, 0.0))

    def _run_instant(self, vclock: VirtualClock, deadline: float, timeout: float) -> None:
        """Everything that can move at the clock's now, stepping only the devices that have
        something to do (softswitch/schedule.py), in the order a scan of every device would:
        passes in device order, a burst of up to `BURST` steps per ready device per pass,
        the packets on wires that arrived by now handed over before each pass."""
        schedule = self._schedule
        nodes = self._nodes
        now_ns = vclock.now_ns
        limit_us = vclock.us() + EPSILON_US   # the queues' own test of a due departure
        while True:
            self._deliver_due(now_ns)
            if not schedule.start_pass(limit_us):
                return
            while (i := schedule.pop()) is not None:
                dev = nodes[i].device
                for _ in range(BURST):
                    if not dev.step():
                        schedule.idle(i, dev.next_departure())
                        break
                else:
                    schedule.wake(i)   # more to do: in the next pass, as a scan would
            if time.monotonic() > deadline:
                raise TimeoutError(f"fabric still busy after {timeout} s")

    def run_span(self, start_ns: int, bound_ns: int) -> bool:
        """A stepping loop's instants while only the fabric moves, on the native core: the
        instant `start_ns` (the fabric's next event, at or after now), then each next fabric
        event before `bound_ns` (the loop's own next deadline), run in C without returning
        until one leaves work for Python (a host's frame, a packet-in, a digest, an observed
        packet or register write); the clock is left at the last instant run. Each instant is
        what `clock.advance_to(t); run_until_idle()` does at it. False, nothing done, on the
        Python core (the loop steps instant by instant itself)."""
        native = self._native
        if native is None:
            return False
        if start_ns < native.clock.now_ns:
            raise ValueError(f"virtual time cannot go back from {native.clock.now_ns} ns "
                             f"to {start_ns} ns")
        native.run_span(start_ns, bound_ns)
        return True

    def next_event_ns(self) -> int | None:
        """Virtual time (ns, rounded up) at which something can move next: a packet leaving a
        device's egress queue or arriving off a wire; the clock's now when a device has input
        to process or something is due; None when the fabric holds no packet at all."""
        native = self._native
        if native is not None:   # (attached: virtual time, never threaded)
            return native.next_event_ns(native.clock.now_ns)
        vclock = self._vclock
        if vclock is None:
            raise RuntimeError("next_event_ns needs virtual time: Fabric(clock=VirtualClock())")
        if not self._running and self._use_native():
            t = self._native.next_event_ns(vclock.now_ns)
            return None if t is None else int(t)
        now_ns = vclock.now_ns
        best = self._heap[0][0] if self._heap else None
        if best is not None and best <= now_ns:
            return now_ns
        now_us = vclock.us()
        if self._running:   # devices step in their own threads: ask each
            devices = [node.device for node in self._nodes]
            departure = None
        else:   # the ready ones; the others' departures are the schedule's timers
            devices = [self._nodes[i].device for i in self._schedule.ready()]
            departure = self._schedule.earliest()
        for dev in devices:
            if dev.has_input():
                return now_ns
            when = dev.next_departure()
            if when is not None and (departure is None or when < departure):
                departure = when
        if departure is None:
            return best
        if departure <= now_us + EPSILON_US:  # the queues' own test: it may leave now
            return now_ns
        t = max(math.ceil((departure - EPSILON_US / 2) * 1000), now_ns + 1)
        return t if best is None or t < best else best

    def _wait_quiet(self, devices: list[Device], deadline: float) -> None:
        """Return once no device has work and no packet moved for one polling interval."""
        last = -1
        while True:
            moves = self._moves
            if moves == last and not any(d.pending() for d in devices):
                return
            last = moves
            if time.monotonic() > deadline:
                raise TimeoutError("fabric still busy")
            time.sleep(0.001)

    def start(self) -> None:
        """One dataplane thread per device. Wires then deliver at once: links with a delay
        raise NotImplementedError (they need stepped virtual time), and packets already in
        flight stay there until the fabric is stepped again."""
        self._not_native("run threads")
        if any(w.delay_ns for ws in self._wires.values() for w in ws.values()):
            raise NotImplementedError("links with a delay run only in stepped virtual time "
                                      "(run_until_idle), not threaded")
        self._running = True
        self._timed = False
        self._schedule.enabled = False   # the threads step; `stop` has every device stepped
        for s in self._switches.values():
            s.device.start()

    def stop(self) -> None:
        """Stop the dataplane threads (the P4Runtime servers keep serving until `close`)."""
        for s in self._switches.values():
            s.device.stop()
        self._running = False
        self._timed = self._vclock is not None
        self._schedule.enabled = True
        self._schedule.wake_all()   # the threads changed what they held: look at every device
        if self._native is not None:
            self._native.wake_all()

    def close(self) -> None:
        """Stop threads and P4Runtime servers."""
        self.stop()
        for s in self._switches.values():
            if s.server is not None:
                s.server.stop()
                s.server = None
        if self._server_pool is not None:
            self._sweeper.close()
            self._server_pool.shutdown(wait=False)
            self._server_pool = self._sweeper = None

    def __enter__(self) -> Fabric:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
