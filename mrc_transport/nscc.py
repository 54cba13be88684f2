"""NSCC, Ultra Ethernet's network-signal congestion control (UEC 1.0 §3.6.12-13; the OCP MRC
API's "uet-1.0-nscc"), as one connection's sender runs it: a window in bytes shared by every EV
of the connection, moved by ECN echoes and queueing delay on each acknowledgement, cut by trims
and losses. Pure arithmetic: no I/O, times (µs) are passed in.

The rules, with the spec sections (shared/reference/nscc.md names the sources; where the spec
leaves a choice, the UEC reference simulator uet-htsim's):
- the window: send while inflight + size <= cwnd, cwnd in [min_cwnd, max_cwnd] (§3.6.12.2);
- on an ACK (§3.6.12.5, `on_ack`): bytes newly acknowledged leave inflight; an RTT sample
  (first transmissions only: no retransmit echo on this wire) lowers base_rtt (max_cwnd
  follows) and feeds the queueing delay; quick adapt first; then the quadrant of ECN echo x
  (delay vs target_delay): no ECN & low delay: proportional increase (after fast increase
  near zero delay); no ECN & high delay: fair increase; ECN & high delay: multiplicative
  decrease (at most once per base_rtt, by at most max_md_jump); ECN & low delay: nothing
  (imperfect load balancing: the EV logic acts, not the window). Increases are batched
  ("fulfill": every adjust_bytes or adjust_period), decreases immediate;
- quick adapt (§3.6.12.7): once per base_rtt + target_delay, after a trim (or, without
  trimming, a delay above qa_threshold), if less than max_cwnd >> qa_gate was delivered in the
  last period: cwnd = what was delivered, and the feedback of packets sent under the old
  window is ignored. Only a period the sender filled is judged (the spec's rule presumes a
  sender with more to send, as its simulators' flows are): one in which the window held a
  ready packet back (`can_send` refused one); a period in which the sender had nothing more
  to offer delivered little because it offered little (a ring step's end waiting on one lost
  packet, RFC 7661's application-limited period). A sender starting again with nothing in
  flight starts over as at the connection's start (`resume`: the first period runs from the
  first answer);
- a trim NACK (§3.6.12.8, `on_nack`): out of inflight, quick adapt triggered, else cwnd -= size
  (MRC has no receiver-credit CC, so a last-hop trim cuts too);
- a timeout or inferred loss (§3.6.12.9, `on_loss`): out of inflight, cwnd -= size; no halving,
  no quick adapt.

Sizes are nominal: payload + HEADER_BYTES, as the spec counts UDP length + 40.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

HEADER_BYTES: Final = 64           # per-packet overhead counted against the window
REFERENCE_BDP: Final = 150_000     # bytes: 100 Gb/s x 12 µs, the spec's scaling reference
REFERENCE_MTU: Final = 4096        # the MTU the spec's table (Table 3-82) is written for
REFERENCE_RTT_US: Final = 12.0
FAST_INCREASE_DELAY_US: Final = 1.0   # "delay ~ 0" for fast increase (uet-htsim)
ALGORITHMS: Final = ("fixed", "uet-1.0-nscc")


@dataclass(frozen=True)
class NsccConfig:
    """The knobs, named as the OCP MRC API's `mrc_ctl_cc_nscc_cfg` names them (times in µs
    here, not ns). None: the spec's default, scaled (§3.6.13.3, Table 3-82) from
    `linkspeed_gbps` (the NIC's, all planes: one window spans them) and `base_rtt_us` (the
    unloaded RTT of an MTU packet over the longest path): BDP = linkspeed x base_rtt,
    a = BDP / reference_bdp (150 kB), b = target_delay / 12 µs.

    `reference_bdp` is the spec's 150 kB unless a scale model says otherwise: the spec's gains
    are so many MTUs x a per RTT, written for 4 KiB packets, so a fabric emulated with smaller
    packets (and slower links) keeps the spec's dynamics (gains per RTT as a share of the BDP)
    only with the reference in packets too: `scaled_reference_bdp(mtu)`. The scenarios use it
    (emulation/scenario.py, `transport.reference_bdp`): MRC runs 4 KiB packets, and with the
    reference in bytes a 1 KiB model's fair increase is 3.4 % of the BDP per RTT, not 13.6 %,
    so a sender whose first window an incast trimmed grows back at a quarter of the pace."""

    base_rtt_us: float
    linkspeed_gbps: float
    mtu: int = 1024                                 # payload bytes per packet
    target_delay_us: float | None = None            # 0.75 base_rtt with trimming, else 1.0
    max_cwnd: int | None = None                     # bytes; 1.5 BDP
    trimming: bool = True                           # the fabric trims (quick adapt on trims)
    qa_threshold_us: float | None = None            # off with trimming, else 4 target_delay
    qa_gate: int = 3
    disable_quick_adapt: bool = False
    adjust_bytes_threshold: int | None = None       # 8 MTU
    adjust_period_threshold_us: float | None = None  # base_rtt
    gamma: float = 0.8
    max_md_jump: float = 0.5                        # the smallest factor one decrease applies
    fi: float = 5.0                                 # fair increase: x MTU x a per cwnd acked
    fi_scale: float = 0.25                          # fast increase: x a
    eta: float = 0.15                               # per adjust period: x MTU x a
    delay_alpha: float = 0.0125                     # avg_delay EWMA gain per ACK (uet-htsim)
    reference_bdp: float = REFERENCE_BDP            # bytes: what a = 1 means

    def __post_init__(self) -> None:
        if self.base_rtt_us <= 0 or self.linkspeed_gbps <= 0 or self.mtu <= 0:
            raise ValueError("base_rtt_us, linkspeed_gbps and mtu must be positive")
        if self.target_delay_us is not None and self.target_delay_us <= 0:
            raise ValueError("target_delay_us must be positive")
        if not 0 < self.max_md_jump <= 1 or not 0 <= self.gamma <= 1:
            raise ValueError("max_md_jump must be in (0, 1], gamma in [0, 1]")
        if self.reference_bdp <= 0:
            raise ValueError("reference_bdp must be positive")
        if self.max_cwnd is not None and self.max_cwnd < self.packet_bytes:
            raise ValueError(f"max_cwnd below one packet ({self.packet_bytes} bytes)")

    @property
    def packet_bytes(self) -> int:
        """A full packet's nominal size: the smallest window (one packet always goes)."""
        return self.mtu + HEADER_BYTES

    def bdp(self, base_rtt_us: float | None = None) -> float:
        rtt = self.base_rtt_us if base_rtt_us is None else base_rtt_us
        return self.linkspeed_gbps * 1e3 / 8 * rtt   # Gb/s x µs = 125 bytes per unit

    @property
    def target(self) -> float:
        if self.target_delay_us is not None:
            return self.target_delay_us
        return self.base_rtt_us * (0.75 if self.trimming else 1.0)


def scaled_reference_bdp(mtu: int) -> float:
    """The spec's reference BDP in packets rather than bytes (150 kB is 36.6 packets of
    4 KiB): for a scale model of the spec's fabric that sends `mtu`-byte packets."""
    return REFERENCE_BDP * mtu / REFERENCE_MTU


class Nscc:
    """One congestion context (a connection: one window for all its EVs). The sender calls
    `can_send` before a new packet, `resume` before one that goes with nothing in flight,
    `on_send` for every transmission, `on_ack` per SACK, `on_nack` per trim NACK, `on_loss`
    per timeout or SACK-hole retransmission. Packets are named by a key (the sender's seq):
    inflight counts each sent packet once until it is acknowledged, NACKed or declared lost,
    so it never drifts.

    Counters: `md` multiplicative decreases, `qa` quick adapts, `nack_cuts`, `loss_cuts`,
    `loss_undone` (cuts given back: the loss was a late packet, `undo_loss`), `rtt_samples`."""

    def __init__(self, config: NsccConfig, now_us: float = 0.0) -> None:
        self.config = config
        c = config
        self.min_cwnd = c.packet_bytes
        self.base_rtt = c.base_rtt_us
        self.target = c.target
        self._fixed_max = c.max_cwnd
        self.max_cwnd = self._max_for(self.base_rtt)
        self.cwnd = float(self.max_cwnd)   # the spec starts at MaxWnd
        a = c.bdp() / c.reference_bdp
        b = self.target / REFERENCE_RTT_US
        self.fi = c.fi * c.mtu * a
        self.fi_scale = c.fi_scale * a
        self.eta = c.eta * c.mtu * a
        self.alpha = 4.0 * c.mtu * a * b / self.target   # bytes per µs of delay below target
        self.qa_threshold = (c.qa_threshold_us if c.qa_threshold_us is not None
                             else float("inf") if c.trimming else 4 * self.target)
        self.adjust_bytes = (c.adjust_bytes_threshold if c.adjust_bytes_threshold is not None
                             else 8 * c.packet_bytes)
        self.adjust_period = (c.adjust_period_threshold_us
                              if c.adjust_period_threshold_us is not None else c.base_rtt_us)
        self.inflight = 0
        self._flight: dict[int, int] = {}
        self.avg_delay = 0.0
        self.achieved_bytes = 0
        self.qa_endtime = 0.0
        self.trigger_qa = False
        self.window_limited = False   # the window held a ready packet back this period
        self.bytes_to_ignore = 0
        self.bytes_ignored = 0
        self.received_bytes = 0
        self.inc_bytes = 0.0
        self.last_adjust = now_us
        self.fi_count = 0
        self.increase_mode = False
        self.last_dec = now_us
        self.counters = dict.fromkeys(("md", "qa", "nack_cuts", "loss_cuts", "loss_undone",
                                       "rtt_samples"), 0)

    def _max_for(self, base_rtt: float) -> int:
        if self._fixed_max is not None:
            return self._fixed_max
        return max(self.min_cwnd, int(1.5 * self.config.bdp(base_rtt)))

    # -- the window --------------------------------------------------------------------------

    def can_send(self, payload: int) -> bool:
        """A packet of `payload` bytes the sender has ready fits the window (§3.6.12.2). One
        that does not marks the quick-adapt period as one the window limited."""
        if self.inflight + payload + HEADER_BYTES <= self.cwnd:
            return True
        self.window_limited = True
        return False

    def on_send(self, key: int, payload: int) -> None:
        """Packet `key` left (first transmission or retransmission)."""
        if key not in self._flight:
            size = self._flight[key] = payload + HEADER_BYTES
            self.inflight += size

    def resume(self) -> None:
        """The sender starts again with nothing in flight (it had nothing to send): quick
        adapt starts over as at the connection's start, its first period from the first
        answer (qa_endtime 0). What an idle spell delivered says nothing of the path, and
        nor does a period that began before the first packet could be answered: a trim
        must not set the window to either."""
        self.achieved_bytes = 0
        self.qa_endtime = 0.0

    def release(self, key: int) -> None:
        """Packet `key` left the network without a congestion signal (refused by the
        receiver's window: it goes again)."""
        self._leave(key)

    def _leave(self, key: int) -> int:
        size = self._flight.pop(key, 0)
        self.inflight -= size
        return size

    # -- feedback ----------------------------------------------------------------------------

    def on_ack(self, keys: list[int], now_us: float, rtt_us: float | None, ecn: bool) -> None:
        """A SACK acknowledged `keys` (newly); `rtt_us` the RTT of the packet that triggered
        it if that was a first transmission (Karn), `ecn` its CE echo (SETH m SKIP_ONCE)."""
        newly = sum(self._leave(key) for key in keys)
        if newly == 0:
            return
        self.bytes_ignored += newly
        self.received_bytes += newly
        self.achieved_bytes += newly
        if rtt_us is None:
            return   # §3.6.12.5 step 2: no valid sample, no window change
        self.counters["rtt_samples"] += 1
        if rtt_us < self.base_rtt:
            self.base_rtt = max(rtt_us, 1e-3)
            self.max_cwnd = self._max_for(self.base_rtt)
            self.cwnd = float(min(self.cwnd, self.max_cwnd))
        delay = rtt_us - self.base_rtt
        self._update_delay(delay, ecn)
        if self._quick_adapt(False, ecn, delay, now_us):
            return
        if not ecn and delay < self.target:
            self._proportional_increase(newly, delay)
        elif not ecn:
            self.inc_bytes += self.fi * newly            # fair increase
        elif delay >= self.target:
            self._multiplicative_decrease(now_us)
        else:
            return   # ECN with low delay: exactly no change (the EV is skipped instead)
        self._bound()
        if (self.received_bytes > self.adjust_bytes
                or now_us - self.last_adjust >= self.adjust_period):
            self._fulfill(now_us)
        self._bound()

    def on_nack(self, key: int, now_us: float) -> None:
        """A trim NACK for packet `key` (in-fabric or last-hop alike: no receiver CC here)."""
        size = self._leave(key)
        if size == 0:
            return
        self.bytes_ignored += size
        # A trim says a queue is at its trim threshold (about one BDP of queueing).
        self._update_delay(self.config.base_rtt_us, True)
        self.trigger_qa = True
        if not self._quick_adapt(True, True, 0.0, now_us):
            self.cwnd -= size
            self.counters["nack_cuts"] += 1
            self._bound()

    def on_loss(self, key: int) -> float:
        """Packet `key` is retransmitted after a timeout or a SACK hole: one packet less
        (§3.6.12.9: no halving, no quick adapt). Returns the bytes the window lost."""
        size = self._leave(key)
        if size == 0:
            return 0.0
        self.bytes_ignored += size
        before = self.cwnd
        self.cwnd -= size
        self.counters["loss_cuts"] += 1
        self._bound()
        return before - self.cwnd

    def undo_loss(self, cut: float) -> None:
        """A loss that was not one (the first transmission arrived: RFC 3708's spurious
        retransmission): its cut given back (RFC 4015's response), within max_cwnd."""
        self.cwnd += cut
        self.counters["loss_undone"] += 1
        self._bound()

    # -- the rules ---------------------------------------------------------------------------

    def _bound(self) -> None:
        self.cwnd = float(min(max(self.cwnd, self.min_cwnd), self.max_cwnd))

    def _update_delay(self, delay: float, ecn: bool) -> None:
        # uet-htsim update_delay: a high delay without CE counts as a quarter base RTT (the
        # queue is not here, or not ours); a huge one at the plain gain.
        if not ecn and delay > self.target:
            sample = 0.25 * self.base_rtt
        else:
            sample = delay
        self.avg_delay += self.config.delay_alpha * (sample - self.avg_delay)

    def _quick_adapt(self, loss: bool, skip: bool, delay: float, now: float) -> bool:
        if self.config.disable_quick_adapt:
            return False
        done = False
        if self.bytes_ignored < self.bytes_to_ignore and skip:
            done = True   # feedback of packets sent under the window before the last QA
        elif now > self.qa_endtime:
            if (self.qa_endtime != 0 and self.window_limited
                    and (self.trigger_qa or loss or delay > self.qa_threshold)
                    and self.achieved_bytes < self.max_cwnd >> self.config.qa_gate):
                self.cwnd = float(max(self.achieved_bytes, self.min_cwnd))
                self.bytes_to_ignore = self.inflight
                self.bytes_ignored = 0
                self.trigger_qa = False
                self.counters["qa"] += 1
                done = True
            self.achieved_bytes = 0
            self.window_limited = False
            self.qa_endtime = now + self.base_rtt + self.target
        if done:
            self.inc_bytes = 0.0
            self.received_bytes = 0
        return done

    def _proportional_increase(self, newly: int, delay: float) -> None:
        # Fast increase first: a path with no queue at all for a whole window grows by
        # fi_scale per byte acked at once.
        if delay < FAST_INCREASE_DELAY_US:
            self.fi_count += newly
            if self.fi_count > self.cwnd or self.increase_mode:
                self.cwnd += newly * self.fi_scale
                self.increase_mode = True
                return
        else:
            self.fi_count = 0
        self.increase_mode = False
        self.inc_bytes += self.alpha * newly * (self.target - delay)

    def _multiplicative_decrease(self, now: float) -> None:
        self.increase_mode = False
        self.fi_count = 0
        avg = self.avg_delay
        if avg > self.target and now - self.last_dec > self.base_rtt:
            self.cwnd *= max(1 - self.config.gamma * (avg - self.target) / avg,
                             self.config.max_md_jump)
            self.last_dec = now
            self.counters["md"] += 1

    def _fulfill(self, now: float) -> None:
        self.cwnd += self.inc_bytes / self.cwnd
        if now - self.last_adjust >= self.adjust_period:
            self.cwnd += self.eta
            self.last_adjust = now
        self.inc_bytes = 0.0
        self.received_bytes = 0
