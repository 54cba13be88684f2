// A label stack parsed by a loop over extract(next) until bottom-of-stack; last and lastIndex in the parser; StackOutOfBounds when the stack overflows.
#include <core.p4>
#include <v1model.p4>

header info_t {
    bit<8> last_index;
    bit<8> last_ttl;
}

header label_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers_t {
    info_t     info;
    label_t[4] labels;
}
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.info);
        transition parse_label;
    }
    state parse_label {
        pkt.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            1: done;
            default: parse_label;
        }
    }
    state done {
        hdr.info.last_index = (bit<8>) hdr.labels.lastIndex;
        hdr.info.last_ttl = hdr.labels.last.ttl;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.info.last_index = 0xff;
        }
        if (hdr.labels[1].isValid()) {
            hdr.labels[1].ttl = hdr.labels[1].ttl - 1;
        }
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
        pkt.emit(hdr.info);
        pkt.emit(hdr.labels);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
