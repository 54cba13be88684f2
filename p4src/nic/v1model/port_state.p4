// The EV choice's port-state step of the v1model HostTx (TNA's, tna/port_state.p4, gives the
// same answer from const-entry tables: Tofino shifts by constants only): a plane is
// usable when its port is up at both ends (this NIC's local_port_state, the peer's bitmap from
// its SACKs and NACKs). No plane usable: the peer's bitmap is ignored (it can only be refreshed
// by feedback to packets sent, so it must not stop them all); none of this NIC's ports up
// either: USABLE is 0, nothing is sent. MOVE: how many slots on from FIRST the nearest slot of
// a usable plane is. Bit d of `ahead` says plane (FIRST's plane + d) mod PLANES is usable (two
// turns of the planes side by side, shifted by FIRST's plane); slot FIRST + d is in that plane
// (ev_count is a multiple of planes), so the nearest usable plane's slot is FIRST + MOVE —
// bounded by 8 planes, no loop.
// A macro that declares USABLE and MOVE (and in_use, twice, ahead) where it is used, not a
// function: the engine runs it inline, where a function call costs on the packet path.
#ifndef P4SRC_NIC_V1MODEL_PORT_STATE_P4
#define P4SRC_NIC_V1MODEL_PORT_STATE_P4

#define NIC_PORT_STATE_MOVE(PLANES, LOCAL_DOWN, PEER_DOWN, FIRST, USABLE, MOVE) \
    bit<8> in_use = (bit<8>)((16w1 << PLANES) - 1); \
    bit<8> USABLE = ~(LOCAL_DOWN | PEER_DOWN) & in_use; \
    if (USABLE == 0) { \
        USABLE = ~LOCAL_DOWN & in_use; \
    } \
    bit<16> twice = (bit<16>)USABLE | ((bit<16>)USABLE << PLANES); \
    bit<16> ahead = twice >> (FIRST & (PLANES - 1)); \
    bit<8> MOVE = 0; \
    if (ahead[0:0] == 1) { \
        MOVE = 0; \
    } else if (ahead[1:1] == 1) { \
        MOVE = 1; \
    } else if (ahead[2:2] == 1) { \
        MOVE = 2; \
    } else if (ahead[3:3] == 1) { \
        MOVE = 3; \
    } else if (ahead[4:4] == 1) { \
        MOVE = 4; \
    } else if (ahead[5:5] == 1) { \
        MOVE = 5; \
    } else if (ahead[6:6] == 1) { \
        MOVE = 6; \
    } else if (ahead[7:7] == 1) { \
        MOVE = 7; \
    }

// How many slots on from FROM the nearest slot of a usable plane is, given TWICE (the usable
// planes twice over, as NIC_PORT_STATE_MOVE leaves it; at least one usable): MOVE's answer for
// any slot. A function, not the macro: only the EV choice's later tries (a slot not GOOD) need
// it.
bit<8> nic_usable_step(in bit<16> twice, in bit<8> planes, in bit<8> from) {
    bit<16> ahead = twice >> (from & (planes - 1));
    if (ahead[0:0] == 1) { return 0; }
    if (ahead[1:1] == 1) { return 1; }
    if (ahead[2:2] == 1) { return 2; }
    if (ahead[3:3] == 1) { return 3; }
    if (ahead[4:4] == 1) { return 4; }
    if (ahead[5:5] == 1) { return 5; }
    if (ahead[6:6] == 1) { return 6; }
    return 7;
}

#endif
