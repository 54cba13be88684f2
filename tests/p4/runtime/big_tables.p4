// P4Runtime load tests: two large exact tables (so that one Write batch can hold 100,000
// entries and one Read can return them) in front of a forwarder that always sends the packet
// out port 2, whatever the tables hold, so packets keep a known path while they are written.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t { ethernet_t ethernet; }
struct metadata_t { bit<8> tag; }

parser P(packet_in packet, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action tag(bit<8> value) { meta.tag = value; }
    action nop() { }
    // Written in bulk by the tests; a hit changes nothing the packet carries.
    table hosts {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { tag; nop; }
        default_action = nop();
        size = 262144;
    }
    // A second table, so that role configs can give tables to different roles.
    table peers {
        key = { hdr.ethernet.src_addr: exact; }
        actions = { tag; nop; }
        default_action = nop();
        size = 262144;
    }
    apply {
        hosts.apply();
        peers.apply();
        sm.egress_spec = 2;
    }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control D(packet_out packet, in headers_t hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
