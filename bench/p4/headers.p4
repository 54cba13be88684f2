// Headers shared by the benchmark programs: Ethernet and IPv6.
#ifndef BENCH_HEADERS_P4
#define BENCH_HEADERS_P4

typedef bit<48> mac_addr_t;
typedef bit<128> ipv6_addr_t;

const bit<16> ETHERTYPE_IPV6 = 0x86dd;

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv6_t {
    bit<4>      version;
    bit<8>      traffic_class;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

struct headers_t {
    ethernet_t ethernet;
    ipv6_t     ipv6;
}

struct metadata_t {
}

parser BenchParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition accept;
    }
}

control BenchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control BenchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control BenchEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply { }
}

control BenchDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv6);
    }
}

#endif
