// The MRC SmartNIC, TNA (Tofino 1) variant of ../mrc_nic.p4, fabric-tna style: the same
// control-plane API (every table, action, parameter, counter, register and digest name; see
// p4src/README.md), so the controller and the PTF suite do not care which one runs. Shared with
// v1model: ../nic_types.p4, ../path.p4 (path stage, SACK/NACK headers), ../settings.p4 and
// the table fragments ../tx_tables.p4, ../rx_tables.p4, ../loss_injector_table.p4; TNA's own
// (this folder): the parsers, the registers and every access to them, mirroring, resubmit,
// digest, random, 32-bit address arithmetic, the port-state step (port_state.p4: tables where
// v1model's ../v1model/port_state.p4 shifts).
//
// State on Tofino. A packet reaches each Register through at most one RegisterAction per pass
// of the ingress, and the NIC's v1model code reads and writes several registers more than once
// per pass (the EV choice looks at up to four slots; a move to ASSUMED_BAD reads ev_state and
// bad_count and writes both; the receive window reads and writes the cumulative point, whose
// move depends on the bitmap, whose update depends on the point). Every register lives in the
// ingress; a packet takes one pass, or two (one resubmit, as Tofino allows), and the first pass
// says in the resubmit header (tna/nic_arch.p4, RESUB_*) what the second does. Which pass
// reaches which register (each at most once per pass; mutually exclusive code otherwise):
//
//   data from the host, pass 1    peer_port_state (read), tx_cursor (+1), slot_ev (the first
//                                 slot, after the port-state move), ev_state (SKIP -> GOOD),
//                                 ev_skip_at (read: that SKIP spent?), ev_path_seen +
//                                 bad_path (read: the EV on the bad path?),
//                                 ev_slot (a DENIED mark, or the ASSUMED_BAD EV leaving),
//                                 psn_ev, ev_last_psn (swap), psn_gap (write, when sent
//                                 in this pass; so in each pass 2 below)
//     pass 2: TX_FIX              tx_cursor (+ the move pass 1 could not add), psn_ev
//             TX_TRY              tx_cursor (+move), slot_ev + ev_state + ev_skip_at +
//                                 ev_path_seen + bad_path (the next slot tried), psn_ev
//             TX_REFILL           tx_cursor (+move), backup_cursor, ev_state (the backup is
//                                 GOOD?), ev_slot (the backup takes the slot), slot_ev (the
//                                 slot's new EV), psn_ev
//             TX_RECHOOSE         peer_port_state, tx_cursor (+move +1), slot_ev, ev_state,
//                                 ev_skip_at, psn_ev (the choice v1model's resubmit makes)
//   loss the host reports, p. 1   psn_ev (read), peer_port_state (read: the EV's plane down
//                                 at either end? then nothing more), ev_drops (+1), probe_ok
//                                 (0), ev_state (read), retire_psn (0)
//     pass 2: HOST_MARK           bad_count (+1 unless the ev_min_active floor), ev_state (BAD),
//                                 ev_path_seen + ev_ce_at (read), bad_path (its path, if set),
//                                 retire_psn (the reported PSN; a probe's: 0)
//   SACK/NACK received, pass 1    peer_port_state (write), ev_path_seen (the path it names),
//                                 ev_ce_at (an ECN echo), ev_skip_at (an ECN echo or a
//                                 TRIMMED NACK), retire_psn (a SACK: its PSN the one
//                                 reported lost? ALWAYS_SKIP: 0), and one of: ev_state (GOOD ->
//                                 SKIP); probe_ok, ev_state (BAD -> GOOD/SKIP), bad_count (-1),
//                                 ev_drops, bad_path (a probe answered; without probe_ok: the
//                                 lost PSN arrived late); ev_drops, probe_ok, ev_state (read)
//                                 (ALWAYS_SKIP); psn_gap (read: the note to the host)
//     pass 2: FB_MARK             bad_count, ev_state (as HOST_MARK); FB_COUNT: psn_gap (read)
//   data received, pass 1         rx_expected (+1 if it is the PSN expected), rx_bitmap (this
//                                 PSN's bit in its half set to its lap's mark, or the lo half
//                                 read: a duplicate behind the window)
//     pass 2: RX_DATA             rx_bitmap (the other half, read), rx_expected (+ the PSNs
//                                 after it that had arrived, or read): the SACK's window
//   probe received, pass 1        rx_expected (read), rx_bitmap (the lo half, read)
//     pass 2: RX_PROBE            rx_bitmap (the hi half, read), rx_expected (read)
//
// Why the result is v1model's, for what the tests check (ptf_tests/nic runs on both):
// - The receive window is the same state in another form: rx_bitmap holds bit (PSN mod 64)
//   instead of bit (PSN - expected), so arriving data changes one bit and never shifts the
//   cell (a stateful ALU cannot shift); the bit holds the PSN's lap mark (1 - (PSN / 64) mod
//   2), so that the point moving on clears nothing (the next PSN of a slot has the other
//   mark). A stateful ALU returns 32 bits: pass 1 gets one half of the ring (the arriving
//   PSN's, as it marks it) and passes it on in the resubmit header, pass 2 reads the other.
//   The PSN expected moves on by one in pass 1; in pass 2 the whole ring, rotated to it and
//   compared with the lap marks, is v1model's bitmap, whose trailing ones (rx_trailing_ones,
//   as in v1model) the point moves past; the SACK reports the bitmap shifted as far: exactly
//   v1model's cumulative point and bitmap.
// - The EV choice takes the cursor and looks at the first slot (after the port-state move) in
//   pass 1, as v1model; a slot whose EV is not GOOD (or is on the bad path) is tried again in
//   pass 2 on the next slot v1model would try (its plane's next slot), then the first slot
//   is used anyway (v1model tries four slots, then the first).
//   The bad path's paths are learnt from the feedback's return address (v1model: from ev_path
//   when the EV is sent): the same T1 uSID; for two NICs on one T0, the T0's. A
//   DENIED EV: the packet chooses again in pass 2 with the cursor moved on, as v1model's
//   resubmit does; its slot takes a backup the next time the rotation meets it (v1model: at
//   once), which is the same sequence of EVs on the wire (nic_spray's DeniedEvTest).
// - A slot whose EV went ASSUMED_BAD takes a backup when the rotation next reaches it, and the
//   packet goes on the backup: the same EVs on the wire as v1model's refill at the time the EV
//   went bad (nic_feedback's AlwaysSkipTest). The move to ASSUMED_BAD itself, its floor, its EV
//   event and its counts are v1model's, over two passes.
// - Counters: a TNA Counter is reached once per packet and pass, so each pass counts one event
//   (meta.event, counted at the end of the ingress): the two events v1model counts for a packet
//   (data + SACK sent, trimmed + NACK sent, SACK received + EV moved, report + EV moved, port
//   passed + data sent) are counted in its two passes. A data packet that falls back counts
//   NIC_TX_FALLBACK instead of NIC_TX_DATA (v1model: both), and, with no path, only
//   NIC_TX_NO_PATH_DROP (v1model: NIC_TX_FALLBACK too).
// - Feedback: a SACK or NACK is a mirrored copy of the packet it answers (session 100 + plane,
//   created with packet_length_bytes = FB_SESSION_BYTES, which cuts the payload after RETH as
//   v1model's truncate() does); the egress builds it with the shared path.p4 from the mirror
//   header. Everything else bypasses the egress.
// Known differences (not what the tests check; see p4src/README.md "TNA"): v1model's third and
// fourth tries, its second refill candidate and second resubmit are not made; a refill with no
// backup left sends on the ASSUMED_BAD EV (v1model: the next slot); psn_ev is written when the
// EV is chosen (v1model: once the path is found too); two packets of one connection between
// the two passes of one another may see state half updated.
//
// Tofino 1 (bf-p4c --arch tna). What a match-action unit cannot compute is done by const-entry
// tables, hidden from the control plane (@hidden; each says why it exists): a shift by a
// run-time amount (the port-state step, tna/port_state.p4; a local port's state,
// plane_port_down; the ring's bit, rotation and shift, tna/plane_rx.p4) and a product that is
// not by a power of two (a backup's offset, tx_backup_row). Every RegisterAction fits one
// stateful ALU as softswitch models it (softswitch/frontend/tofino_salu.py): a 32-bit result,
// one operation per assignment, at most two comparisons, at most four RegisterActions and two
// PHV operands per register (so ev_state has one RegisterAction per side, NIC_EV_STATE_MOVE,
// and rx_expected holds its PSN << 8: 24-bit arithmetic in a 32-bit ALU wraps at 32 bits).
// softswitch also checks the register, counter, table, extern-place and resubmit rules.
// Stages: softswitch's lower bound from the dependency chains (frontend/tofino_stages.py,
// printed by `softswitch compile --arch tna`) is 8 of Tofino 1's 12 in the ingress, 1 in the
// egress. Written for it: PlaneRx tests the second-pass kinds first (they do not wait for the
// loss injector), the SACK/NACK's return path is set where its pass starts (not after the
// answer), the path stage runs for every packet (its lookups wait only for the plane), the
// last drops and the mirror write drop_ctl / mirror_type themselves, and each rotation or shift
// of the ring is one table. Not checked here (no Tofino compiler is available): table
// placement itself (the bound is a bound), PHV and instruction-memory allocation, the 49-byte
// mirror header, the constant rotations and funnel shifts of 64- and 128-bit fields as ALU
// instructions, and registers declared at the top level.
#include <core.p4>
#include <tna.p4>

#include "nic_arch.p4"
#include "../nic_types.p4"
#include "nic_state.p4"
#include "nic_parser.p4"
#include "host_tx.p4"
#include "../path.p4"
#include "../settings.p4"
#include "plane_rx.p4"
#include "ev_state_change.p4"

// The NIC reads metadata it has not written (flags start false, as on v1model): bf-p4c zeroes
// metadata only when asked.
@pa_auto_init_metadata
control NicIngress(inout nic_headers_t hdr, inout nic_metadata_t meta,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HostTx() host_tx;
    HostTxEncap() host_tx_encap;
    PlaneRx() plane_rx;
    PathStage() path_stage;
    NicSettings() settings;

    // Packets and bytes by event (NIC_* indexes in nic_types.p4), one event per pass.
    @name(".nic_counter")
    Counter<bit<32>, bit<32>>(NIC_COUNTERS, CounterType_t.PACKETS_AND_BYTES) nic_counter;

    // Why: is this NIC's own port of meta.plane down (v1model: (local_down >> plane) & 1, a
    // shift by a run-time amount)? A hit says so: entry p matches local_down bit p set.
    // Fixed: const entries, hidden from the control plane.
    @hidden
    table plane_port_down {
        key = {
            meta.plane      : exact;
            meta.local_down : ternary;
        }
        actions = { NoAction; }
        const entries = {
            (0, 8w0x01 &&& 8w0x01) : NoAction();
            (1, 8w0x02 &&& 8w0x02) : NoAction();
            (2, 8w0x04 &&& 8w0x04) : NoAction();
            (3, 8w0x08 &&& 8w0x08) : NoAction();
            (4, 8w0x10 &&& 8w0x10) : NoAction();
            (5, 8w0x20 &&& 8w0x20) : NoAction();
            (6, 8w0x40 &&& 8w0x40) : NoAction();
            (7, 8w0x80 &&& 8w0x80) : NoAction();
        }
    }

    action drop_malformed() {
        NIC_DROP();
        NIC_COUNT(NIC_RX_MALFORMED);
    }

    // The SACK or NACK: a copy of this packet, mirrored to its plane's session, that the egress
    // turns into the feedback (what it needs beyond the copy is in the mirror header).
    @hidden
    action feedback_copy(bit<8> kind) {
        ig_dprsr_md.mirror_type = NIC_MIRROR_FEEDBACK;
        meta.mirror_session = (bit<10>)(SACK_SESSION_BASE + (bit<32>)meta.rx_plane);
        meta.fb_mirror.setValid();
        meta.fb_mirror.kind = kind;
        meta.fb_mirror.local_down = meta.local_down;
        meta.fb_mirror.fb_dscp = meta.fb_dscp;
        meta.fb_mirror.fb_m = meta.fb_m;
        meta.fb_mirror.fb_pr = meta.fb_pr;
        meta.fb_mirror.pad = 0;
        meta.fb_mirror.fb_qp = meta.fb_qp;
        meta.fb_mirror.fb_cack = meta.fb_cack;
        meta.fb_mirror.fb_ack_offset = meta.fb_ack_offset;
        meta.fb_mirror.nack_reason = meta.nack_reason;
        meta.fb_mirror.fb_bitmap = meta.fb_bitmap;
        meta.fb_mirror.path_smac = meta.path_smac;
        meta.fb_mirror.path_dmac = meta.path_dmac;
        meta.fb_mirror.path_src = meta.path_src;
    }

    apply {
        meta.pass_kind = meta.resub.isValid() ? meta.resub.kind : RESUB_NONE;
        meta.now_us = (bit<32>)(ig_intr_md.ingress_mac_tstamp >> 10);
        settings.apply(meta);
        meta.fb_dscp = meta.dscp_control;   // feedback's DSCP, carried to the egress for SACKs
        if (ig_prsr_md.parser_err != 0 || NIC_NOT_IPV6(hdr)) {
            drop_malformed();
        } else if (meta.from_host) {
            if (!hdr.ipv6.isValid() || !hdr.bth.isValid() ||
                    !(hdr.meth.isValid() || hdr.peth.isValid())) {
                drop_malformed();   // the host sends MRC writes, probes and reports only
            } else {
                host_tx.apply(hdr, meta);
                if (meta.malformed) {
                    drop_malformed();   // a probe or report naming an EV the connection lacks
                } else if (meta.host_query) {
                    // Answered only when its EV is out of service (counted by HostTx).
                    if (meta.query_out) {
                        hdr.peth.probe_id = REPORT_QUERY_FLAG | (bit<16>)meta.ev;
                        if (meta.query_good) {
                            hdr.peth.probe_id = hdr.peth.probe_id | ANSWER_EV_GOOD;
                        }
                        ig_tm_md.ucast_egress_port = NIC_HOST_PORT;
                    } else {
                        NIC_DROP();
                    }
                } else if (meta.host_report && meta.report_port_down) {
                    NIC_DROP();   // not the EV's loss: nothing to probe (counted by HostTx)
                } else if (meta.host_report) {
                    // Back to the host, naming the EV (the host knows PSNs, not EVs), from the
                    // pass that ends it, and whether it took the EV out of service.
                    if (!meta.resubmit) {
                        hdr.peth.probe_id = (bit<16>)meta.ev;
                        if (meta.report_took_out) {
                            hdr.peth.probe_id = hdr.peth.probe_id | ECHO_TOOK_OUT;
                        }
                        ig_tm_md.ucast_egress_port = NIC_HOST_PORT;
                    }
                } else if (meta.no_port) {
                    NIC_DROP();   // every port of this NIC is down
                    NIC_COUNT(NIC_PORT_DOWN_DROP);
                } else if (meta.denied && meta.host_probe) {
                    NIC_DROP();   // a DENIED slot is not probed
                    NIC_COUNT(NIC_TX_PROBE_DENIED_DROP);
                } else if (meta.denied) {
                    NIC_DROP();   // DENIED in the last pass it may take
                    NIC_COUNT(NIC_TX_DENIED_DROP);
                } else if (meta.slot_chosen) {
                    meta.need_path = true;
                }
            }
        } else {
            plane_rx.apply(hdr, meta, ig_intr_md);
            if (meta.malformed) {
                drop_malformed();
            }
        }
        // The path stage runs for every packet (its answer is used when meta.need_path), so
        // that its lookups wait only for the plane, not for the decisions that set need_path
        // (Tofino's stages: see the top of this file).
        path_stage.apply(meta);
        // This NIC's own port of that plane is down: nothing leaves on it. Or no template or
        // plane port (feedback: or a return address outside the SID block): counted apart.
        bool port_down = plane_port_down.apply().hit;
        if (meta.need_path && port_down) {
            NIC_COUNT(NIC_PORT_DOWN_DROP);
        } else if (meta.need_path && !meta.path_found) {
            NIC_COUNT(NIC_TX_NO_PATH_DROP);
        }
        bool to_host = meta.rx_deliver && !meta.rx_nack;
        // The drops below write drop_ctl themselves: a last `if (meta.drop)` would take a stage.
        if (meta.need_path && (!meta.path_found || port_down)) {
            if (!to_host) {
                ig_dprsr_md.drop_ctl = 1;   // no template or plane port: nowhere to go
            }
        } else if (meta.from_host && meta.need_path) {
            host_tx_encap.apply(hdr, meta);
            ig_tm_md.ucast_egress_port = meta.path_port;
        } else if (meta.rx_nack) {
            feedback_copy(FB_MIRROR_NACK);
            NIC_COUNT(NIC_NACK_SENT);
        }
        if (meta.rx_sack && !meta.rx_nack && meta.path_found && !port_down) {
            feedback_copy(FB_MIRROR_SACK);
            NIC_COUNT(NIC_SACK_SENT);
        }
        if (to_host) {
            hdr.outer_ipv6.setInvalid();
            ig_tm_md.ucast_egress_port = NIC_HOST_PORT;
        } else if (!meta.from_host && !meta.resubmit) {
            // nothing for the host (a duplicate, an unknown QP; a NACK's original)
            ig_dprsr_md.drop_ctl = 1;
        }
        ig_tm_md.bypass_egress = 1;   // only the SACK/NACK copies need the egress
        if (meta.resubmit) {
            ig_dprsr_md.resubmit_type = NIC_RESUBMIT;
        }
        if (meta.digest) {
            ig_dprsr_md.digest_type = NIC_DIGEST_EV_EVENT;
        }
        if (meta.drop) {
            ig_dprsr_md.drop_ctl = 1;
        }
        if (meta.counted) {
            nic_counter.count(meta.event);
        }
    }
}

// A SACK or NACK copy becomes the feedback: the mirror header's fields, the copy's outer source
// (the return address) and flow label (the EV reflected), then the shared SACK/NACK headers.
control NicEgress(inout nic_headers_t hdr, inout nic_metadata_t meta) {
    SackHeaders() sack_headers;
    NackHeaders() nack_headers;

    apply {
        meta.local_down = meta.fb_mirror.local_down;
        meta.fb_dscp = meta.fb_mirror.fb_dscp;
        meta.fb_m = meta.fb_mirror.fb_m;
        meta.fb_pr = meta.fb_mirror.fb_pr;
        meta.fb_qp = meta.fb_mirror.fb_qp;
        meta.fb_cack = meta.fb_mirror.fb_cack;
        meta.fb_ack_offset = meta.fb_mirror.fb_ack_offset;
        meta.nack_reason = meta.fb_mirror.nack_reason;
        meta.fb_bitmap = meta.fb_mirror.fb_bitmap;
        meta.path_smac = meta.fb_mirror.path_smac;
        meta.path_dmac = meta.fb_mirror.path_dmac;
        meta.path_src = meta.fb_mirror.path_src;
        meta.path_carrier = hdr.outer_ipv6.src_addr;
        meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
        hdr.peth.setInvalid();   // a probe's SACK ends after CC_STATE
        if (meta.fb_mirror.kind == FB_MIRROR_SACK) {
            sack_headers.apply(hdr, meta);
        } else {
            nack_headers.apply(hdr, meta);
        }
    }
}

Pipeline(NicIngressParser(), NicIngress(), NicIngressDeparser(), NicEgressParser(), NicEgress(),
         NicEgressDeparser()) pipe;

Switch(pipe) main;
