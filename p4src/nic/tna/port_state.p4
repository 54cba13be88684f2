// The EV choice's port-state step on TNA (../port_state.p4 is v1model's: it shifts by the plane
// count and by the first slot's plane, which a Tofino action cannot: shift amounts are
// constants there). The same answer from two const-entry tables: a plane is usable when its
// port is up at both ends; no plane usable, the peer's bitmap is ignored; none of this NIC's
// ports up either, USABLE is 0. MOVE: how many slots on from FIRST the nearest slot of a usable
// plane is (slot FIRST + d is in plane (FIRST + d) mod PLANES: ev_count is a multiple of
// planes). For PLANES 1, 2, 4 or 8 (a power of two, at most NIC_PLANES, as tx_connection's
// entries give), exactly v1model's USABLE and MOVE.
#ifndef P4SRC_NIC_TNA_PORT_STATE_P4
#define P4SRC_NIC_TNA_PORT_STATE_P4

#include "nic_state.p4"

control NicPortStateMove(in bit<8> planes, in bit<8> local_down, in bit<8> peer_down,
                         in bit<8> first, out bit<8> usable, out bit<8> move) {
    bit<8> in_use;        // a bit per plane of the connection: (1 << planes) - 1
    bit<8> first_plane;   // FIRST's plane: FIRST mod planes

    @hidden
    action set_in_use(bit<8> mask) {
        in_use = mask;
    }

    // Why: v1model's (1 << planes) - 1 (a shift by a run-time amount). Fixed: const entries,
    // hidden from the control plane (8 or more planes: every bit).
    @hidden
    table tx_planes_in_use {
        key = { planes : exact; }
        actions = { set_in_use; }
        default_action = set_in_use(0xFF);
        const entries = {
            0 : set_in_use(0x00);
            1 : set_in_use(0x01);
            2 : set_in_use(0x03);
            3 : set_in_use(0x07);
            4 : set_in_use(0x0F);
            5 : set_in_use(0x1F);
            6 : set_in_use(0x3F);
            7 : set_in_use(0x7F);
        }
    }

    @hidden
    action set_move(bit<8> d) {
        move = d;
    }

    // Why: v1model's (USABLE twice over) >> FIRST's plane, then its lowest set bit (shifts by
    // run-time amounts). Key: the plane count, FIRST's plane, the usable planes; entry (p, f, d):
    // plane (f + d) mod p usable and planes f .. f + d - 1 (mod p) not. Fixed: const entries
    // (disjoint), hidden from the control plane; no usable plane: 0.
    @hidden
    table tx_port_move {
        key = {
            planes          : exact;
            first_plane     : exact;
            usable          : ternary;
        }
        actions = { set_move; }
        default_action = set_move(0);
        const entries = {
            (1, 0, 8w0x01 &&& 8w0x01) : set_move(0);
            (2, 0, 8w0x01 &&& 8w0x01) : set_move(0);
            (2, 0, 8w0x02 &&& 8w0x03) : set_move(1);
            (2, 1, 8w0x02 &&& 8w0x02) : set_move(0);
            (2, 1, 8w0x01 &&& 8w0x03) : set_move(1);
            (4, 0, 8w0x01 &&& 8w0x01) : set_move(0);
            (4, 0, 8w0x02 &&& 8w0x03) : set_move(1);
            (4, 0, 8w0x04 &&& 8w0x07) : set_move(2);
            (4, 0, 8w0x08 &&& 8w0x0f) : set_move(3);
            (4, 1, 8w0x02 &&& 8w0x02) : set_move(0);
            (4, 1, 8w0x04 &&& 8w0x06) : set_move(1);
            (4, 1, 8w0x08 &&& 8w0x0e) : set_move(2);
            (4, 1, 8w0x01 &&& 8w0x0f) : set_move(3);
            (4, 2, 8w0x04 &&& 8w0x04) : set_move(0);
            (4, 2, 8w0x08 &&& 8w0x0c) : set_move(1);
            (4, 2, 8w0x01 &&& 8w0x0d) : set_move(2);
            (4, 2, 8w0x02 &&& 8w0x0f) : set_move(3);
            (4, 3, 8w0x08 &&& 8w0x08) : set_move(0);
            (4, 3, 8w0x01 &&& 8w0x09) : set_move(1);
            (4, 3, 8w0x02 &&& 8w0x0b) : set_move(2);
            (4, 3, 8w0x04 &&& 8w0x0f) : set_move(3);
            (8, 0, 8w0x01 &&& 8w0x01) : set_move(0);
            (8, 0, 8w0x02 &&& 8w0x03) : set_move(1);
            (8, 0, 8w0x04 &&& 8w0x07) : set_move(2);
            (8, 0, 8w0x08 &&& 8w0x0f) : set_move(3);
            (8, 0, 8w0x10 &&& 8w0x1f) : set_move(4);
            (8, 0, 8w0x20 &&& 8w0x3f) : set_move(5);
            (8, 0, 8w0x40 &&& 8w0x7f) : set_move(6);
            (8, 0, 8w0x80 &&& 8w0xff) : set_move(7);
            (8, 1, 8w0x02 &&& 8w0x02) : set_move(0);
            (8, 1, 8w0x04 &&& 8w0x06) : set_move(1);
            (8, 1, 8w0x08 &&& 8w0x0e) : set_move(2);
            (8, 1, 8w0x10 &&& 8w0x1e) : set_move(3);
            (8, 1, 8w0x20 &&& 8w0x3e) : set_move(4);
            (8, 1, 8w0x40 &&& 8w0x7e) : set_move(5);
            (8, 1, 8w0x80 &&& 8w0xfe) : set_move(6);
            (8, 1, 8w0x01 &&& 8w0xff) : set_move(7);
            (8, 2, 8w0x04 &&& 8w0x04) : set_move(0);
            (8, 2, 8w0x08 &&& 8w0x0c) : set_move(1);
            (8, 2, 8w0x10 &&& 8w0x1c) : set_move(2);
            (8, 2, 8w0x20 &&& 8w0x3c) : set_move(3);
            (8, 2, 8w0x40 &&& 8w0x7c) : set_move(4);
            (8, 2, 8w0x80 &&& 8w0xfc) : set_move(5);
            (8, 2, 8w0x01 &&& 8w0xfd) : set_move(6);
            (8, 2, 8w0x02 &&& 8w0xff) : set_move(7);
            (8, 3, 8w0x08 &&& 8w0x08) : set_move(0);
            (8, 3, 8w0x10 &&& 8w0x18) : set_move(1);
            (8, 3, 8w0x20 &&& 8w0x38) : set_move(2);
            (8, 3, 8w0x40 &&& 8w0x78) : set_move(3);
            (8, 3, 8w0x80 &&& 8w0xf8) : set_move(4);
            (8, 3, 8w0x01 &&& 8w0xf9) : set_move(5);
            (8, 3, 8w0x02 &&& 8w0xfb) : set_move(6);
            (8, 3, 8w0x04 &&& 8w0xff) : set_move(7);
            (8, 4, 8w0x10 &&& 8w0x10) : set_move(0);
            (8, 4, 8w0x20 &&& 8w0x30) : set_move(1);
            (8, 4, 8w0x40 &&& 8w0x70) : set_move(2);
            (8, 4, 8w0x80 &&& 8w0xf0) : set_move(3);
            (8, 4, 8w0x01 &&& 8w0xf1) : set_move(4);
            (8, 4, 8w0x02 &&& 8w0xf3) : set_move(5);
            (8, 4, 8w0x04 &&& 8w0xf7) : set_move(6);
            (8, 4, 8w0x08 &&& 8w0xff) : set_move(7);
            (8, 5, 8w0x20 &&& 8w0x20) : set_move(0);
            (8, 5, 8w0x40 &&& 8w0x60) : set_move(1);
            (8, 5, 8w0x80 &&& 8w0xe0) : set_move(2);
            (8, 5, 8w0x01 &&& 8w0xe1) : set_move(3);
            (8, 5, 8w0x02 &&& 8w0xe3) : set_move(4);
            (8, 5, 8w0x04 &&& 8w0xe7) : set_move(5);
            (8, 5, 8w0x08 &&& 8w0xef) : set_move(6);
            (8, 5, 8w0x10 &&& 8w0xff) : set_move(7);
            (8, 6, 8w0x40 &&& 8w0x40) : set_move(0);
            (8, 6, 8w0x80 &&& 8w0xc0) : set_move(1);
            (8, 6, 8w0x01 &&& 8w0xc1) : set_move(2);
            (8, 6, 8w0x02 &&& 8w0xc3) : set_move(3);
            (8, 6, 8w0x04 &&& 8w0xc7) : set_move(4);
            (8, 6, 8w0x08 &&& 8w0xcf) : set_move(5);
            (8, 6, 8w0x10 &&& 8w0xdf) : set_move(6);
            (8, 6, 8w0x20 &&& 8w0xff) : set_move(7);
            (8, 7, 8w0x80 &&& 8w0x80) : set_move(0);
            (8, 7, 8w0x01 &&& 8w0x81) : set_move(1);
            (8, 7, 8w0x02 &&& 8w0x83) : set_move(2);
            (8, 7, 8w0x04 &&& 8w0x87) : set_move(3);
            (8, 7, 8w0x08 &&& 8w0x8f) : set_move(4);
            (8, 7, 8w0x10 &&& 8w0x9f) : set_move(5);
            (8, 7, 8w0x20 &&& 8w0xbf) : set_move(6);
            (8, 7, 8w0x40 &&& 8w0xff) : set_move(7);
        }
    }

    apply {
        tx_planes_in_use.apply();
        usable = ~(local_down | peer_down) & in_use;
        if (usable == 0) {
            usable = ~local_down & in_use;
        }
        first_plane = first & (planes - 1);
        tx_port_move.apply();
    }
}

#endif
