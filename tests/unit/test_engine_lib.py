"""The engine's stand-alone runtime library: hashes, meters, the PRE and bit-level packet access."""

from __future__ import annotations

import random

import pytest

from softswitch.engine import hashes
from softswitch.engine.hashes import (
    CRC16_CONFIG,
    CRC32_CONFIG,
    Crc,
    CrcConfig,
    fields_to_bytes,
    hash_function,
    hash_with_offset,
)
from softswitch.engine.meters import GREEN, RED, YELLOW, Meter, MeterArray, MeterRates
from softswitch.engine.packet import (
    BitReader,
    BitWriter,
    FieldLayout,
    PacketTooShort,
    extract_bits,
    insert_bits,
)
from softswitch.engine.pre import MirrorSession, PacketReplicationEngine, _libstdcxx_order
from softswitch.errors import ControlPlaneError, SourceLocation, UnsupportedError

CHECK = b"123456789"


def reference_crc(cfg: CrcConfig, data: bytes) -> int:
    """Bit-at-a-time CRC straight from the definition (BMv2's parameterisation)."""
    mask = (1 << cfg.width) - 1
    rem = cfg.initial_remainder
    for byte in data:
        if cfg.data_reflected:
            byte = int(f"{byte:08b}"[::-1], 2)
        rem ^= byte << (cfg.width - 8)
        for _ in range(8):
            rem = ((rem << 1) ^ cfg.polynomial) if rem >> (cfg.width - 1) & 1 else rem << 1
            rem &= mask
    if cfg.remainder_reflected:
        rem = int(f"{rem:0{cfg.width}b}"[::-1], 2)
    return rem ^ cfg.final_xor_value


def reference_csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


# ---- hashes ----------------------------------------------------------------------------------


def test_standard_crc_check_values() -> None:
    assert hashes.crc32(CHECK) == 0xCBF43926
    assert hashes.crc16(CHECK) == 0xBB3D  # CRC-16/ARC
    assert hash_function("crc32")(CHECK) == 0xCBF43926
    assert hash_function("crc16")(CHECK) == 0xBB3D
    assert hashes.crc32(b"") == 0 and hashes.crc16(b"") == 0


def test_custom_crcs_default_to_the_standard_ones_and_are_per_calculation() -> None:
    a, b = hash_function("crc16_custom"), hash_function("crc16_custom")
    assert a is not b
    assert a(CHECK) == 0xBB3D
    assert hash_function("crc32_custom")(CHECK) == 0xCBF43926
    assert isinstance(a, Crc)
    a.configure(CrcConfig(16, 0x1021, 0xFFFF, 0, False, False))  # CRC-16/CCITT-FALSE
    assert a(CHECK) == 0x29B1
    assert b(CHECK) == 0xBB3D


@pytest.mark.parametrize(
    ("config", "check"),
    [
        (CrcConfig(16, 0x1021, 0xFFFF, 0x0000, False, False), 0x29B1),  # CCITT-FALSE
        (CrcConfig(16, 0x1021, 0x0000, 0x0000, False, False), 0x31C3),  # XMODEM
        (CrcConfig(16, 0x1021, 0x0000, 0x0000, True, True), 0x2189),  # KERMIT
        (CrcConfig(16, 0x8005, 0x0000, 0xFFFF, True, True), 0x44C2),  # MAXIM
        (CrcConfig(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, False, False), 0xFC891918),  # BZIP2
        (CrcConfig(32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, True, True), 0xE3069283),  # CRC-32C
        (CrcConfig(8, 0x07, 0x00, 0x00, False, False), 0xF4),  # CRC-8
        (CRC16_CONFIG, 0xBB3D),
        (CRC32_CONFIG, 0xCBF43926),
    ],
)
def test_configured_crc_check_values(config: CrcConfig, check: int) -> None:
    assert Crc(config)(CHECK) == check
    assert reference_crc(config, CHECK) == check


@pytest.mark.parametrize("refin", [False, True])
@pytest.mark.parametrize("refout", [False, True])
@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_crc_matches_bitwise_reference(width: int, refin: bool, refout: bool) -> None:
    rng = random.Random(width * 4 + refin * 2 + refout)
    mask = (1 << width) - 1
    cfg = CrcConfig(
        width,
        rng.getrandbits(width) | 1,
        rng.getrandbits(width),
        rng.getrandbits(width) & mask,
        refin,
        refout,
    )
    crc = Crc(cfg)
    for n in (0, 1, 7, 40):
        data = rng.randbytes(n)
        assert crc(data) == reference_crc(cfg, data)


def test_identity_xor16_and_csum16() -> None:
    assert hashes.identity(bytes([1, 2, 3, 4, 5])) == 0x0102030405
    assert hashes.identity(bytes(range(1, 11))) == 0x0102030405060708  # first 8 bytes only
    assert hashes.identity(b"") == 0
    assert hashes.xor16(bytes.fromhex("123456789a")) == 0x1234 ^ 0x5678 ^ 0x9A00
    assert hashes.xor16(b"") == 0
    # RFC 1071 section 3 example: the ones'-complement sum of these words is 0xddf2
    assert hashes.csum16(bytes.fromhex("0001f203f4f5f6f7")) == ~0xDDF2 & 0xFFFF
    assert hashes.csum16(b"") == 0xFFFF
    assert hashes.csum16(b"\xff\xff") == 0x0000
    assert hashes.csum16(b"\x01") == 0xFEFF
    rng = random.Random(1)
    for n in range(0, 70, 3):
        data = rng.randbytes(n)
        assert hashes.csum16(data) == reference_csum16(data)


IPV4_FIELDS = [  # version, ihl, dscp/ecn, len, id, flags, frag, ttl, proto, csum, src, dst
    (4, 4),
    (5, 4),
    (0, 8),
    (0x73, 16),
    (0, 16),
    (2, 3),
    (0, 13),
    (0x40, 8),
    (0x11, 8),
    (0, 16),
    (0xC0A80001, 32),
    (0xC0A800C7, 32),
]


def test_ipv4_header_checksum_update_and_verify() -> None:
    values = [v for v, _ in IPV4_FIELDS]
    widths = [w for _, w in IPV4_FIELDS]
    csum = hash_function("csum16")
    assert fields_to_bytes(values, widths) == bytes.fromhex(
        "450000730000400040110000c0a80001c0a800c7"
    )
    new = hashes.update_checksum(csum, values, widths, 16)
    assert new == 0xB861
    values[9] = new
    assert hashes.compute_checksum(csum, values, widths) == 0  # a correct header sums to 0
    values[9] = 0
    assert hashes.verify_checksum(csum, values, widths, 0xB861)
    assert not hashes.verify_checksum(csum, values, widths, 0xB862)
    assert hashes.checksum16_get(values, widths) == 0xB861


def test_checksum_with_payload_appends_after_padding() -> None:
    payload = b"\x12\x34\x56"
    out = hashes.compute_checksum(hashes.csum16, [0xA], [4], payload)
    assert out == hashes.csum16(b"\xa0" + payload)
    assert hashes.update_checksum(hashes.crc32, [1], [8], 16) == hashes.crc32(b"\x01") & 0xFFFF
    # verify compares the full calculation output with the field, as BMv2 does
    assert not hashes.verify_checksum(hashes.crc32, [1], [8], hashes.crc32(b"\x01") & 0xFFFF)


def test_fields_to_bytes_packs_bits_and_pads_right() -> None:
    assert fields_to_bytes([0xA, 0xBC], [4, 8]) == b"\xab\xc0"
    assert fields_to_bytes([1, 0, 1], [1, 1, 1]) == b"\xa0"
    assert fields_to_bytes([-1], [8]) == b"\xff"
    assert fields_to_bytes([0x1FF], [8]) == b"\xff"
    assert fields_to_bytes([], []) == b""
    # identity over a 12-bit field sees the padding: BMv2 gives value << 4
    assert hashes.identity(fields_to_bytes([0xABC], [12])) == 0xABC0
    with pytest.raises(ValueError):
        fields_to_bytes([1, 2], [8])


def test_v1model_hash_offset_rule() -> None:
    assert hash_with_offset(1000, 5, 7, 16) == 5 + 1000 % 7
    assert hash_with_offset(1000, 5, 0, 16) == 5  # max 0 acts as 1
    assert hash_with_offset(0xFFFF, 0x10, 0x10000, 16) == (0xFFFF + 0x10) & 0xFFFF
    assert hash_with_offset(12345, 7, 1 << 64, 32) == 7  # max taken in 64 bits: 0, i.e. 1
    assert hash_with_offset(12345, 0, (1 << 64) + 100, 32) == 12345 % 100
    data_v, data_w = [0x0A000001, 0x0A000002, 6], [32, 32, 8]
    expected = (hashes.crc16(fields_to_bytes(data_v, data_w)) % 64) + 3
    assert hashes.v1model_hash(hashes.crc16, 3, data_v, data_w, 64, 8) == expected


def test_unsupported_hash_algorithms() -> None:
    loc = SourceLocation("prog.p4", 3, 5)
    with pytest.raises(UnsupportedError) as info:
        hash_function("random", loc)
    assert info.value.location == loc and "random" in str(info.value)
    with pytest.raises(UnsupportedError):
        hash_function("md5")
    for name in hashes.HASH_ALGORITHMS:
        if name != "random":
            assert callable(hash_function(name))


# ---- meters ----------------------------------------------------------------------------------


def test_unconfigured_meter_is_always_green() -> None:
    m = Meter("bytes")
    assert not m.configured and m.rates() is None
    assert [m.execute(t, 1500) for t in range(0, 100, 10)] == [GREEN] * 10
    with pytest.raises(ValueError):
        Meter("bits")  # type: ignore[arg-type]


def test_packets_meter_colour_sequence() -> None:
    m = Meter("packets")
    m.set_rates(cir=1000, cburst=2, pir=2000, pburst=3)  # per second
    t = 1_000_000
    colours = [m.execute(t, 64) for _ in range(4)]
    assert colours == [GREEN, GREEN, YELLOW, RED]
    assert m.execute(t + 500, 64) == YELLOW  # +1 peak token, no committed token yet
    assert m.execute(t + 1000, 64) == GREEN  # +1 of each
    assert m.execute(t + 1000, 1) == RED  # the peak bucket is empty again


def test_bytes_meter_uses_packet_size() -> None:
    m = Meter("bytes")
    m.set_rates_per_us(cir=0.001, cburst=1500, pir=0.002, pburst=3000)
    assert [m.execute(10, 1000) for _ in range(4)] == [GREEN, YELLOW, YELLOW, RED]
    assert m.execute(10, 0) == GREEN  # a zero-byte packet needs no tokens


def test_meter_steady_stream_between_cir_and_pir() -> None:
    m = Meter("packets")
    m.set_rates(cir=1000, cburst=10, pir=3000, pburst=10)
    counts = {GREEN: 0, YELLOW: 0, RED: 0}
    for i in range(2000):  # 2000 packets per second for one second
        counts[m.execute(i * 500, 100)] += 1
    assert counts[RED] == 0
    assert 990 <= counts[GREEN] <= 1020 and 980 <= counts[YELLOW] <= 1010


def test_meter_configuration_errors_and_round_trip() -> None:
    m = Meter("packets")
    m.set_rates(1000, 10, 2000, 20)
    assert m.rates() == MeterRates(1000, 10, 2000, 20)
    with pytest.raises(ControlPlaneError, match="peak"):
        m.set_rates(3000, 10, 2000, 20)
    with pytest.raises(ControlPlaneError):
        m.set_rates(-1, 10, 2000, 20)
    assert m.rates() == MeterRates(1000, 10, 2000, 20)  # unchanged
    m.set_rates_per_us(0.5, 1, 1.5, 2)
    assert m.rates() == MeterRates(500_000, 1, 1_500_000, 2)
    m.reset_rates()
    assert m.execute(5, 1) == GREEN and m.rates() is None


def test_meter_array() -> None:
    arr = MeterArray(4, "packets")
    assert len(arr) == 4
    assert arr.execute(4, 0, 64) is None  # out of range: nothing updated
    arr.set_rates(1, 0, 0, 0, 0)
    assert arr.execute(1, 10, 64) == RED
    assert arr.execute(0, 10, 64) == GREEN
    arr.set_all_rates(1000, 1, 1000, 5)
    assert [arr.execute(2, 10, 64) for _ in range(3)] == [GREEN, YELLOW, YELLOW]
    with pytest.raises(ControlPlaneError, match="out of range"):
        arr[4]
    arr.reset()
    assert arr.execute(2, 10, 64) == GREEN


# ---- packet replication engine ---------------------------------------------------------------


def test_cli_groups_nodes_and_replication_order() -> None:
    pre = PacketReplicationEngine()
    pre.mc_mgrp_create(1)
    h0 = pre.mc_node_create(5, [3, 1, 2, 1])
    h1 = pre.mc_node_create(7, [0])
    assert (h0, h1) == (0, 1)
    pre.mc_node_associate(1, h1)
    pre.mc_node_associate(1, h0)
    assert pre.replicate(1) == ((0, 7), (1, 5), (2, 5), (3, 5))
    assert pre.replicate(2) == ()
    pre.mc_node_update(h1, [9, 8])
    assert pre.replicate(1) == ((8, 7), (9, 7), (1, 5), (2, 5), (3, 5))
    pre.mc_node_dissociate(1, h1)
    assert pre.replicate(1) == ((1, 5), (2, 5), (3, 5))
    pre.mc_node_destroy(h0)  # destroying an associated node dissociates it
    assert pre.replicate(1) == ()
    assert pre.mc_node_create(1, [4]) == 0  # lowest free handle is reused
    pre.mc_mgrp_create(1)  # re-creating is a no-op, as in BMv2
    pre.mc_node_associate(1, 0)
    pre.mc_mgrp_destroy(1)
    pre.mc_mgrp_create(1)
    pre.mc_node_associate(1, 0)  # the node was dissociated by the group's destruction
    assert pre.replicate(1) == ((4, 1),)


def test_cli_errors() -> None:
    pre = PacketReplicationEngine()
    pre.mc_mgrp_create(1)
    pre.mc_mgrp_create(2)
    h = pre.mc_node_create(0, [1])
    with pytest.raises(ControlPlaneError, match="group 3 does not exist"):
        pre.mc_node_associate(3, h)
    with pytest.raises(ControlPlaneError, match="handle 9"):
        pre.mc_node_associate(1, 9)
    pre.mc_node_associate(1, h)
    with pytest.raises(ControlPlaneError, match="already associated"):
        pre.mc_node_associate(2, h)
    with pytest.raises(ControlPlaneError, match="not associated"):
        pre.mc_node_dissociate(2, h)
    with pytest.raises(ControlPlaneError, match="egress port 512"):
        pre.mc_node_create(0, [512])
    with pytest.raises(ControlPlaneError, match="replication id"):
        pre.mc_node_create(1 << 16, [1])
    with pytest.raises(ControlPlaneError):
        pre.mc_set_lag_membership(256, [1])
    with pytest.raises(ControlPlaneError, match="does not exist"):
        pre.mirroring_delete(4)
    assert pre.replicate(1) == ((1, 0),)


def test_lag_replication_picks_a_member() -> None:
    pre = PacketReplicationEngine()
    pre.mc_mgrp_create(10)
    pre.mc_set_lag_membership(3, [9, 4])
    h = pre.mc_node_create(2, [1], lags=[3, 7])  # LAG 7 has no membership: skipped
    pre.mc_node_associate(10, h)
    assert pre.replicate(10) == ((1, 2), (4, 2))
    assert pre.replicate(10, lag_hash=1) == ((1, 2), (9, 2))
    pre.mc_set_lag_membership(3, [])
    assert pre.replicate(10) == ((1, 2),)


@pytest.mark.parametrize(
    ("inserted", "iterated"),  # measured with g++/libstdc++ std::unordered_map<uint32_t, int>
    [
        ([11, 6], [6, 11]),
        ([10, 16, 24], [24, 16, 10]),
        ([13, 1, 26, 25, 15, 37], [37, 15, 25, 1, 26, 13]),
        ([15, 27, 24, 33, 28, 17, 20], [17, 20, 33, 24, 27, 28, 15]),
        (
            [15788, 504, 42749, 27884, 42961, 59392, 4257, 23230, 53213, 32934, 30530, 33112],
            [33112, 53213, 59392, 42961, 23230, 27884, 32934, 42749, 504, 30530, 4257, 15788],
        ),
        (
            [32, 28, 2, 35, 22, 11, 13, 25, 19, 39, 34, 0, 16, 29, 6, 30, 5, 37, 21],
            [21, 37, 30, 32, 19, 28, 2, 6, 35, 22, 11, 13, 39, 29, 0, 25, 5, 34, 16],
        ),
    ],
)
def test_libstdcxx_unordered_map_order(inserted: list[int], iterated: list[int]) -> None:
    assert _libstdcxx_order(inserted) == iterated


def test_p4runtime_groups() -> None:
    pre = PacketReplicationEngine()
    pre.insert_group(1, [(2, 0), (1, 0), (5, 0)])
    assert pre.replicate(1) == ((1, 0), (2, 0), (5, 0))
    # one node per instance, created in PI's unordered_map order (10, 16, 24 -> 24, 16, 10)
    pre.insert_group(2, [(1, 10), (2, 16), (3, 24), (4, 10)])
    assert pre.replicate(2) == ((3, 24), (2, 16), (1, 10), (4, 10))
    assert pre.group_replicas(2) == [(3, 24), (2, 16), (1, 10), (4, 10)]
    # modify: kept instances keep their place, new ones are appended, removed ones go
    pre.modify_group(2, [(7, 99), (1, 10), (6, 16)])
    assert pre.replicate(2) == ((6, 16), (1, 10), (7, 99))
    assert pre.has_group(2) and pre.group_ids() == [1, 2]
    with pytest.raises(ControlPlaneError, match="already exists"):
        pre.insert_group(1, [])
    with pytest.raises(ControlPlaneError, match="duplicate replica"):
        pre.modify_group(1, [(1, 0), (1, 0)])
    assert pre.replicate(1) == ((1, 0), (2, 0), (5, 0))  # unchanged by the failed request
    with pytest.raises(ControlPlaneError, match="out of range"):
        pre.insert_group(0, [(1, 0)])
    pre.delete_group(2)
    assert not pre.has_group(2) and pre.replicate(2) == ()
    with pytest.raises(ControlPlaneError, match="does not exist"):
        pre.delete_group(2)
    pre.set_group(3, [(1, 1)])
    pre.set_group(3, [(2, 1)])
    assert pre.replicate(3) == ((2, 1),)


def test_clone_sessions() -> None:
    pre = PacketReplicationEngine()
    assert pre.clone_targets(5) is None
    pre.mirroring_add(5, 7)
    session, copies = pre.clone_targets(5)  # type: ignore[misc]
    assert session == MirrorSession(egress_port=7) and copies == ((7, 0),)
    pre.mc_mgrp_create(1)
    pre.mc_node_associate(1, pre.mc_node_create(3, [1, 2]))
    pre.mirroring_add_session(6, MirrorSession(egress_port=9, mgid=1))
    assert pre.clone_targets(6)[1] == ((1, 3), (2, 3), (9, 3))  # type: ignore[index]
    pre.mirroring_add_mc(5, 1)
    assert pre.clone_targets(5)[1] == ((1, 3), (2, 3))  # type: ignore[index]
    pre.mirroring_delete(5)
    assert pre.clone_targets(5) is None
    with pytest.raises(ControlPlaneError):
        pre.mirroring_add(1 << 15, 1)


def test_p4runtime_clone_sessions() -> None:
    pre = PacketReplicationEngine()
    pre.insert_clone_session(3, [(2, 0), (1, 0)], packet_length_bytes=64)
    session, copies = pre.clone_targets(3)  # type: ignore[misc]
    assert copies == ((1, 0), (2, 0)) and session.packet_length_bytes == 64
    assert pre.has_clone_session(3) and pre.clone_session_ids() == [3]
    assert pre.group_ids() == []  # the session's group is hidden from group reads
    pre.modify_clone_session(3, [(4, 1)], class_of_service=2)
    session, copies = pre.clone_targets(3)  # type: ignore[misc]
    assert copies == ((4, 1),) and session.class_of_service == 2
    for bad in (0, 512):
        with pytest.raises(ControlPlaneError, match="clone session id"):
            pre.insert_clone_session(bad, [(1, 0)])
    with pytest.raises(ControlPlaneError, match="already exists"):
        pre.insert_clone_session(3, [])
    pre.delete_clone_session(3)
    assert pre.clone_targets(3) is None and not pre.has_clone_session(3)
    with pytest.raises(ControlPlaneError):
        pre.delete_clone_session(3)
    pre.insert_group(1, [(1, 0)])
    pre.reset()
    assert pre.replicate(1) == () and pre.group_ids() == []


# ---- bit-level packet access -----------------------------------------------------------------


def bits_of(data: bytes) -> str:
    return "".join(f"{b:08b}" for b in data)


def test_extract_and_insert_bits_against_bit_strings() -> None:
    rng = random.Random(2)
    data = rng.randbytes(16)
    s = bits_of(data)
    for _ in range(300):
        width = rng.randint(1, 70)
        off = rng.randint(0, 128 - width)
        assert extract_bits(data, off, width) == int(s[off : off + width], 2)
        buf = bytearray(data)
        value = rng.getrandbits(width)
        insert_bits(buf, off, width, value)
        expected = s[:off] + f"{value:0{width}b}" + s[off + width :]
        assert bits_of(bytes(buf)) == expected


def test_field_layout_round_trip() -> None:
    layout = FieldLayout([w for _, w in IPV4_FIELDS])
    raw = bytes.fromhex("ffff450000730000400040110000c0a80001c0a800c7")
    values = layout.unpack(raw, 2)
    assert values == [v for v, _ in IPV4_FIELDS]
    assert layout.nbytes == 20 and layout.pack(values) == raw[2:]
    assert layout.pack([0x1F, *values[1:]])[0] == 0xF5  # masked to the field width
    with pytest.raises(PacketTooShort):
        layout.unpack(raw, 3)
    with pytest.raises(ValueError):
        FieldLayout([4, 8])


def test_bit_reader() -> None:
    r = BitReader(bytes.fromhex("abcdef0123"))
    assert r.extract(4) == 0xA and r.lookahead(8) == 0xBC and r.pos == 4
    assert r.extract(12) == 0xBCD
    assert r.extract_fields(FieldLayout([4, 4, 8])) == [0xE, 0xF, 0x01]
    assert r.remaining_bits == 8 and r.rest() == b"\x23"
    with pytest.raises(PacketTooShort):
        r.extract(9)
    assert r.pos == 32  # unchanged by the failed read
    with pytest.raises(PacketTooShort):
        r.advance(16)
    r2 = BitReader(bytes.fromhex("f0f0f0"), 4)
    assert r2.extract_fields(FieldLayout([4, 4, 8])) == [0x0, 0xF, 0x0F]  # unaligned path
    assert r2.pos == 20
    with pytest.raises(ValueError):
        BitReader(b"\x00", 3).rest()


def test_bit_writer() -> None:
    rng = random.Random(3)
    for _ in range(50):
        widths = [rng.randint(1, 40) for _ in range(rng.randint(1, 8))]
        values = [rng.getrandbits(w + 3) for w in widths]  # extra high bits must be masked
        w = BitWriter()
        for v, n in zip(values, widths):
            w.emit_bits(v, n)
        assert w.bit_length == sum(widths)
        assert w.getvalue(pad=True) == fields_to_bytes(values, widths)
    w = BitWriter()
    w.emit_bits(0x5, 3)
    with pytest.raises(ValueError):
        w.getvalue()
    w.emit_bits(0x1F, 5)
    w.emit_fields(FieldLayout([8, 8]), [1, 2])  # aligned path
    w.emit_bytes(b"\xaa")
    assert w.getvalue() == bytes([0b10111111, 1, 2, 0xAA])
    w.emit_bits(1, 1)
    w.emit_fields(FieldLayout([4, 4]), [0xF, 0x0])  # unaligned path
    w.emit_bytes(b"\xff")  # unaligned path
    assert w.getvalue(pad=True) == bytes([0b10111111, 1, 2, 0xAA, 0xF8, 0x7F, 0x80])
