"""mrc_transport.wire: the MRC layers against hand-computed bytes from the P4 bit layouts, the
dissection chains, the feedback decoders, the PSN ring and the compact EV."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from mrc_transport.wire import (
    BTH,
    IMM_OPCODES,
    METH,
    NACK_PSN_OOR_WINDOW,
    NACK_TRIMMED,
    NETH,
    OP_NACK,
    OP_PROBE,
    OP_SACK,
    OP_WRITE_FIRST,
    OP_WRITE_LAST_IMM,
    OP_WRITE_ONLY,
    PETH,
    RETH,
    SACK_M_ALWAYS_SKIP,
    SACK_M_SKIP_ONCE,
    SETH,
    WRITE_OPCODES,
    CCState,
    ImmDt,
    bind_roce_port,
    compact_ev,
    data_packet,
    nack_fields,
    psn_add,
    psn_diff,
    psns_acked,
    sack_fields,
    split_ev,
    unbind_roce_port,
)

NIC_A = "2001:db8::1"
NIC_B = "2001:db8::2"
CARRIER = "fc00:0:1:2::"

# Each layer with distinct values in neighbouring bit fields (a swapped or shifted field shows),
# and its bytes worked out by hand from the P4 header.
KNOWN_BYTES = [
    pytest.param(
        BTH(opcode=0xC9, solicited_event=1, pad_count=1, transport_version=0xA,
            partition_key=0x8001, dest_qp=0x123456, ack_req=1, retransmit=1, timestamp=1,
            psn=0xABCDEF),
        # byte 1: SE 1 | M 0 | pad 01 | tver 1010 = 0x9A; byte 8: A 1 | R 0 | RTX 1 | TS 1 | 0000
        "c9 9a 8001 00 123456 b0 abcdef",
        12, id="BTH"),
    pytest.param(METH(rq_msn=0x0102, msn=0xA0B0), "0102 a0b0", 4, id="METH"),
    pytest.param(
        RETH(virtual_address=0x0011223344556677, r_key=0x89ABCDEF, dma_length=0x1000),
        "0011223344556677 89abcdef 00001000", 16, id="RETH"),
    pytest.param(ImmDt(data=0xDEADBEEF), "deadbeef", 4, id="ImmDt"),
    pytest.param(
        SETH(header_type=0x5, next_header=0x13, m=SACK_M_ALWAYS_SKIP, probe_response=1,
             ack_psn_offset=-2, entropy=0x0305, spdcid=0x1111, dpdcid=0x2222, port_state=0x05,
             cack_psn=0xFFFFFE, cc_type=2, cc_flags=0x9, mpr=0x40, sack_offset=1,
             sack_bitmap=0x5),
        # byte 0: type 0101 | next_header 1001(1) = 0x59;
        # byte 1: next_header (1) | m 10 | rrr 000 | PR 1 | r 0 = 0xC2
        "59 c2 fffe 00000305 1111 2222 05 fffffe 29 40 0001 0000000000000005",
        28, id="SETH"),
    pytest.param(
        CCState(tx_timestamp=0xBEEF, ooo_count=0x4321, restore_window=1, rcv_cwnd_pen=5,
                rcvd_bytes=0x0A0B0C),
        # bytes 2-3: r 0 | ooo_count 100 0011 0010 0001; byte 4: restore 1 | pen 000 0101
        "beef 4321 85 0a0b0c", 8, id="CCState"),
    pytest.param(
        NETH(header_type=0x3, next_header=0x11, nack_reason=NACK_PSN_OOR_WINDOW,
             vendor_info=0x7E, entropy=0x07FF, spdcid=0xA1A2, dpdcid=0xB1B2, nack_psn=0x10,
             cc_type=2, cc_flags=1, tx_timestamp=0x1357),
        # byte 0: type 0011 | next_header 1000(1) = 0x38; byte 1: next_header (1) | 0000000
        "38 80 0b 7e 000007ff a1a2 b1b2 00 000010 21 00 1357", 20, id="NETH"),
    pytest.param(
        PETH(probe_id=0x0102, spdcid=0x0304, dpdcid=0x0506, tx_timestamp=0x0708, tsr=1,
             format_type=1),
        # bytes 8-9: TSR 1 | reserved 000 0000 0000 | format 0001
        "0102 0304 0506 0708 8001 000000000000", 16, id="PETH"),
]


@pytest.mark.parametrize(("layer", "hex_bytes", "length"), KNOWN_BYTES)
def test_layer_bytes(layer: Packet, hex_bytes: str, length: int) -> None:
    assert len(type(layer)()) == length
    assert bytes(layer).hex() == hex_bytes.replace(" ", "")
    again = type(layer)(bytes(layer))
    assert _values(again) == _values(layer) and not again.payload


def _values(layer: Packet) -> dict[str, int]:
    return {f.name: layer.getfieldval(f.name) for f in layer.fields_desc}


def test_bth_defaults() -> None:
    bth = BTH()
    assert (bth.transport_version, bth.partition_key) == (0, 0xFFFF)
    assert bytes(bth).hex() == "0000ffff0000000000000000"


def _chain(pkt: Packet) -> list[type[Packet]]:
    return [type(layer) for layer in pkt.iterpayloads()]


def _data(opcode: int, **overrides: object) -> Packet:
    args: dict = dict(
        src=NIC_A, dst=NIC_B, dest_qp=0x000102, psn=0xFFFFFF, opcode=opcode, msn=7, rq_msn=3,
        va=0x7F00_0000_1000, r_key=0x1234, dma_length=64, payload=b"x" * 64,
        immediate=0xCAFE if opcode in IMM_OPCODES else None, udp_sport=compact_ev(3, 9),
    )
    args.update(overrides)
    return data_packet(**args)


@pytest.mark.parametrize("opcode", sorted(WRITE_OPCODES))
def test_write_round_trip(opcode: int) -> None:
    got = Ether(bytes(_data(opcode, retransmit=True, ack_req=True)))
    imm = [ImmDt] if opcode in IMM_OPCODES else []
    assert _chain(got) == [Ether, IPv6, UDP, BTH, METH, RETH, *imm, Raw]
    assert (got[IPv6].nh, got[IPv6].hlim, got[IPv6].src, got[IPv6].dst) == (17, 64, NIC_A, NIC_B)
    assert (got[UDP].sport, got[UDP].dport) == (0x309, 4791)
    bth = got[BTH]
    assert (bth.opcode, bth.dest_qp, bth.psn) == (opcode, 0x102, 0xFFFFFF)
    assert (bth.ack_req, bth.retransmit, bth.reliable, bth.timestamp) == (1, 1, 0, 0)
    assert (got[METH].rq_msn, got[METH].msn) == (3, 7)
    assert (got[RETH].virtual_address, got[RETH].r_key, got[RETH].dma_length) == (
        0x7F00_0000_1000, 0x1234, 64)
    if imm:
        assert got[ImmDt].data == 0xCAFE
    assert got[Raw].load == b"x" * 64


def test_data_packet_flags_default_off() -> None:
    bth = Ether(bytes(_data(OP_WRITE_FIRST)))[BTH]
    assert (bth.ack_req, bth.retransmit) == (0, 0)


@pytest.mark.parametrize(
    "overrides",
    [
        {"opcode": OP_SACK},
        {"opcode": OP_WRITE_ONLY, "immediate": 1},
        {"opcode": OP_WRITE_LAST_IMM, "immediate": None},
        {"opcode": OP_WRITE_ONLY, "psn": 1 << 24},
        {"opcode": OP_WRITE_ONLY, "dest_qp": -1},
    ],
    ids=["not-a-write", "imm-on-plain", "no-imm", "psn", "qp"],
)
def test_data_packet_refuses(overrides: dict) -> None:
    with pytest.raises(ValueError):
        _data(**overrides)


def _sack(cack_psn: int = 0x100, **seth: object) -> Packet:
    return (BTH(dest_qp=0x42, psn=0) / SETH(cack_psn=cack_psn, **seth)
            / CCState(tx_timestamp=0x77, ooo_count=3, rcv_cwnd_pen=9, rcvd_bytes=0x1000))


def test_opcode_bindings_build_defaults() -> None:
    assert BTH(bytes(BTH() / SETH())).opcode == OP_SACK
    assert BTH(bytes(BTH() / NETH())).opcode == OP_NACK
    assert BTH(bytes(BTH() / PETH())).opcode == OP_PROBE
    assert UDP(bytes(UDP() / BTH())).dport == 4791


def test_sack_round_trip() -> None:
    frame = (Ether() / IPv6(src=NIC_B, dst=NIC_A) / UDP(sport=0x205, dport=4791)
             / _sack(entropy=0x0309, m=SACK_M_SKIP_ONCE, sack_bitmap=0b101, port_state=0x02))
    got = Ether(bytes(frame))
    assert _chain(got) == [Ether, IPv6, UDP, BTH, SETH, CCState]
    fields = sack_fields(got)
    assert fields is not None
    assert fields == {
        "udp_sport": 0x205, "src": NIC_B, "dst": NIC_A, "dest_qp": 0x42, "psn": 0,
        "header_type": 0, "next_header": 0, "m": SACK_M_SKIP_ONCE, "probe_response": 0,
        "ack_psn_offset": 0, "entropy": 0x0309, "spdcid": 0, "dpdcid": 0, "port_state": 0x02,
        "cack_psn": 0x100, "cc_type": 0, "cc_flags": 0, "mpr": 0, "sack_offset": 1,
        "sack_bitmap": 0b101, "tx_timestamp": 0x77, "ooo_count": 3, "restore_window": 0,
        "rcv_cwnd_pen": 9, "rcvd_bytes": 0x1000,
    }
    assert nack_fields(got) is None


@pytest.mark.parametrize("with_srh", [False, True], ids=["ipv6-in-ipv6", "srh"])
def test_encapsulated_sack(with_srh: bool) -> None:
    ev = compact_ev(5, 200)
    inner = (IPv6(src=NIC_B, dst=NIC_A) / UDP(sport=ev, dport=4791)
             / _sack(cack_psn=0xFFFFFE, ack_psn_offset=-1, sack_bitmap=0b101, entropy=ev))
    if with_srh:
        outer = (IPv6(src=NIC_B, dst=CARRIER, fl=ev, nh=43)
                 / IPv6ExtHdrSegmentRouting(addresses=[NIC_A], nh=41))
    else:
        outer = IPv6(src=NIC_B, dst=CARRIER, fl=ev, nh=41)
    fields = sack_fields(bytes(Ether() / outer / inner))
    assert fields is not None
    # The addresses are the inner header's, the NICs', not the carrier.
    assert (fields["src"], fields["dst"], fields["udp_sport"]) == (NIC_B, NIC_A, ev)
    assert split_ev(fields["entropy"]) == (5, 200)
    assert fields["ack_psn_offset"] == -1
    assert psns_acked(fields["cack_psn"], fields["sack_offset"], fields["sack_bitmap"]) == {
        0xFFFFFE, 0xFFFFFF, 0x000001}


def test_nack_round_trip() -> None:
    frame = (Ether() / IPv6(src=NIC_B, dst=NIC_A) / UDP(sport=0x10, dport=4791)
             / BTH(dest_qp=0x42) / NETH(nack_reason=NACK_TRIMMED, nack_psn=0xFFFFFF,
                                        entropy=0x10, cc_type=2, tx_timestamp=5))
    got = Ether(bytes(frame))
    assert _chain(got) == [Ether, IPv6, UDP, BTH, NETH]
    fields = nack_fields(got)
    assert fields is not None
    assert (fields["nack_reason"], fields["nack_psn"], fields["entropy"]) == (
        NACK_TRIMMED, 0xFFFFFF, 0x10)
    assert (fields["cc_type"], fields["tx_timestamp"], fields["dest_qp"]) == (2, 5, 0x42)
    assert not any(name.startswith("reserved") for name in fields)
    assert sack_fields(got) is None


def test_probe_round_trip() -> None:
    frame = (Ether() / IPv6(src=NIC_A, dst=NIC_B) / UDP(sport=0x701, dport=4791)
             / BTH(dest_qp=9, psn=0x55) / PETH(probe_id=0xBEEF, tsr=1, format_type=1))
    got = Ether(bytes(frame))
    assert _chain(got) == [Ether, IPv6, UDP, BTH, PETH]
    assert (got[BTH].opcode, got[PETH].probe_id, got[PETH].tsr, got[PETH].format_type) == (
        OP_PROBE, 0xBEEF, 1, 1)
    assert sack_fields(got) is None and nack_fields(got) is None


def test_feedback_decoders_refuse_other_packets() -> None:
    assert sack_fields(_data(OP_WRITE_ONLY)) is None
    assert sack_fields(Ether() / IPv6() / UDP(dport=53) / Raw(b"q" * 40)) is None
    # A SACK opcode whose SETH/CC_STATE is cut short is not decoded.
    truncated = bytes(Ether() / IPv6() / UDP() / _sack())[:-8]
    assert sack_fields(truncated) is None


@pytest.fixture
def udp_bindings() -> Iterator[None]:
    saved = UDP.payload_guess
    yield
    UDP.payload_guess = saved


def _udp_payload_class(dport: int, sport: int = 1234) -> type[Packet]:
    frame = Ether() / IPv6() / UDP(sport=sport, dport=dport) / BTH(opcode=OP_PROBE) / PETH()
    return type(Ether(bytes(frame))[UDP].payload)


def test_bind_other_port(udp_bindings: None) -> None:
    assert _udp_payload_class(4971) is Raw
    bind_roce_port(4971)
    assert _udp_payload_class(4971) is BTH
    assert _udp_payload_class(4791) is BTH
    assert _udp_payload_class(4972) is Raw
    bind_roce_port(4971)  # binding twice keeps one entry
    assert sum(cls is BTH for _, cls in UDP.payload_guess) == 2
    unbind_roce_port(4971)
    assert (_udp_payload_class(4971), _udp_payload_class(4791)) == (Raw, BTH)
    with pytest.raises(ValueError):
        bind_roce_port(1 << 16)


@pytest.mark.parametrize("contrib_first", [False, True], ids=["plain", "contrib-roce-first"])
def test_import_binds_4791(contrib_first: bool) -> None:
    """In a fresh interpreter, importing the module makes UDP 4791 dissect as our BTH, also
    when scapy.contrib.roce (which binds its own BTH there) was imported first."""
    code = textwrap.dedent(f"""
        if {contrib_first}:
            import scapy.contrib.roce
        from scapy.layers.inet import UDP
        from scapy.layers.inet6 import IPv6
        from scapy.layers.l2 import Ether
        from mrc_transport.wire import BTH, SETH
        got = Ether(bytes(Ether() / IPv6() / UDP(dport=4791) / BTH() / SETH()))
        assert type(got[UDP].payload) is BTH and SETH in got, got.summary()
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ours_ahead_of_other_bindings(udp_bindings: None) -> None:
    class OtherBTH(Packet):  # stands in for scapy.contrib.roce's BTH, bound before ours
        fields_desc = BTH.fields_desc

    UDP.payload_guess = [({"dport": 4791}, OtherBTH), *UDP.payload_guess]
    bind_roce_port()
    assert _udp_payload_class(4791) is BTH
    # An EV in the source port that is some protocol's well-known port (DNS's 53) stays ours.
    import scapy.layers.dns  # noqa: F401  (binds UDP sport/dport 53)

    assert _udp_payload_class(4791, sport=53) is BTH
    assert _udp_payload_class(53).__name__.startswith("DNS")


def test_psn_ring() -> None:
    assert psn_add(0xFFFFFF, 1) == 0
    assert psn_add(0, -1) == 0xFFFFFF
    assert psn_add(5, 3) == 8
    assert psn_diff(0, 0xFFFFFF) == 1
    assert psn_diff(0xFFFFFF, 0) == -1
    assert psn_diff(7, 7) == 0
    assert psn_diff((1 << 23) - 1, 0) == (1 << 23) - 1
    assert psn_diff(1 << 23, 0) == -(1 << 23)


@pytest.mark.parametrize(
    ("cack", "offset", "bitmap", "expected"),
    [
        # PSNs 0..11 sent, 5 and 8 lost: bits 1, 2, 4, 5, 6 from base 5
        (4, 1, 0b1110110, {4, 6, 7, 9, 10, 11}),
        (0xFFFFFE, 1, 0b101, {0xFFFFFE, 0xFFFFFF, 0x000001}),
        (10, -3, 0b1, {10, 7}),
        (10, 0xFFFD, 0b1, {10, 7}),  # the same offset in raw 16-bit form
        (2, -4, 0b11, {2, 0xFFFFFE, 0xFFFFFF}),
        (0x20, 1, 1 << 63, {0x20, 0x60}),
        (0x20, 1, 0, {0x20}),
    ],
)
def test_psns_acked(cack: int, offset: int, bitmap: int, expected: set[int]) -> None:
    assert psns_acked(cack, offset, bitmap) == expected


@pytest.mark.parametrize(
    ("cack", "offset", "bitmap"),
    [(1 << 24, 1, 0), (-1, 1, 0), (0, 1 << 16, 0), (0, -(1 << 15) - 1, 0), (0, 1, 1 << 64)],
)
def test_psns_acked_refuses(cack: int, offset: int, bitmap: int) -> None:
    with pytest.raises(ValueError):
        psns_acked(cack, offset, bitmap)


def test_compact_ev() -> None:
    assert compact_ev(0, 0) == 0
    assert compact_ev(7, 255) == 0x7FF
    assert compact_ev(3, 9) == 0x309
    for plane in range(8):
        for slot in (0, 1, 128, 255):
            assert split_ev(compact_ev(plane, slot)) == (plane, slot)


@pytest.mark.parametrize(("plane", "slot"), [(8, 0), (-1, 0), (0, 256), (0, -1)])
def test_compact_ev_bounds(plane: int, slot: int) -> None:
    with pytest.raises(ValueError):
        compact_ev(plane, slot)


@pytest.mark.parametrize("ev", [0x800, -1])
def test_split_ev_bounds(ev: int) -> None:
    with pytest.raises(ValueError):
        split_ev(ev)
