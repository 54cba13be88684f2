// expect-error: register 'Ingress.seen' is used twice on one path through ingress
// expect-line: 51
// Two RegisterActions of one Register on one path (one in an action of a table, one in the apply block after it): a packet reaches a register once.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t { ethernet_t ethernet; }
struct ig_md_t { bit<32> value; bit<16> index; }
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
    Register<bit<32>, bit<16>>(1024) seen;
    RegisterAction<bit<32>, bit<16>, bit<32>>(seen) bump = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + 1; rv = v; }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(seen) peek = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    action count() { ig_md.value = bump.execute(ig_md.index); }
    action skip() { }
    table counting {
        key = { hdr.ethernet.dst : exact; }
        actions = { count; skip; }
        default_action = skip();
    }
    apply {
        if (hdr.ethernet.ether_type == 0x0800) {
            ig_md.value = peek.execute(0);  // fine: the else arm is another path
        } else {
            counting.apply();
            ig_md.value = peek.execute(1);  // <- error
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
