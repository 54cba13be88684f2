// runtime_basics: a small v1model program that exercises every P4Runtime feature the PTF
// runtime suite checks: an LPM route table with a direct counter, an exact source-MAC table
// whose miss sends a digest, a ternary ACL that can punt to the CPU, drop or mirror, a
// multicast action, an indirect per-port counter and packet-in/packet-out controller headers.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;
const bit<16> ETHERTYPE_IPV4 = 0x0800;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

struct metadata_t { }

struct mac_learn_digest_t {
    bit<48> src_addr;
    bit<9>  ingress_port;
}

parser ParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control VerifyChecksumImpl(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) route_counter;
    counter(512, CounterType.packets_and_bytes) ingress_port_counter;

    action drop() {
        mark_to_drop(sm);
    }

    // Routing: rewrite the destination MAC, decrement the TTL, leave on `port`.
    action route(bit<9> port, bit<48> dmac) {
        sm.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action set_mcast_grp(bit<16> grp) {
        sm.mcast_grp = grp;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { route; set_mcast_grp; drop; }
        default_action = drop();
        counters = route_counter;
        size = 1024;
    }

    // Source MAC learning: a miss reports (source MAC, port) to the controller.
    action learn() {
        digest<mac_learn_digest_t>(1, { hdr.ethernet.src_addr, sm.ingress_port });
    }

    table smac {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 1024;
    }

    action send_to_cpu() {
        sm.egress_spec = CPU_PORT;
        sm.mcast_grp = 0;
    }

    action mirror(bit<32> session_id) {
        clone(CloneType.I2E, session_id);
    }

    table acl {
        key = {
            sm.ingress_port         : ternary;
            hdr.ethernet.dst_addr   : ternary;
            hdr.ethernet.ether_type : ternary;
        }
        actions = { send_to_cpu; mirror; drop; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            // Controller packets go straight to the requested port.
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        ingress_port_counter.count((bit<32>) sm.ingress_port);
        mark_to_drop(sm);
        smac.apply();
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
        }
        acl.apply();
    }
}

control EgressImpl(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

control ComputeChecksumImpl(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(ParserImpl(), VerifyChecksumImpl(), IngressImpl(), EgressImpl(),
         ComputeChecksumImpl(), DeparserImpl()) main;
