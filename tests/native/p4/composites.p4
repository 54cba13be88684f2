// Varbit fields and locals, header unions and stacks of them, tuples: the values the C engine
// holds as structs (tests/native/test_engine_composites.py drives it with random packets).
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8> bits;    // v.data's length in bits (need not be whole bytes)
    bit<8> bytes;   // w.data's length in bytes (low 5 bits)
    bit<8> op;
    bit<8> idx;
}
header v_t {
    bit<4>      f;
    bit<4>      g;
    varbit<200> data;
}
header w_t {
    varbit<256> data;
    bit<8>      t;
}
header tag_t { bit<8> kind; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header_union ab_t {
    a_t a;
    b_t b;
}
header out_t {
    bit<32> h;
    bit<8>  flags;
    bit<8>  n;
}
struct headers_t {
    ctl_t   ctl;
    v_t     v;
    w_t     w;
    ab_t[4] us;
    ab_t    single;
    out_t   res;
}
struct meta_t { bit<8> m; }

bit<8> pick(in tuple<bit<8>, tuple<bit<4>, bool>> t, in bit<8> i) {
    if (i == 0) { return t[0]; }
    return t[1][1] ? (bit<8>)t[1][0] : 8w0xee;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.v, (bit<32>)hdr.ctl.bits);
        pkt.extract(hdr.w, ((bit<32>)hdr.ctl.bytes & 0x1f) * 8);
        transition units;
    }
    state units {
        transition select(pkt.lookahead<tag_t>().kind) {
            1: ua;
            2: ub;
            default: accept;
        }
    }
    state ua {
        pkt.advance(8);
        pkt.extract(hdr.us.next.a);
        transition units;
    }
    state ub {
        pkt.advance(8);
        pkt.extract(hdr.us.next.b);
        transition units;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    varbit<256> saved;
    action swap_w_v_none() {
        saved = hdr.w.data;
        hdr.w.data = saved;
    }
    apply {
        sm.egress_spec = 2;
        hdr.res.setValid();
        hash(hdr.res.h, HashAlgorithm.crc32, 32w0, { hdr.ctl.op, hdr.v.data, hdr.v.g, hdr.w.data },
             32w0xffff);
        bit<8> fl = 0;
        if (hdr.v.isValid()) { fl = fl | 1; }
        if (hdr.w.isValid()) { fl = fl | 2; }
        if (hdr.us[0].isValid()) { fl = fl | 4; }
        if (hdr.us[1].a.isValid()) { fl = fl | 8; }
        if (hdr.us[2].b.isValid()) { fl = fl | 16; }
        if (hdr.us[0] == hdr.us[1]) { fl = fl | 32; }
        bit<8> op = hdr.ctl.op & 7;
        if (op == 1) {
            hdr.us.pop_front(1);
        } else if (op == 2) {
            hdr.us.push_front(2);
            hdr.us[1].b.setValid();
            hdr.us[1].b.y = 0x1234;
        } else if (op == 3) {
            hdr.single = hdr.us[hdr.ctl.idx & 3];
            hdr.us[hdr.ctl.idx & 7].a.x = 0x77;
        } else if (op == 4) {
            swap_w_v_none();
            varbit<256> tmp = hdr.w.data;
            hdr.w.data = saved;
            saved = tmp;
        } else if (op == 5) {
            hdr.single.a = { 0x55 };
            hdr.single.b.setValid();
        }
        if (hdr.v.data == hdr.v.data && hdr.w.isValid()) { fl = fl | 64; }
        tuple<bit<8>, tuple<bit<4>, bool>> tp = { hdr.ctl.idx, { hdr.v.f, hdr.ctl.op[7:7] == 1 } };
        tuple<bit<8>, tuple<bit<4>, bool>> tq = tp;
        tq[1][0] = 3;
        if (tp != tq) { fl = fl | 128; }
        hdr.res.flags = fl;
        hdr.res.n = pick(tp, hdr.ctl.op & 1) + pick(tq, 1);
        if (hdr.us[0].b.isValid()) {
            hdr.us[0].a.setValid();
            hdr.us[0].a.x = (bit<8>)hdr.us[0].b.y;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.w.isValid(), { hdr.w.data, hdr.v.data, hdr.ctl.bits }, hdr.w.t,
                        HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.ctl);
        pkt.emit(hdr.v);
        pkt.emit(hdr.w);
        pkt.emit(hdr.us);
        pkt.emit(hdr.single);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
