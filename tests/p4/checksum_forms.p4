// verify_checksum and update_checksum under each condition form (isValid(), a run-time
// comparison, constant true, constant false), over field lists of mixed widths that are not
// byte multiples (csum16 pads the last byte with zeros), a whole header in the list, fields of
// invalid headers (left out of the data, as BMv2 does), a target field in an invalid header
// (verification skipped), and the csum16, crc16 and crc32 algorithms.
#include <core.p4>
#include <v1model.p4>

header c_t {
    bit<8> mode;   // bit 0: a present, bit 1: b present, bits 2/3: update a.sum16/a.sum32
    bit<8> err;    // ingress writes standard_metadata.checksum_error here
}

header a_t {
    bit<4>  x;
    bit<4>  y;
    bit<12> z;
    bit<4>  w;
    bit<16> sum16;
    bit<32> sum32;
}

header b_t {
    bit<8>  v;
    bit<16> sum;
}

struct headers_t {
    c_t c;
    a_t a;
    b_t b;
}

struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        transition select(hdr.c.mode[1:0]) {
            1: parse_a;
            2: parse_b;
            3: parse_ab;
            default: accept;
        }
    }
    state parse_a {
        pkt.extract(hdr.a);
        transition accept;
    }
    state parse_b {
        pkt.extract(hdr.b);
        transition accept;
    }
    state parse_ab {
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply {
        // 24 bits of data: 3 bytes, the odd one padded to a 16-bit word
        verify_checksum(hdr.a.isValid(), { hdr.a.x, hdr.a.y, hdr.a.z, hdr.a.w }, hdr.a.sum16,
                        HashAlgorithm.csum16);
        // constant true; b's absence skips the check, a's absence drops a.x from the data
        verify_checksum(true, { hdr.a.x, hdr.b.v }, hdr.b.sum, HashAlgorithm.csum16);
        // constant false: never checked (c.err holds no checksum)
        verify_checksum(false, { hdr.c.mode }, hdr.c.err, HashAlgorithm.csum16);
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.c.err = (bit<8>)sm.checksum_error;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.c.mode[2:2] == 1, { hdr.a.x, hdr.a.y, hdr.a.z, hdr.a.w },
                        hdr.a.sum16, HashAlgorithm.csum16);
        // 12 + 8 = 20 bits: 3 bytes, the last one padded with 4 zero bits
        update_checksum(hdr.c.mode[3:3] == 1, { hdr.a.z, hdr.c.mode }, hdr.a.sum32,
                        HashAlgorithm.crc32);
        // a whole header in the list, after the two updates above (updates run in order)
        update_checksum(hdr.b.isValid(), { hdr.b.v, hdr.a }, hdr.b.sum, HashAlgorithm.crc16);
        update_checksum(false, { hdr.c.mode }, hdr.c.err, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.c);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
