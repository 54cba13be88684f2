// Constants shared by every program: ethertypes, IP protocols, port roles, drop reasons,
// priorities, the CPU port. Numbers the control plane sees are part of p4src/README.md.
#ifndef P4SRC_DEFINES_P4
#define P4SRC_DEFINES_P4

const bit<16> ETHERTYPE_IPV6 = 0x86dd;

const bit<8> PROTO_IPV6_ROUTE = 43;   // IPv6 Routing extension header (the SRH when type 4)
const bit<8> PROTO_IPV6 = 41;         // IPv6-in-IPv6
const bit<8> PROTO_UDP = 17;
const bit<16> UDP_PORT_ROCEV2 = 4791;

const bit<8> SRH_ROUTING_TYPE = 4;

// Port roles (`port_role` / `egress_port_role`); 0 is never installed.
const bit<2> ROLE_HOST = 1;
const bit<2> ROLE_FABRIC = 2;
const bit<2> ROLE_EXTERNAL = 3;

// Drop reasons: `drop_counter` index = ingress_port * DROP_REASONS + reason.
const bit<4> DROP_NONE = 0;
const bit<4> DROP_TRUNCATED = 1;
const bit<4> DROP_SRH_TYPE = 2;
const bit<4> DROP_SRH_LENGTH = 3;
const bit<4> DROP_SRH_SEGMENTS_LEFT = 4;
const bit<4> DROP_SRH_TOO_LONG = 5;
const bit<4> DROP_HOP_LIMIT = 6;
const bit<4> DROP_NO_ROUTE = 7;
const bit<4> DROP_EXTERNAL_SR = 8;
const bit<4> DROP_SID_NO_NEXT = 9;
const bit<4> DROP_DECAP = 10;
const bit<4> DROP_NOT_IPV6 = 11;
const bit<4> DROP_IP_VERSION = 12;        // EtherType or next header IPv6, version not 6
const bit<4> DROP_PACKET_OUT_PORT = 13;   // a PacketOut naming the CPU port or BMV2_DROP_PORT
const bit<32> DROP_REASONS = 16;

// What a `my_sid` hit asks the behaviour stage to do (metadata only, not control-plane visible).
const bit<3> SID_NONE = 0;
const bit<3> SID_UN = 1;
const bit<3> SID_UA = 2;
const bit<3> SID_UA_COMBINED = 3;
const bit<3> SID_END = 4;
const bit<3> SID_END_X = 5;
const bit<3> SID_END_DT6 = 6;

// F3216: a 32-bit SID block, then 16-bit uSIDs.
const bit<128> SID_BLOCK_MASK = 0xffffffff000000000000000000000000;

// Priority queues (run BMv2/softswitch with --priority-queues 8): larger is served first.
const bit<3> PRIORITY_HIGHEST = 7;   // trimmed headers on their second pass

// H.Encaps.Red: the outer header's fixed fields.
const bit<16> IPV6_HEADER_BYTES = 40;
const bit<16> SRH_FIXED_BYTES = 8;
const bit<16> ETHERNET_HEADER_BYTES = 14;

// Controller packets. CPU_PORT_ID is the port packet-in / packet-out use: 255 by default, as
// the softswitch and BMv2 commands here pass --cpu-port 255; on a Tofino switch it is the
// chip's PCIe CPU port, which depends on the chip and its pipes (`make tna TOFINO_CPU_PORT=N`
// passes -DCPU_PORT_ID=N).
#ifndef CPU_PORT_ID
#define CPU_PORT_ID 255
#endif
const bit<9> CPU_PORT = CPU_PORT_ID;
// simple_switch's default drop port: egress_spec 511 drops a packet at the end of ingress,
// uncounted (no port on Tofino either).
const bit<9> BMV2_DROP_PORT = 511;
const bit<8> PUNT_REASON_HOP_LIMIT = 6;   // packet_in.reason: the drop reason that punted it

// The @field_list id of the metadata a trimmed packet carries through recirculation (v1model).
// A macro, not a const, because it also appears inside @field_list(...) annotations.
#define FIELD_LIST_TRIM 1

// Trimming on TNA (switch/tna/trim.p4): the trimmed copy of a packet leaving port P is mirrored
// to clone session TRIM_SESSION_BASE + P, which the control plane sets up with P as its one
// replica, the highest class of service and a truncation length of trim_bytes +
// TRIM_MIRROR_BYTES (the mirror header the copy carries counts towards it). 256 + port is a
// valid session id on Tofino (1..1015, every port) and on softswitch (1..511, ports below 256);
// the NIC's sessions are 100 + plane. v1model trims by recirculation and needs no session.
const bit<10> TRIM_SESSION_BASE = 256;
const bit<16> TRIM_MIRROR_BYTES = 4;

#endif
