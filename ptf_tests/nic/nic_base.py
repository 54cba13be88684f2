"""NicTest: helpers named after mrc_nic.p4's control-plane intents (p4src/README.md, "The MRC
NIC"), and the packets of both of its sides.

The NIC under test is "us" (NIC A); the tests play its host (port 1) and the fabric (plane ports
2 and 3), where NIC B, the peer, is. State is only ever driven the way it is in a network: table
entries and clone sessions from the controller, packets from the host and the fabric — never
register writes, which BMv2's P4Runtime server refuses.
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from controller.plan import usid
from controller.plan.nic_plan import (  # the controller's numbers, checked against the P4's
    FEEDBACK_PRIORITY,
    NIC_HOST_SESSION,
    SACK_SESSION_BASE,
    TNA_FB_SESSION_BYTES,
    EvProfile,
)
from mrc_transport.wire import (
    BTH,
    PETH,
    SETH,
    CCState,
    Opcode,
    compact_ev,
    data_packet,
)
from ptf_tests.base import P4RuntimeTest

HOST_PORT = 1
PLANES = 2
PLANE_PORT = {0: 2, 1: 3}
EV_COUNT = 8                 # active EVs 0..7, EV e in plane e % 2
BACKUPS = 2                  # per plane: EVs 8..11
SKIP_US = EvProfile().skip_us  # how long a SKIP holds: the controller's default
SKIP_HOLDS_US = 10**9          # longer than any test: a SKIP holds whatever the target's clock
PROFILE = 1
CONN = 3
PEER_R_KEY = 9               # the memory key NIC B's writes to us carry (rx_r_key)
# TNA: the SACK/NACK sessions cut each copy after RETH (p4src/nic/tna/nic_arch.p4,
# FB_SESSION_BYTES; the controller's TNA_FB_SESSION_BYTES, which a test checks against that
# source: one number for the controller and these tests); v1model's NIC truncates its SACKs and
# NACKs itself (BMv2's P4Runtime server refuses a clone session length).
FB_SESSION_BYTES = {"v1model": 0, "tna": TNA_FB_SESSION_BYTES}
OP_EV_REPORT = 0xDF
DSCP_TRIMMABLE, DSCP_RETX, DSCP_CONTROL, DSCP_TRIMMED, DSCP_LASTHOP = 4, 8, 46, 12, 16
ECT0, CE = 2, 3
GOOD, ASSUMED_BAD = 0, 2

ME = "2001:db8::a"          # NIC A, under test
PEER = "2001:db8::b"        # NIC B
MY_QP, PEER_QP = 0x11, 0x22
MY_ROW, PEER_ROW = 0, 1
MY_UA, PEER_UA = 0xFE00, 0xFE01
NIC_MAC = "02:00:00:00:00:10"
T0_MAC = "02:00:00:00:0f:00"

COUNTER = {"tx_data": 0, "tx_fallback": 1, "tx_denied_drop": 2, "tx_no_connection": 3,
           "rx_data": 4, "rx_duplicate": 5, "rx_out_of_window": 6, "rx_trimmed": 7,
           "rx_sack": 8, "rx_nack": 9, "rx_unknown_qp": 10, "rx_malformed": 11,
           "sack_sent": 12, "nack_sent": 13, "ev_bad_suppressed": 14, "rx_injected_drop": 15,
           "tx_probe": 16, "rx_probe": 17, "host_report": 18, "tx_port_passed": 19,
           "port_down_drop": 20, "ev_skipped": 21, "tx_no_path_drop": 24,
           "tx_probe_denied_drop": 25,
           "rx_forged": 28, "rx_corrupt": 29, "rx_bad_r_key": 30, "ev_loss_undone": 31,
           "report_port_down": 32, "query_out": 33, "query_in_service": 34}


def usid_t0(plane: int, index: int) -> int:
    return ((plane + 1) << 12) | index


def usid_t1(plane: int, index: int) -> int:
    return ((plane + 1) << 12) | (1 << 11) | index


BLOCK = usid.parse_block("fcbb:bbbb::/32")


def carrier(*usids: int) -> str:
    return usid.format_address(usid.carrier(BLOCK, usids))


def locator(plane: int, row: int, ua: int) -> str:
    """A NIC's address in a plane: block : uN(its T0) : uA(its T0 port) : NIC decap."""
    return carrier(usid_t0(plane, row), ua, usid.NIC_DECAP_USID)


def return_address(plane: int, ev_t1: int, row: int, ua: int) -> str:
    """The outer source of a NIC's data via a T1 (where feedback goes): its locator behind
    that T1."""
    return carrier(usid_t1(plane, ev_t1), usid_t0(plane, row), ua, usid.NIC_DECAP_USID)


def t1_of(ev: int) -> int:
    """The T1 index the suite gives EV `ev` (every EV of a plane its own T1)."""
    return ev // PLANES


def path_to(plane: int, ev_t1: int, from_row: int, to_row: int, to_ua: int) -> str:
    """The carrier of one path: block : uN(src T0) : uN(T1) : uN(dst T0) : uA : NIC decap."""
    return carrier(usid_t0(plane, from_row), usid_t1(plane, ev_t1), usid_t0(plane, to_row),
                   to_ua, usid.NIC_DECAP_USID)


class NicTest(P4RuntimeTest):
    """P4RuntimeTest plus the NIC's baseline configuration and its packets."""

    # -- configuration -------------------------------------------------------------------------
    def configure(self, *, ev_min_active: int = 2, probe_successes: int = 2,
                  initial_psn: int = 0, hand_off: int = PLANES, rotation: int = 0,
                  skip_us: int = SKIP_US) -> None:
        """One connection to the peer: EV set, templates, plane ports, clones; a passed-over
        EV's turn goes `hand_off` slots on (the plane's next slot by default); the rotation
        starts at slot `rotation`; a SKIP holds for `skip_us` (the controller's default; on a
        target's own clock, so a test that needs one to hold gives SKIP_HOLDS_US)."""
        self.insert_table_entry("tx_connection", {"dst_addr": PEER, "dest_qp": PEER_QP},
                                "set_connection", conn=CONN, profile=PROFILE,
                                ev_mask=EV_COUNT - 1, planes=PLANES, backups=BACKUPS,
                                ev_min_active=ev_min_active, dst_row=PEER_ROW, dst_ua=PEER_UA,
                                hand_off=hand_off, rotation=rotation, skip_us=skip_us)
        self.insert_table_entry("local_qp", {"dest_qp": MY_QP}, "set_local_qp", conn=CONN,
                                profile=PROFILE, ev_mask=EV_COUNT - 1, planes=PLANES,
                                backups=BACKUPS, ev_min_active=ev_min_active,
                                probe_successes=probe_successes, initial_psn=initial_psn,
                                peer_qp=PEER_QP)
        # The memory key the peer's writes carry (peer_data), registered for our QP.
        self.insert_table_entry("rx_r_key", {"dest_qp": MY_QP, "r_key": PEER_R_KEY}, "r_key_valid")
        for ev in range(EV_COUNT + BACKUPS * PLANES):
            self.set_path(ev)
        for plane, port in PLANE_PORT.items():
            base = carrier(usid_t0(plane, MY_ROW), 0, usid_t0(plane, PEER_ROW), 0, usid.NIC_DECAP_USID)
            self.insert_table_entry("path_template", {"plane": plane, "dst_row": PEER_ROW},
                                    "via_t1", base=base)
            self.insert_table_entry("plane_port", {"plane": plane}, "set_plane_port", port=port,
                                    smac=NIC_MAC, dmac=T0_MAC, src=locator(plane, MY_ROW, MY_UA))
            self.insert_table_entry("port_plane", {"port": port}, "set_rx_plane", plane=plane)
            if self.arch == "tna":
                self.insert_clone_session(SACK_SESSION_BASE + plane, [port],
                                          class_of_service=FEEDBACK_PRIORITY,
                                          packet_length_bytes=FB_SESSION_BYTES[self.arch])
        if self.arch != "tna":
            self.insert_clone_session(NIC_HOST_SESSION, [HOST_PORT])

    def set_path(self, ev: int, deny: bool = False) -> None:
        match = {"profile": PROFILE, "ev": ev}
        if deny:
            self.modify_table_entry("ev_path", match, "deny_path")
        else:
            self.insert_table_entry("ev_path", match, "set_path", plane=ev % PLANES,
                                    t1_usid=usid_t1(ev % PLANES, t1_of(ev)))

    def ports_down(self, *planes: int) -> None:
        """Our agent: these planes' ports of NIC A are down (none: every port up again)."""
        self.set_default_action("local_port_state", "set_port_state",
                                down_planes=sum(1 << plane for plane in planes))

    def count(self, name: str) -> int:
        return self.read_counter("nic_counter", COUNTER[name]).packet_count

    def wait_count(self, name: str, wanted: int) -> int:
        return self.wait_for_counter(lambda: self.read_counter("nic_counter", COUNTER[name]),
                                     wanted).packet_count

    # -- the host side -------------------------------------------------------------------------
    def host_write(self, psn: int, payload: bytes = b"w" * 64, retransmit: bool = False) -> Packet:
        pkt = data_packet(src=ME, dst=PEER, dest_qp=PEER_QP, psn=psn, opcode=Opcode.WRITE_ONLY,
                          msn=psn & 0xFFFF, va=0x10000 + psn * 64, r_key=7,
                          dma_length=len(payload), payload=payload, retransmit=retransmit)
        testutils.send_packet(self, HOST_PORT, bytes(pkt))
        return pkt

    def host_to_own_nic(self, opcode: int, psn: int, probe_id: int) -> None:
        pkt = (Ether(src=NIC_MAC, dst=T0_MAC) / IPv6(src=ME, dst=PEER, nh=17) / UDP(dport=4791)
               / BTH(opcode=opcode, dest_qp=PEER_QP, psn=psn) / PETH(probe_id=probe_id))
        testutils.send_packet(self, HOST_PORT, bytes(pkt))

    # -- the fabric side: what NIC B sends ----------------------------------------------------
    def from_peer(self, inner: Packet, plane: int, ev: int, *, dscp: int = DSCP_TRIMMABLE,
                  ecn: int = ECT0) -> bytes:
        """`inner` (IPv6 onwards) encapsulated as NIC B sends it to us on `plane` via `ev`,
        with the UDP checksum B gives it (a NIC drops what fails its checksum as corrupt)."""
        if UDP in inner:
            inner[UDP].chksum = None   # computed by scapy over the inner pseudo-header
        outer = IPv6(src=return_address(plane, t1_of(ev), PEER_ROW, PEER_UA),
                     dst=path_to(plane, t1_of(ev), PEER_ROW, MY_ROW, MY_UA),
                     nh=41, hlim=62, tc=(dscp << 2) | ecn, fl=compact_ev(plane, ev))
        return bytes(Ether(src=T0_MAC, dst=NIC_MAC) / outer / inner)

    def peer_data(self, psn: int, plane: int = 0, ev: int = 0, payload: bytes = b"d" * 64,
                  **kw: int) -> bytes:
        inner = data_packet(src=PEER, dst=ME, dest_qp=MY_QP, psn=psn, opcode=Opcode.WRITE_ONLY,
                            msn=psn & 0xFFFF, va=0x20000 + (psn & 0xFFF) * 64, r_key=PEER_R_KEY,
                            dma_length=len(payload), payload=payload,
                            udp_sport=compact_ev(plane, ev))[IPv6]
        return self.from_peer(inner, plane, ev, **kw)

    def peer_sack(self, ev: int, *, cack: int, m: int = 0, pr: int = 0,
                  port_state: int = 0, offset: int = 0, spdcid: int = 0) -> bytes:
        """A SACK NIC B sends for our packet with PSN cack + offset, which came over `ev`;
        `port_state`: B's ports that are down (bit p: plane p); `spdcid`: what B writes there
        (0: MRC has no PDCs)."""
        plane = ev % PLANES
        inner = (IPv6(src=PEER, dst=ME, nh=17, tc=DSCP_CONTROL << 2)
                 / UDP(sport=0, dport=4791)
                 / BTH(opcode=Opcode.SACK, dest_qp=MY_QP, psn=cack)
                 / SETH(m=m, probe_response=pr, entropy=compact_ev(plane, ev), cack_psn=cack,
                        ack_psn_offset=offset, port_state=port_state, spdcid=spdcid)
                 / CCState())
        return self.from_peer(inner, plane, 0, dscp=DSCP_CONTROL, ecn=0)

    # -- what comes out ------------------------------------------------------------------------
    def receive(self, timeout: float = 2.0) -> tuple[int, bytes]:
        """The next packet out of any port."""
        result = testutils.dp_poll(self, device_number=0, timeout=timeout)
        if not isinstance(result, self.dataplane.PollSuccess):
            self.fail(f"no packet within {timeout:g} s")
        return result.port, bytes(result.packet)

    def receive_all(self, count: int, timeout: float = 3.0) -> dict[int, list[bytes]]:
        """Exactly `count` packets (any ports), then nothing else."""
        got: dict[int, list[bytes]] = {}
        deadline = time.monotonic() + timeout
        for _ in range(count):
            port, data = self.receive(max(0.05, deadline - time.monotonic()))
            got.setdefault(port, []).append(data)
        testutils.verify_no_other_packets(self)
        return got

    def sent_on(self, psn: int) -> tuple[int, IPv6]:
        """Write `psn` from the host; the one packet it becomes: (port, outer IPv6)."""
        self.host_write(psn)
        got = self.receive_all(1)
        [(port, [data])] = got.items()
        return port, Ether(data)[IPv6]
