// P4Runtime robustness fuzzing: every kind of entity in one program — a table per match kind,
// direct counter and meter, idle timeout, an action profile, an action selector and one
// programmed with one-shot action sets, indexed counter, meter and register, a digest, a
// parser value_set, multicast and clone, controller headers.
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 64;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9>  ingress_port;
    bit<7>  pad;
}

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<32> d;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    h_t          h;
}

struct meta_t {
    bit<8> color;
    bit<8> dcolor;
}

struct learn_t {
    bit<8>  a;
    bit<9>  port;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) special;
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_h;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_h;
    }
    state parse_h {
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

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) pkt_ctr;
    meter(4, MeterType.bytes) pkt_meter;
    register<bit<16>>(8) regs;
    direct_counter(CounterType.packets_and_bytes) ex_ctr;
    direct_meter<bit<8>>(MeterType.packets) lpm_meter;
    action_profile(8) prof;
    action_selector(HashAlgorithm.identity, 16, 16) sel;
    action_selector(HashAlgorithm.crc16, 8, 16) oneshot_sel;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action set_b(bit<8> v) { hdr.h.b = v; }
    action set_b_counted(bit<8> v) { hdr.h.b = v; ex_ctr.count(); }
    action set_c_metered(bit<16> v) { hdr.h.c = v; lpm_meter.read(meta.dcolor); }
    action set_cd(bit<16> c, bit<32> d) { hdr.h.c = c; hdr.h.d = d; }
    action drop() { mark_to_drop(sm); }
    action punt() {
        sm.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
    }

    table ex {
        key = { hdr.h.a : exact; }
        actions = { set_b_counted; punt; @defaultonly NoAction; }
        counters = ex_ctr;
        size = 16;
    }
    table lpm {
        key = { hdr.h.d : lpm; }
        actions = { set_c_metered; NoAction; }
        meters = lpm_meter;
        size = 16;
    }
    table tern {
        key = { hdr.h.a : ternary; hdr.h.b : exact; }
        actions = { set_port; drop; set_cd; }
        default_action = set_port(1);
        size = 16;
    }
    table rng {
        key = { hdr.h.c : range; }
        actions = { set_b; NoAction; }
        size = 16;
    }
    table opt {
        key = { hdr.h.a : optional; hdr.h.b : optional; }
        actions = { set_b; NoAction; }
        support_timeout = true;
        size = 16;
    }
    table indirect {
        key = { hdr.h.b : exact; }
        actions = { set_b; set_cd; NoAction; }
        implementation = prof;
        size = 16;
    }
    table ecmp {
        key = { hdr.h.c : exact; hdr.h.d : selector; }
        actions = { set_port; NoAction; }
        implementation = sel;
        size = 16;
    }

    table oneshot {
        key = { hdr.h.b : exact; hdr.h.c : selector; }
        actions = { set_port; NoAction; }
        implementation = oneshot_sel;
        size = 16;
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            if (hdr.h.a == 0xd1) {
                digest<learn_t>(1, { hdr.h.a, sm.ingress_port });
            }
            pkt_ctr.count((bit<32>)hdr.h.a[2:0]);
            pkt_meter.execute_meter((bit<32>)hdr.h.b[1:0], meta.color);
            bit<16> old;
            regs.read(old, (bit<32>)hdr.h.a[2:0]);
            regs.write((bit<32>)hdr.h.a[2:0], old + 1);
            ex.apply();
            lpm.apply();
            tern.apply();
            rng.apply();
            opt.apply();
            indirect.apply();
            ecmp.apply();
            oneshot.apply();
            if (hdr.h.a == 0xcc) {
                sm.mcast_grp = 5;
            }
            if (hdr.h.a == 0xc1) {
                clone(CloneType.I2E, 7);
            }
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.h);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
