// P4Runtime entity tests: indexed counter, meter and register, a digest, a parser value_set,
// multicast and clone sessions.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t { h_t h; }
struct meta_t { bit<8> color; }

struct learn_t {
    bit<8> a;
    bit<9> port;
    bit<16> c;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) special;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            special: mark;
            default: accept;
        }
    }
    state mark {
        hdr.h.b = 0x55;
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) pkt_ctr;
    meter(4, MeterType.packets) pkt_meter;
    register<bit<16>>(8) regs;

    apply {
        sm.egress_spec = 1;
        if (hdr.h.a == 0xd1) {
            digest<learn_t>(1, { hdr.h.a, sm.ingress_port, hdr.h.c });
        }
        pkt_ctr.count((bit<32>)hdr.h.a);
        pkt_meter.execute_meter((bit<32>)0, meta.color);
        hdr.h.d = (bit<32>)meta.color;
        bit<16> old;
        regs.read(old, (bit<32>)hdr.h.a);
        hdr.h.c = old;
        regs.write((bit<32>)hdr.h.a, old + 1);
        if (hdr.h.a == 0xcc) {
            sm.mcast_grp = 5;
        }
        if (hdr.h.a == 0xc1) {
            clone(CloneType.I2E, 7);
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
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
