"""Two MRC NICs back to back, the pair every NIC test uses (engine tests in tests/unit, the
transport over real ports in tests/integration): their sides, the EV set, the uSIDs and
addresses, and the program's constants (p4src/README.md, "The MRC NIC"). What one sends on a
plane port is what the other receives there; no fabric is needed to check the NICs."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from controller.plan import usid
from controller.plan.nic_plan import EvProfile

PROGRAM = Path(__file__).resolve().parents[1] / "p4src" / "nic" / "mrc_nic.p4"
HOST_PORT = 1
PLANES = 2
PLANE_PORT = {0: 2, 1: 3}
PROFILE = 1
EV_COUNT = 8                     # active EVs 0..7 in slots 0..7; EV e is in plane e % 2
BACKUPS = 2                      # per plane: EVs 8..11 (8, 10 in plane 0; 9, 11 in plane 1)
DSCP = {"trimmable": 4, "retx": 8, "control": 46, "trimmed": 12, "lasthop": 16}
GOOD, SKIP, ASSUMED_BAD = 0, 1, 2
SKIP_US = EvProfile().skip_us   # how long a SKIP holds (the controller's default)
R_KEY = 7                        # the memory key each side's host registered (rx_r_key)
T0_MAC = 0x02_00_00_00_0F_00     # + plane: the (absent) T0's MAC
COUNTER = {"tx_data": 0, "tx_fallback": 1, "tx_denied_drop": 2, "tx_no_connection": 3,
           "rx_data": 4, "rx_duplicate": 5, "rx_out_of_window": 6, "rx_trimmed": 7,
           "rx_sack": 8, "rx_nack": 9, "rx_unknown_qp": 10, "rx_malformed": 11,
           "sack_sent": 12, "nack_sent": 13, "ev_bad_suppressed": 14, "rx_injected_drop": 15,
           "tx_probe": 16, "rx_probe": 17, "host_report": 18, "tx_port_passed": 19,
           "port_down_drop": 20, "ev_skipped": 21, "ev_assumed_bad": 22, "ev_recovered": 23,
           "tx_no_path_drop": 24, "tx_probe_denied_drop": 25, "tx_port_balanced": 26,
           "tx_bad_path_passed": 27, "rx_forged": 28, "rx_corrupt": 29, "rx_bad_r_key": 30,
           "ev_loss_undone": 31,
           "report_port_down": 32, "query_out": 33, "query_in_service": 34}
BLOCK = usid.parse_block("fcbb:bbbb::/32")


def addr(text: str) -> int:
    return int(ipaddress.IPv6Address(text))


def carrier(*usids: int) -> int:
    return usid.carrier(BLOCK, usids)


@dataclass(frozen=True)
class Side:
    """One NIC of the pair: its address, row (T0 index), port uA, connection and QP."""

    name: str
    address: str
    row: int
    ua: int
    conn: int
    qp: int

    def mac(self, plane: int) -> int:
        return 0x02_00_00_00_00_10 + self.row * 16 + plane


A = Side("a", "2001:db8::a", row=0, ua=0xFE00, conn=3, qp=0x11)
B = Side("b", "2001:db8::b", row=1, ua=0xFE01, conn=5, qp=0x22)


def t1_usid(plane: int, index: int) -> int:
    return ((plane + 1) << 12) | (1 << 11) | index


def t0_usid(plane: int, index: int) -> int:
    return ((plane + 1) << 12) | index


def locator(side: Side, plane: int) -> int:
    """A NIC's address in a plane: block : uN(its T0) : uA(its T0 port) : NIC decap."""
    return carrier(t0_usid(plane, side.row), side.ua, usid.NIC_DECAP_USID)


def return_address(side: Side, plane: int, t1_index: int) -> str:
    """The outer source of `side`'s data through a T1: its locator behind that T1."""
    return str(ipaddress.IPv6Address(carrier(
        t1_usid(plane, t1_index), t0_usid(plane, side.row), side.ua, usid.NIC_DECAP_USID)))


def template(me: Side, peer: Side, plane: int) -> int:
    """`me`'s path template towards `peer`'s row: the T1 and uA uSIDs left zero."""
    return carrier(t0_usid(plane, me.row), 0, t0_usid(plane, peer.row), 0, usid.NIC_DECAP_USID)


def inner_udp_checksum(frame: bytes) -> int:
    """The checksum a NIC gives a frame it sends on a plane port (NicComputeChecksum): csum16
    over the inner IPv6 pseudo-header, the UDP header (checksum 0) and everything after it. The
    frame is Ethernet | outer IPv6 | inner IPv6 | UDP | ... with no extension headers."""
    inner = 14 + 40
    udp = inner + 40
    length = int.from_bytes(frame[udp + 4:udp + 6])
    data = (frame[inner + 8:inner + 40] + length.to_bytes(4) + bytes(3) + frame[inner + 6:inner + 7]
            + frame[udp:udp + 6] + bytes(2) + frame[udp + 8:udp + length])
    if len(data) % 2:
        data += bytes(1)
    total = sum(int.from_bytes(data[i:i + 2]) for i in range(0, len(data), 2))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def resealed(frame: bytes) -> bytes:
    """A plane-side frame edited in a test, with the checksum its sender would have given it (a
    NIC drops an arriving frame whose checksum fails as corrupt)."""
    udp = 14 + 40 + 40
    return frame[:udp + 6] + inner_udp_checksum(frame).to_bytes(2) + frame[udp + 8:]
