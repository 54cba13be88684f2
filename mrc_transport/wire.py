"""The MRC wire format as scapy layers, bit-exact with bth_t (p4src/include/headers.p4) and
p4src/include/mrc_headers.p4, plus the pure helpers the transport builds and reads packets with.

After UDP (RoCEv2 port) the chains are, as in the NIC parser:
  writes  BTH / METH / RETH [/ ImmDt for the *_IMM opcodes] / payload
  SACK    BTH / SETH / CCState
  NACK    BTH / NETH
  probe   BTH / PETH
Importing this module makes UDP dport 4791 dissect as this BTH; bind_roce_port() adds ports.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Final

from scapy.fields import (
    BitEnumField,
    BitField,
    ByteEnumField,
    ByteField,
    Field,
    IntField,
    ShortField,
    SignedShortField,
    ThreeBytesField,
    XIntField,
    XLongField,
    XShortField,
)
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_bottom_up, bind_layers, bind_top_down

ROCE_UDP_PORT: Final = 4791
PSN_MOD: Final = 1 << 24
EV_MAX_PLANE: Final = 7
EV_MAX_SLOT: Final = 0xFF

# Locally administered defaults for the host -> NIC hop of data_packet().
HOST_MAC: Final = "02:00:00:00:00:01"
NIC_MAC: Final = "02:00:00:00:00:02"


class Opcode(IntEnum):
    """BTH opcodes (the OP_* consts of mrc_headers.p4)."""

    WRITE_FIRST = 0xC6
    WRITE_MIDDLE = 0xC7
    WRITE_LAST = 0xC8
    WRITE_LAST_IMM = 0xC9
    WRITE_ONLY = 0xCA
    WRITE_ONLY_IMM = 0xCB
    SACK = 0xDC
    NACK = 0xDD
    PROBE = 0xDE


class SackM(IntEnum):
    """SETH.m: what the responder asks of the EV that carried the acknowledged packet."""

    NONE = 0
    SKIP_ONCE = 1
    ALWAYS_SKIP = 2


class NackReason(IntEnum):
    """NETH.nack_reason (UET PDS numbering)."""

    TRIMMED = 0x01
    TRIMMED_LASTHOP = 0x02
    PSN_OOR_WINDOW = 0x0B


# The P4 const names, for code that mirrors the P4 program.
OP_WRITE_FIRST: Final = Opcode.WRITE_FIRST
OP_WRITE_MIDDLE: Final = Opcode.WRITE_MIDDLE
OP_WRITE_LAST: Final = Opcode.WRITE_LAST
OP_WRITE_LAST_IMM: Final = Opcode.WRITE_LAST_IMM
OP_WRITE_ONLY: Final = Opcode.WRITE_ONLY
OP_WRITE_ONLY_IMM: Final = Opcode.WRITE_ONLY_IMM
OP_SACK: Final = Opcode.SACK
OP_NACK: Final = Opcode.NACK
OP_PROBE: Final = Opcode.PROBE
SACK_M_NONE: Final = SackM.NONE
SACK_M_SKIP_ONCE: Final = SackM.SKIP_ONCE
SACK_M_ALWAYS_SKIP: Final = SackM.ALWAYS_SKIP
NACK_TRIMMED: Final = NackReason.TRIMMED
NACK_TRIMMED_LASTHOP: Final = NackReason.TRIMMED_LASTHOP
NACK_PSN_OOR_WINDOW: Final = NackReason.PSN_OOR_WINDOW

WRITE_OPCODES: Final = frozenset(op for op in Opcode if op.name.startswith("WRITE_"))
IMM_OPCODES: Final = frozenset({Opcode.WRITE_LAST_IMM, Opcode.WRITE_ONLY_IMM})


def _names(enum: type[IntEnum]) -> dict[int, str]:
    return {int(member): member.name for member in enum}


class BTH(Packet):
    """Base Transport Header (12 bytes); MRC uses the byte-8 bits A, R, RTX and TS."""

    name = "BTH"
    fields_desc = [
        ByteEnumField("opcode", 0, _names(Opcode)),
        BitField("solicited_event", 0, 1),
        BitField("mig_req", 0, 1),
        BitField("pad_count", 0, 2),
        BitField("transport_version", 0, 4),
        XShortField("partition_key", 0xFFFF),
        ByteField("reserved0", 0),
        ThreeBytesField("dest_qp", 0),
        BitField("ack_req", 0, 1),
        BitField("reliable", 0, 1),
        BitField("retransmit", 0, 1),
        BitField("timestamp", 0, 1),
        BitField("reserved1", 0, 4),
        ThreeBytesField("psn", 0),
    ]


class METH(Packet):
    """MRC extended transport header (4 bytes): orders write-with-immediate completions."""

    name = "METH"
    fields_desc = [ShortField("rq_msn", 0), ShortField("msn", 0)]


class RETH(Packet):
    """RDMA extended transport header (16 bytes), in every write packet."""

    name = "RETH"
    fields_desc = [
        XLongField("virtual_address", 0),
        XIntField("r_key", 0),
        IntField("dma_length", 0),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        # Whether ImmDt follows depends on the BTH opcode two layers down, which bind_layers
        # cannot express.
        bth = self.underlayer
        while bth is not None and not isinstance(bth, BTH):
            bth = bth.underlayer
        if bth is not None and bth.opcode in IMM_OPCODES:
            return ImmDt
        return super().guess_payload_class(payload)


class ImmDt(Packet):
    """Immediate data (4 bytes), after RETH in the *_IMM opcodes."""

    name = "ImmDt"
    fields_desc = [XIntField("data", 0)]


# SETH and NETH share their UET PDS layout: a type/next-header prefix, the reflected EV and the
# PDC ids, and the CC type/flags byte.
def _pds_type_fields() -> list[Field[Any, Any]]:
    return [BitField("header_type", 0, 4), BitField("next_header", 0, 5)]


def _ev_and_pdc_fields() -> list[Field[Any, Any]]:
    return [XIntField("entropy", 0), ShortField("spdcid", 0), ShortField("dpdcid", 0)]


def _cc_type_fields() -> list[Field[Any, Any]]:
    return [BitField("cc_type", 0, 4), BitField("cc_flags", 0, 4)]


class SETH(Packet):
    """Reliability SACK header (28 bytes); the offsets are signed, and sack_offset defaults to 1
    as the P4 program sends it (bitmap base = cack_psn + 1)."""

    name = "SETH"
    fields_desc = [
        *_pds_type_fields(),
        BitEnumField("m", 0, 2, _names(SackM)),
        BitField("reserved0", 0, 3),
        BitField("probe_response", 0, 1),
        BitField("reserved1", 0, 1),
        SignedShortField("ack_psn_offset", 0),
        *_ev_and_pdc_fields(),
        ByteField("port_state", 0),
        ThreeBytesField("cack_psn", 0),
        *_cc_type_fields(),
        ByteField("mpr", 0),
        SignedShortField("sack_offset", 1),
        XLongField("sack_bitmap", 0),
    ]


class CCState(Packet):
    """Congestion-control state (8 bytes), after SETH."""

    name = "CC_STATE"
    fields_desc = [
        ShortField("tx_timestamp", 0),
        BitField("reserved", 0, 1),
        BitField("ooo_count", 0, 15),
        BitField("restore_window", 0, 1),
        BitField("rcv_cwnd_pen", 0, 7),
        ThreeBytesField("rcvd_bytes", 0),
    ]


class NETH(Packet):
    """Reliability NACK header (20 bytes)."""

    name = "NETH"
    fields_desc = [
        *_pds_type_fields(),
        BitField("reserved0", 0, 7),
        ByteEnumField("nack_reason", 0, _names(NackReason)),
        ByteField("vendor_info", 0),
        *_ev_and_pdc_fields(),
        ByteField("port_state", 0),
        ThreeBytesField("nack_psn", 0),
        *_cc_type_fields(),
        ByteField("reserved2", 0),
        ShortField("tx_timestamp", 0),
    ]


class PETH(Packet):
    """Reliability probe header (16 bytes); a probe consumes no PSN."""

    name = "PETH"
    fields_desc = [
        ShortField("probe_id", 0),
        ShortField("spdcid", 0),
        ShortField("dpdcid", 0),
        ShortField("tx_timestamp", 0),
        BitField("tsr", 0, 1),
        BitField("reserved0", 0, 11),
        BitField("format_type", 0, 4),
        BitField("reserved1", 0, 48),
    ]


def bind_roce_port(port: int = ROCE_UDP_PORT) -> None:
    """Make UDP datagrams to `port` dissect as BTH, ahead of every other UDP binding.

    scapy takes the first matching binding, so appending (bind_layers) would lose to
    scapy.contrib.roce's BTH on 4791 if it was imported first, and to source-port bindings
    (DNS on 53, ...) since the compact EV rides in the source port. Bindings of other ports and
    the UDP()/BTH() build default (dport 4791) are left as they are.
    """
    if not 0 <= port <= 0xFFFF:
        raise ValueError(f"UDP port out of range: {port}")
    ours = ({"dport": port}, BTH)
    # A fresh list, as scapy's own bind_bottom_up makes: subclasses may share the old one.
    UDP.payload_guess = [ours, *(guess for guess in UDP.payload_guess if guess != ours)]


def unbind_roce_port(port: int = ROCE_UDP_PORT) -> None:
    """Undo bind_roce_port(port): datagrams to `port` dissect as scapy would without us."""
    ours = ({"dport": port}, BTH)
    UDP.payload_guess = [guess for guess in UDP.payload_guess if guess != ours]


def _bind_layers() -> None:
    bind_top_down(UDP, BTH, dport=ROCE_UDP_PORT)
    bind_roce_port(ROCE_UDP_PORT)
    for opcode in WRITE_OPCODES:
        # Dissection only: six opcodes share METH, so there is no one build default.
        bind_bottom_up(BTH, METH, opcode=int(opcode))
    bind_layers(METH, RETH)
    bind_layers(BTH, SETH, opcode=int(Opcode.SACK))
    bind_layers(SETH, CCState)
    bind_layers(BTH, NETH, opcode=int(Opcode.NACK))
    bind_layers(BTH, PETH, opcode=int(Opcode.PROBE))


_bind_layers()


def _check_bits(name: str, value: int, bits: int) -> None:
    # scapy silently drops the high byte of a too-large 24-bit field; refuse instead.
    if not 0 <= value < 1 << bits:
        raise ValueError(f"{name} does not fit in {bits} bits: {value:#x}")


def data_packet(
    *,
    src: str,
    dst: str,
    dest_qp: int,
    psn: int,
    opcode: int,
    msn: int,
    rq_msn: int = 0,
    va: int,
    r_key: int,
    dma_length: int,
    payload: bytes,
    immediate: int | None = None,
    retransmit: bool = False,
    ack_req: bool = False,
    udp_sport: int = 0,
    udp_dport: int = ROCE_UDP_PORT,
    smac: str = HOST_MAC,
    dmac: str = NIC_MAC,
) -> Packet:
    """The plain (not encapsulated) write packet a host hands its NIC:
    Ether / IPv6 / UDP / BTH / METH / RETH [/ ImmDt] / Raw(payload).

    `immediate` is required by the *_IMM opcodes and refused by the others.
    """
    if opcode not in WRITE_OPCODES:
        raise ValueError(f"not a write opcode: {opcode:#x}")
    if (immediate is not None) != (opcode in IMM_OPCODES):
        raise ValueError(f"opcode {opcode:#x} and immediate={immediate!r} do not go together")
    _check_bits("dest_qp", dest_qp, 24)
    _check_bits("psn", psn, 24)
    pkt = (
        Ether(src=smac, dst=dmac)
        / IPv6(src=src, dst=dst, nh=17, hlim=64)
        / UDP(sport=udp_sport, dport=udp_dport)
        / BTH(opcode=opcode, dest_qp=dest_qp, psn=psn, ack_req=int(ack_req),
              retransmit=int(retransmit))
        / METH(rq_msn=rq_msn, msn=msn)
        / RETH(virtual_address=va, r_key=r_key, dma_length=dma_length)
    )
    if immediate is not None:
        pkt = pkt / ImmDt(data=immediate)
    return pkt / Raw(payload)


def _feedback(
    pkt: Packet | bytes, opcode: Opcode, chain: tuple[type[Packet], ...]
) -> dict[str, Any] | None:
    """The fields of a BTH with `opcode` followed by the headers `chain`, or None."""
    if isinstance(pkt, bytes | bytearray):
        pkt = Ether(pkt)
    bth = pkt.getlayer(BTH)
    if bth is None or bth.opcode != opcode:
        return None
    fields: dict[str, Any] = {}
    # The IPv6 right under UDP is the inner one of an encapsulated packet: the NICs' addresses.
    udp = bth.underlayer
    if isinstance(udp, UDP):
        fields["udp_sport"] = udp.sport
        if isinstance(udp.underlayer, IPv6):
            fields["src"] = udp.underlayer.src
            fields["dst"] = udp.underlayer.dst
    fields["dest_qp"] = bth.dest_qp
    fields["psn"] = bth.psn
    layer = bth.payload
    for cls in chain:
        if not isinstance(layer, cls):
            return None  # truncated or not what the opcode promises
        fields.update(
            (f.name, layer.getfieldval(f.name))
            for f in layer.fields_desc
            if not f.name.startswith("reserved")
        )
        layer = layer.payload
    return fields


def sack_fields(pkt: Packet | bytes) -> dict[str, Any] | None:
    """A SACK's fields (SETH and CC_STATE, without the reserved ones) plus udp_sport, src, dst,
    dest_qp and psn; None when `pkt` (a packet, or an Ethernet frame's bytes) is no SACK."""
    return _feedback(pkt, Opcode.SACK, (SETH, CCState))


def nack_fields(pkt: Packet | bytes) -> dict[str, Any] | None:
    """A NACK's NETH fields (without the reserved ones) plus udp_sport, src, dst, dest_qp and
    psn; None when `pkt` (a packet, or an Ethernet frame's bytes) is no NACK."""
    return _feedback(pkt, Opcode.NACK, (NETH,))


def psn_add(a: int, b: int) -> int:
    """a + b in the 24-bit PSN ring (b may be negative)."""
    return (a + b) % PSN_MOD


def psn_diff(a: int, b: int) -> int:
    """a - b in the 24-bit PSN ring, as a signed value in [-2**23, 2**23)."""
    half = PSN_MOD // 2
    return (a - b + half) % PSN_MOD - half


def signed16(raw: int) -> int:
    """A 16-bit two's-complement field (SETH sack_offset, the NIC's spdcid note) as a signed
    value."""
    return raw - (1 << 16) if raw >= 1 << 15 else raw


def psns_acked(cack_psn: int, sack_offset: int, bitmap: int) -> set[int]:
    """The PSNs a SACK reports as arrived: cack_psn itself (the cumulative point; every PSN up
    to it arrived) and base + i for each set bit i of the 64-bit bitmap (LSB first), where
    base = cack_psn + sack_offset in the PSN ring.

    sack_offset is signed 16-bit; its raw two's-complement form (up to 0xFFFF) is accepted too.
    """
    _check_bits("cack_psn", cack_psn, 24)
    _check_bits("sack_bitmap", bitmap, 64)
    if not -(1 << 15) <= sack_offset < 1 << 16:
        raise ValueError(f"sack_offset does not fit in 16 bits: {sack_offset}")
    base = psn_add(cack_psn, signed16(sack_offset))
    acked = {cack_psn}
    acked.update(psn_add(base, i) for i in range(64) if bitmap >> i & 1)
    return acked


def compact_ev(plane: int, slot: int) -> int:
    """Our compact EV: plane in bits 10..8, slot in bits 7..0 (the P4 program computes the same).

    It rides in the outer IPv6 flow label and the inner UDP source port, and SACK/NACK entropy
    reflects it.
    """
    if not 0 <= plane <= EV_MAX_PLANE:
        raise ValueError(f"plane out of range 0..{EV_MAX_PLANE}: {plane}")
    if not 0 <= slot <= EV_MAX_SLOT:
        raise ValueError(f"slot out of range 0..{EV_MAX_SLOT}: {slot}")
    return plane << 8 | slot


def split_ev(ev: int) -> tuple[int, int]:
    """(plane, slot) of a compact EV; the inverse of compact_ev()."""
    if not 0 <= ev <= compact_ev(EV_MAX_PLANE, EV_MAX_SLOT):
        raise ValueError(f"not a compact EV: {ev:#x}")
    return ev >> 8, ev & EV_MAX_SLOT


ETHERNET_BYTES = 14


def dissect(frame: bytes | Packet) -> Packet | None:
    """A frame as scapy layers; None for bytes too short to be an Ethernet frame (scapy raises
    on those instead of marking them)."""
    if isinstance(frame, Packet):
        return frame
    if len(frame) < ETHERNET_BYTES:
        return None
    return Ether(frame)
