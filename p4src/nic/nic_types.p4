// The MRC NIC's constants, sizes, headers and metadata, shared by the v1model program
// (mrc_nic.p4) and the TNA one (tna/mrc_nic.p4).
#ifndef P4SRC_NIC_TYPES_P4
#define P4SRC_NIC_TYPES_P4

#include "../include/defines.p4"
#include "../include/headers.p4"
#include "../include/mrc_headers.p4"

// Ports: the host (the transport's side), one port per plane (plane_port / port_plane tables),
// the CPU port (defines.p4).
const bit<9> NIC_HOST_PORT = 1;

// Sizes. EV state is per (connection, slot): NIC_CONNECTIONS * EV_SLOTS cells.
const bit<32> NIC_CONNECTIONS = 64;
const bit<32> EV_SLOTS = 256;                 // slots per connection (bit<8> slot numbers)
const bit<32> EV_CELLS = 16384;               // NIC_CONNECTIONS * EV_SLOTS
const bit<32> PSN_WINDOW = 1024;              // PSN -> slot memory per connection
const bit<32> PSN_CELLS = 65536;              // NIC_CONNECTIONS * PSN_WINDOW
const bit<32> NIC_PLANES = 8;
const bit<32> NIC_TABLE_SIZE = 4096;

// EV states kept by the data plane (DENIED is a table entry: ev_path's deny_path).
const bit<2> EV_GOOD = 0;
const bit<2> EV_SKIP = 1;
const bit<2> EV_ASSUMED_BAD = 2;

// Bounded EV choice: slots tried per packet before falling back to the first one.
const bit<8> EV_TRIES = 4;
const bit<2> TX_RESUBMITS = 2;                // DENIED slots: passes tried again before a drop
const bit<16> EV_NO_SLOT = 0xFFFF;            // ev_slot: the EV holds no slot

// Sessions the controller creates. v1model: one clone session, to the host port: the host's copy
// of a data packet the NIC received, whose original becomes its SACK. TNA: one mirror session
// per plane (SACK_SESSION_BASE + plane), to that plane's port: the SACK and NACK copies, in the
// control queue (class of service NIC_FEEDBACK_PRIORITY).
const bit<32> NIC_HOST_SESSION = 99;
const bit<32> SACK_SESSION_BASE = 100;

// Feedback's egress queue: SACKs and NACKs are the control class (mrc-srv6.md §4.7, high
// priority), so they leave a plane port before the data queued there.
const bit<3> NIC_FEEDBACK_PRIORITY = 7;

// Sizes of what the NIC builds.
const bit<16> UDP_HEADER_BYTES = 8;
const bit<16> BTH_BYTES = 12;
const bit<16> SACK_EXT_BYTES = 36;            // SETH 28 + CC_STATE 8
const bit<16> NACK_EXT_BYTES = 20;            // NETH
const bit<32> SACK_FRAME_BYTES = 150;         // 14 + 40 + 40 + 8 + 12 + 36
const bit<32> NACK_FRAME_BYTES = 134;         // 14 + 40 + 40 + 8 + 12 + 20
const bit<8> NIC_HOP_LIMIT = 64;
const bit<2> ECN_ECT0 = 2;
const bit<2> ECN_CE = 3;

// Counter indexes (nic_counter, packets_and_bytes).
const bit<32> NIC_TX_DATA = 0;
const bit<32> NIC_TX_FALLBACK = 1;           // every try hit a SKIP/ASSUMED_BAD slot
const bit<32> NIC_TX_DENIED_DROP = 2;         // DENIED slots on every pass
const bit<32> NIC_TX_NO_CONNECTION = 3;
const bit<32> NIC_RX_DATA = 4;
const bit<32> NIC_RX_DUPLICATE = 5;
const bit<32> NIC_RX_OUT_OF_WINDOW = 6;
const bit<32> NIC_RX_TRIMMED = 7;
const bit<32> NIC_RX_SACK = 8;
const bit<32> NIC_RX_NACK = 9;
const bit<32> NIC_RX_UNKNOWN_QP = 10;
const bit<32> NIC_RX_MALFORMED = 11;          // truncated or not MRC: dropped
const bit<32> NIC_SACK_SENT = 12;
const bit<32> NIC_NACK_SENT = 13;
const bit<32> NIC_EV_BAD_SUPPRESSED = 14;     // ev_min_active kept an EV in service
const bit<32> NIC_RX_INJECTED_DROP = 15;      // the loss injector
const bit<32> NIC_TX_PROBE = 16;
const bit<32> NIC_RX_PROBE = 17;              // probes answered (SACK with PR=1)
const bit<32> NIC_HOST_REPORT = 18;           // losses the host reported (but see 32)
const bit<32> NIC_TX_PORT_PASSED = 19;        // first slot's plane unusable (a port down): moved
const bit<32> NIC_PORT_DOWN_DROP = 20;        // not sent: its port (or every port) is down
// EV state changes (the states themselves are in ev_state; these count the moves):
const bit<32> NIC_EV_SKIPPED = 21;            // an EV set to SKIP (ECN echo, TRIMMED NACK)
const bit<32> NIC_EV_ASSUMED_BAD = 22;        // an EV taken out of service (loss, ALWAYS_SKIP)
const bit<32> NIC_EV_RECOVERED = 23;          // an ASSUMED_BAD EV back in service (probes)
// Not sent: no path template or plane port for it (data, a probe; a SACK or NACK: no plane
// port, or a return address outside the SID block). Its port down is NIC_PORT_DOWN_DROP only.
const bit<32> NIC_TX_NO_PATH_DROP = 24;
const bit<32> NIC_TX_PROBE_DENIED_DROP = 25;  // a probe of a DENIED EV, not sent
// The EV choice gave a packet to the next plane's slot: its own plane's port held
// NIC_PORT_BALANCE_MARGIN packets more (v1model only: plane_backlog).
const bit<32> NIC_TX_PORT_BALANCED = 26;
// A GOOD EV last seen on the connection's bad path, passed over (v1model: per look; TNA:
// per pass).
const bit<32> NIC_TX_BAD_PATH_PASSED = 27;
// Feedback refused (not delivered, no EV state touched): a SACK or NACK naming an EV outside
// the connection's EV set, or acknowledging or NACKing a PSN this NIC was never given to send
// (InfiniBand's ghost ACK, TCP's ACK beyond SND.NXT).
const bit<32> NIC_RX_FORGED = 28;
// A packet from a plane port whose UDP checksum (over the inner packet and its payload) fails:
// corrupt on the way, neither acknowledged nor delivered (v1model; TNA: see p4src/README.md).
const bit<32> NIC_RX_CORRUPT = 29;
// Data whose RETH R_Key is not one of its QP's (rx_r_key): neither acknowledged nor delivered,
// as an RDMA NIC checks the key before it acknowledges (the host checks the address range).
const bit<32> NIC_RX_BAD_R_KEY = 30;
// An ASSUMED_BAD EV back in service because the very packet whose reported loss took it out was
// acknowledged after all, having come over that EV (retire_psn): late behind a queue, not lost.
const bit<32> NIC_EV_LOSS_UNDONE = 31;
// A loss the host reported on an EV whose plane's port is down, here or at the peer (as the
// port-state bitmaps say): the port's matter, not the path's, so no EV state is touched and
// the report is not echoed (nothing to probe). Counted instead of NIC_HOST_REPORT.
const bit<32> NIC_REPORT_PORT_DOWN = 32;
// The host's queries (REPORT_QUERY_FLAG) about a PSN in flight: its latest transmission went
// on an EV out of service (ASSUMED_BAD, on the connection's bad path, or in a plane whose port
// is down), answered; or on one in service, not answered.
const bit<32> NIC_QUERY_OUT = 33;
const bit<32> NIC_QUERY_IN_SERVICE = 34;
const bit<32> NIC_COUNTERS = 35;

// tx_psn_next holds the PSN after the furthest one the host handed over << 8, | PSN_SENT (0:
// none yet): shifted so that 32-bit arithmetic wraps with the 24-bit PSN (a Tofino ALU's width).
const bit<32> PSN_SENT = 1;

// A PSN as tx_psn_next and retire_psn hold it: << 8 | PSN_SENT (never 0, which means none).
bit<32> nic_psn_mark(in bit<24> psn) {
    return (bit<32>)psn << 8 | PSN_SENT;
}

// The PSN a SACK acknowledges (the packet that made the peer send it): its cumulative PSN plus
// its signed offset.
bit<24> nic_sack_psn(in bit<24> cack_psn, in bit<16> offset) {
    return cack_psn + (offset[15:15] == 1 ? 8w0xFF ++ offset : 8w0 ++ offset);
}

// Loss by the order of one path (an EV's packets keep their order: one static SRv6 path, one
// queue class per hop). psn_gap holds, per PSN sent, the distance back to the PSN the same EV
// carried just before it (signed, within the PSN window; 0: none known); a SACK for a PSN whose
// predecessor on its EV it reports as not arrived says that predecessor is lost.
// The gap from `psn` back to `before` (ev_last_psn's mark: PSN << 8 | PSN_SENT, 0: none).
bit<16> nic_psn_gap(in bit<24> psn, in bit<32> before) {
    bit<24> d = psn - before[31:8];
    bit<24> far = d + (bit<24>)PSN_WINDOW;   // d in (-window, window): far in (0, 2 window)
    return before != 0 && d != 0 && (bit<32>)far < 2 * PSN_WINDOW ? d[15:0] : 16w0;
}

// The PSN `gap` (nic_psn_gap) back from `psn`.
bit<24> nic_gap_back(in bit<24> psn, in bit<16> gap) {
    return psn - (gap[15:15] == 1 ? 8w0xFF ++ gap : 8w0 ++ gap);
}

// Where a SACK whose bitmap starts right after its cumulative PSN `cack` (sack_offset 1, as
// this NIC sends them) reports PSN `psn`: 1 + its bit in the bitmap (1..64), or 0 when it is at
// or before `cack` (arrived) or past the bitmap (not known).
bit<8> nic_sack_place(in bit<24> psn, in bit<24> cack) {
    bit<24> past = psn - cack;
    return (past & 0x800000) == 0 && past != 0 && past <= 64 ? past[7:0] : 8w0;
}

// The note a SACK carries up to the host (both programs): the PSN `back` before the one it
// acknowledges went on the same EV just before it (0: none known) and is not arrived by the
// SACK's own account (`placed`: its bit is in the bitmap, `arrived`: that bit). Only for a plain
// SACK (no probe's answer, no ALWAYS_SKIP) whose bitmap starts right after its cumulative PSN,
// and not for a connection whose floor is its whole EV set (oblivious spraying keeps no path's
// order).
bool nic_overtaken(in seth_t seth, in bit<16> back, in bool placed, in bool arrived,
                   in bit<8> ev_min_active, in bit<8> ev_mask) {
    return back != 0 && placed && !arrived && seth.sack_offset == 1
           && seth.probe_response == 0 && seth.m != SACK_M_ALWAYS_SKIP
           && ev_min_active <= ev_mask;
}

// Whether feedback is a ghost: it names PSN `named` at or past the mark `sent` (tx_psn_next:
// the PSN after the furthest one handed over, << 8 | PSN_SENT), or comes before any data at all
// and is not a probe's `answer` (which names the PSN before the first: nothing).
bool nic_ghost_feedback(in bit<32> sent, in bit<24> named, in bool answer) {
    return sent == 0 ? !answer : ((named - sent[31:8]) & 0x800000) == 0;
}

// An IPv6 header (the outer or the host's) whose version is not 6: the EtherType or next
// header said IPv6, the header itself does not (a version-4 header is not read as IPv6).
#define NIC_NOT_IPV6(h) \
    ((h.outer_ipv6.isValid() && h.outer_ipv6.version != 6) || \
     (h.ipv6.isValid() && h.ipv6.version != 6))

// The @field_list ids.
#define FL_NIC_RESUBMIT 1

struct nic_headers_t {
    ethernet_t  ethernet;
    ipv6_t      outer_ipv6;    // the SRv6 carrier (plane side only)
    ipv6_t      ipv6;          // the host's IPv6 header (the inner one on the wire)
    udp_t       udp;
    bth_t       bth;
    meth_t      meth;
    reth_t      reth;
    immdt_t     immdt;
    seth_t      seth;
    cc_state_t  cc_state;
    neth_t      neth;
    peth_t      peth;
}

// An EV event for the controller (OCP MRC's EV event): sent on GOOD <-> ASSUMED_BAD.
struct ev_event_t {
    bit<16> conn;
    bit<16> profile;
    bit<8>  ev;
    bit<2>  state;
    bit<32> drops;
}

struct nic_metadata_t {
    bool        from_host;
    bool        malformed;
    // the connection (sender side: tx_connection / qp_connection)
    bit<16>     conn;
    bit<16>     profile;
    bit<8>      ev_mask;
    bit<8>      planes;
    bit<8>      ev_min_active;
    bit<8>      probe_successes;
    bit<8>      backups;         // backups per plane: 0 or a power of two
    bit<8>      hand_off;        // slots on to the one a passed-over EV's turn goes to
    bit<8>      rotation;        // the slot the connection's rotation starts at
    bit<32>     skip_us;         // how long a SKIP holds for its EV's next turn
    bit<16>     dst_row;
    bit<16>     dst_ua;
    // EV choice
    bit<8>      slot;
    bit<8>      ev;
    bit<3>      plane;           // feedback: the plane it leaves on
    bit<16>     t1_usid;
    bool        slot_chosen;
    bool        denied;
    bool        fallback;
    bool        no_port;         // every one of this NIC's ports is down: nothing to send on
    @field_list(FL_NIC_RESUBMIT)
    bit<2>      resubmits;
    // This NIC's own ports (local_port_state): bit p set = plane p's port is down (feedback's
    // SETH/NETH port_state).
    bit<8>      local_down;
    // the plane side
    bit<3>      rx_plane;
    bool        plane_port;
    bit<16>     rx_conn;
    bit<24>     rx_initial_psn;
    bit<24>     peer_qp;
    // the path stage's answer (a data packet's path, or the path feedback takes back; TNA
    // carries what its egress needs of it in the feedback mirror header)
    bool        need_path;
    bool        reflect;         // feedback: the path is the arriving packet's return address
    ipv6_addr_t return_addr;
    bool        path_via_t1;
    ipv6_addr_t path_carrier;
    ipv6_addr_t path_src;
    mac_addr_t  path_smac;
    mac_addr_t  path_dmac;
    bit<9>      path_port;
    bool        path_found;
    bit<24>     fb_qp;
    bit<24>     fb_cack;
    bit<64>     fb_bitmap;
    bit<16>     fb_ack_offset;
    bit<2>      fb_m;
    bit<32>     fb_entropy;
    bit<6>      fb_dscp;
    bit<1>      fb_pr;           // the SACK answers a probe
    bool        host_report;     // a loss the host reports (OP_EV_REPORT)
    bool        host_query;      // ... or a query about a PSN's EV (REPORT_QUERY_FLAG)
    bool        query_out;       // TNA: the query's answer (its EV is out of service)
    bool        query_good;      // TNA: ... only for being on the bad path (ANSWER_EV_GOOD)
    bool        report_took_out; // the report took its EV out of service (the echo says so)
    bool        report_port_down;   // ... on an EV whose plane's port is down (either end)
    bit<32>     now_us;          // the ingress timestamp (µs; TNA: 1.024 µs) for ev_ce_at
    bit<32>     path_key;        // TNA: a path for ev_path_seen / bad_path (PATH_SEEN marked)
    bool        host_probe;      // a probe the host asks for (OP_PROBE)
    // what the plane side decided
    bool        rx_deliver;      // decapsulate, to the host port
    bool        rx_nack;         // turn this packet into a NACK (reason below)
    bool        rx_sack;         // answer with a SACK (and deliver, with rx_deliver)
    bit<8>      nack_reason;
    bit<64>     rx_bits;         // the trailing-ones table's key
    bit<6>      dscp_trimmable;
    bit<6>      dscp_retx;
    bit<6>      dscp_control;
    bit<6>      dscp_trimmed;
    bit<6>      dscp_trimmed_lasthop;
    bit<8>      trailing_ones;
#ifdef NIC_ARCH_TNA
    // TNA only (tna/nic_arch.p4 defines NIC_ARCH_TNA and these types): a packet passes the
    // ingress up to twice (a resubmit), counts one nic_counter event per pass, and its SACK or
    // NACK is a mirrored copy that the egress builds.
    nic_resub_h     resub;       // the resubmit header: read in pass 2, filled in pass 1
    nic_fb_mirror_h fb_mirror;   // the SACK/NACK copy's mirror header
    bit<4>          pass_kind;   // RESUB_NONE on the first pass, else what pass 1 asked for
    bool            drop;        // drop the packet (drop_ctl) at the end of the ingress
    bool            counted;     // count `event` in nic_counter (once per pass)
    bit<32>         event;
    bool            resubmit;    // resubmit (meta.resub says why)
    bit<10>         mirror_session;
    bool            digest;      // send the EV event below
    bit<2>          digest_state;
    bit<32>         digest_drops;
    bit<8>          ev_from;     // ev_state's move (tna/nic_state.p4, NIC_EV_STATE_MOVE)
    bit<8>          ev_to;
    // The parser's checksum of feedback and probes (data's payload is past its reach) without
    // the pseudo-header's next header: 0xFFEE when it holds (tna/nic_parser.p4).
    bit<16>         fb_csum;
    bit<16>         udp_residual;   // from the host: its UDP checksum less the source port
    bit<32>         psn_next;       // tx_psn_next's new value (HostTx)
#endif
}

#endif
