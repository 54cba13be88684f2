// MRC transport headers after the BTH (shared/reference/mrc-srv6.md section 4). Sizes and field
// order follow the two third-party MRC models that agree (the OCP spec PDF was not available);
// each choice the sources leave open is listed in p4src/README.md ("MRC wire format").
#ifndef P4SRC_MRC_HEADERS_P4
#define P4SRC_MRC_HEADERS_P4

// BTH opcodes (IB manufacturer-specific range; writes are the RC write opcodes + 0xC0).
const bit<8> OP_WRITE_FIRST = 0xC6;
const bit<8> OP_WRITE_MIDDLE = 0xC7;
const bit<8> OP_WRITE_LAST = 0xC8;
const bit<8> OP_WRITE_LAST_IMM = 0xC9;
const bit<8> OP_WRITE_ONLY = 0xCA;
const bit<8> OP_WRITE_ONLY_IMM = 0xCB;
const bit<8> OP_SACK = 0xDC;
const bit<8> OP_NACK = 0xDD;
const bit<8> OP_PROBE = 0xDE;
// Host <-> its own NIC only, never on the wire: "the packet with this PSN was lost" (BTH psn), or,
// with PETH probe_id bit 15 set, "the probe of EV probe_id[7:0] went unanswered". The NIC sends
// the report back to the host with probe_id = the EV it pinned the loss on, | ECHO_TOOK_OUT when
// that report took the EV out of service. With bit 14 set instead, a query: "did this PSN's
// latest transmission go on an EV out of service now?", answered only when it did: the query
// back with probe_id = REPORT_QUERY_FLAG | that EV, | ANSWER_EV_GOOD when the EV itself is
// still GOOD (passed over for being on the connection's bad path): the host reports the loss.
const bit<8> OP_EV_REPORT = 0xDF;
const bit<16> REPORT_PROBE_FLAG = 0x8000;
const bit<16> REPORT_QUERY_FLAG = 0x4000;
const bit<16> ECHO_TOOK_OUT = 0x2000;
const bit<16> ANSWER_EV_GOOD = 0x2000;

// SACK M field: what the responder asks of the EV that carried the acknowledged packet.
const bit<2> SACK_M_NONE = 0;
const bit<2> SACK_M_SKIP_ONCE = 1;     // the packet arrived ECN-marked (CE)
const bit<2> SACK_M_ALWAYS_SKIP = 2;   // the responder thinks the path is persistently bad

// NACK reasons (UET PDS numbering).
const bit<8> NACK_TRIMMED = 0x01;
const bit<8> NACK_TRIMMED_LASTHOP = 0x02;
const bit<8> NACK_PSN_OOR_WINDOW = 0x0B;

// METH (4 bytes): orders write-with-immediate completions.
header meth_t {
    bit<16> rq_msn;
    bit<16> msn;
}

// RETH (16 bytes), in every data packet: any packet is placed on arrival.
header reth_t {
    bit<64> virtual_address;
    bit<32> r_key;
    bit<32> dma_length;
}

// Immediate data (4 bytes), after RETH in the *_IMM opcodes.
header immdt_t {
    bit<32> data;
}

// SETH (28 bytes): the reliability SACK.
header seth_t {
    bit<4>  header_type;
    bit<5>  next_header;
    bit<2>  m;                  // SACK_M_*
    bit<3>  reserved0;
    bit<1>  probe_response;     // PR: this SACK answers a probe
    bit<1>  reserved1;
    bit<16> ack_psn_offset;     // the acknowledged packet's PSN - cack_psn (signed)
    bit<32> entropy;            // the compact EV of the acknowledged packet, reflected
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<8>  port_state;         // the sender's NIC port-state bitmap: bit p set = plane p down
    bit<24> cack_psn;           // cumulative: every PSN up to and including it arrived
    bit<4>  cc_type;
    bit<4>  cc_flags;
    bit<8>  mpr;
    bit<16> sack_offset;        // bitmap base - cack_psn (signed); 1 here: base = cack + 1
    bit<64> sack_bitmap;        // bit i (LSB first) = PSN base + i arrived
}

// CC_STATE (8 bytes) after SETH.
header cc_state_t {
    bit<16> tx_timestamp;
    bit<1>  reserved;
    bit<15> ooo_count;
    bit<1>  restore_window;
    bit<7>  rcv_cwnd_pen;
    bit<24> rcvd_bytes;
}

// NETH (20 bytes): the reliability NACK.
header neth_t {
    bit<4>  header_type;
    bit<5>  next_header;
    bit<7>  reserved0;
    bit<8>  nack_reason;        // NACK_*
    bit<8>  vendor_info;
    bit<32> entropy;            // the compact EV of the NACKed packet, reflected
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<8>  port_state;         // as SETH's: the sender's NIC ports, bit p set = plane p down
    bit<24> nack_psn;
    bit<4>  cc_type;
    bit<4>  cc_flags;
    bit<8>  reserved2;
    bit<16> tx_timestamp;
}

// PETH (16 bytes): a reliability probe; it consumes no PSN.
header peth_t {
    bit<16> probe_id;
    bit<16> spdcid;
    bit<16> dpdcid;
    bit<16> tx_timestamp;
    bit<1>  tsr;
    bit<11> reserved0;
    bit<4>  format_type;
    bit<48> reserved1;
}

#endif
