"""BMv2's two-rate three-colour meter (RFC 2698 trTCM as ``src/bm_sim/meters.cpp`` runs it).

Each meter has two token buckets, checked peak first: a packet needing more tokens than the
peak bucket holds is RED (2) and touches nothing else; otherwise it takes its tokens from the
peak bucket, and is YELLOW (1) if the committed bucket lacks them, else GREEN (0) taking them
there too. A packets meter needs 1 token per packet, a bytes meter one per byte of the packet
*as received* (BMv2 uses the ingress length, so callers pass that).

Buckets refill from one time origin rather than from the last packet, as BMv2 does:
``tokens_since_origin = int(now_us * rate_per_us)`` and a bucket gains the difference from
the previous packet, capped at its burst size. Configuring a meter fills both buckets. An
unconfigured meter colours every packet GREEN.

Units: P4Runtime ``MeterConfig`` gives rates per second (`Meter.set_rates`), which BMv2's PI
layer divides by 10**6; the BMv2 CLI (``meter_set_rates``) gives rates per microsecond
(`Meter.set_rates_per_us`). Bursts are packets or bytes in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from softswitch.errors import ControlPlaneError

GREEN = 0
YELLOW = 1
RED = 2

MeterKind = Literal["packets", "bytes"]


@dataclass(frozen=True, slots=True)
class MeterRates:
    """A meter configuration in P4Runtime units (rates per second, bursts in units)."""

    cir: int
    cburst: int
    pir: int
    pburst: int


def check_rates(cir: float, cburst: int, pir: float, pburst: int) -> None:
    """Refuse negative values and cir > pir, as BMv2 does (``INVALID_INFO_RATE_VALUE``)."""
    if min(cir, pir) < 0 or min(cburst, pburst) < 0:
        raise ControlPlaneError("meter rates and burst sizes must not be negative")
    if cir > pir:
        raise ControlPlaneError(
            f"meter committed rate {cir} is above the peak rate {pir} "
            "(BMv2: INVALID_INFO_RATE_VALUE)"
        )


class _Bucket:
    __slots__ = ("burst", "color", "rate", "tokens", "tokens_last")

    def __init__(self, rate: float, burst: int, color: int) -> None:
        self.rate = rate  # tokens per microsecond
        self.burst = burst
        self.tokens = burst
        self.tokens_last = 0
        self.color = color


class Meter:
    """One trTCM meter of `kind` ``"packets"`` or ``"bytes"``."""

    __slots__ = ("_buckets", "kind")

    def __init__(self, kind: MeterKind) -> None:
        if kind not in ("packets", "bytes"):
            raise ValueError(f"meter kind must be 'packets' or 'bytes', not {kind!r}")
        self.kind: MeterKind = kind
        self._buckets: tuple[_Bucket, _Bucket] | None = None  # (peak, committed)

    @property
    def configured(self) -> bool:
        return self._buckets is not None

    def set_rates(self, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure from P4Runtime units: `cir`/`pir` per second, bursts in packets/bytes."""
        self.set_rates_per_us(cir / 1_000_000.0, cburst, pir / 1_000_000.0, pburst)

    def set_rates_per_us(self, cir: float, cburst: int, pir: float, pburst: int) -> None:
        """Configure from BMv2 CLI units (``meter_set_rates``): rates per microsecond.

        Raises `ControlPlaneError` (and changes nothing) for negative values or cir > pir,
        which BMv2 rejects as ``INVALID_INFO_RATE_VALUE``.
        """
        check_rates(cir, cburst, pir, pburst)
        peak = _Bucket(float(pir), int(pburst), RED)
        self._buckets = (peak, _Bucket(float(cir), int(cburst), YELLOW))

    def reset_rates(self) -> None:
        """Back to unconfigured (every packet GREEN), as a P4Runtime default MeterConfig."""
        self._buckets = None

    def rates(self) -> MeterRates | None:
        """The configuration in P4Runtime units (BMv2 truncates ``rate * 1e6``), or None."""
        if self._buckets is None:
            return None
        peak, committed = self._buckets
        return MeterRates(
            int(committed.rate * 1_000_000.0),
            committed.burst,
            int(peak.rate * 1_000_000.0),
            peak.burst,
        )

    def execute(self, now_us: int, size: int, pre_color: int = GREEN) -> int:
        """Meter one packet of `size` bytes at `now_us` (microseconds since the switch
        started, never decreasing) and return its colour (at least `pre_color`)."""
        buckets = self._buckets
        if buckets is None:
            return pre_color
        need = 1 if self.kind == "packets" else size
        color = GREEN
        for bucket in buckets:
            since_origin = int(now_us * bucket.rate)
            new = since_origin - bucket.tokens_last
            bucket.tokens_last = since_origin
            if new > 0:
                tokens = bucket.tokens + new
                bucket.tokens = tokens if tokens < bucket.burst else bucket.burst
            if bucket.tokens < need:
                color = bucket.color
                break
            bucket.tokens -= need
        return color if color > pre_color else pre_color


class MeterArray:
    """An indexed ``meter`` extern instance: `size` meters of one kind."""

    __slots__ = ("kind", "meters")

    def __init__(self, size: int, kind: MeterKind) -> None:
        self.kind: MeterKind = kind
        self.meters: list[Meter] = [Meter(kind) for _ in range(size)]

    def __len__(self) -> int:
        return len(self.meters)

    def __getitem__(self, index: int) -> Meter:
        """The meter at `index` for the control plane; out of range raises ControlPlaneError."""
        if not 0 <= index < len(self.meters):
            raise ControlPlaneError(
                f"meter index {index} out of range (the array has {len(self.meters)} meters)"
            )
        return self.meters[index]

    def execute(self, index: int, now_us: int, size: int) -> int | None:
        """``execute_meter(index, result)``: the colour, or None when `index` is out of
        range (BMv2 then updates no meter and leaves `result` unchanged)."""
        if 0 <= index < len(self.meters):
            return self.meters[index].execute(now_us, size)
        return None

    def set_rates(self, index: int, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure one meter in P4Runtime units."""
        self[index].set_rates(cir, cburst, pir, pburst)

    def set_all_rates(self, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure every meter in P4Runtime units (a P4Runtime wildcard write)."""
        for meter in self.meters:
            meter.set_rates(cir, cburst, pir, pburst)

    def reset(self) -> None:
        """Unconfigure every meter."""
        for meter in self.meters:
            meter.reset_rates()
