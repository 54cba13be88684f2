// TNA Register + RegisterAction: a read-modify-write per execute(index) that stores what apply
// leaves in `value` and returns `rv`; cells of a two-field struct starting at the register's
// initial value; apply reading the control's parameters (the packet's fields); rv taken before
// the update; a DirectRegister with one cell per table entry, reached only when the entry's
// action executes its DirectRegisterAction.
#include <core.p4>
#include <tna.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header ctl_t {
    bit<8>  idx;
    bit<16> add;
    bit<16> limit;
}

header out_t {
    bit<16> pair_rv;
    bit<32> count_rv;
    bit<16> hits_rv;
}

struct pair_t {
    bit<16> lo;
    bit<16> hi;
}

struct headers_t {
    ethernet_t eth;
    ctl_t      ctl;
    out_t      res;
}

struct ig_md_t { }

struct eg_md_t { }

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ctl);
        pkt.extract(hdr.res);
        transition accept;
    }
}

control Ig(inout headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<pair_t, bit<8>>(16, {16w1, 16w2}) pairs;
    RegisterAction<pair_t, bit<8>, bit<16>>(pairs) bump = {
        void apply(inout pair_t value, out bit<16> rv) {
            value.lo = value.lo + hdr.ctl.add;
            if (value.hi < hdr.ctl.limit) {
                value.hi = value.hi + 1;
            }
            rv = value.hi;
        }
    };

    Register<bit<32>, bit<8>>(8) counts;
    RegisterAction<bit<32>, bit<8>, bit<32>>(counts) count_old = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + 1;
        }
    };

    DirectRegister<bit<16>>() hits;
    DirectRegisterAction<bit<16>, bit<16>>(hits) hit_count = {
        void apply(inout bit<16> value, out bit<16> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action seen() {
        hdr.res.hits_rv = hit_count.execute();
    }

    action miss() { }

    table by_idx {
        key = { hdr.ctl.idx : exact; }
        actions = { seen; miss; }
        registers = hits;
        default_action = miss;
        size = 16;
    }

    apply {
        hdr.res.pair_rv = bump.execute(hdr.ctl.idx);
        hdr.res.count_rv = count_old.execute(hdr.ctl.idx);
        by_idx.apply();
        ig_tm_md.ucast_egress_port = 1;
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;

Switch(pipe) main;
