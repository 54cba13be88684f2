// expect-error: executed by 5 RegisterActions
// expect-line: 46
// Five RegisterActions executed on one register: its stateful ALU holds four.
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
    Register<bit<16>, bit<16>>(1024) st;
    RegisterAction<bit<16>, bit<16>, bit<16>>(st) set0 = {
        void apply(inout bit<16> value) { value = 0; }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(st) set1 = {
        void apply(inout bit<16> value) { value = 1; }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(st) set2 = {
        void apply(inout bit<16> value) { value = 2; }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(st) set3 = {
        void apply(inout bit<16> value) { value = 3; }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(st) set4 = {  // <- error
        void apply(inout bit<16> value) { value = 4; }
    };
    apply {
        if (ig_md.amount == 0) {
            set0.execute(ig_md.index);
        } else if (ig_md.amount == 1) {
            set1.execute(ig_md.index);
        } else if (ig_md.amount == 2) {
            set2.execute(ig_md.index);
        } else if (ig_md.amount == 3) {
            set3.execute(ig_md.index);
        } else if (ig_md.amount == 4) {
            set4.execute(ig_md.index);
        }
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
