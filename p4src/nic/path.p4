// Shared by the v1model and TNA programs (metadata and headers only; the 128-bit address
// arithmetic is each architecture's NIC_CARRIER_* / NIC_SRC_VIA_T1, in its nic_arch.p4).
// The path stage: (plane, destination row, T1, destination port) -> the SRv6 carrier, the port
// and MACs of the plane, and this NIC's source address on it. Data packets and the feedback the
// NIC sends back both come here (p4c applies each table once): data with meta.plane,
// meta.dst_row, meta.t1_usid and meta.dst_ua set; feedback (meta.reflect) with meta.plane and
// the arriving packet's return address.
//
// The outer source address of a data packet is its return address: this NIC's locator in the
// plane (block : uN(T0) : uA(port) : NIC decap, from plane_port) behind the T1 the packet
// crosses (block : uN(T1) : uN(T0) : uA(port) : NIC decap). The receiver sends its SACK or NACK
// there, so feedback crosses the same T1 back and a cut link silences data and feedback of the
// same EVs only.
#ifndef P4SRC_NIC_PATH_P4
#define P4SRC_NIC_PATH_P4

#include "nic_types.p4"

control PathStage(inout nic_metadata_t meta) {
    // Carrier layout (controller/plan/templates.py): block : uN(src T0) : uN(T1) : uN(dst T0) :
    // uA(dst port) : NIC decap; the T1 and the uA are left zero in `base` and filled here.
    @name(".via_t1")
    action via_t1(bit<128> base) {
        NIC_CARRIER_VIA_T1(meta.path_carrier, base, meta.t1_usid, meta.dst_ua);
        meta.path_found = true;
        meta.path_via_t1 = true;
    }

    // Both NICs on one T0: block : uN(T0) : uA(dst port) : NIC decap.
    @name(".same_t0")
    action same_t0(bit<128> base) {
        NIC_CARRIER_SAME_T0(meta.path_carrier, base, meta.dst_ua);
        meta.path_found = true;
    }

    @name(".no_template")
    action no_template() {
        meta.path_found = false;
    }

    // Why: the NIC stores templates, not one address per path: one per (plane, destination T0).
    // Installs: for this NIC's T0 in each plane, one entry per destination T0 of that plane.
    @name(".path_template")
    table path_template {
        key = {
            meta.plane   : exact @name("plane");
            meta.dst_row : exact @name("dst_row");
        }
        actions = { via_t1; same_t0; @defaultonly no_template; }
        default_action = no_template();
        size = NIC_TABLE_SIZE;
    }

    @name(".set_plane_port")
    action set_plane_port(bit<9> port, bit<48> smac, bit<48> dmac, bit<128> src) {
        meta.path_port = port;
        meta.path_smac = smac;
        meta.path_dmac = dmac;
        meta.path_src = src;
    }

    @name(".no_plane_port")
    action no_plane_port() {
        meta.path_found = false;
    }

    // Why: which NIC port is each plane's, and the addresses used on it.
    // Installs: one entry per plane: port, this NIC's MAC, its T0's MAC, this NIC's locator in
    // the plane (block : uN(T0) : uA(T0 port) : NIC decap, in the fabric's SID block).
    @name(".plane_port")
    table plane_port {
        key = { meta.plane : exact @name("plane"); }
        actions = { set_plane_port; @defaultonly no_plane_port; }
        default_action = no_plane_port();
        size = NIC_PLANES;
    }

    apply {
        if (meta.reflect) {
            meta.path_carrier = meta.return_addr;
            meta.path_found = true;
        } else {
            path_template.apply();
        }
        plane_port.apply();
        if (meta.path_via_t1) {
            NIC_SRC_VIA_T1(meta.path_src, meta.t1_usid);   // the T1's uSID after the block
        }
        if (meta.reflect && meta.return_addr[127:96] != meta.path_src[127:96]) {
            meta.path_found = false;   // a return address outside the SID block: no feedback
        }
    }
}

// The headers of a packet the NIC sends back (SACK, NACK) on the path the path stage chose,
// made from the packet that caused it: addresses swapped, MRC headers after the BTH replaced
// by `ext_bytes` of feedback headers (the caller makes those valid).
control FeedbackHeaders(inout nic_headers_t hdr, in nic_metadata_t meta, in bit<8> opcode,
                        in bit<16> ext_bytes) {
    apply {
        ipv6_addr_t peer = hdr.ipv6.src_addr;
        hdr.ethernet.src_addr = meta.path_smac;
        hdr.ethernet.dst_addr = meta.path_dmac;
        hdr.ipv6.src_addr = hdr.ipv6.dst_addr;
        hdr.ipv6.dst_addr = peer;
        hdr.ipv6.payload_len = UDP_HEADER_BYTES + BTH_BYTES + ext_bytes;
        hdr.ipv6.dscp = meta.fb_dscp;
        hdr.ipv6.ecn = 0;
        hdr.outer_ipv6.setValid();
        hdr.outer_ipv6.version = 6;
        hdr.outer_ipv6.dscp = meta.fb_dscp;
        hdr.outer_ipv6.ecn = 0;
        hdr.outer_ipv6.flow_label = 0;
        hdr.outer_ipv6.payload_len = IPV6_HEADER_BYTES + hdr.ipv6.payload_len;
        hdr.outer_ipv6.next_hdr = PROTO_IPV6;
        hdr.outer_ipv6.hop_limit = NIC_HOP_LIMIT;
        hdr.outer_ipv6.src_addr = meta.path_src;
        hdr.outer_ipv6.dst_addr = meta.path_carrier;
        hdr.udp.src_port = 0;
        hdr.udp.length = UDP_HEADER_BYTES + BTH_BYTES + ext_bytes;
        hdr.udp.checksum = 0;
        hdr.bth.opcode = opcode;
        hdr.bth.dest_qp = meta.fb_qp;
        hdr.bth.ack_req = 0;
        hdr.bth.retransmit = 0;
        hdr.meth.setInvalid();
        hdr.reth.setInvalid();
        hdr.immdt.setInvalid();
        hdr.peth.setInvalid();   // (a probe's answer is a SACK)
    }
}

// A SACK (SETH + CC_STATE after the BTH) made of the data packet or probe it acknowledges, from
// the receive window the plane side reported in meta (fb_*), with this NIC's port-state bitmap.
control SackHeaders(inout nic_headers_t hdr, in nic_metadata_t meta) {
    FeedbackHeaders() sack_headers;

    apply {
        hdr.seth.setValid();
        hdr.seth.header_type = 0;
        hdr.seth.next_header = 0;
        hdr.seth.m = meta.fb_m;
        hdr.seth.reserved0 = 0;
        hdr.seth.probe_response = meta.fb_pr;
        hdr.seth.reserved1 = 0;
        hdr.seth.ack_psn_offset = meta.fb_ack_offset;
        hdr.seth.entropy = meta.fb_entropy;
        hdr.seth.spdcid = 0;
        hdr.seth.dpdcid = 0;
        hdr.seth.port_state = meta.local_down;   // this NIC's ports, for the peer
        hdr.seth.cack_psn = meta.fb_cack;
        hdr.seth.cc_type = 0;
        hdr.seth.cc_flags = 0;
        hdr.seth.mpr = 0;
        hdr.seth.sack_offset = 1;
        hdr.seth.sack_bitmap = meta.fb_bitmap;
        hdr.cc_state.setValid();
        hdr.cc_state.tx_timestamp = 0;
        hdr.cc_state.reserved = 0;
        hdr.cc_state.ooo_count = 0;
        hdr.cc_state.restore_window = 0;
        hdr.cc_state.rcv_cwnd_pen = 0;
        hdr.cc_state.rcvd_bytes = 0;
        sack_headers.apply(hdr, meta, OP_SACK, SACK_EXT_BYTES);
    }
}

// A NACK (NETH after the BTH) made of the trimmed (or out-of-window) packet it answers, with the
// reason in meta.nack_reason and this NIC's port-state bitmap.
control NackHeaders(inout nic_headers_t hdr, in nic_metadata_t meta) {
    FeedbackHeaders() nack_headers;

    apply {
        hdr.neth.setValid();
        hdr.neth.header_type = 0;
        hdr.neth.next_header = 0;
        hdr.neth.reserved0 = 0;
        hdr.neth.nack_reason = meta.nack_reason;
        hdr.neth.vendor_info = 0;
        hdr.neth.entropy = meta.fb_entropy;
        hdr.neth.spdcid = 0;
        hdr.neth.dpdcid = 0;
        hdr.neth.port_state = meta.local_down;
        hdr.neth.nack_psn = hdr.bth.psn;
        hdr.neth.cc_type = 0;
        hdr.neth.cc_flags = 0;
        hdr.neth.reserved2 = 0;
        hdr.neth.tx_timestamp = 0;
        nack_headers.apply(hdr, meta, OP_NACK, NACK_EXT_BYTES);
    }
}

#endif
