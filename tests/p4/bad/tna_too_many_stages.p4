// expect-error: Tofino: ingress needs at least 13 MAU stages, Tofino 1 has 12
// expect-line: 129
// Thirteen tables, each keyed on the field the one before it sets: thirteen match dependencies in a row need 13 MAU stages; Tofino 1 has 12 per gress.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t { ethernet_t ethernet; }
struct ig_md_t {
    bit<16> step0; bit<16> step1; bit<16> step2; bit<16> step3;
    bit<16> step4; bit<16> step5; bit<16> step6; bit<16> step7;
    bit<16> step8; bit<16> step9; bit<16> step10; bit<16> step11;
}
struct eg_md_t { }

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
    action set_0(bit<16> next) { ig_md.step0 = next; }
    table lookup_0 {
        key = { hdr.ethernet.dst : exact; }
        actions = { set_0; NoAction; }
        size = 256;
    }
    action set_1(bit<16> next) { ig_md.step1 = next; }
    table lookup_1 {
        key = { ig_md.step0 : exact; }
        actions = { set_1; NoAction; }
        size = 256;
    }
    action set_2(bit<16> next) { ig_md.step2 = next; }
    table lookup_2 {
        key = { ig_md.step1 : exact; }
        actions = { set_2; NoAction; }
        size = 256;
    }
    action set_3(bit<16> next) { ig_md.step3 = next; }
    table lookup_3 {
        key = { ig_md.step2 : exact; }
        actions = { set_3; NoAction; }
        size = 256;
    }
    action set_4(bit<16> next) { ig_md.step4 = next; }
    table lookup_4 {
        key = { ig_md.step3 : exact; }
        actions = { set_4; NoAction; }
        size = 256;
    }
    action set_5(bit<16> next) { ig_md.step5 = next; }
    table lookup_5 {
        key = { ig_md.step4 : exact; }
        actions = { set_5; NoAction; }
        size = 256;
    }
    action set_6(bit<16> next) { ig_md.step6 = next; }
    table lookup_6 {
        key = { ig_md.step5 : exact; }
        actions = { set_6; NoAction; }
        size = 256;
    }
    action set_7(bit<16> next) { ig_md.step7 = next; }
    table lookup_7 {
        key = { ig_md.step6 : exact; }
        actions = { set_7; NoAction; }
        size = 256;
    }
    action set_8(bit<16> next) { ig_md.step8 = next; }
    table lookup_8 {
        key = { ig_md.step7 : exact; }
        actions = { set_8; NoAction; }
        size = 256;
    }
    action set_9(bit<16> next) { ig_md.step9 = next; }
    table lookup_9 {
        key = { ig_md.step8 : exact; }
        actions = { set_9; NoAction; }
        size = 256;
    }
    action set_10(bit<16> next) { ig_md.step10 = next; }
    table lookup_10 {
        key = { ig_md.step9 : exact; }
        actions = { set_10; NoAction; }
        size = 256;
    }
    action set_11(bit<16> next) { ig_md.step11 = next; }
    table lookup_11 {
        key = { ig_md.step10 : exact; }
        actions = { set_11; NoAction; }
        size = 256;
    }
    action set_12(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table lookup_12 {
        key = { ig_md.step11 : exact; }
        actions = { set_12; NoAction; }
        size = 256;
    }
    apply {
        // each table is keyed on the field the one before it sets: a match dependency,
        // so bf-p4c places each one stage after the one before
        lookup_0.apply();
        lookup_1.apply();
        lookup_2.apply();
        lookup_3.apply();
        lookup_4.apply();
        lookup_5.apply();
        lookup_6.apply();
        lookup_7.apply();
        lookup_8.apply();
        lookup_9.apply();
        lookup_10.apply();
        lookup_11.apply();
        lookup_12.apply();  // <- error
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t ig_md,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
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
    apply { }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t eg_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe;
Switch(pipe) main;
