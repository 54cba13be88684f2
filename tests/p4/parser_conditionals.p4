// if statements (chains and nested) in parser states, mixed with extract, verify, assignments, a local variable and a function call; the state's transition follows them.
#include <core.p4>
#include <v1model.p4>

error { BadLen, Seven }

header type_t {
    bit<8> kind;
    bit<8> len;
}
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header res_t {
    bit<8> path;
    bit<8> tag;
    bit<8> err;
}

struct headers_t {
    type_t t;
    a_t    a;
    b_t    b;
    res_t  res;
}
struct meta_t {
    bit<8> path;
    bit<8> tag;
}

bit<8> double(in bit<8> v) {
    return v + v;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.t);
        meta.tag = 0;
        if (hdr.t.kind == 1) {
            pkt.extract(hdr.a);
            meta.path = 1;
            if (hdr.a.x > 0x80) {
                meta.tag = double(hdr.a.x);
            } else {
                meta.tag = hdr.a.x;
            }
        } else if (hdr.t.kind == 2) {
            pkt.extract(hdr.b);
            meta.path = 2;
        } else {
            meta.path = 3;
        }
        if (hdr.t.len == 0) {
            meta.tag = meta.tag + 0x10;
        } else if (hdr.t.len == 1 || hdr.t.len == 2) {
            meta.tag = meta.tag + 0x20;
        } else {
            verify(hdr.t.len < 8, error.BadLen);
            meta.tag = meta.tag + 0x30;
        }
        transition select(meta.path) {
            3: third;
            default: accept;
        }
    }
    state third {
        bit<8> local = hdr.t.len;
        if (local == 7) {
            verify(false, error.Seven);
        }
        meta.tag = meta.tag | 1;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.path = meta.path;
        hdr.res.tag = meta.tag;
        if (sm.parser_error == error.NoError) {
            hdr.res.err = 0;
        } else if (sm.parser_error == error.BadLen) {
            hdr.res.err = 1;
        } else if (sm.parser_error == error.Seven) {
            hdr.res.err = 2;
        } else {
            hdr.res.err = 9;
        }
        sm.egress_spec = 2;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.t);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.res);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
