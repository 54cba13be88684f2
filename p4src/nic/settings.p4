// The NIC's settings from the control plane, shared by the v1model and TNA programs: the
// fabric's DSCP values and which of this NIC's ports are down (both default actions).
#ifndef P4SRC_NIC_SETTINGS_P4
#define P4SRC_NIC_SETTINGS_P4

#include "nic_types.p4"

control NicSettings(inout nic_metadata_t meta) {
    @name(".set_dscp")
    action set_dscp(bit<6> trimmable, bit<6> trimmable_retx, bit<6> control_dscp, bit<6> trimmed,
                    bit<6> trimmed_lasthop) {
        meta.dscp_trimmable = trimmable;
        meta.dscp_retx = trimmable_retx;
        meta.dscp_control = control_dscp;
        meta.dscp_trimmed = trimmed;
        meta.dscp_trimmed_lasthop = trimmed_lasthop;
    }

    // Why: DSCP values are the operator's (UET fixes none). Installs: the default action, with
    // the fabric's values (topology qos); until then the MRC emulator's defaults below.
    @name(".nic_dscp")
    table nic_dscp {
        actions = { set_dscp; }
        default_action = set_dscp(4, 8, 46, 12, 16);
    }

    @name(".set_port_state")
    action set_port_state(bit<8> down_planes) {
        meta.local_down = down_planes;
    }

    // Why: neither v1model nor TNA gives the data plane a port-status signal, so this NIC's
    // agent tells the data plane which of its own ports are down (bit p set = plane p's port is
    // down). Nothing is sent on a down port, the EV choice passes over that plane, and every
    // SACK and NACK this NIC sends carries the bitmap (SETH/NETH port_state) so that the peer
    // stops sending to it on that plane.
    // Installs: the default action, rewritten whenever a NIC port goes down or comes back up;
    // until then every port is up. (A table, not a register: BMv2's P4Runtime server refuses
    // register writes.)
    @name(".local_port_state")
    table local_port_state {
        actions = { set_port_state; }
        default_action = set_port_state(0);
    }

    apply {
        nic_dscp.apply();
        local_port_state.apply();
    }
}

#endif
