// State the data plane itself writes (v1model registers; tna/nic_state.p4 is TNA's), shared by the
// transmit and feedback stages. Registers only ever hold what packets teach the NIC: the controller
// sets nothing here (BMv2's P4Runtime server refuses register writes); what it decides is in table
// entries.
#ifndef P4SRC_NIC_V1MODEL_STATE_P4
#define P4SRC_NIC_V1MODEL_STATE_P4

#include "nic_arch.p4"
#include "../nic_types.p4"

// EV_GOOD / EV_SKIP / EV_ASSUMED_BAD per (connection, EV): index conn * EV_SLOTS + EV. A
// connection's EVs are numbered 0..255: ev_count active ones (EV e starts in slot e), then the
// backups; EV e is in plane e mod planes.
@name(".ev_state") register<bit<2>>(EV_CELLS) ev_state;
// Which EV each slot holds (EV ^ slot: 0 is the slot's own EV) and which slot holds each EV
// (slot + 1; 0: its own slot for an active EV, none for a backup; EV_NO_SLOT: none) — a slot
// whose EV goes ASSUMED_BAD or DENIED is refilled from its plane's backups.
@name(".slot_ev") register<bit<8>>(EV_CELLS) slot_ev;
@name(".ev_slot") register<bit<16>>(EV_CELLS) ev_slot;
// Per (connection, plane): the next backup to try.
@name(".backup_cursor") register<bit<8>>(NIC_CONNECTIONS * NIC_PLANES) backup_cursor;
// Rotation cursor per connection: the next packet's first slot.
@name(".tx_cursor") register<bit<32>>(NIC_CONNECTIONS) tx_cursor;
// The EV each PSN left on (conn * PSN_WINDOW + PSN mod PSN_WINDOW), so that a loss the host
// reports by PSN is pinned on the path that lost it.
@name(".psn_ev") register<bit<8>>(PSN_CELLS) psn_ev;
// The peer's port-state bitmap per connection, as its latest SACK or NACK said (SETH/NETH
// port_state: bit p set = the peer's plane-p port is down). 0 (all up) until one arrives; the
// EV choice passes over the slots of planes whose port is down at either end.
@name(".peer_port_state") register<bit<8>>(NIC_CONNECTIONS) peer_port_state;
// Active EVs in EV_ASSUMED_BAD per connection (ev_min_active's floor is checked against it).
@name(".bad_count") register<bit<16>>(NIC_CONNECTIONS) bad_count;
// Probes answered in a row per (connection, EV) in ASSUMED_BAD.
@name(".probe_ok") register<bit<8>>(EV_CELLS) probe_ok;
// Losses pinned on each (connection, EV), reported in EV events.
@name(".ev_drops") register<bit<32>>(EV_CELLS) ev_drops;
// Per (connection, EV): the PSN whose reported loss took the EV out of service, << 8 | PSN_SENT
// (0: none, or something else has spoken against the EV since: another loss pinned on it, an
// unanswered probe, ALWAYS_SKIP). A SACK acknowledging that PSN as having come over that EV
// says the loss was a packet late, not lost: the EV comes back (as a DSACK undoes the response
// to a spurious retransmission).
@name(".retire_psn") register<bit<32>>(EV_CELLS) retire_psn;
// Sender: the PSN after the furthest data packet the host handed over, << 8 | PSN_SENT, per
// connection (0: nothing yet). Feedback acknowledging or NACKing a PSN at or past it is a ghost.
@name(".tx_psn_next") register<bit<32>>(NIC_CONNECTIONS) tx_psn_next;
// Receiver: next expected PSN (relative to the connection's initial PSN) and the 64-bit bitmap
// of PSNs expected + i that arrived (bit 0 is the expected PSN itself).
@name(".rx_expected") register<bit<24>>(NIC_CONNECTIONS) rx_expected;
@name(".rx_bitmap") register<bit<64>>(NIC_CONNECTIONS) rx_bitmap;

// The path each (connection, EV) last left on, as ev_path said when it was used: PATH_SEEN |
// plane << 16 | T1 uSID (0: never used yet). Learnt, so that the EV choice knows a slot's path
// before ev_path is applied (once, to the EV chosen).
@name(".ev_path_seen") register<bit<20>>(EV_CELLS) ev_path_seen;
// Per connection: the path of the latest EV taken out of service for a loss, until an EV on it is
// answered back into service (0: none). On an explicit SRv6 path the EVs that share it share its
// fate: the EV choice passes over the others seen on it as it passes over ASSUMED_BAD ones.
@name(".bad_path") register<bit<20>>(NIC_CONNECTIONS) bad_path;
// Per (connection, EV): the PSN its latest packet carried, << 8 | PSN_SENT (0: none yet). Per
// PSN (conn * PSN_WINDOW + PSN mod PSN_WINDOW): the gap back to the PSN its EV carried just
// before it (nic_psn_gap; 0: none known), which the SACK for it checks (nic_types.p4).
@name(".ev_last_psn") register<bit<32>>(EV_CELLS) ev_last_psn;
@name(".psn_gap") register<bit<16>>(PSN_CELLS) psn_gap;

// When (ingress µs) each (connection, EV) last came back ECN-marked (a SACK with M = SKIP_ONCE;
// 0: never): a loss on an EV marked within NIC_CE_RECENT_US is a queue's doing as likely as a
// drop, and takes that EV out, not its whole path.
@name(".ev_ce_at") register<bit<32>>(EV_CELLS) ev_ce_at;
// When (ingress µs) each (connection, EV) was last told to step aside: an ECN echo or a TRIMMED
// NACK. A SKIP older than the connection's skip_us is spent: the EV's next turn is its own.
@name(".ev_skip_at") register<bit<32>>(EV_CELLS) ev_skip_at;

// Packets queued at this NIC's port of each plane, as the egress saw the latest packet leave it
// (deq_qdepth): the EV choice gives a busier port fewer packets. Written by the egress, read by
// the ingress (v1model's registers are the program's, not a control's). TNA has no such view:
// its ingress cannot read a queue, nor an egress register.
@name(".plane_backlog") register<bit<19>>(NIC_PLANES) plane_backlog;

// Packets and bytes by event (NIC_* indexes in nic_types.p4).
@name(".nic_counter") counter(NIC_COUNTERS, CounterType.packets_and_bytes) nic_counter;

#endif
