// A fragment, included inside the body of each architecture's HostTx control
// (v1model/host_tx.p4, tna/host_tx.p4), so both programs declare these tables and actions with
// the same text: the connection of a host packet and the path of an EV. Uses the
// architecture's NIC_DROP / NIC_COUNT (v1model/nic_arch.p4, tna/nic_arch.p4).
    @name(".set_connection")
    action set_connection(bit<16> conn, bit<16> profile, bit<8> ev_mask, bit<8> planes,
                          bit<8> backups, bit<8> ev_min_active, bit<16> dst_row,
                          bit<16> dst_ua, bit<8> hand_off, bit<8> rotation,
                          bit<32> skip_us) {
        meta.conn = conn;
        meta.profile = profile;
        meta.ev_mask = ev_mask;
        meta.planes = planes;
        meta.backups = backups;
        meta.ev_min_active = ev_min_active;
        meta.dst_row = dst_row;
        meta.dst_ua = dst_ua;
        meta.hand_off = hand_off;
        meta.rotation = rotation;
        meta.skip_us = skip_us;
    }

    @name(".tx_no_connection")
    action tx_no_connection() {
        NIC_DROP();
        NIC_COUNT(NIC_TX_NO_CONNECTION);
    }

    // Why: the host names its peer by address and QP; this gives the connection's state index,
    // its EV profile (ev_count - 1 as a mask, ev_count a power of two and a multiple of
    // `planes`, itself a power of two; EV e is in plane e mod planes), its backups per plane and
    // ev_min_active, the destination's T0 row and port uA for the path templates, and how many
    // slots on a passed-over EV's turn goes (hand_off, a multiple of planes: the same plane; the
    // controller spreads it over the connections so that senders moved off one T1 do not all
    // land on the same next one), and the slot its rotation starts at (rotation, a hash of the
    // connection: QPs sharing a profile then do not send on the same T1s in step, the
    // synchronisation the sources' pseudo-random EV choice avoids, mrc-srv6.md §3.3), and how
    // long a SKIP holds for its EV's next turn (skip_us, in the ingress timestamp's units: µs,
    // on TNA 1.024 µs). A mark speaks of a queue as it was about half a round trip before: a
    // connection whose rotation comes back to the EV only later (many connections sharing the
    // NIC, one idle between a collective's steps) would move a packet off a path for a queue
    // long gone. The sources leave the time to the implementation (mrc-nic.md §1: 5 µs to
    // 1 ms); the controller gives a few of the fabric's round trips.
    // Installs: one entry per connection this NIC sends on.
    @name(".tx_connection")
    table tx_connection {
        key = {
            hdr.ipv6.dst_addr : exact @name("dst_addr");
            hdr.bth.dest_qp   : exact @name("dest_qp");
        }
        actions = { set_connection; @defaultonly tx_no_connection; }
        default_action = tx_no_connection();
        size = NIC_CONNECTIONS;
    }

    @name(".set_path")
    action set_path(bit<3> plane, bit<16> t1_usid) {
        meta.plane = plane;
        meta.t1_usid = t1_usid;
    }

    @name(".deny_path")
    action deny_path() {
        meta.denied = true;
    }

    // Why: an EV is a path (plane, T1); DENIED EVs and path rewrites are entries here, so the
    // controller changes paths with table writes only. Installs: one entry per (profile, EV),
    // active EVs and backups; no entry, or deny_path, is DENIED.
    @name(".ev_path")
    table ev_path {
        key = {
            meta.profile : exact @name("profile");
            meta.ev      : exact @name("ev");
        }
        actions = { set_path; deny_path; }
        default_action = deny_path();
        size = NIC_TABLE_SIZE;
    }
