// A header whose fields include a struct (and a struct inside it): extracted, matched on (hdr.h.row.e),
// written field by field and as a whole struct, hashed, emitted; p4c flattens the struct's fields into the header,
// so its bits sit where they are declared.
#include <core.p4>
#include <v1model.p4>

struct flags_t {
    bool   up;
    bit<3> cls;
}

struct row_t {
    bit<8>  e;
    flags_t f;
    bit<4>  l;
}

header h_t {
    bit<8> a;
    row_t  row;
    bit<8> b;
}

header copy_t {
    row_t  row;
}

header sum_t {
    bit<16> v;
}

struct headers_t {
    h_t    h;
    copy_t c;
    sum_t  sum;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.row.f.up) {
            true: up;
            default: accept;
        }
    }
    state up {
        pkt.extract(hdr.c);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<9> port, bit<4> l) {
        sm.egress_spec = port;
        hdr.h.row.l = l;
    }
    table t {
        key = { hdr.h.row.e : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.h.a == 7) {
            hdr.c.setInvalid();   // its fields keep their values
        }
        // the struct field of an invalid header is left out of the hash input, as the header
        hdr.sum.setValid();
        hash(hdr.sum.v, HashAlgorithm.identity, 16w0, { hdr.c.row }, 32w65536);
        t.apply();
        hdr.h.b = hdr.h.row.e + (bit<8>)hdr.h.row.f.cls;
        if (!hdr.c.isValid()) {
            hdr.c.setValid();
            hdr.c.row = hdr.h.row;    // a whole struct copied out of a header
            hdr.c.row.f.up = true;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.c);
        pkt.emit(hdr.sum);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
