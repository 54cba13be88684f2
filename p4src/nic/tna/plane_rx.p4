// The plane side (TNA; v1model/plane_rx.p4 is v1model's): what arrives from the fabric, with the
// same tables (rx_tables.p4) and the same decisions as v1model's. Each packet that v1model counts
// twice, or whose state v1model reads and writes more than once, takes two ingress passes: the
// first classifies it and changes the state it can, the second (resubmitted, meta.pass_kind)
// finishes: the SACK or NACK (a mirrored copy the egress builds), the EV's move to ASSUMED_BAD,
// the second count. tna/mrc_nic.p4 has the whole design.
#ifndef P4SRC_NIC_TNA_PLANE_RX_P4
#define P4SRC_NIC_TNA_PLANE_RX_P4

#include "nic_state.p4"
#include "ev_state_change.p4"
#include "loss_injector.p4"

// The receive window's fixed-amount steps (Tofino shifts by constants only): rotate the ring
// right by N bits (meta.rx_bits[i] = ring[i + N mod 64]) and give `lap` the window's bits in the
// expected PSN's lap (~0 >> N); shift the window right by N (the cumulative point moved N on).
#define RX_RING_TURN(N) \
    @hidden action ring_turn_##N() { \
        meta.rx_bits = meta.rx_bits[(N) - 1:0] ++ meta.rx_bits[63:(N)]; \
        lap = 64w0xFFFFFFFFFFFFFFFF >> (N); \
    }
#define RX_WINDOW_SHIFT(N) \
    @hidden action window_shift_##N() { \
        meta.rx_bits = meta.rx_bits >> (N); \
    }

// A SACK for the host: the PSN its EV carried just before the one it acknowledges, not arrived
// by the SACK's own account, is lost; the host is told in spdcid (v1model/plane_rx.p4 has why
// and when not). Set in every pass that may deliver a SACK (a resubmit parses the packet
// again); on a probe's answer and ALWAYS_SKIP, 0.
#define SACK_LOSS_NOTE()                                                                    \
    {                                                                                       \
        bit<24> acked = nic_sack_psn(hdr.seth.cack_psn, hdr.seth.ack_psn_offset);           \
        bit<16> back = gap_read.execute((bit<32>)meta.conn * PSN_WINDOW                     \
                                        + (bit<32>)acked[9:0]);                             \
        place = nic_sack_place(nic_gap_back(acked, back), hdr.seth.cack_psn);               \
        sack_bit_at.apply();                                                                \
        hdr.seth.spdcid = 0;                                                                \
        if (nic_overtaken(hdr.seth, back, place_bit != 0,                                   \
                          (hdr.seth.sack_bitmap & place_bit) != 0,                          \
                          meta.ev_min_active, meta.ev_mask)) {                              \
            hdr.seth.spdcid = back;                                                         \
        }                                                                                   \
    }

control PlaneRx(inout nic_headers_t hdr, inout nic_metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md) {
    LossInjector() loss_injector_stage;
    EvMarkBadBegin() mark_bad;
    EvMarkBadEnd() mark_bad_end;
    EvMarkBadDone() mark_bad_done;
    EvProbeAnswered() probe_answered;
    EvProbeRecovered() probe_recovered;
#include "../rx_tables.p4"
#include "ev_set.p4"

    bit<32> cell;
    bit<8>  port_state;       // the peer's port-state bitmap in its SACK or NACK
    bit<24> rx_psn;           // the arriving PSN, relative to the connection's initial PSN
    bit<32> rx_arg;           // rx_expected's operand: that PSN, or the catch-up, << 8
    bit<32> ring_mask;        // the PSN's bit in its half of the ring (0: a read)
    bit<32> ring_keep;        // ~ring_mask
    bit<8>  turn;             // the ring's rotation: expected mod 64
    bit<64> lap;              // the window's bits (after the rotation) in the expected PSN's lap
    bit<32> retire_arg;       // a SACK's PSN << 8 | PSN_SENT (retire_match)
    bit<8>  place;            // where a SACK reports a PSN: 1 + its bitmap bit (nic_sack_place)
    bit<64> place_bit;        // ... as a mask of that bit (sack_bit_at)

    RegisterAction<bit<32>, bit<32>, bit<32>>(tx_psn_next) psn_sent_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<8>, bit<32>, bit<8>>(peer_port_state) peer_write = {
        void apply(inout bit<8> value) {
            value = port_state;
        }
    };
    // Every ev_state access of the plane side: SKIP, a read, a move to ASSUMED_BAD, back from
    // probes (meta.ev_from / meta.ev_to).
    NIC_EV_STATE_MOVE(state_move);
    // The cumulative point (<< 8) moves on by one when the PSN it waits for arrives (rv: before);
    // the PSNs after it that had arrived already are passed in the second pass (expected_catch_up,
    // rv: after).
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_advance = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value == rx_arg) {
                value = value + 256;
            }
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(rx_expected) expected_catch_up = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + rx_arg;
            rv = value;
        }
    };
    // The ring, one 32-bit half per pass (a stateful ALU returns 32 bits): an arriving PSN
    // marks its bit (1 with ring_set, 0 with ring_clear: its lap's mark); rv: the half before.
    // ring_set with ring_mask 0 reads a half.
    RegisterAction<rx_ring_t, bit<32>, bit<32>>(rx_bitmap) ring_set_lo = {
        void apply(inout rx_ring_t value, out bit<32> rv) {
            rv = value.lo;
            value.lo = value.lo | ring_mask;
        }
    };
    RegisterAction<rx_ring_t, bit<32>, bit<32>>(rx_bitmap) ring_set_hi = {
        void apply(inout rx_ring_t value, out bit<32> rv) {
            rv = value.hi;
            value.hi = value.hi | ring_mask;
        }
    };
    RegisterAction<rx_ring_t, bit<32>, bit<32>>(rx_bitmap) ring_clear_lo = {
        void apply(inout rx_ring_t value, out bit<32> rv) {
            rv = value.lo;
            value.lo = value.lo & ring_keep;
        }
    };
    RegisterAction<rx_ring_t, bit<32>, bit<32>>(rx_bitmap) ring_clear_hi = {
        void apply(inout rx_ring_t value, out bit<32> rv) {
            rv = value.hi;
            value.hi = value.hi & ring_keep;
        }
    };

    @hidden
    action set_ring_bit(bit<32> mask) {
        ring_mask = mask;
        ring_keep = ~mask;
    }

    // Why: the arriving PSN's bit in its half of the ring, 1 << (PSN mod 32) (v1model shifts by
    // the PSN; Tofino cannot). Fixed: const entries, hidden from the control plane.
    @hidden
    table rx_ring_bit {
        key = { rx_psn[4:0] : exact; }
        actions = { set_ring_bit; }
        default_action = set_ring_bit(0);   // never: every key has an entry
        const entries = {
            0 : set_ring_bit(32w0x00000001);
            1 : set_ring_bit(32w0x00000002);
            2 : set_ring_bit(32w0x00000004);
            3 : set_ring_bit(32w0x00000008);
            4 : set_ring_bit(32w0x00000010);
            5 : set_ring_bit(32w0x00000020);
            6 : set_ring_bit(32w0x00000040);
            7 : set_ring_bit(32w0x00000080);
            8 : set_ring_bit(32w0x00000100);
            9 : set_ring_bit(32w0x00000200);
            10 : set_ring_bit(32w0x00000400);
            11 : set_ring_bit(32w0x00000800);
            12 : set_ring_bit(32w0x00001000);
            13 : set_ring_bit(32w0x00002000);
            14 : set_ring_bit(32w0x00004000);
            15 : set_ring_bit(32w0x00008000);
            16 : set_ring_bit(32w0x00010000);
            17 : set_ring_bit(32w0x00020000);
            18 : set_ring_bit(32w0x00040000);
            19 : set_ring_bit(32w0x00080000);
            20 : set_ring_bit(32w0x00100000);
            21 : set_ring_bit(32w0x00200000);
            22 : set_ring_bit(32w0x00400000);
            23 : set_ring_bit(32w0x00800000);
            24 : set_ring_bit(32w0x01000000);
            25 : set_ring_bit(32w0x02000000);
            26 : set_ring_bit(32w0x04000000);
            27 : set_ring_bit(32w0x08000000);
            28 : set_ring_bit(32w0x10000000);
            29 : set_ring_bit(32w0x20000000);
            30 : set_ring_bit(32w0x40000000);
            31 : set_ring_bit(32w0x80000000);
        }
    }

    // The tables' constant steps: rotations of the ring and shifts of the window by 1 .. 63.
    @hidden
    action ring_turn_0() {
        lap = 64w0xFFFFFFFFFFFFFFFF;
    }
    RX_RING_TURN(1) RX_RING_TURN(2) RX_RING_TURN(3) RX_RING_TURN(4) RX_RING_TURN(5)
    RX_RING_TURN(6) RX_RING_TURN(7) RX_RING_TURN(8) RX_RING_TURN(9) RX_RING_TURN(10)
    RX_RING_TURN(11) RX_RING_TURN(12) RX_RING_TURN(13) RX_RING_TURN(14) RX_RING_TURN(15)
    RX_RING_TURN(16) RX_RING_TURN(17) RX_RING_TURN(18) RX_RING_TURN(19) RX_RING_TURN(20)
    RX_RING_TURN(21) RX_RING_TURN(22) RX_RING_TURN(23) RX_RING_TURN(24) RX_RING_TURN(25)
    RX_RING_TURN(26) RX_RING_TURN(27) RX_RING_TURN(28) RX_RING_TURN(29) RX_RING_TURN(30)
    RX_RING_TURN(31) RX_RING_TURN(32) RX_RING_TURN(33) RX_RING_TURN(34) RX_RING_TURN(35)
    RX_RING_TURN(36) RX_RING_TURN(37) RX_RING_TURN(38) RX_RING_TURN(39) RX_RING_TURN(40)
    RX_RING_TURN(41) RX_RING_TURN(42) RX_RING_TURN(43) RX_RING_TURN(44) RX_RING_TURN(45)
    RX_RING_TURN(46) RX_RING_TURN(47) RX_RING_TURN(48) RX_RING_TURN(49) RX_RING_TURN(50)
    RX_RING_TURN(51) RX_RING_TURN(52) RX_RING_TURN(53) RX_RING_TURN(54) RX_RING_TURN(55)
    RX_RING_TURN(56) RX_RING_TURN(57) RX_RING_TURN(58) RX_RING_TURN(59) RX_RING_TURN(60)
    RX_RING_TURN(61) RX_RING_TURN(62) RX_RING_TURN(63)
    @hidden
    action window_as_is() {
    }
    @hidden
    action window_clear() {
        meta.rx_bits = 0;
    }
    RX_WINDOW_SHIFT(1) RX_WINDOW_SHIFT(2) RX_WINDOW_SHIFT(3) RX_WINDOW_SHIFT(4)
    RX_WINDOW_SHIFT(5) RX_WINDOW_SHIFT(6) RX_WINDOW_SHIFT(7) RX_WINDOW_SHIFT(8)
    RX_WINDOW_SHIFT(9) RX_WINDOW_SHIFT(10) RX_WINDOW_SHIFT(11) RX_WINDOW_SHIFT(12)
    RX_WINDOW_SHIFT(13) RX_WINDOW_SHIFT(14) RX_WINDOW_SHIFT(15) RX_WINDOW_SHIFT(16)
    RX_WINDOW_SHIFT(17) RX_WINDOW_SHIFT(18) RX_WINDOW_SHIFT(19) RX_WINDOW_SHIFT(20)
    RX_WINDOW_SHIFT(21) RX_WINDOW_SHIFT(22) RX_WINDOW_SHIFT(23) RX_WINDOW_SHIFT(24)
    RX_WINDOW_SHIFT(25) RX_WINDOW_SHIFT(26) RX_WINDOW_SHIFT(27) RX_WINDOW_SHIFT(28)
    RX_WINDOW_SHIFT(29) RX_WINDOW_SHIFT(30) RX_WINDOW_SHIFT(31) RX_WINDOW_SHIFT(32)
    RX_WINDOW_SHIFT(33) RX_WINDOW_SHIFT(34) RX_WINDOW_SHIFT(35) RX_WINDOW_SHIFT(36)
    RX_WINDOW_SHIFT(37) RX_WINDOW_SHIFT(38) RX_WINDOW_SHIFT(39) RX_WINDOW_SHIFT(40)
    RX_WINDOW_SHIFT(41) RX_WINDOW_SHIFT(42) RX_WINDOW_SHIFT(43) RX_WINDOW_SHIFT(44)
    RX_WINDOW_SHIFT(45) RX_WINDOW_SHIFT(46) RX_WINDOW_SHIFT(47) RX_WINDOW_SHIFT(48)
    RX_WINDOW_SHIFT(49) RX_WINDOW_SHIFT(50) RX_WINDOW_SHIFT(51) RX_WINDOW_SHIFT(52)
    RX_WINDOW_SHIFT(53) RX_WINDOW_SHIFT(54) RX_WINDOW_SHIFT(55) RX_WINDOW_SHIFT(56)
    RX_WINDOW_SHIFT(57) RX_WINDOW_SHIFT(58) RX_WINDOW_SHIFT(59) RX_WINDOW_SHIFT(60)
    RX_WINDOW_SHIFT(61) RX_WINDOW_SHIFT(62) RX_WINDOW_SHIFT(63)

    // Why: the ring rotated to the cumulative point (bit i = PSN expected + i), as v1model keeps
    // its bitmap: a rotation by a run-time amount (turn = expected mod 64), as one of 64
    // constant rotations. Fixed: const entries, hidden from the control plane.
    @hidden
    table rx_ring_turn {
        key = { turn : exact; }
        actions = {
            ring_turn_0; ring_turn_1; ring_turn_2; ring_turn_3; ring_turn_4; ring_turn_5;
            ring_turn_6; ring_turn_7; ring_turn_8; ring_turn_9; ring_turn_10; ring_turn_11;
            ring_turn_12; ring_turn_13; ring_turn_14; ring_turn_15; ring_turn_16; ring_turn_17;
            ring_turn_18; ring_turn_19; ring_turn_20; ring_turn_21; ring_turn_22; ring_turn_23;
            ring_turn_24; ring_turn_25; ring_turn_26; ring_turn_27; ring_turn_28; ring_turn_29;
            ring_turn_30; ring_turn_31; ring_turn_32; ring_turn_33; ring_turn_34; ring_turn_35;
            ring_turn_36; ring_turn_37; ring_turn_38; ring_turn_39; ring_turn_40; ring_turn_41;
            ring_turn_42; ring_turn_43; ring_turn_44; ring_turn_45; ring_turn_46; ring_turn_47;
            ring_turn_48; ring_turn_49; ring_turn_50; ring_turn_51; ring_turn_52; ring_turn_53;
            ring_turn_54; ring_turn_55; ring_turn_56; ring_turn_57; ring_turn_58; ring_turn_59;
            ring_turn_60; ring_turn_61; ring_turn_62; ring_turn_63;
        }
        default_action = ring_turn_0();   // never: every key has an entry
        const entries = {
            0 : ring_turn_0();
            1 : ring_turn_1();
            2 : ring_turn_2();
            3 : ring_turn_3();
            4 : ring_turn_4();
            5 : ring_turn_5();
            6 : ring_turn_6();
            7 : ring_turn_7();
            8 : ring_turn_8();
            9 : ring_turn_9();
            10 : ring_turn_10();
            11 : ring_turn_11();
            12 : ring_turn_12();
            13 : ring_turn_13();
            14 : ring_turn_14();
            15 : ring_turn_15();
            16 : ring_turn_16();
            17 : ring_turn_17();
            18 : ring_turn_18();
            19 : ring_turn_19();
            20 : ring_turn_20();
            21 : ring_turn_21();
            22 : ring_turn_22();
            23 : ring_turn_23();
            24 : ring_turn_24();
            25 : ring_turn_25();
            26 : ring_turn_26();
            27 : ring_turn_27();
            28 : ring_turn_28();
            29 : ring_turn_29();
            30 : ring_turn_30();
            31 : ring_turn_31();
            32 : ring_turn_32();
            33 : ring_turn_33();
            34 : ring_turn_34();
            35 : ring_turn_35();
            36 : ring_turn_36();
            37 : ring_turn_37();
            38 : ring_turn_38();
            39 : ring_turn_39();
            40 : ring_turn_40();
            41 : ring_turn_41();
            42 : ring_turn_42();
            43 : ring_turn_43();
            44 : ring_turn_44();
            45 : ring_turn_45();
            46 : ring_turn_46();
            47 : ring_turn_47();
            48 : ring_turn_48();
            49 : ring_turn_49();
            50 : ring_turn_50();
            51 : ring_turn_51();
            52 : ring_turn_52();
            53 : ring_turn_53();
            54 : ring_turn_54();
            55 : ring_turn_55();
            56 : ring_turn_56();
            57 : ring_turn_57();
            58 : ring_turn_58();
            59 : ring_turn_59();
            60 : ring_turn_60();
            61 : ring_turn_61();
            62 : ring_turn_62();
            63 : ring_turn_63();
        }
    }

    // Why: the window after the cumulative point moved past the trailing ones (v1model's
    // trailing_ones == 64 ? 0 : rx_bits >> trailing_ones), as one of 65 constant shifts.
    // Fixed: const entries, hidden from the control plane.
    @hidden
    table rx_window_shift {
        key = { meta.trailing_ones : exact; }
        actions = {
            window_as_is; window_shift_1; window_shift_2; window_shift_3; window_shift_4;
            window_shift_5; window_shift_6; window_shift_7; window_shift_8; window_shift_9;
            window_shift_10; window_shift_11; window_shift_12; window_shift_13;
            window_shift_14; window_shift_15; window_shift_16; window_shift_17;
            window_shift_18; window_shift_19; window_shift_20; window_shift_21;
            window_shift_22; window_shift_23; window_shift_24; window_shift_25;
            window_shift_26; window_shift_27; window_shift_28; window_shift_29;
            window_shift_30; window_shift_31; window_shift_32; window_shift_33;
            window_shift_34; window_shift_35; window_shift_36; window_shift_37;
            window_shift_38; window_shift_39; window_shift_40; window_shift_41;
            window_shift_42; window_shift_43; window_shift_44; window_shift_45;
            window_shift_46; window_shift_47; window_shift_48; window_shift_49;
            window_shift_50; window_shift_51; window_shift_52; window_shift_53;
            window_shift_54; window_shift_55; window_shift_56; window_shift_57;
            window_shift_58; window_shift_59; window_shift_60; window_shift_61;
            window_shift_62; window_shift_63; window_clear;
        }
        default_action = window_as_is();   // never: every count 0 .. 64 has an entry
        const entries = {
            0 : window_as_is();
            1 : window_shift_1();
            2 : window_shift_2();
            3 : window_shift_3();
            4 : window_shift_4();
            5 : window_shift_5();
            6 : window_shift_6();
            7 : window_shift_7();
            8 : window_shift_8();
            9 : window_shift_9();
            10 : window_shift_10();
            11 : window_shift_11();
            12 : window_shift_12();
            13 : window_shift_13();
            14 : window_shift_14();
            15 : window_shift_15();
            16 : window_shift_16();
            17 : window_shift_17();
            18 : window_shift_18();
            19 : window_shift_19();
            20 : window_shift_20();
            21 : window_shift_21();
            22 : window_shift_22();
            23 : window_shift_23();
            24 : window_shift_24();
            25 : window_shift_25();
            26 : window_shift_26();
            27 : window_shift_27();
            28 : window_shift_28();
            29 : window_shift_29();
            30 : window_shift_30();
            31 : window_shift_31();
            32 : window_shift_32();
            33 : window_shift_33();
            34 : window_shift_34();
            35 : window_shift_35();
            36 : window_shift_36();
            37 : window_shift_37();
            38 : window_shift_38();
            39 : window_shift_39();
            40 : window_shift_40();
            41 : window_shift_41();
            42 : window_shift_42();
            43 : window_shift_43();
            44 : window_shift_44();
            45 : window_shift_45();
            46 : window_shift_46();
            47 : window_shift_47();
            48 : window_shift_48();
            49 : window_shift_49();
            50 : window_shift_50();
            51 : window_shift_51();
            52 : window_shift_52();
            53 : window_shift_53();
            54 : window_shift_54();
            55 : window_shift_55();
            56 : window_shift_56();
            57 : window_shift_57();
            58 : window_shift_58();
            59 : window_shift_59();
            60 : window_shift_60();
            61 : window_shift_61();
            62 : window_shift_62();
            63 : window_shift_63();
            64 : window_clear();
        }
    }

    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_path_seen) path_learn = {
        void apply(inout bit<32> value) {
            value = meta.path_key;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_ce_at) ce_note = {
        void apply(inout bit<32> value) {
            value = meta.now_us;
        }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(ev_skip_at) skip_note = {
        void apply(inout bit<32> value) {
            value = meta.now_us;
        }
    };
    // A SACK (no probe's answer) acknowledging the PSN whose reported loss took the EV out
    // (retire_arg: that PSN << 8 | PSN_SENT): forgotten, and rv 1 (v1model's EvLateArrival).
    RegisterAction<bit<32>, bit<32>, bit<8>>(retire_psn) retire_match = {
        void apply(inout bit<32> value, out bit<8> rv) {
            rv = 0;
            if (value == retire_arg) {
                value = 0;
                rv = 1;
            }
        }
    };
    // ALWAYS_SKIP speaks against the EV: no late arrival undoes it.
    RegisterAction<bit<32>, bit<32>, bit<32>>(retire_psn) retire_forget = {
        void apply(inout bit<32> value) {
            value = 0;
        }
    };
    // A SACK for a PSN: the gap back to the PSN its EV carried before it (v1model/plane_rx.p4).
    RegisterAction<bit<16>, bit<32>, bit<16>>(psn_gap) gap_read = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };

    @hidden
    action sack_bit(bit<64> mask) {
        place_bit = mask;
    }

    // Why: v1model's bit (place - 1) of the SACK's bitmap (a shift by a run-time amount), as
    // the mask of that bit. Fixed: const entries, hidden from the control plane; 0: no bit.
    @hidden
    table sack_bit_at {
        key = { place : exact; }
        actions = { sack_bit; }
        default_action = sack_bit(0);
        const entries = {
            1 : sack_bit(64w0x1);
            2 : sack_bit(64w0x2);
            3 : sack_bit(64w0x4);
            4 : sack_bit(64w0x8);
            5 : sack_bit(64w0x10);
            6 : sack_bit(64w0x20);
            7 : sack_bit(64w0x40);
            8 : sack_bit(64w0x80);
            9 : sack_bit(64w0x100);
            10 : sack_bit(64w0x200);
            11 : sack_bit(64w0x400);
            12 : sack_bit(64w0x800);
            13 : sack_bit(64w0x1000);
            14 : sack_bit(64w0x2000);
            15 : sack_bit(64w0x4000);
            16 : sack_bit(64w0x8000);
            17 : sack_bit(64w0x10000);
            18 : sack_bit(64w0x20000);
            19 : sack_bit(64w0x40000);
            20 : sack_bit(64w0x80000);
            21 : sack_bit(64w0x100000);
            22 : sack_bit(64w0x200000);
            23 : sack_bit(64w0x400000);
            24 : sack_bit(64w0x800000);
            25 : sack_bit(64w0x1000000);
            26 : sack_bit(64w0x2000000);
            27 : sack_bit(64w0x4000000);
            28 : sack_bit(64w0x8000000);
            29 : sack_bit(64w0x10000000);
            30 : sack_bit(64w0x20000000);
            31 : sack_bit(64w0x40000000);
            32 : sack_bit(64w0x80000000);
            33 : sack_bit(64w0x100000000);
            34 : sack_bit(64w0x200000000);
            35 : sack_bit(64w0x400000000);
            36 : sack_bit(64w0x800000000);
            37 : sack_bit(64w0x1000000000);
            38 : sack_bit(64w0x2000000000);
            39 : sack_bit(64w0x4000000000);
            40 : sack_bit(64w0x8000000000);
            41 : sack_bit(64w0x10000000000);
            42 : sack_bit(64w0x20000000000);
            43 : sack_bit(64w0x40000000000);
            44 : sack_bit(64w0x80000000000);
            45 : sack_bit(64w0x100000000000);
            46 : sack_bit(64w0x200000000000);
            47 : sack_bit(64w0x400000000000);
            48 : sack_bit(64w0x800000000000);
            49 : sack_bit(64w0x1000000000000);
            50 : sack_bit(64w0x2000000000000);
            51 : sack_bit(64w0x4000000000000);
            52 : sack_bit(64w0x8000000000000);
            53 : sack_bit(64w0x10000000000000);
            54 : sack_bit(64w0x20000000000000);
            55 : sack_bit(64w0x40000000000000);
            56 : sack_bit(64w0x80000000000000);
            57 : sack_bit(64w0x100000000000000);
            58 : sack_bit(64w0x200000000000000);
            59 : sack_bit(64w0x400000000000000);
            60 : sack_bit(64w0x800000000000000);
            61 : sack_bit(64w0x1000000000000000);
            62 : sack_bit(64w0x2000000000000000);
            63 : sack_bit(64w0x4000000000000000);
            64 : sack_bit(64w0x8000000000000000);
        }
    }

    // An EV answered back into service: its path is no longer the connection's bad path.
    RegisterAction<bit<32>, bit<32>, bit<32>>(bad_path) bad_path_clear = {
        void apply(inout bit<32> value) {
            if (value == meta.path_key) {
                value = 0;
            }
        }
    };

    // An EV set to SKIP (ECN echo, TRIMMED NACK) if it was GOOD: ev_state's move (the caller
    // executes it: the state before).
    action to_skip() {
        meta.ev_from = (bit<8>)EV_GOOD;
        meta.ev_to = (bit<8>)EV_SKIP;
    }

    // The receiver's cumulative point and bitmap as a SACK reports them (as v1model's).
    action report_window(bit<24> expected, bit<64> bits, bit<24> psn) {
        meta.fb_cack = expected - 1 + meta.rx_initial_psn;
        meta.fb_bitmap = bits;
        meta.fb_ack_offset = (bit<16>)(psn - (expected - 1));
        meta.rx_sack = true;
    }

    // The SACK or NACK goes back the way the packet came (path.p4's return address), on the
    // plane it came in on: set where the pass that answers starts, not after the answer is
    // made (a stage less on Tofino).
    @hidden
    action reflect_feedback() {
        meta.reflect = true;
        meta.return_addr = hdr.outer_ipv6.src_addr;
        meta.plane = meta.rx_plane;
        meta.need_path = true;
    }

    // The first pass asks for a second: why, and what it needs.
    @hidden
    action again(bit<4> kind, bit<8> count) {
        meta.resubmit = true;
        meta.resub.setValid();
        meta.resub.kind = kind;
        meta.resub.move = 0;
        meta.resub.flag = 0;
        meta.resub.slot = 0;
        meta.resub.ev = meta.ev;
        meta.resub.count = count;
        meta.resub.drops = 0;
    }

    apply {
        port_plane.apply();
        bool known_qp = local_qp.apply().hit;
        bool r_key_ok = rx_r_key.apply().hit;   // (data only: its keys are in the RETH)
        ev_set_span.apply();
        rx_psn = hdr.bth.psn - meta.rx_initial_psn;
        // A second pass first: its packet was well formed and of a known QP in pass 1, and its
        // work waits for nothing pass 1's checks compute (Tofino's stages: tna/mrc_nic.p4).
        if (meta.pass_kind == RESUB_FB_MARK) {
            // Pass 2 of an ALWAYS_SKIP SACK: ASSUMED_BAD unless the floor says no.
            meta.ev = meta.resub.ev;
            cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
            bool allowed;
            mark_bad_end.apply(meta, allowed);
            bit<8> before = state_move.execute(cell);
            mark_bad_done.apply(meta, before, allowed);
            meta.rx_deliver = true;
            hdr.seth.spdcid = 0;   // (ALWAYS_SKIP: no note)
        } else if (meta.pass_kind == RESUB_FB_COUNT) {
            // Pass 2 of feedback that moved an EV: its count, and the host gets the feedback.
            NIC_COUNT((bit<32>)meta.resub.count);
            meta.rx_deliver = true;
            if (hdr.seth.isValid()) {
                SACK_LOSS_NOTE()
            }
        } else if (meta.pass_kind == RESUB_RX_NACK) {
            reflect_feedback();
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            meta.rx_nack = true;
            meta.nack_reason = meta.resub.count;
        } else if (meta.pass_kind == RESUB_RX_DATA || meta.pass_kind == RESUB_RX_PROBE) {
            // Pass 2 of data or a probe: the whole ring (pass 1's half, the other one read now),
            // rotated to the expected PSN pass 1 saw (resub.slot: its low 7 bits), each bit
            // compared with its lap's mark: v1model's bitmap (bit i = PSN expected + i arrived).
            reflect_feedback();
            meta.fb_m = hdr.outer_ipv6.ecn == ECN_CE ? SACK_M_SKIP_ONCE : SACK_M_NONE;
            ring_mask = 0;
            if (meta.resub.move[0:0] == 0) {
                meta.rx_bits = ring_set_hi.execute((bit<32>)meta.conn) ++ meta.resub.drops;
            } else {
                meta.rx_bits = meta.resub.drops ++ ring_set_lo.execute((bit<32>)meta.conn);
            }
            turn = (bit<8>)meta.resub.slot[5:0];
            rx_ring_turn.apply();
            if (meta.resub.slot[6:6] == 1) {
                meta.rx_bits = meta.rx_bits ^ lap;
            } else {
                meta.rx_bits = meta.rx_bits ^ ~lap;
            }
            bit<24> expected;
            if (meta.pass_kind == RESUB_RX_DATA && meta.resub.count == 1) {
                // The expected PSN arrived (pass 1 moved the point on by one): it moves past
                // the PSNs after it that had arrived (the trailing ones), as v1model's.
                rx_trailing_ones.apply();
                rx_arg = (bit<32>)meta.trailing_ones << 8;
                expected = expected_catch_up.execute((bit<32>)meta.conn)[31:8];
                rx_window_shift.apply();
            } else {
                expected = expected_read.execute((bit<32>)meta.conn)[31:8];
            }
            meta.fb_entropy = (bit<32>)hdr.outer_ipv6.flow_label;
            if (meta.pass_kind == RESUB_RX_PROBE) {
                // The SACK (PR=1) of the window as it is.
                report_window(expected, meta.rx_bits, expected - 1);
                meta.fb_pr = 1;
            } else {
                report_window(expected, meta.rx_bits, rx_psn);
                // Duplicates are SACKed (the first SACK may have been lost), not delivered.
                meta.rx_deliver = meta.resub.flag == 0;
            }
        } else {
            // Pass 1.
            bool injected = false;
            if (meta.plane_port) {
                loss_injector_stage.apply(hdr, meta, injected);
            }
            rx_ring_bit.apply();
            if (injected) {
                // dropped on arrival, as a lossy link would
            } else if (!meta.plane_port || !hdr.outer_ipv6.isValid() || !hdr.bth.isValid()) {
                meta.malformed = true;
            } else if ((hdr.seth.isValid() || hdr.neth.isValid() || hdr.peth.isValid())
                       && meta.fb_csum != FB_CSUM_OK) {
                // Corrupt on the way (the parser's sum: feedback and probes, whose every byte
                // it reads; a data packet's payload is past its reach, p4src/README.md).
                NIC_COUNT(NIC_RX_CORRUPT);
            } else if (!known_qp) {
                NIC_COUNT(NIC_RX_UNKNOWN_QP);
            } else if (hdr.seth.isValid() || hdr.neth.isValid()) {
                // Feedback for what this NIC sent: the reflected compact EV names the EV, and the
                // peer's port-state bitmap says which of its planes can still receive. Nothing
                // naming what this NIC never sent is believed (v1model/plane_rx.p4).
                bit<32> entropy = hdr.seth.isValid() ? hdr.seth.entropy : hdr.neth.entropy;
                bit<32> sent = psn_sent_read.execute((bit<32>)meta.conn);
                bool ghost = nic_ghost_feedback(
                    sent, hdr.seth.isValid() ? hdr.seth.cack_psn : hdr.neth.nack_psn,
                    hdr.seth.isValid() && hdr.seth.probe_response == 1);
                if (ghost || (bit<16>)entropy[7:0] >= (bit<16>)meta.ev_mask + 1 + ev_span) {
                    NIC_COUNT(NIC_RX_FORGED);   // not delivered, no EV state touched
                } else {
                    port_state = hdr.seth.isValid() ? hdr.seth.port_state : hdr.neth.port_state;
                    peer_write.execute((bit<32>)meta.conn);
                    meta.ev = entropy[7:0];
                    cell = (bit<32>)meta.conn * EV_SLOTS + (bit<32>)meta.ev;
                    meta.path_key = PATH_SEEN | (bit<32>)meta.rx_plane << 16
                              | (bit<32>)hdr.outer_ipv6.dst_addr[95:80];
                    path_learn.execute(cell);
                    if (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) {
                        ce_note.execute(cell);   // its path queues (the bad path's test)
                    }
                    bool skip = (hdr.seth.isValid() && hdr.seth.m == SACK_M_SKIP_ONCE) ||
                                (hdr.neth.isValid() && hdr.neth.nack_reason == NACK_TRIMMED);
                    if (skip) {
                        skip_note.execute(cell);   // told to step aside now (v1model's note)
                    }
                    bool bad = hdr.seth.isValid() && hdr.seth.m == SACK_M_ALWAYS_SKIP;
                    bool answer = hdr.seth.isValid() && hdr.seth.probe_response == 1;
                    bool late = false;   // it acknowledges the PSN whose loss took the EV out
                    if (hdr.seth.isValid()) {
                        SACK_LOSS_NOTE()
                    }
                    if (bad) {
                        retire_forget.execute(cell);
                    } else if (hdr.seth.isValid() && !answer) {
                        retire_arg = nic_psn_mark(nic_sack_psn(hdr.seth.cack_psn,
                                                               hdr.seth.ack_psn_offset));
                        late = retire_match.execute(cell) == 1;
                    }
                    if (answer || late) {
                        // Back from ASSUMED_BAD: after K answered probes, or at once when the
                        // lost PSN arrives after all (GOOD, or SKIP for an ECN echo; a GOOD EV
                        // is passed over once for the echo, as below).
                        bool reached = true;
                        if (answer) {
                            probe_answered.apply(meta, hdr.seth.m, reached);
                        } else {
                            // ASSUMED_BAD -> GOOD; with an ECN echo -> SKIP, from GOOD too
                            // unless the floor is the whole EV set (v1model: EvLateArrival,
                            // then the SKIP below)
                            meta.ev_from = (bit<8>)EV_ASSUMED_BAD;
                            meta.ev_to = (bit<8>)EV_GOOD;
                            if (hdr.seth.m == SACK_M_SKIP_ONCE) {
                                meta.ev_to = (bit<8>)EV_SKIP;
                                if (meta.ev_min_active <= meta.ev_mask) {
                                    meta.ev_from = EV_FROM_ANY;
                                }
                            }
                        }
                        bit<8> before = state_move.execute(cell);
                        if (reached && before == (bit<8>)EV_ASSUMED_BAD) {
                            probe_recovered.apply(meta);
                            bad_path_clear.execute((bit<32>)meta.conn);
                            again(RESUB_FB_COUNT, answer ? (bit<8>)NIC_EV_RECOVERED
                                                         : (bit<8>)NIC_EV_LOSS_UNDONE);
                        } else if (!answer && before == (bit<8>)EV_GOOD
                                   && meta.ev_from == EV_FROM_ANY) {
                            again(RESUB_FB_COUNT, (bit<8>)NIC_EV_SKIPPED);
                        }
                    } else if (skip && meta.ev_min_active <= meta.ev_mask) {
                        // (A connection whose floor is its whole EV set never passes one over.)
                        to_skip();
                        if (state_move.execute(cell) == (bit<8>)EV_GOOD) {
                            again(RESUB_FB_COUNT, (bit<8>)NIC_EV_SKIPPED);
                        }
                    } else if (bad) {
                        mark_bad.apply(meta, false);
                        if (state_move.execute(cell) != (bit<8>)EV_ASSUMED_BAD) {   // a read
                            again(RESUB_FB_MARK, 0);
                            meta.resub.drops = meta.digest_drops;
                        }
                    }
                    if (hdr.seth.isValid()) {
                        NIC_COUNT(NIC_RX_SACK);
                    } else {
                        NIC_COUNT(NIC_RX_NACK);
                    }
                    // the host transport retransmits and completes
                    meta.rx_deliver = !meta.resubmit;
                }
            } else if (hdr.peth.isValid() && hdr.bth.opcode == OP_PROBE) {
                // (An EV report, OP_EV_REPORT, is the host's to its own NIC: malformed here.)
                // A probe of one of the peer's paths: answered in pass 2 (the window's other half);
                // it consumes no PSN and carries nothing for the host.
                NIC_COUNT(NIC_RX_PROBE);
                bit<24> expected = expected_read.execute((bit<32>)meta.conn)[31:8];
                ring_mask = 0;
                bit<32> half = ring_set_lo.execute((bit<32>)meta.conn);
                again(RESUB_RX_PROBE, 0);
                meta.resub.slot = (bit<8>)expected[6:0];
                meta.resub.drops = half;
            } else if (hdr.meth.isValid()) {
                bit<6> dscp = hdr.outer_ipv6.dscp;
                if (dscp == meta.dscp_trimmed || dscp == meta.dscp_trimmed_lasthop) {
                    // The payload was cut on the way: ask for this PSN again at once.
                    NIC_COUNT(NIC_RX_TRIMMED);
                    again(RESUB_RX_NACK,
                          dscp == meta.dscp_trimmed ? NACK_TRIMMED : NACK_TRIMMED_LASTHOP);
                } else if (!r_key_ok) {
                    NIC_COUNT(NIC_RX_BAD_R_KEY);   // not its QP's memory: not acknowledged
                } else {
                    // The receiver's window: PSNs relative to the connection's initial PSN. The
                    // point moves on by one if this is the PSN expected (the rest in pass 2).
                    rx_arg = (bit<32>)rx_psn << 8;
                    bit<24> expected = expected_advance.execute((bit<32>)meta.conn)[31:8];
                    bit<24> ahead = rx_psn - expected;
                    bool duplicate = false;
                    bool in_window = true;
                    bit<1> half_hi = 0;   // which half pass 1 has: the PSN's (a read: lo)
                    bit<32> half;
                    if (ahead < 64) {
                        // In the window (the expected PSN too): its bit takes its lap's mark; it
                        // had it already if it arrived before.
                        half_hi = rx_psn[5:5];
                        bit<32> before;
                        if (rx_psn[6:6] == 0) {
                            if (half_hi == 0) {
                                before = ring_set_lo.execute((bit<32>)meta.conn);
                            } else {
                                before = ring_set_hi.execute((bit<32>)meta.conn);
                            }
                            half = before | ring_mask;
                        } else {
                            if (half_hi == 0) {
                                before = ring_clear_lo.execute((bit<32>)meta.conn);
                            } else {
                                before = ring_clear_hi.execute((bit<32>)meta.conn);
                            }
                            half = before & ring_keep;
                        }
                        bit<32> marked = (before ^ half) & ring_mask;
                        duplicate = marked == 0;
                    } else if (ahead >= 0x800000) {
                        duplicate = true;   // behind the window: acknowledged already
                        ring_mask = 0;
                        half = ring_set_lo.execute((bit<32>)meta.conn);
                    } else {
                        in_window = false;   // beyond the bitmap
                        NIC_COUNT(NIC_RX_OUT_OF_WINDOW);
                        again(RESUB_RX_NACK, NACK_PSN_OOR_WINDOW);
                    }
                    if (in_window) {
                        if (duplicate) {
                            NIC_COUNT(NIC_RX_DUPLICATE);
                        } else {
                            NIC_COUNT(NIC_RX_DATA);
                        }
                        // count 1: the expected PSN arrived, the point catches up in pass 2.
                        again(RESUB_RX_DATA, ahead == 0 ? 8w1 : 8w0);
                        meta.resub.slot = (bit<8>)(ahead == 0 ? expected + 1 : expected)[6:0];
                        meta.resub.flag = duplicate ? 1w1 : 1w0;
                        meta.resub.move = (bit<3>)half_hi;
                        meta.resub.drops = half;
                    }
                }
            } else {
                meta.malformed = true;   // not an MRC data or feedback packet
            }
        }
    }
}

#endif
