"""The v1model walk: drops, multicast, clones, resubmit, recirculate, digests, checksums."""

from __future__ import annotations

from softswitch.engine.pre import MirrorSession
from softswitch.engine.switch import Switch
from softswitch.engine.tables import ExactMatch
from softswitch.frontend.parser import parse_file
from softswitch.frontend.typecheck import check

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
struct headers_t { h_t h; }
struct meta_t { @field_list(1) bit<8> passes; bit<8> other; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { %VERIFY% } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    %IDECLS%
    apply { %INGRESS% }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { %EGRESS% }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { %COMPUTE% } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def build(tmp_path, ingress: str = "", egress: str = "", verify: str = "", compute: str = "",
          idecls: str = "", **kw) -> Switch:
    src = (PROGRAM.replace("%INGRESS%", ingress).replace("%EGRESS%", egress)
           .replace("%VERIFY%", verify).replace("%COMPUTE%", compute)
           .replace("%IDECLS%", idecls))
    path = tmp_path / "prog.p4"
    path.write_text(src)
    return Switch(check(parse_file(str(path)), str(path)), **kw)


def pkt(a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> bytes:
    return bytes([a, b]) + c.to_bytes(2, "big") + d.to_bytes(4, "big")


def outs(sw: Switch, data: bytes, port: int = 0) -> list[tuple[int, bytes]]:
    return [(o.port, o.data) for o in sw.process_packet(port, data)]


def test_egress_spec_defaults_to_port_0_and_standard_metadata(tmp_path):
    sw = build(tmp_path, ingress="hdr.h.a = (bit<8>) sm.ingress_port;"
               "hdr.h.c = (bit<16>) sm.packet_length;",
               egress="hdr.h.b = (bit<8>) sm.egress_port; hdr.h.d = sm.instance_type;")
    assert outs(sw, pkt() + b"\x01\x02", port=7) == [(0, pkt(7, 0, 10, 0) + b"\x01\x02")]


def test_mark_to_drop_and_custom_drop_port(tmp_path):
    sw = build(tmp_path, ingress="if (hdr.h.a == 1) { mark_to_drop(sm); } else "
               "{ sm.egress_spec = (bit<9>) hdr.h.b; }")
    assert outs(sw, pkt(1)) == []
    assert outs(sw, pkt(0, 3)) == [(3, pkt(0, 3))]
    assert outs(sw, pkt(0, 255)) == [(255, pkt(0, 255))]
    sw2 = build(tmp_path, ingress="sm.egress_spec = (bit<9>) hdr.h.b;", drop_port=255)
    assert outs(sw2, pkt(0, 255)) == []
    assert outs(sw2, pkt(0, 4)) == [(4, pkt(0, 4))]


def test_mark_to_drop_in_egress(tmp_path):
    sw = build(tmp_path, ingress="sm.egress_spec = 2;",
               egress="if (hdr.h.a == 1) { mark_to_drop(sm); }")
    assert outs(sw, pkt(1)) == []
    assert outs(sw, pkt(0)) == [(2, pkt(0))]


def test_multicast_replicas_with_rid_in_pre_order(tmp_path):
    sw = build(tmp_path, ingress="sm.mcast_grp = 5;",
               egress="hdr.h.b = (bit<8>) sm.egress_rid; hdr.h.d = sm.instance_type;")
    sw.pre.mc_mgrp_create(5)
    n1 = sw.pre.mc_node_create(10, [3, 1])
    n2 = sw.pre.mc_node_create(20, [2])
    sw.pre.mc_node_associate(5, n1)
    sw.pre.mc_node_associate(5, n2)
    assert outs(sw, pkt()) == [(1, pkt(0, 10, 0, 5)), (3, pkt(0, 10, 0, 5)),
                               (2, pkt(0, 20, 0, 5))]


def test_ingress_clone_comes_first_and_is_the_original_packet(tmp_path):
    sw = build(tmp_path,
               ingress="sm.egress_spec = 1; hdr.h.a = 0xAA; clone(CloneType.I2E, 7);",
               egress="hdr.h.d = sm.instance_type;")
    sw.pre.mirroring_add(7, 4)
    assert outs(sw, pkt(1, 2, 3, 0)) == [(4, pkt(1, 2, 3, 1)), (1, pkt(0xAA, 2, 3, 0))]
    # unknown session: no clone
    sw2 = build(tmp_path, ingress="sm.egress_spec = 1; clone(CloneType.I2E, 9);")
    assert outs(sw2, pkt()) == [(1, pkt())]


def test_egress_clone_follows_the_original(tmp_path):
    sw = build(tmp_path, ingress="sm.egress_spec = 1;",
               egress="""
               if (sm.instance_type == 0) { hdr.h.a = 1; clone(CloneType.E2E, 3); }
               else { hdr.h.b = (bit<8>) sm.instance_type; }""")
    sw.pre.mirroring_add_session(3, MirrorSession(egress_port=5, packet_length_bytes=4))
    assert outs(sw, pkt()) == [(1, pkt(1)), (5, pkt(1, 2)[:4])]


def test_resubmit_preserves_field_list_only(tmp_path):
    sw = build(tmp_path, ingress="""
        if (sm.instance_type == 0) {
            meta.passes = 3; meta.other = 9;
            resubmit_preserving_field_list(1);
        } else {
            hdr.h.a = meta.passes; hdr.h.b = meta.other;
            hdr.h.d = sm.instance_type;
            sm.egress_spec = 2;
        }""")
    assert outs(sw, pkt()) == [(2, pkt(3, 0, 0, 6))]


def test_recirculate_after_deparse(tmp_path):
    sw = build(tmp_path, ingress="""
        sm.egress_spec = 1;
        if (sm.instance_type == 4) { hdr.h.b = meta.passes; }""",
               egress="""
        if (hdr.h.a < 2) { hdr.h.a = hdr.h.a + 1; meta.passes = hdr.h.a;
                           recirculate_preserving_field_list(1); }""")
    # two recirculations; each pass's deparsed packet is the next pass's input
    assert outs(sw, pkt(0)) == [(1, pkt(2, 2))]


def test_digest_is_recorded(tmp_path):
    sw = build(tmp_path, ingress="""
        sm.egress_spec = 1;
        digest<meta_t>(1, {hdr.h.a, hdr.h.b});""")
    outs(sw, pkt(4, 5))
    assert len(sw.digests) == 1
    assert sw.digests[0].values == (4, 5)


def test_truncate_and_assert_drop(tmp_path):
    sw = build(tmp_path, ingress="""
        sm.egress_spec = 1;
        if (hdr.h.a == 1) { truncate(3); }
        assert(hdr.h.a != 9);""")
    assert outs(sw, pkt(1)) == [(1, pkt(1)[:3])]
    assert outs(sw, pkt(2)) == [(1, pkt(2))]
    assert outs(sw, pkt(9)) == []  # BMv2 would abort; softswitch drops the packet


def test_checksum_update_and_verify(tmp_path):
    verify = ("verify_checksum(hdr.h.isValid(), {hdr.h.a, hdr.h.b, hdr.h.d}, hdr.h.c, "
              "HashAlgorithm.csum16);")
    compute = ("update_checksum(hdr.h.a == 1, {hdr.h.a, hdr.h.b, hdr.h.d}, hdr.h.c, "
               "HashAlgorithm.csum16);")
    sw = build(tmp_path, ingress="sm.egress_spec = 1; hdr.h.b = (bit<8>) sm.checksum_error;",
               verify=verify, compute=compute)
    words = [0x0100, 0x1234, 0x5678]
    s = sum(words)
    s = (s & 0xFFFF) + (s >> 16)
    csum = ~s & 0xFFFF
    out = outs(sw, pkt(1, 0, 0, 0x12345678))
    # checksum 0 in the input is wrong: checksum_error = 1 is written into b, then recomputed
    words_b1 = [0x0101, 0x1234, 0x5678]
    s1 = sum(words_b1)
    s1 = (s1 & 0xFFFF) + (s1 >> 16)
    assert out == [(1, pkt(1, 1, ~s1 & 0xFFFF, 0x12345678))]
    out = outs(sw, pkt(1, 0, csum, 0x12345678))
    assert out == [(1, pkt(1, 0, csum, 0x12345678))]


def test_hash_and_random(tmp_path):
    sw = build(tmp_path, ingress="""
        sm.egress_spec = 1;
        hash(hdr.h.c, HashAlgorithm.identity, 16w0, {hdr.h.a, hdr.h.b}, 32w0xFFFF);
        bit<8> r;
        random(r, 8w10, 8w20);
        hdr.h.d = (bit<32>) r;""")
    out = outs(sw, pkt(0x12, 0x34))
    assert out[0][1][:4] == bytes([0x12, 0x34, 0x12, 0x34])
    assert 10 <= out[0][1][7] <= 20


def test_direct_meter_read_in_action(tmp_path):
    idecls = """
    direct_meter<bit<8>>(MeterType.packets) dm;
    action m() { dm.read(hdr.h.b); }
    table t { key = { hdr.h.a : exact; } actions = { m; } meters = dm; }
    """
    sw = build(tmp_path, ingress="sm.egress_spec = 1; t.apply();", idecls=idecls)
    h = sw.table("t").add_entry([ExactMatch(1)], "m")
    sw.direct_meter("dm").set_rates(h, 1, 1, 1, 1)
    colours = [outs(sw, pkt(1))[0][1][1] for _ in range(2)]
    assert colours == [0, 2]


def test_trace_names_tables_and_drops(tmp_path):
    lines: list[str] = []
    idecls = """
    action fwd(bit<9> p) { sm.egress_spec = p; }
    table t { key = { hdr.h.a : exact; } actions = { fwd; } default_action = fwd(511); }
    """
    sw = build(tmp_path, ingress="t.apply();", idecls=idecls, trace=lines.append)
    sw.table("t").add_entry([ExactMatch(1)], "fwd", [3])
    outs(sw, pkt(1))
    outs(sw, pkt(2))
    text = "\n".join(lines)
    assert "Applying table 'I.t'" in text
    assert "hit with handle 0" in text and "miss" in text
    assert "Dropping packet at the end of ingress" in text


def test_update_checksum_with_payload_covers_the_unparsed_bytes(tmp_path):
    compute = ("update_checksum_with_payload(true, {hdr.h.a, hdr.h.b}, hdr.h.c, "
               "HashAlgorithm.csum16);")
    sw = build(tmp_path, ingress="sm.egress_spec = 1;", compute=compute)
    s = 0x0102 + 0x0304
    out = outs(sw, pkt(1, 2) + b"\x03\x04")
    assert out == [(1, pkt(1, 2, ~s & 0xFFFF) + b"\x03\x04")]


def test_clone_session_with_multicast_group(tmp_path):
    sw = build(tmp_path, ingress="sm.egress_spec = 1; clone(CloneType.I2E, 4);",
               egress="hdr.h.b = (bit<8>) sm.egress_rid;")
    sw.pre.mc_mgrp_create(9)
    sw.pre.mc_node_associate(9, sw.pre.mc_node_create(3, [5, 6]))
    sw.pre.mirroring_add_mc(4, 9)
    assert outs(sw, pkt()) == [(5, pkt(0, 3)), (6, pkt(0, 3)), (1, pkt())]
