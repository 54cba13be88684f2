// Port roles: HOST (a NIC), FABRIC (another switch of the plane) or EXTERNAL (outside the SR
// domain). Ingress roles gate SR traffic and encapsulation; egress roles gate ECN marking.
#ifndef P4SRC_SWITCH_PORT_ROLE_P4
#define P4SRC_SWITCH_PORT_ROLE_P4

#include "../include/headers.p4"

control PortRoleIngress(inout metadata_t meta) {
    @name(".port_role_counter")
    PKT_BYTE_DIRECT_COUNTER(port_role_counter);

    @name(".set_port_role")
    action set_port_role(bit<2> role) {
        meta.port_role = role;
        DIRECT_COUNT(port_role_counter);
    }

    // Control plane: one entry per port, ingress_port -> set_port_role(HOST 1 | FABRIC 2 |
    // EXTERNAL 3). An unconfigured port is EXTERNAL: outside the SR domain until told otherwise.
    @name(".port_role")
    table port_role {
        key = { meta.ingress_port : exact @name("port"); }
        actions = { set_port_role; }
        default_action = set_port_role(ROLE_EXTERNAL);
        counters = port_role_counter;
        size = PORT_ROLE_TABLE_SIZE;
    }

    apply {
        port_role.apply();
    }
}

control PortRoleEgress(inout metadata_t meta) {
    @name(".egress_port_role_counter")
    PKT_BYTE_DIRECT_COUNTER(egress_port_role_counter);

    @name(".set_egress_port_role")
    action set_egress_port_role(bit<2> role) {
        meta.egress_role = role;
        DIRECT_COUNT(egress_port_role_counter);
    }

    // Control plane: the same roles as `port_role`, keyed on the egress port.
    @name(".egress_port_role")
    table egress_port_role {
        key = { meta.egress_port : exact @name("port"); }
        actions = { set_egress_port_role; }
        default_action = set_egress_port_role(ROLE_EXTERNAL);
        counters = egress_port_role_counter;
        size = PORT_ROLE_TABLE_SIZE;
    }

    apply {
        egress_port_role.apply();
    }
}

#endif
