"""A Device whose packets the native fabric core (native/fabric_core.py) holds once attached.

Until the core attaches it, a `FabricDevice` is a plain `Device`. Attached, its input buffer,
resubmit buffer and egress queues live in C: `receive` hands the packet to the core, `queues`
is a `CoreQueues` (the EgressQueues API over the core's queues: rates, depths, the count and
the drops), the counters are brought up to date by the core after each run, and `commit`
tells the core which program the device runs now. The P4Runtime server, listeners and the
emulator use it as any Device.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from softswitch.runtime.device import Device, ForwardingPipeline

if TYPE_CHECKING:
    from softswitch.native.fabric_core import FabricCore


class CoreQueues:
    """runtime/queues.py's EgressQueues surface over one device's queues in the core (the
    checks are EgressQueues'; the state is C's)."""

    def __init__(self, core: FabricCore, slot: int, priority_queues: int,
                 default_bps: float | None, line_rates: dict[int, float | None]) -> None:
        self.core = core
        self.slot = slot
        self.priority_queues = priority_queues
        self.track_cells = False
        self.awaiting: int | None = None
        self._default_bps = default_bps
        self._line_rates = dict(line_rates)
        self._dropped_base = 0
        self._final: tuple[int, int] | None = None   # (count, dropped) once detached

    def __len__(self) -> int:
        if self._final is not None:
            return self._final[0]
        return self.core.queued(self.slot)

    @property
    def dropped(self) -> int:
        if self._final is not None:
            return self._final[1]
        return self._dropped_base + self.core.counters(self.slot)[5]

    def set_rate(self, port: int | None, packets_per_second: float | None) -> None:
        if packets_per_second is not None and packets_per_second <= 0:
            raise ValueError("a queue rate must be positive (None for unlimited)")
        interval = None if packets_per_second is None else 1e6 / packets_per_second
        self.core.set_rate(self.slot, port, interval)

    def set_line_rate(self, port: int | None, bits_per_second: float | None) -> None:
        if bits_per_second is not None and not bits_per_second > 0:
            raise ValueError("a line rate must be positive (None for none)")
        bps = None if bits_per_second is None else float(bits_per_second)
        if port is None:
            self._default_bps = bps
            self._line_rates = dict.fromkeys(self._line_rates, bps)
        else:
            self._line_rates[port] = bps
        self.core.set_line_rate(self.slot, port, bps)

    def set_depth(self, port: int | None, packets: int) -> None:
        if packets < 0:
            raise ValueError("a queue depth cannot be negative")
        self.core.set_depth(self.slot, port, packets)

    def depth(self, port: int, priority: int = 0) -> int:
        return self.core.depth(self.slot, port, priority)

    def line_rate(self, port: int) -> float | None:
        return self._line_rates.get(port, self._default_bps)

    def clear(self) -> None:
        self.core.clear_device(self.slot)

    def next_departure(self) -> float | None:
        return self.core.next_departure(self.slot)

    def may_leave(self) -> bool:
        return False   # the core steps the device, never Device.step

    def detach(self) -> None:
        """Keep the final count and drops (the device was replaced: a power cut)."""
        self._final = (len(self), self.dropped)


# the Device counters the core counts (fc_counters' order): read from C when asked
COUNTERS = ("rx_packets", "tx_packets", "dropped_input_full", "dropped_recirculation_full",
            "dropped_no_pipeline")


def _core_counter(k: int) -> property:
    """Device counter `COUNTERS[k]`: what it was at attach plus what the core counted since."""
    def get(self: FabricDevice) -> int:
        core = self.core
        base = self._counts[k]
        return base if core is None else base + core.counter(self.slot, k)

    def put(self: FabricDevice, value: int) -> None:
        core = self.core
        self._counts[k] = value if core is None else value - core.counter(self.slot, k)
    return property(get, put)


class FabricDevice(Device):
    """A Device the native fabric core can take over (see the module docstring)."""

    core: FabricCore | None = None
    slot = -1
    rx_packets = _core_counter(0)
    tx_packets = _core_counter(1)
    dropped_input_full = _core_counter(2)
    dropped_recirculation_full = _core_counter(3)
    dropped_no_pipeline = _core_counter(4)

    def __init__(self, *args: Any, lock: threading.RLock | None = None, **kwargs: Any) -> None:
        """`lock` (None: its own): the lock it shares with the other devices of a fabric
        the native core may run, which the core holds while it runs (a P4Runtime write to
        any of them waits for the instant to end)."""
        self._counts = [0] * len(COUNTERS)
        super().__init__(*args, **kwargs)
        if lock is not None:
            self.lock = lock

    def attach(self, core: FabricCore, slot: int) -> None:
        """Hand this device's buffers and queues to `core` (slot `slot`); its input buffer's
        packets move there, in order (the caller checked nothing else is held)."""
        old = self.queues
        ports = old._ports
        queues = CoreQueues(core, slot, old.priority_queues, old._default_bps,
                            {n: p.bps for n, p in ports.items()})
        queues._dropped_base = old.dropped
        self.core, self.slot = core, slot
        core.configure(slot, self, old)
        self.queues = queues  # type: ignore[assignment]
        inbox = list(self._inbox)
        self._inbox.clear()
        for port, data in inbox:
            core.receive(slot, port, data)

    def detach(self) -> None:
        """The device leaves the core (replaced by a blank one): its counters stay readable."""
        core = self.core
        if core is None:
            return
        self._counts = [getattr(self, name) for name in COUNTERS]
        queues = self.queues
        if isinstance(queues, CoreQueues):
            queues.detach()
        self.core = None

    # -- what the core holds ----------------------------------------------------------------

    def receive(self, port: int, data: bytes, wait: float = 0.0) -> bool:
        core = self.core
        if core is None:
            return super().receive(port, data, wait)
        return core.receive(self.slot, port, bytes(data))

    def received_waiting(self) -> int:
        core = self.core
        return super().received_waiting() if core is None else core.inbox(self.slot)

    def has_input(self) -> bool:
        core = self.core
        return super().has_input() if core is None else core.has_input(self.slot)

    def pending(self) -> bool:
        core = self.core
        if core is None:
            return super().pending()
        return core.has_input(self.slot) or core.queued(self.slot) > 0

    def next_departure(self) -> float | None:
        core = self.core
        return super().next_departure() if core is None else core.next_departure(self.slot)

    def step(self) -> bool:
        if self.core is None:
            return super().step()
        raise RuntimeError("the native fabric core steps this device")

    def start(self) -> None:
        if self.core is not None:
            raise NotImplementedError("the native fabric core runs stepped virtual time only")
        super().start()

    def commit(self, pipeline: ForwardingPipeline) -> None:
        core = self.core
        if core is not None:
            core.check_pipeline(self, pipeline)
        super().commit(pipeline)
        if core is not None:
            core.bind(self.slot, self)

    def engine_pipeline(self) -> Any:
        """The engine's walk (NativeV1Pipeline) of the installed program, or None."""
        p = self.pipeline
        return None if p is None else p.switch.pipeline
