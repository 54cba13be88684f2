// expect-error: 3rd distinct comparison
// expect-line: 37
// A RegisterAction testing three comparisons: Tofino 1's stateful ALU has two compare units.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct pair_t { bit<32> lo; bit<32> hi; }
struct headers_t { ethernet_t ethernet; }
struct ig_md_t { bit<32> value; bit<16> index; bit<8> amount; bit<16> a; bit<16> b; bool flag; }
struct eg_md_t { bit<32> value; }

parser IngressParser(packet_in pkt, out headers_t hdr, out ig_md_t ig_md,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_md_t ig_md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<16>>(1024) marks;
    RegisterAction<bit<16>, bit<16>, bit<16>>(marks) mark = {
        void apply(inout bit<16> value) {
            if (value == ig_md.a && value != 0x8000 &&
                value < 100) {  // <- error
                value = 1;
            }
        }
    };
    apply {
        mark.execute(ig_md.index);
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out eg_md_t eg_md,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_md_t eg_md,
               in egress_intrinsic_metadata_t eg_intr_md) {
    apply {
    }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
