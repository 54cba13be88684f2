"""The parameters of one MRC connection, as the host transport sees it."""

from __future__ import annotations

from dataclasses import dataclass

from mrc_transport.wire import PSN_MOD, ROCE_UDP_PORT

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
    reordering, not loss), a packet with no SACK at all after `rto_us`;
    `probe_successes` mirrors the NIC's K (answered probes in a row that bring an ASSUMED_BAD
    EV back).
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
    max_retries: int = 16
    udp_port: int = ROCE_UDP_PORT
    r_key: int = 7

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
            "udp_port": (0, 1 << 16),
            "r_key": (0, 1 << 32),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if not low <= value < high:
                raise ValueError(f"{name} out of range [{low}, {high}): {value}")
