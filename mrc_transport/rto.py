"""The retransmission timeout of one connection (RFC 6298's estimator, in µs of the injected
clock): SRTT and RTTVAR from RTT samples, RTO = SRTT + max(G, 4 RTTVAR) clamped to
[floor, ceiling], the configured `rto_us` until the first sample; backed off by doubling,
after `linear` timeouts in a row at the plain RTO (the OCP MRC API's QP retry policy:
`retry.linear_cnt` fixed-interval retries, then `retry.exp_cnt` exponential ones). The linear
retries are what multipath needs: a timed-out packet is reported and resent on another EV, so
its first resends are new paths, not the same congested one.

Samples come from the sender's own send times of packets acknowledged on their only
transmission (Karn's rule: an acknowledgement of a retransmitted PSN says nothing of which
transmission it answers). The backoff is twofold: a packet that timed out n times in a row waits
RTO x 2^n before its next timeout, and while the connection's latest timeout has not been
followed by newly acknowledged data every packet waits RTO x 2^(connection backoff) (RFC 6298
§5.5-5.7: the timer stays backed off until the path proves it carries data again).
"""

from __future__ import annotations

from typing import Final

GRANULARITY_US: Final = 1   # the clock's tick (G)
ALPHA: Final = 1 / 8
BETA: Final = 1 / 4
MAX_SHIFT: Final = 30       # 2^30 x any RTO is past any ceiling


class RtoEstimator:
    """`rto_us` before the first sample; `sample(rtt_us)` feeds it; `timer_us(timeouts)` is
    the timeout of a packet that timed out `timeouts` times in a row (the larger of that and
    the connection's backoff); `timed_out(timeouts)` and `acknowledged()` move the backoff."""

    def __init__(self, initial_us: int, floor_us: int, ceiling_us: int,
                 linear: int = 0) -> None:
        if not 0 < floor_us <= ceiling_us:
            raise ValueError(f"RTO floor {floor_us} µs and ceiling {ceiling_us} µs")
        self.linear = linear      # timeouts in a row before the timer doubles
        self.floor_us = floor_us
        self.ceiling_us = ceiling_us
        self.srtt_us: float | None = None
        self.rttvar_us = 0.0
        self.rto_us = self._clamp(initial_us)
        self.backoff = 0          # consecutive doublings since data was last acknowledged
        self.samples = 0

    def _clamp(self, rto: float) -> int:
        return max(self.floor_us, min(self.ceiling_us, -int(-rto // 1)))

    def sample(self, rtt_us: float) -> None:
        """One RTT measurement (RFC 6298 §2.2-2.3)."""
        if self.srtt_us is None:
            self.srtt_us = rtt_us
            self.rttvar_us = rtt_us / 2
        else:
            self.rttvar_us = (1 - BETA) * self.rttvar_us + BETA * abs(self.srtt_us - rtt_us)
            self.srtt_us = (1 - ALPHA) * self.srtt_us + ALPHA * rtt_us
        self.samples += 1
        self.rto_us = self._clamp(self.srtt_us + max(GRANULARITY_US, 4 * self.rttvar_us))

    def spread_us(self) -> int:
        """SRTT + 4 RTTVAR, unclamped (0 before the first sample): the round trips the
        measurements explain."""
        if self.srtt_us is None:
            return 0
        return -int(-(self.srtt_us + 4 * self.rttvar_us) // 1)

    def timer_us(self, timeouts: int = 0) -> int:
        """How long a packet that timed out `timeouts` times in a row waits for its answer."""
        shift = min(MAX_SHIFT, max(0, max(timeouts, self.backoff) - self.linear))
        return min(self.ceiling_us, self.rto_us << shift) if shift else self.rto_us

    def timed_out(self, timeouts: int) -> None:
        """A packet timed out for the `timeouts`-th time in a row: the timer doubles (once per
        round of timeouts, not once per packet of a window that timed out together)."""
        if timeouts > self.backoff:
            self.backoff = min(MAX_SHIFT, timeouts)

    def acknowledged(self) -> None:
        """New data was acknowledged: the path carries data; the timer is no longer backed
        off (a packet's own count of timeouts still is)."""
        self.backoff = 0
