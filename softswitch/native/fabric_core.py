"""The native fabric core (runtime/ss_fabric.c) driven from softswitch/fabric.py.

`FabricCore.attach(fabric)` takes a stepped virtual-time Fabric whose devices all run the C
engine (v1model) or no program, and from then on `run_instant` / `next_event_ns` are one C
call each: the devices' buffers and queues, the cables, the packets on them and the
schedule are C's. Python is called back for what only Python does — a pipeline pass the C
walk hands back (`_pass`: clone, digest, resubmit, recirculate, multicast, an assert), a
cable with a Python drop predicate or loss draw (`_wire`) — and drains the core's log after
each run, in order: packets to hosts (the transport) and CPU ports (PacketIn listeners),
what observers see (one `Delivery` each, as the Python fabric makes them), digests; then the
observed register writes of each program and the counters of the devices stepped.
`why_not(fabric)` names what keeps a fabric on the Python core (the fallback).
"""

from __future__ import annotations

import threading
from collections import deque
from operator import call
from pathlib import Path
from typing import TYPE_CHECKING, Any

from softswitch.engine.pipeline import OutputPacket, PacketJob
from softswitch.native.build import load_library
from softswitch.native.cgen_walk import W_ERR, W_PY_IN, W_T_CDEF
from softswitch.native.fabric_device import FabricDevice
from softswitch.runtime.device import Device, ForwardingPipeline
from softswitch.runtime.queues import EgressQueues
from softswitch.wire_tally import WireCount, WireKey, WireTally

if TYPE_CHECKING:
    from softswitch.fabric import Fabric, _Wire

SOURCE = Path(__file__).parent / "runtime" / "ss_fabric.c"
LOG_HOST, LOG_PIN, LOG_OBS, LOG_DIG = 1, 2, 3, 4
SET_RATE, SET_LINE_RATE, SET_DEPTH = 0, 1, 2   # fc_set_port's `what`
CFLAGS = ("-ffp-contract=off",)   # every double operation rounded as Python rounds it

CDEF = W_T_CDEF + """
typedef struct flog { int32_t kind, a, b, c; int64_t time; uint8_t *data; uint32_t len;
                      uint8_t *base; } flog;
typedef struct fcore fcore;
fcore *fc_new(int ndev, int nwire);
void fc_free(fcore *c);
void fc_set_callbacks(fcore *c, int (*pass)(int, int, W_t *, const uint8_t *, uint32_t),
                      int (*wire)(int, const uint8_t *, uint32_t));
void fc_set_observers(fcore *c, int on);
typedef struct ftally { int32_t wire; int64_t bin; uint64_t packets, bytes, marked; } ftally;
void fc_set_tally(fcore *c, int64_t bin_ns, const uint8_t *dscps);
int fc_take_tally(fcore *c);
ftally *fc_tally(fcore *c);
void fc_tally_clear(fcore *c);
int fc_error(fcore *c);
int fc_set_port(fcore *c, int i, int what, int port, int has, double value);
int fc_set_port_state(fcore *c, int i, int port, double free_at, double sent_at);
void fc_wake_all(fcore *c);
void fc_post(fcore *c, int i);
int fc_log_count(fcore *c);
flog *fc_log(fcore *c);
void fc_log_clear(fcore *c);
int fc_set_device(fcore *c, int i, uint32_t nq, int32_t cpu_port, uint32_t capacity);
void fc_set_program(fcore *c, int i, void *R, void *win, void *wout, uint32_t hsize,
                    uint32_t msize, uint32_t smsize, uint32_t prio_off, uint32_t prio_size);
void fc_set_force_py(fcore *c, int i, int on);
void fc_set_obs(fcore *c, int i, int64_t off);
void fc_set_blackholed(fcore *c, int i, int on);
void fc_clear_device(fcore *c, int i);
void fc_reset_device(fcore *c, int i);
void fc_counters(fcore *c, int i, uint64_t *out);
uint32_t fc_queued(fcore *c, int i);
uint32_t fc_inbox(fcore *c, int i);
uint32_t fc_jobs(fcore *c, int i);
uint32_t fc_depth(fcore *c, int i, int port, uint32_t prio);
int fc_next_departure(fcore *c, int i, double *when);
int fc_receive(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len);
int fc_push_egress(fcore *c, int i, uint32_t port, const void *h, const void *m, const void *sm,
                   const uint8_t *payload, uint32_t paylen, uint32_t trunc, uint32_t cut);
int fc_push_ingress(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len,
                    const void *m, const void *sm);
int fc_push_output(fcore *c, int i, uint32_t port, const uint8_t *data, uint32_t len);
int fc_set_wire(fcore *c, int k, int from_dev, int from_port, int to_dev, int to_port,
                int to_host, int64_t delay);
void fc_wire_flags(fcore *c, int k, int up, int blackhole, int slow, int64_t delay);
uint64_t fc_wire_carried(fcore *c, int k);
int fc_take_counters(fcore *c, uint64_t *out);
int fc_in_flight(fcore *c);
int fc_add_in_flight(fcore *c, int64_t arrival, uint64_t seq, int wire, const uint8_t *data,
                     uint32_t len);
int fc_purge(fcore *c, int a, int b);
int fc_run_instant(fcore *c, int64_t now_ns);
int fc_next_event(fcore *c, int64_t now_ns, int64_t *out);
int fc_run_span(fcore *c, int64_t start_ns, int64_t bound_ns, int64_t *reached);
int64_t fc_now(fcore *c);
int fc_take_dirty(fcore *c, int32_t *out);
void fc_set_ends(fcore *c, int i, void *parse, void *deparse, void *field_list,
                 const uint32_t *off, const uint32_t *size);
void fc_pre_clear(fcore *c, int i);
int fc_pre_add(fcore *c, int i, int kind, uint64_t id, uint32_t trunc, uint32_t n,
               const uint32_t *port, const uint32_t *rid);
"""

# the fields the core's end-of-pass decisions use (ss_fabric.c's O_* order): the instance's
# requests, then standard_metadata's
END_FIELDS = (("I_t", ("req", "clone_type", "clone_session", "clone_fl", "recirc_fl", "truncate",
                       "drop_port")),
              ("sm_t", ("instance_type", "packet_length", "egress_rid", "mcast_grp",
                        "egress_spec", "ingress_port")))

_lib_cache: list[Any] = []


def _library() -> Any:
    if not _lib_cache:
        _lib_cache.append(load_library("ss_fabric", ["#include <stdint.h>\n" + W_T_CDEF + SOURCE.read_text()], CDEF,
                                       extra_cflags=CFLAGS))
    return _lib_cache[0]


def consume(calls: Any) -> None:
    """Run an iterator of calls at C speed (no Python loop per item)."""
    deque(calls, maxlen=0)


def _runnable(pipeline: ForwardingPipeline | None) -> str | None:
    """Why the core cannot run `pipeline` (None: it can)."""
    if pipeline is None:
        return None
    from softswitch.native.pipeline import NativeV1Pipeline

    walk = pipeline.switch.pipeline
    if not isinstance(walk, NativeV1Pipeline):
        return f"its program runs on the Python engine ({pipeline.switch.arch})"
    if walk.trace is not None or pipeline.switch.trace is not None:
        return "it traces its packets"
    return None


def why_not(fabric: Fabric) -> str | None:
    """What keeps `fabric` on the Python core now (None: the native core can take it)."""
    if fabric._vclock is None:
        return "no virtual clock"
    if fabric.running:
        return "devices run threads"
    if fabric.trace is not None:
        return "tracing"
    for node in fabric._nodes:
        dev = node.device
        if not isinstance(dev, FabricDevice):
            return f"switch {node.name!r} is not a FabricDevice"
        if dev.dump_packet_data:
            return f"switch {node.name!r} dumps packet data"
        why = _runnable(dev.pipeline)
        if why is not None:
            return f"switch {node.name!r}: {why}"
        if dev._jobs or len(dev.queues):
            return f"switch {node.name!r} holds packets in its queues"
    return None


class FabricCore:
    """The C fabric of one Fabric (see the module docstring)."""

    def __init__(self, fabric: Fabric) -> None:
        native = _library()
        self.ffi, self.lib = ffi, lib = native.ffi, native.lib
        self.fabric = fabric
        self.clock = fabric._vclock   # (why_not: there is one)
        self.nodes = fabric._nodes
        self.names = [n.name for n in self.nodes]
        index = {n.name: i for i, n in enumerate(self.nodes)}
        self.wires: list[_Wire] = []
        self.wire_ids: dict[int, int] = {}
        self.wire_keys: list[WireKey] = []   # (sender, port, receiver, port) of each wire
        ends: list[tuple[int, int, int, int, int]] = []
        for name, ports in fabric._wires.items():
            for port, wire in ports.items():
                self.wire_ids[id(wire)] = len(self.wires)
                self.wires.append(wire)
                self.wire_keys.append((name, port, wire.receiver, wire.receiver_port))
                to_dev = -1 if wire.to_host else index[wire.receiver]
                ends.append((index[name], port, to_dev, wire.receiver_port, int(wire.to_host)))
        c = lib.fc_new(len(self.nodes), len(self.wires))
        if c == ffi.NULL:
            raise MemoryError("the native fabric core could not be allocated")
        self.c = ffi.gc(c, lib.fc_free)
        # the devices' shared lock (Fabric.device_lock): one acquire per run covers them all
        self.lock = fabric.device_lock or threading.RLock()
        self._posts: deque[int] = deque()
        self._digests: list[list[Any]] = [[] for _ in self.nodes]
        self._observed: list[Any] = [None] * len(self.nodes)   # each slot's NativeInstance
        self._pres: list[Any] = [None] * len(self.nodes)   # each slot's mirrored PRE
        self._carried_base = [w.carried for w in self.wires]
        self._counters = ffi.new("uint64_t[6]")
        self._when = ffi.new("double *")
        self._event = ffi.new("int64_t *")
        self._dirty = ffi.new("int32_t[]", max(1, len(self.nodes)))
        self._pass_cb = ffi.callback("int(int, int, W_t *, const uint8_t *, uint32_t)",
                                     self._pass, onerror=self._callback_error)
        self._wire_cb = ffi.callback("int(int, const uint8_t *, uint32_t)", self._wire,
                                     onerror=self._callback_error)
        self._failure: BaseException | None = None
        lib.fc_set_callbacks(self.c, self._pass_cb, self._wire_cb)
        for k, (a, a_port, b, b_port, to_host) in enumerate(ends):
            lib.fc_set_wire(self.c, k, a, a_port, b, b_port, to_host, self.wires[k].delay_ns)
            self.wire_changed(self.wires[k])
        for name in fabric._blackholed:
            lib.fc_set_blackholed(self.c, index[name], 1)
        for i, node in enumerate(self.nodes):
            device = node.device
            assert isinstance(device, FabricDevice)
            self.adopt(i, device)
        for arrival, seq, wire, data in sorted(fabric._heap):
            lib.fc_add_in_flight(self.c, arrival, seq, self.wire_ids[id(wire)], data, len(data))
        fabric._heap.clear()
        lib.fc_wake_all(self.c)
        self.observers(bool(fabric._observers))
        if fabric._tally is not None:
            self.set_tally(fabric._tally)
        self._locks = self._device_locks()

    def _device_locks(self) -> tuple[list[Any], list[Any]] | None:
        """A run holds every device's lock, as Device.step holds its device's (a P4Runtime
        write waits): the core's own, which devices built for it share; the acquires (slot
        order) and releases (reverse order) of any other (None: there is none)."""
        locks: list[Any] = []
        for node in self.nodes:
            lock = node.device.lock
            if lock is not self.lock and all(lock is not k for k in locks):
                locks.append(lock)
        if not locks:
            return None
        return [lock.acquire for lock in locks], [lock.release for lock in reversed(locks)]

    # -- devices ------------------------------------------------------------------------------

    def adopt(self, i: int, device: FabricDevice) -> None:
        """Slot `i` now holds `device` (attach, or a blank one after a power cut)."""
        self._digests[i] = []
        device.set_waker(lambda i=i: self._posts.append(i))
        device.attach(self, i)
        self.bind(i, device)

    def replace(self, i: int, old: Device, new: FabricDevice) -> None:
        """A power cut: `old` leaves slot `i` (its counters kept), `new` (blank) takes it."""
        with self.lock:
            if isinstance(old, FabricDevice):
                old.detach()
            self.lib.fc_reset_device(self.c, i)
            self.adopt(i, new)
            self._posts.append(i)
            self._locks = self._device_locks()

    def configure(self, i: int, device: Device, queues: EgressQueues) -> None:
        """Slot `i`'s queue settings and ports as `queues` has them (attach)."""
        lib, c = self.lib, self.c
        lib.fc_set_device(c, i, queues.priority_queues,
                          -1 if device.cpu_port is None else device.cpu_port,
                          device.input_capacity)
        self.set_rate(i, None, queues._default_interval)
        self.set_line_rate(i, None, queues._default_bps)
        self.set_depth(i, None, queues._default_depth)
        for port, p in queues._ports.items():
            self.set_rate(i, port, p.interval_us)
            self.set_line_rate(i, port, p.bps)
            self.set_depth(i, port, p.depth)
            lib.fc_set_port_state(c, i, port, p.free_at, p.sent_at)

    def check_pipeline(self, device: FabricDevice, pipeline: ForwardingPipeline) -> None:
        why = _runnable(pipeline)
        if why is not None:
            raise RuntimeError(f"the native fabric core cannot run device {device.device_id}: "
                               f"{why} (use the C engine, or the Python fabric)")

    def bind(self, i: int, device: FabricDevice) -> None:
        """Slot `i` runs what `device` has committed."""
        pipeline = device.pipeline
        self._observed[i] = None
        if self._pres[i] is not None:   # the old program's PRE no longer speaks for slot i
            self._pres[i].native = None
            self._pres[i] = None
        if pipeline is None:
            self.lib.fc_set_program(self.c, i, self.ffi.NULL, self.ffi.NULL, self.ffi.NULL,
                                    0, 0, 0, 0, 0)
            return
        self.check_pipeline(device, pipeline)
        walk = pipeline.switch.pipeline
        pffi, plib, inst = walk.ffi, walk.lib, walk.instance
        self._observed[i] = inst
        sm = pffi.typeof("sm_t")
        prio = dict(sm.fields).get("priority")
        ptr = self.ffi.cast
        addr = self._addr
        self.lib.fc_set_program(
            self.c, i, ptr("void *", addr(pffi, inst.inst)),
            ptr("void *", addr(pffi, plib.ssp_walk_in)),
            ptr("void *", addr(pffi, plib.ssp_walk_out)),
            inst.hdr_size, inst.meta_size, pffi.sizeof(sm),
            prio.offset if prio else 0, pffi.sizeof(prio.type) if prio else 0)
        self.lib.fc_set_force_py(self.c, i, bool(walk.R.digests))
        self.lib.fc_set_obs(self.c, i, pffi.offsetof("I_t", "nobs"))
        self._bind_ends(i, walk)

    def _bind_ends(self, i: int, walk: Any) -> None:
        """The end-of-pass decisions (clone, multicast, recirculate) in C for slot `i`'s walk:
        the program's entry points, where the fields are, and the PRE, mirrored from now on
        on every write (engine/pre.py's `native` hook). A program whose fields C cannot
        address leaves them to Python."""
        pffi, plib = walk.ffi, walk.lib
        offsets, sizes = [], []
        for struct, fields in END_FIELDS:
            members = dict(pffi.typeof(struct).fields)
            for name in fields:
                field = members.get(name)
                size = pffi.sizeof(field.type) if field is not None else 0
                if size not in (1, 2, 4, 8):
                    return
                offsets.append(field.offset)
                sizes.append(size)
        addr, cast = self._addr, self.ffi.cast
        self.lib.fc_set_ends(self.c, i, cast("void *", addr(pffi, plib.ssp_parse)),
                             cast("void *", addr(pffi, plib.ssp_deparse)),
                             cast("void *", addr(pffi, plib.ssp_field_list)),
                             self.ffi.new("uint32_t[]", offsets),
                             self.ffi.new("uint32_t[]", sizes))
        pre = walk.pre
        pre.native = lambda p, i=i: self._mirror_pre(i, p)
        self._pres[i] = pre
        self._mirror_pre(i, pre)

    def _mirror_pre(self, i: int, pre: Any) -> None:
        """Slot `i`'s PRE in C as `pre` answers now: each group's copies, each session's."""
        lib, c, new = self.lib, self.c, self.ffi.new
        with self.lock:
            lib.fc_pre_clear(c, i)
            for kind, ident, trunc, copies in pre.native_sets():
                if lib.fc_pre_add(c, i, kind, ident, trunc, len(copies),
                                  new("uint32_t[]", [port for port, _ in copies] or [0]),
                                  new("uint32_t[]", [rid for _, rid in copies] or [0])):
                    raise MemoryError("the native fabric core could not mirror a PRE")

    @staticmethod
    def _addr(pffi: Any, cdata: Any) -> int:
        return int(pffi.cast("uintptr_t", cdata))

    def receive(self, i: int, port: int, data: bytes) -> bool:
        with self.lock:
            return bool(self.lib.fc_receive(self.c, i, port & 0x1FF, data, len(data)))

    def queued(self, i: int) -> int:
        return int(self.lib.fc_queued(self.c, i))

    def inbox(self, i: int) -> int:
        return int(self.lib.fc_inbox(self.c, i))

    def has_input(self, i: int) -> bool:
        return bool(self.lib.fc_inbox(self.c, i) or self.lib.fc_jobs(self.c, i))

    def depth(self, i: int, port: int, priority: int) -> int:
        return int(self.lib.fc_depth(self.c, i, port, priority))

    def counters(self, i: int) -> list[int]:
        self.lib.fc_counters(self.c, i, self._counters)
        return list(self._counters)

    def counter(self, i: int, k: int) -> int:
        """Counter `k` of slot `i` (fc_counters' order: fabric_device.COUNTERS, then drops)."""
        self.lib.fc_counters(self.c, i, self._counters)
        return int(self._counters[k])

    def next_departure(self, i: int) -> float | None:
        with self.lock:
            if self.lib.fc_next_departure(self.c, i, self._when):
                return float(self._when[0])
            return None

    def _set_port(self, i: int, what: int, port: int | None, value: float | None) -> None:
        with self.lock:
            self.lib.fc_set_port(self.c, i, what, -1 if port is None else port,
                                 value is not None, value or 0.0)

    def set_rate(self, i: int, port: int | None, interval: float | None) -> None:
        """The packet rate of a port (None: every port) as the interval in µs (None: none)."""
        self._set_port(i, SET_RATE, port, interval)

    def set_line_rate(self, i: int, port: int | None, bps: float | None) -> None:
        self._set_port(i, SET_LINE_RATE, port, bps)

    def set_depth(self, i: int, port: int | None, depth: int) -> None:
        self._set_port(i, SET_DEPTH, port, depth)

    def clear_device(self, i: int) -> None:
        with self.lock:
            self.lib.fc_clear_device(self.c, i)

    # -- wires ----------------------------------------------------------------------------------

    def wire_changed(self, wire: _Wire) -> None:
        """A cable's state (up, blackhole, delay, Python predicates) as its record says."""
        k = self.wire_ids.get(id(wire))
        if k is None:
            raise NotImplementedError("the native fabric core cannot take new cables or hosts "
                                      "after it attached")
        slow = wire.drop is not None or bool(wire.loss and wire.draw is not None)
        with self.lock:
            self.lib.fc_wire_flags(self.c, k, wire.up, wire.blackhole, slow, wire.delay_ns)

    def purge(self, wires: tuple[_Wire, ...]) -> int:
        ids = [self.wire_ids[id(w)] for w in wires] + [-1, -1]
        with self.lock:
            return int(self.lib.fc_purge(self.c, ids[0], ids[1]))

    def set_blackholed(self, name: str, on: bool) -> None:
        with self.lock:
            self.lib.fc_set_blackholed(self.c, self.names.index(name), on)

    def carried(self, wire: _Wire) -> int:
        k = self.wire_ids[id(wire)]
        return self._carried_base[k] + int(self.lib.fc_wire_carried(self.c, k))

    def in_flight(self) -> int:
        return int(self.lib.fc_in_flight(self.c))

    def observers(self, on: bool) -> None:
        self.lib.fc_set_observers(self.c, on)

    def set_tally(self, tally: WireTally) -> None:
        """Count in C what `tally` counts; it takes the counts from here on."""
        flags = self.ffi.new("uint8_t[64]", [d in tally.dscps for d in range(64)])
        with self.lock:
            self.lib.fc_set_tally(self.c, tally.bin_ns, flags)
        tally.native = self.take_tally

    def take_tally(self) -> list[WireCount]:
        """The wires' counts since the last take (WireTally.take merges them)."""
        lib, c = self.lib, self.c
        keys = self.wire_keys
        with self.lock:
            n = lib.fc_take_tally(c)
            t = lib.fc_tally(c)
            try:
                return [WireCount(*keys[r.wire], r.bin, r.packets, r.bytes, r.marked)
                        for r in (t[k] for k in range(n))]
            finally:
                lib.fc_tally_clear(c)

    def wake_all(self) -> None:
        with self.lock:
            self.lib.fc_wake_all(self.c)

    # -- running ----------------------------------------------------------------------------

    def _flush_posts(self) -> None:
        posts = self._posts
        while posts:
            self.lib.fc_post(self.c, posts.popleft())

    def run_instant(self, now_ns: int) -> None:
        """Everything that can move at `now_ns` (Fabric._run_instant), then the log drained."""
        self._locked_run(now_ns, None)

    def run_span(self, start_ns: int, bound_ns: int) -> None:
        """Fabric instants from `start_ns` on, each next one before `bound_ns`, in C without
        returning (fc_run_span: until an instant leaves Python work or time would not move);
        the clock then at the last instant run, before its log is drained."""
        self._locked_run(start_ns, bound_ns)

    def _locked_run(self, now_ns: int, bound_ns: int | None) -> None:
        locks = self._locks
        if locks is None:
            with self.lock:
                self._run(now_ns, bound_ns)
            return
        consume(map(call, locks[0]))
        try:
            with self.lock:
                self._run(now_ns, bound_ns)
        finally:
            consume(map(call, locks[1]))

    def _sync_clock(self) -> None:
        """A callback in a span: the clock at the core's instant (fc_run_span)."""
        now_ns = int(self.lib.fc_now(self.c))
        if now_ns > self.clock.now_ns:
            self.clock.advance_to(now_ns)

    def _run(self, now_ns: int, bound_ns: int | None = None) -> None:
        """The instant `now_ns` (`bound_ns`: a span up to it), then the log drained."""
        if self._posts:
            self._flush_posts()
        if bound_ns is None:
            rc = self.lib.fc_run_instant(self.c, now_ns)
        else:
            rc = self.lib.fc_run_span(self.c, now_ns, bound_ns, self._event)
            self.clock.advance_to(int(self._event[0]))
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        if rc < 0:
            raise MemoryError("the native fabric core ran out of memory")
        self._drain()

    def next_event_ns(self, now_ns: int) -> int | None:
        with self.lock:
            self._flush_posts()
            if self.lib.fc_next_event(self.c, now_ns, self._event):
                return int(self._event[0])
            return None

    def _drain(self) -> None:
        lib, c = self.lib, self.c
        n = lib.fc_log_count(c)
        if n:
            self._drain_log(n)
        # the devices stepped since the last drain whose programs wrote observed registers
        # (the counters are read from C when asked: FabricDevice)
        m = lib.fc_take_dirty(c, self._dirty)
        if m:
            observed, dirty = self._observed, self._dirty
            for k in range(m):
                instance = observed[dirty[k]]
                if instance is not None:
                    instance.drain_observed()
        counts = self._counters
        if lib.fc_take_counters(c, counts):
            fabric = self.fabric
            fabric.unlinked_drops += counts[0]
            fabric.link_down_drops += counts[1]
            fabric.loss_drops += counts[2]
            fabric.blackhole_drops += counts[3]

    def _drain_log(self, n: int) -> None:
        """The log's `n` entries, in order (the module docstring)."""
        from softswitch.fabric import Delivery

        lib, c = self.lib, self.c
        log = lib.fc_log(c)
        wires, nodes, names = self.wires, self.nodes, self.names
        buffer = self.ffi.buffer
        observe = self.fabric._observe
        try:
            for e in (log[k] for k in range(n)):
                kind = e.kind
                if kind == LOG_HOST:
                    wires[e.a].target(buffer(e.data, e.len)[:])
                elif kind == LOG_OBS:
                    data = buffer(e.data, e.len)[:]
                    if e.a >= 0:
                        w = wires[e.a]
                        observe(Delivery(names[e.b], e.c, w.receiver, w.receiver_port, data,
                                         e.time))
                    else:
                        observe(Delivery(names[e.b], e.c, None, None, data, e.time))
                elif kind == LOG_PIN:
                    self._packet_in(nodes[e.a].device, buffer(e.data, e.len)[:])
                elif kind == LOG_DIG:
                    self._deliver_digests(e.a)
        finally:
            lib.fc_log_clear(c)

    @staticmethod
    def _packet_in(device: Device, data: bytes) -> None:
        for fn in list(device._packet_in):
            try:
                fn(data)
            except Exception:  # a listener must not kill the dataplane (as Device._deliver)
                device.errors += 1

    def _deliver_digests(self, i: int) -> None:
        device = self.nodes[i].device
        pending, self._digests[i] = self._digests[i], []
        for d in pending:
            for fn in list(device._digest):
                try:
                    fn(d)
                except Exception:
                    device.errors += 1

    # -- callbacks from C -------------------------------------------------------------------

    def _callback_error(self, exc_type: Any, exc: BaseException, _tb: Any) -> None:
        if self._failure is None:
            self._failure = exc

    def _wire(self, k: int, data: Any, length: int) -> int:
        """fabric.py's output function's Python predicates of cable `k`, in its order."""
        self._sync_clock()
        wire = self.wires[k]
        packet = self.ffi.buffer(data, length)[:]
        if wire.drop is not None and wire.drop(packet):
            return 1
        if wire.loss and wire.draw is not None and wire.draw(packet) < wire.loss:
            return 2
        return 0

    def _pass(self, i: int, kind: int, w: Any, data: Any, length: int) -> int:
        """Finish a pass the C walk handed back, as NativeV1Pipeline._step does after its C
        call, and give the core the jobs and packets it made (Device._dispatch's order)."""
        self._sync_clock()
        device = self.nodes[i].device
        assert isinstance(device, FabricDevice) and device.pipeline is not None
        switch = device.pipeline.switch
        walk = switch.pipeline
        pffi = walk.ffi
        packet = self.ffi.buffer(data, length)[:]
        jobs: deque[PacketJob] = deque()
        out: list[OutputPacket] = []
        try:
            if kind == W_ERR:
                raise RuntimeError("the C deparser stopped (output buffer full)")
            h, m, sm = walk.H(), walk.M(), walk.SM()
            pffi.memmove(h, pffi.cast("char *", self._addr(self.ffi, w.h)), len(h))
            pffi.memmove(m, pffi.cast("char *", self._addr(self.ffi, w.m)), len(m))
            pffi.memmove(sm, pffi.cast("char *", self._addr(self.ffi, w.sm)), pffi.sizeof(sm[0]))
            now = int(w.now)
            if kind == W_PY_IN:
                payload = packet[w.off:]
                walk._resume(sm, len(packet), now, payload)
                walk._end_ingress(PacketJob(True, int(w.port), packet), h, m, sm, payload,
                                  w.rc == 0, jobs)
            else:
                job = PacketJob(False, int(w.eport), b"", h, m, sm, packet, int(w.trunc),
                                int(w.cut))
                walk._resume(sm, int(sm.packet_length), now, packet)
                walk._end_egress(job, w.rc == 0, jobs, out)
        except Exception as exc:  # an engine bug must not escape (PacketWalk._guarded)
            walk.internal_errors += 1
            walk._log(f"Internal error while processing the packet ({exc!r}): dropped")
        self._give_back(i, pffi, jobs, out)
        flags = 0
        if switch.digests:
            self._digests[i].extend(switch.digests)
            switch.digests.clear()
            flags |= 1
        if walk.R.digests:
            flags |= 2
        return flags

    def _give_back(self, i: int, pffi: Any, jobs: deque[PacketJob],
                   out: list[OutputPacket]) -> None:
        lib, c, cast = self.lib, self.c, self.ffi.cast
        addr = self._addr
        for o in out:
            lib.fc_push_output(c, i, o[0], o[1], len(o[1]))
        for j in jobs:
            if j.ingress:
                lib.fc_push_ingress(c, i, j.port, j.data, len(j.data),
                                    cast("void *", addr(pffi, j.meta)),
                                    cast("void *", addr(pffi, j.sm)))
            else:
                lib.fc_push_egress(c, i, j.port, cast("void *", addr(pffi, j.hdr)),
                                   cast("void *", addr(pffi, j.meta)),
                                   cast("void *", addr(pffi, j.sm)), j.payload, len(j.payload),
                                   j.trunc, j.cut)


def attach(fabric: Fabric) -> tuple[FabricCore | None, str | None]:
    """The native core for `fabric`, or None and why it stays on the Python core."""
    why = why_not(fabric)
    if why is not None:
        return None, why
    return FabricCore(fabric), None

