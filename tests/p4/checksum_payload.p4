// verify_checksum_with_payload and update_checksum_with_payload: the data is the field list
// (padded to whole bytes) followed by the payload, i.e. the bytes the parser did not extract;
// a header made valid in ingress and emitted before the payload is not part of it.
#include <core.p4>
#include <v1model.p4>

header c_t {
    bit<8> kind;   // 1: p follows, 2: q follows
    bit<8> err;    // ingress writes standard_metadata.checksum_error here
}

header p_t {
    bit<8>  len;
    bit<16> sum;
}

header q_t {
    bit<4>  k;
    bit<4>  j;
    bit<16> sum;
}

header x_t {
    bit<8> tag;
}

struct headers_t {
    c_t c;
    p_t p;
    x_t x;
    q_t q;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        transition select(hdr.c.kind) {
            1: parse_p;
            2: parse_q;
            default: accept;
        }
    }
    state parse_p {
        pkt.extract(hdr.p);
        transition accept;
    }
    state parse_q {
        pkt.extract(hdr.q);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum_with_payload(hdr.p.isValid(), { hdr.p.len }, hdr.p.sum,
                                     HashAlgorithm.csum16);
        // 4 bits of fields: one byte (k, then 4 zero bits) before the payload
        verify_checksum_with_payload(hdr.q.isValid(), { hdr.q.k }, hdr.q.sum,
                                     HashAlgorithm.csum16);
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.c.err = (bit<8>)sm.checksum_error;
        if (hdr.p.isValid() && hdr.p.len == 0xfe) {
            hdr.x.setValid();
            hdr.x.tag = 0x77;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.p.isValid() && hdr.p.len == 0xfe, { hdr.p.len },
                                     hdr.p.sum, HashAlgorithm.csum16);
        update_checksum_with_payload(hdr.q.isValid(), { hdr.q.k, hdr.q.j }, hdr.q.sum,
                                     HashAlgorithm.crc16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.c);
        pkt.emit(hdr.p);
        pkt.emit(hdr.x);
        pkt.emit(hdr.q);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
