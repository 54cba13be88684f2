"""Device: one running switch, as simple_switch_grpc runs one: ports in, egress queues, ports out.

The dataplane is one loop that does, in order of preference: an egress pass for a packet its
queue lets go, an ingress pass for a resubmitted/recirculated packet (simple_switch serves those
before new input), an ingress pass for the next received packet. It runs either in a background
thread (`start`/`stop`) or synchronously (`run_until_idle`: tests, in-process fabrics).

Locking: `receive` only touches the input buffer (its own small lock), so port threads never
wait behind a control-plane write; every packet pass, pipeline swap and control-plane access
holds `lock`. Listeners and the output function are called after the pass, outside `lock`.
The P4Runtime server holds `lock` for a bounded slice of work at a time and then lets the
dataplane take it (`yield_to_dataplane`), so a large Write or Read does not stop forwarding.

Buffers are bounded as simple_switch bounds them: the input buffer holds `input_capacity`
received packets (BMv2: 1024) and a port thread that finds it full waits for room (BMv2 blocks
the interface: back pressure), up to `wait` seconds, then the packet is dropped and counted in
`dropped_input_full`; a caller that cannot wait (the dataplane thread itself, a stepped device,
an in-memory link) drops at once. Resubmitted and recirculated packets have their own buffer of
`input_capacity` and are dropped when it is full (`dropped_recirculation_full`), as in BMv2.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from softswitch.engine.externs import Digest
from softswitch.engine.pipeline import OutputPacket, PacketJob
from softswitch.engine.switch import Switch
from softswitch.errors import ControlPlaneError
from softswitch.ir.checked import CheckedProgram
from softswitch.ir.serialize import loads_ir
from softswitch.limits import DEFAULT_LIMITS, Limits
from softswitch.runtime.queues import EgressQueues

_log = logging.getLogger(__name__)

INPUT_CAPACITY = 1024  # simple_switch: InputBuffer(1024 normal, 1024 resubmit/recirculate)
PORT_WAIT = 1.0  # s a port thread waits for input-buffer room before it drops the packet

P4Info = Any  # p4.config.v1.P4Info (finsy's protobuf class); kept loose to avoid the import


@dataclass(frozen=True)
class ForwardingPipeline:
    """What SetForwardingPipelineConfig installs: P4Info, device config, cookie, the engine."""

    p4info: P4Info
    device_config: bytes
    cookie: int
    switch: Switch
    program: CheckedProgram


def _whole_us(fine_clock: Callable[[], float]) -> Callable[[], int]:
    def now_us() -> int:
        return int(fine_clock())
    return now_us


def _hex(data: bytes, n: int) -> str:
    return data[:n].hex()


class Device:
    """One switch device: pipeline, egress queues, packet I/O and listeners (see DESIGN.md)."""

    def __init__(self, device_id: int = 0, *, cpu_port: int | None = None, drop_port: int = 511,
                 priority_queues: int = 1, trace: Callable[[str], None] | None = None,
                 dump_packet_data: int = 0, clock: Callable[[], int] | None = None,
                 input_capacity: int = INPUT_CAPACITY,
                 fine_clock: Callable[[], float] | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        """`clock`, when given, returns µs since the device started (tests step it by hand);
        the default is the monotonic clock. `fine_clock`, when given, is the same time as a
        float (e.g. ``VirtualClock.us``): the egress queues use it for enqueue and departure
        times (sub-µs line-rate arithmetic), while P4 metadata stays in whole µs from `clock`
        (derived from `fine_clock` when not given). `input_capacity` bounds the input buffer
        and the resubmit/recirculate buffer (packets each). `limits` bounds the programs a
        SetForwardingPipelineConfig may load (softswitch/limits.py)."""
        if cpu_port is not None and not 0 < cpu_port < 512:
            raise ValueError(f"cpu port {cpu_port} must be in 1..511 (a 9-bit v1model port)")
        if input_capacity < 1:
            raise ValueError(f"input capacity {input_capacity} must be at least 1 packet")
        self.device_id = device_id
        self.limits = limits
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.trace = trace
        self.dump_packet_data = dump_packet_data
        self.lock = threading.RLock()
        self.pipeline: ForwardingPipeline | None = None
        self._t0 = time.monotonic()
        if clock is None and fine_clock is not None:
            clock = _whole_us(fine_clock)
        self._fake_clock = clock is not None
        self.now_us: Callable[[], int] = clock if clock is not None else self._monotonic_us
        self.queues = EgressQueues(priority_queues,
                                   fine_clock if fine_clock is not None else self.now_us)
        # While the output function runs: when the packet being sent left its egress queue
        # and when its last bit is on the wire (µs, the queues' clock; equal unless the port
        # has a line rate).
        self.tx_start_us: float = 0.0
        self.tx_end_us: float = 0.0
        self.input_capacity = input_capacity
        self._jobs: deque[PacketJob] = deque()  # resubmitted / recirculated ingress jobs
        self._inbox: deque[tuple[int, bytes]] = deque()
        input_lock = threading.Lock()  # guards _inbox appends and the waiter count
        self._wake = threading.Condition(input_lock)  # wakes the dataplane loop
        self._room = threading.Condition(input_lock)  # wakes port threads waiting for room
        self._room_waiters = 0
        self._steps = 0  # packet passes done (yield_to_dataplane watches it)
        self._idle = threading.Condition(threading.Lock())  # the thread reports idleness
        self._output: Callable[[int, bytes], None] | None = None
        self._waker: Callable[[], None] | None = None
        self._packet_in: list[Callable[[bytes], None]] = []
        self._digest: list[Callable[[Digest], None]] = []
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._busy = False
        self._kicks = 0  # bumped (under _wake) when the queue configuration changes
        self.errors = 0  # exceptions raised by listeners or the output function
        self.rx_packets = 0
        self.tx_packets = 0
        self.dropped_no_pipeline = 0
        self.dropped_input_full = 0
        self.dropped_recirculation_full = 0

    def _monotonic_us(self) -> int:
        return int((time.monotonic() - self._t0) * 1e6)

    # -- pipeline -------------------------------------------------------------------------------

    @staticmethod
    def build_pipeline(p4info: P4Info, device_config: bytes, cookie: int = 0, *,
                       drop_port: int = 511,
                       trace: Callable[[str], None] | None = None,
                       limits: Limits = DEFAULT_LIMITS,
                       program: CheckedProgram | None = None) -> ForwardingPipeline:
        """VERIFY: IR JSON → checked program → a fresh Switch. Raises P4Error / IrFormatError
        (a LimitError for a program over `limits`). `program`, when given, is
        `device_config`'s, already checked under `limits` (runtime/program_cache.py)."""
        if program is None:
            program = loads_ir(device_config, limits)
        switch = Switch(program, drop_port=drop_port, trace=trace)
        return ForwardingPipeline(p4info, bytes(device_config), cookie, switch, program)

    def commit(self, pipeline: ForwardingPipeline) -> None:
        """Swap `pipeline` in (all state starts empty; queued packets are dropped). If it was
        built for another drop port or tracing, the device rebuilds its Switch, so read the
        engine back from `device.pipeline`."""
        sw = pipeline.switch
        if sw.drop_port != self.drop_port or (sw.trace is None) != (self.trace is None):
            pipeline = replace(pipeline, switch=Switch(pipeline.program, drop_port=self.drop_port,
                                                       trace=self.trace))
        pipeline.switch.set_clock(self.now_us)
        pipeline.switch.set_cpu_port(self.cpu_port)
        pipeline.switch.set_queue_count(self.queues.priority_queues)
        with self.lock:
            self.queues.clear()
            self.queues.track_cells = pipeline.switch.arch == "tna"
            self._jobs.clear()
            self.pipeline = pipeline
        if self._waker is not None:
            self._waker()

    @property
    def switch(self) -> Switch | None:
        """The engine of the current pipeline (None with no program)."""
        p = self.pipeline
        return p.switch if p is not None else None

    # -- packet I/O -----------------------------------------------------------------------------

    def receive(self, port: int, data: bytes, wait: float = 0.0) -> bool:
        """A packet arrived on `port`; thread-safe, never waits behind a control-plane call.

        With the input buffer full, waits up to `wait` seconds for room (back pressure; only
        while the dataplane thread runs and the caller is not that thread), then drops the
        packet. Returns whether the packet was queued."""
        with self._wake:
            if len(self._inbox) >= self.input_capacity and not self._wait_for_room(wait):
                self.dropped_input_full += 1
                return False
            self._inbox.append((port, bytes(data)))
            if self._waker is not None:
                self._waker()
            self._wake.notify()
        return True

    def _wait_for_room(self, wait: float) -> bool:
        """Called holding the input lock with the buffer full: True once there is room."""
        thread = self._thread
        if wait <= 0 or thread is None or thread is threading.current_thread():
            return False
        deadline = time.monotonic() + wait
        self._room_waiters += 1
        try:
            while len(self._inbox) >= self.input_capacity:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping or self._thread is None:
                    return False
                self._room.wait(left)
        finally:
            self._room_waiters -= 1
        return True

    def packet_out(self, data: bytes, wait: float = 0.0) -> bool:
        """A P4Runtime PacketOut: `data` (packet_out header first) enters ingress on cpu_port
        (a full input buffer is handled as in `receive`)."""
        if self.cpu_port is None:
            raise ControlPlaneError("packet-out needs a cpu port (--cpu-port)",
                                    "FAILED_PRECONDITION")
        return self.receive(self.cpu_port, data, wait)

    def set_output(self, send: Callable[[int, bytes], None]) -> None:
        """Where transmitted packets go (all but those to the cpu port)."""
        self._output = send

    def set_waker(self, wake: Callable[[], None] | None) -> None:
        """Call `wake` whenever the device may have work its own steps did not make: a packet
        received (called under the input lock, so `received_waiting` counts a packet only once
        its wake is done), its queues reconfigured, a pipeline committed. A stepped fabric
        steps only the devices woken (softswitch/schedule.py)."""
        self._waker = wake

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        self._packet_in.append(fn)

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self._packet_in:
            self._packet_in.remove(fn)

    def add_digest_listener(self, fn: Callable[[Digest], None]) -> None:
        self._digest.append(fn)

    def remove_digest_listener(self, fn: Callable[[Digest], None]) -> None:
        if fn in self._digest:
            self._digest.remove(fn)

    def set_queue_rate(self, port: int | None, packets_per_second: float | None) -> None:
        """Drain rate of an egress port (None: all ports); None = unlimited."""
        with self.lock:
            self.queues.set_rate(port, packets_per_second)
        self._kick()

    def set_line_rate(self, port: int | None, bits_per_second: float | None) -> None:
        """Line rate of an egress port in bits/s (None: all ports); None = none. The port is
        charged for the bytes each egress pass puts on it (see runtime/queues.py)."""
        with self.lock:
            self.queues.set_line_rate(port, bits_per_second)
        self._kick()

    def set_queue_depth(self, port: int | None, packets: int) -> None:
        """Tail-drop limit of each priority queue of a port (None: all ports)."""
        with self.lock:
            self.queues.set_depth(port, packets)
        self._kick()

    def _kick(self) -> None:
        with self._wake:
            self._kicks += 1
            if self._waker is not None:
                self._waker()
            self._wake.notify()

    # -- the dataplane --------------------------------------------------------------------------

    def _log(self, text: str) -> None:
        if self.trace is not None:
            self.trace(text)
        else:
            _log.info("%s", text)

    def step(self) -> bool:
        """Do what can be done now for one input: egress passes of the packets their queues
        let go, one ingress pass (a resubmitted/recirculated packet first, else the next
        received one), then the egress passes that made ready. False when nothing was done."""
        if not (self._inbox or self._jobs or self.queues.may_leave()):
            return False  # nothing to do now: no lock taken (stepped fabrics call this a lot)
        outputs: list[OutputPacket] = []
        times: list[float] = []  # per output: departure, end of transmission (µs)
        digests: list[Digest] = []
        with self.lock:
            p = self.pipeline
            did = self._drain(p, outputs, times) if len(self.queues) else False
            job: PacketJob | None = None
            if self._jobs:
                job = self._jobs.popleft()
            else:
                try:  # deque appends and pops are atomic: no need for the input lock
                    received: tuple[int, bytes] | None = self._inbox.popleft()
                except IndexError:
                    received = None
                if received is not None:
                    did = True
                    if self._room_waiters:
                        with self._room:
                            self._room.notify()
                    port, data = received
                    self.rx_packets += 1
                    if self.dump_packet_data > 0:
                        self._log(f"Received packet of length {len(data)} on port {port}: "
                                  f"{_hex(data, self.dump_packet_data)}")
                    if p is None:
                        self.dropped_no_pipeline += 1
                        if self.trace is not None:
                            self.trace(f"No P4 program loaded: dropping packet from port {port}")
                    else:
                        job = p.switch.new_packet(port, data)
            if job is not None and p is not None:
                did = True
                _out, more = p.switch.run(job)
                self._dispatch(more)
                self._drain(p, outputs, times)
            if p is not None and p.switch.digests:
                digests = list(p.switch.digests)
                p.switch.digests.clear()
            if did:
                self._steps += 1
        if outputs or digests:
            self._deliver(outputs, times, digests)
        return did

    def _drain(self, p: ForwardingPipeline | None, outputs: list[OutputPacket],
               times: list[float]) -> bool:
        """Egress passes for the packets that may leave now (a bounded number: an egress clone
        loop must not hold the lock for ever). A line-rate port is charged for what its pass
        put on it."""
        queues = self.queues
        pop = queues.pop
        did = False
        for _ in range(256):
            item = pop()
            if item is None:
                break
            did = True
            job = item[0]
            start = queues.departure
            out: list[OutputPacket] = []
            more: list[PacketJob] = []
            if p is not None:
                try:
                    out, more = p.switch.run(job, item[1])
                except BaseException:  # (run catches everything) never leave a port held
                    if queues.awaiting is not None:
                        queues.transmitted(job.port, 0)
                    raise
            if queues.awaiting is not None:
                port = job.port
                sent = 0
                for o in out:
                    if o[0] == port:
                        sent += len(o[1])
                end = queues.transmitted(port, sent)
            else:
                end = start
            for o in out:
                outputs.append(o)
                times.append(start)
                times.append(end)
            if more:
                self._dispatch(more)
        return did

    def _dispatch(self, jobs: list[PacketJob]) -> None:
        for j in jobs:
            if j.ingress:
                if len(self._jobs) < self.input_capacity:
                    self._jobs.append(j)
                else:
                    self.dropped_recirculation_full += 1
                    if self.trace is not None:
                        self.trace("Resubmit/recirculate buffer full: dropping packet")
            elif not self.queues.enqueue(j) and self.trace is not None:
                self.trace(f"Egress queue of port {j.port} (priority {j.priority}) full or "
                           "priority out of range: dropping packet")

    def _deliver(self, outputs: list[OutputPacket], times: list[float],
                 digests: list[Digest]) -> None:
        i = 0
        for port, data in outputs:
            self.tx_packets += 1
            self.tx_start_us = times[i]
            self.tx_end_us = times[i + 1]
            i += 2
            try:
                if port == self.cpu_port:
                    for fn in list(self._packet_in):
                        fn(data)
                else:
                    if self.dump_packet_data > 0:
                        self._log(f"Sending packet of length {len(data)} on port {port}: "
                                  f"{_hex(data, self.dump_packet_data)}")
                    if self._output is not None:
                        self._output(port, data)
            except Exception:  # a listener must not kill the dataplane
                self.errors += 1
                _log.exception("device %d: packet listener failed", self.device_id)
        for d in digests:
            for fn in list(self._digest):
                try:
                    fn(d)
                except Exception:
                    self.errors += 1
                    _log.exception("device %d: digest listener failed", self.device_id)

    def yield_to_dataplane(self, timeout: float = 0.005) -> None:
        """Called by a control-plane thread between slices of a long operation, not holding
        `lock`: when the dataplane thread has work, wait (up to `timeout` s) until it has
        done one packet pass, so that Python's unfair lock cannot starve it."""
        thread = self._thread
        if thread is None or thread is threading.current_thread() or not (
                self._inbox or self._jobs or len(self.queues)):
            return
        steps = self._steps
        deadline = time.monotonic() + timeout
        while self._steps == steps and time.monotonic() < deadline:
            time.sleep(0)  # hands the GIL over; the dataplane thread takes the lock

    def next_departure(self) -> float | None:
        """The earliest time (µs, the queues' clock: `fine_clock` when given) a queued packet
        may leave; None if none is."""
        if not len(self.queues):
            return None
        with self.lock:
            return self.queues.next_departure()

    def has_input(self) -> bool:
        """Received or resubmitted/recirculated packets wait for an ingress pass."""
        return bool(self._inbox or self._jobs)

    def received_waiting(self) -> int:
        """Packets received (ports, packet-outs) and not yet taken in."""
        with self._wake:   # a packet counts once `receive` is done with it, its wake too
            return len(self._inbox)

    def pending(self) -> bool:
        """Anything received, queued or in flight."""
        return bool(self._inbox or self._jobs or len(self.queues) or self._busy)

    def run_until_idle(self, timeout: float = 5.0) -> None:
        """Process until nothing is left that can move. Rate-limited queues are waited for
        with the real clock; with an injected clock, returns when nothing may leave at the
        current time (the caller advances the clock). Raises TimeoutError after `timeout` s."""
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._wait_thread_idle(deadline)
            return
        while True:
            while self.step():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"device {self.device_id}: still busy after {timeout} s")
            when = self.next_departure()
            if when is None or self._fake_clock:
                return
            wait = (when - self.now_us()) / 1e6
            if time.monotonic() + wait > deadline:
                raise TimeoutError(f"device {self.device_id}: queues still draining after "
                                   f"{timeout} s")
            time.sleep(max(wait, 0.0))

    def _wait_thread_idle(self, deadline: float) -> None:
        with self._idle:
            while self.pending():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"device {self.device_id}: still busy")
                self._idle.wait(min(left, 0.05))

    # -- background thread ----------------------------------------------------------------------

    def start(self) -> None:
        """Run the dataplane in a background thread."""
        if self._thread is not None:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name=f"softswitch-dev{self.device_id}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread (packets still queued stay queued)."""
        thread = self._thread
        if thread is None:
            return
        with self._wake:
            self._stopping = True
            self._wake.notify()
            self._room.notify_all()  # port threads waiting for room give up
        thread.join()
        self._thread = None

    def _loop(self) -> None:
        while not self._stopping:
            self._busy = True
            try:
                did = self.step()
            except Exception:  # never let one packet kill the thread
                did = True
                self.errors += 1
                _log.exception("device %d: dataplane error", self.device_id)
            if did:
                continue
            self._busy = False
            with self._idle:
                self._idle.notify_all()
            kicks = self._kicks
            when = self.next_departure()
            with self._wake:
                if self._inbox or self._jobs or self._stopping or kicks != self._kicks:
                    continue
                if when is None:
                    self._wake.wait()
                else:
                    wait = (when - self.now_us()) / 1e6
                    # an injected clock does not move while we sleep: poll it
                    self._wake.wait(0.005 if self._fake_clock else max(wait, 0.0))
        self._busy = False

    def __enter__(self) -> Device:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
