"""The parameters of one MRC connection, as the host transport sees it."""

from __future__ import annotations

from dataclasses import dataclass

from mrc_transport.nscc import NsccConfig
from mrc_transport.wire import EV_MAX_PLANE, PSN_MOD, ROCE_UDP_PORT

# The NIC remembers which EV carried a PSN in a ring of 1024 (PSN_WINDOW in nic_types.p4): a
# loss report for a PSN further back than that would name the wrong EV.
NIC_PSN_WINDOW = 1024


@dataclass(frozen=True)
class ConnectionConfig:
    """One connection between this host's NIC (`local_addr`, `local_qp`) and its peer's.

    Times are in microseconds of the injected clock. `window` is the PSN span in flight from
    the oldest unacknowledged PSN: 64 by default, the NIC receiver's bitmap (a wider window
    makes every packet sent past a hole an out-of-window NACK and a resend); a SACK hole is
    resent once its packet is `reorder_us` old (paths differ in delay: younger holes are
    reordering, not loss), a packet with no SACK at all after its retransmission timeout:
    `rto_us` until the first RTT sample, then RFC 6298's SRTT + 4 RTTVAR within
    [`rto_min_us`, `rto_max_us`] (0: `rto_us`, and `give_up_us`); a packet's first
    `retry_linear_cnt` timeouts in a row keep that timer (each resend goes out on another EV),
    later ones double it (mrc_transport/rto.py; the OCP MRC API's retry.linear_cnt, at most 7,
    then exponential). The connection gives up (NoAnswer) when something is in
    flight and nothing at all has answered it (no SACK, NACK or probe answer, on any EV) for
    `give_up_us` (0: 20 x `rto_us`), and for 4 of its measured round trips; `max_retries`
    is only a safety net behind that: the retransmissions of one PSN that no NACK caused (a
    trimmed packet's resend is not a failed retry: the trim proves the path and the receiver
    alive) before RetryLimitExceeded;
    `probe_successes` mirrors the NIC's K (answered probes in a row that bring an ASSUMED_BAD
    EV back). With `cc` (mrc_transport/nscc.py), NSCC's congestion window (bytes) limits new
    packets too.
    """

    local_addr: str
    peer_addr: str
    local_qp: int
    peer_qp: int
    initial_psn: int = 0
    mtu: int = 1024
    window: int = 64
    rto_us: int = 500
    reorder_us: int = 150
    probe_interval_us: int = 200
    probe_successes: int = 3
    max_retries: int = 64
    rto_min_us: int = 0    # 0: rto_us
    rto_max_us: int = 0    # 0: give_up_us
    give_up_us: int = 0    # 0: 20 x rto_us
    retry_linear_cnt: int = 3
    udp_port: int = ROCE_UDP_PORT
    r_key: int = 7
    cc: NsccConfig | None = None   # NSCC's window in bytes on top of `window`; None: fixed
    tx_gbps: float = 0.0   # the NIC's line rate, all its planes: new packets paced to it (0: not)
    planes: int = 1        # the NIC's planes: lateness is judged once each timed a round trip

    def __post_init__(self) -> None:
        limits = {
            "local_qp": (0, 1 << 24),
            "peer_qp": (0, 1 << 24),
            "initial_psn": (0, PSN_MOD),
            "mtu": (1, 1 << 16),
            "window": (1, NIC_PSN_WINDOW + 1),
            "rto_us": (1, 1 << 63),
            "reorder_us": (0, 1 << 63),
            "probe_interval_us": (1, 1 << 63),
            "probe_successes": (1, 256),
            "max_retries": (0, 1 << 31),
            "rto_min_us": (0, 1 << 63),
            "rto_max_us": (0, 1 << 63),
            "give_up_us": (0, 1 << 63),
            "retry_linear_cnt": (0, 8),
            "udp_port": (0, 1 << 16),
            "r_key": (0, 1 << 32),
            "planes": (1, EV_MAX_PLANE + 2),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if not low <= value < high:
                raise ValueError(f"{name} out of range [{low}, {high}): {value}")
        if not 0.0 <= self.tx_gbps < float("inf"):
            raise ValueError(f"tx_gbps out of range [0, inf): {self.tx_gbps}")
        if self.rto_floor_us > self.rto_ceiling_us:
            raise ValueError(f"rto_min_us {self.rto_floor_us} above rto_max_us "
                             f"{self.rto_ceiling_us}")

    @property
    def give_up_after_us(self) -> int:
        """`give_up_us`, or 20 initial RTOs."""
        return self.give_up_us or 20 * self.rto_us

    @property
    def rto_floor_us(self) -> int:
        """`rto_min_us`, or `rto_us`."""
        return self.rto_min_us or self.rto_us

    @property
    def rto_ceiling_us(self) -> int:
        """`rto_max_us`, or `give_up_after_us` (but never below the floor's default)."""
        return self.rto_max_us or max(self.give_up_after_us, self.rto_floor_us)
