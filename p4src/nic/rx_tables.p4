// A fragment, included inside the body of each architecture's PlaneRx control
// (v1model/plane_rx.p4, tna/plane_rx.p4), so both programs declare these tables and actions with
// the same text (and the same control-plane names: rx_trailing_ones and set_trailing_ones are
// named after the PlaneRx instance, NicIngress.plane_rx): the plane of an arriving packet, the
// connection of a local QP, and the receive window's trailing-ones table. Uses the
// architecture's NIC_INGRESS_PORT (v1model/nic_arch.p4, tna/nic_arch.p4).
    @name(".set_rx_plane")
    action set_rx_plane(bit<3> plane) {
        meta.rx_plane = plane;
        meta.plane_port = true;
    }

    // Why: which plane a packet came in on (feedback goes back on the same plane).
    // Installs: one entry per plane port. No entry: not a plane port, dropped.
    @name(".port_plane")
    table port_plane {
        key = { NIC_INGRESS_PORT : exact @name("port"); }
        actions = { set_rx_plane; @defaultonly NoAction; }
        default_action = NoAction();
        size = NIC_PLANES;
    }

    @name(".set_local_qp")
    action set_local_qp(bit<16> conn, bit<16> profile, bit<8> ev_mask, bit<8> planes,
                        bit<8> backups, bit<8> ev_min_active, bit<8> probe_successes,
                        bit<24> initial_psn, bit<24> peer_qp) {
        meta.conn = conn;
        meta.profile = profile;
        meta.ev_mask = ev_mask;
        meta.planes = planes;
        meta.backups = backups;
        meta.ev_min_active = ev_min_active;
        meta.probe_successes = probe_successes;
        meta.rx_initial_psn = initial_psn;
        meta.fb_qp = peer_qp;
    }

    // Why: packets for this NIC name its QP: data (this NIC receives) and SACKs/NACKs (for what
    // it sent). The entry gives the connection's state index, its EV profile (as tx_connection:
    // ev_count - 1, planes, backups per plane, ev_min_active; probe answers that bring an EV
    // back), the first PSN the peer sends and the peer's QP (what feedback is addressed to).
    // Installs: one entry per connection.
    @name(".local_qp")
    table local_qp {
        key = { hdr.bth.dest_qp : exact @name("dest_qp"); }
        actions = { set_local_qp; @defaultonly NoAction; }
        default_action = NoAction();
        size = NIC_CONNECTIONS;
    }

    @name(".r_key_valid")
    action r_key_valid() { }

    // Why: an RDMA NIC acknowledges a write only once its memory key checks out; a spoofed
    // packet with a wrong key, SACKed, would make the genuine one a duplicate (never placed).
    // Installs: one entry per (connection's QP, R_Key its host registered). No entry: data with
    // that key is dropped and counted (NIC_RX_BAD_R_KEY).
    @name(".rx_r_key")
    table rx_r_key {
        key = {
            hdr.bth.dest_qp  : exact @name("dest_qp");
            hdr.reth.r_key   : exact @name("r_key");
        }
        actions = { r_key_valid; @defaultonly NoAction; }
        default_action = NoAction();
        size = NIC_CONNECTIONS;
    }

    action set_trailing_ones(bit<8> n) {
        meta.trailing_ones = n;
    }

    // How far the cumulative PSN moves: the number of consecutive PSNs from the expected one
    // that have arrived (the trailing ones of the bitmap). Fixed: no control-plane entries.
    table rx_trailing_ones {
        key = { meta.rx_bits : ternary; }
        actions = { set_trailing_ones; }
        const entries = {
            64w0x0000000000000000 &&& 64w0x0000000000000001 : set_trailing_ones(0);
            64w0x0000000000000001 &&& 64w0x0000000000000003 : set_trailing_ones(1);
            64w0x0000000000000003 &&& 64w0x0000000000000007 : set_trailing_ones(2);
            64w0x0000000000000007 &&& 64w0x000000000000000f : set_trailing_ones(3);
            64w0x000000000000000f &&& 64w0x000000000000001f : set_trailing_ones(4);
            64w0x000000000000001f &&& 64w0x000000000000003f : set_trailing_ones(5);
            64w0x000000000000003f &&& 64w0x000000000000007f : set_trailing_ones(6);
            64w0x000000000000007f &&& 64w0x00000000000000ff : set_trailing_ones(7);
            64w0x00000000000000ff &&& 64w0x00000000000001ff : set_trailing_ones(8);
            64w0x00000000000001ff &&& 64w0x00000000000003ff : set_trailing_ones(9);
            64w0x00000000000003ff &&& 64w0x00000000000007ff : set_trailing_ones(10);
            64w0x00000000000007ff &&& 64w0x0000000000000fff : set_trailing_ones(11);
            64w0x0000000000000fff &&& 64w0x0000000000001fff : set_trailing_ones(12);
            64w0x0000000000001fff &&& 64w0x0000000000003fff : set_trailing_ones(13);
            64w0x0000000000003fff &&& 64w0x0000000000007fff : set_trailing_ones(14);
            64w0x0000000000007fff &&& 64w0x000000000000ffff : set_trailing_ones(15);
            64w0x000000000000ffff &&& 64w0x000000000001ffff : set_trailing_ones(16);
            64w0x000000000001ffff &&& 64w0x000000000003ffff : set_trailing_ones(17);
            64w0x000000000003ffff &&& 64w0x000000000007ffff : set_trailing_ones(18);
            64w0x000000000007ffff &&& 64w0x00000000000fffff : set_trailing_ones(19);
            64w0x00000000000fffff &&& 64w0x00000000001fffff : set_trailing_ones(20);
            64w0x00000000001fffff &&& 64w0x00000000003fffff : set_trailing_ones(21);
            64w0x00000000003fffff &&& 64w0x00000000007fffff : set_trailing_ones(22);
            64w0x00000000007fffff &&& 64w0x0000000000ffffff : set_trailing_ones(23);
            64w0x0000000000ffffff &&& 64w0x0000000001ffffff : set_trailing_ones(24);
            64w0x0000000001ffffff &&& 64w0x0000000003ffffff : set_trailing_ones(25);
            64w0x0000000003ffffff &&& 64w0x0000000007ffffff : set_trailing_ones(26);
            64w0x0000000007ffffff &&& 64w0x000000000fffffff : set_trailing_ones(27);
            64w0x000000000fffffff &&& 64w0x000000001fffffff : set_trailing_ones(28);
            64w0x000000001fffffff &&& 64w0x000000003fffffff : set_trailing_ones(29);
            64w0x000000003fffffff &&& 64w0x000000007fffffff : set_trailing_ones(30);
            64w0x000000007fffffff &&& 64w0x00000000ffffffff : set_trailing_ones(31);
            64w0x00000000ffffffff &&& 64w0x00000001ffffffff : set_trailing_ones(32);
            64w0x00000001ffffffff &&& 64w0x00000003ffffffff : set_trailing_ones(33);
            64w0x00000003ffffffff &&& 64w0x00000007ffffffff : set_trailing_ones(34);
            64w0x00000007ffffffff &&& 64w0x0000000fffffffff : set_trailing_ones(35);
            64w0x0000000fffffffff &&& 64w0x0000001fffffffff : set_trailing_ones(36);
            64w0x0000001fffffffff &&& 64w0x0000003fffffffff : set_trailing_ones(37);
            64w0x0000003fffffffff &&& 64w0x0000007fffffffff : set_trailing_ones(38);
            64w0x0000007fffffffff &&& 64w0x000000ffffffffff : set_trailing_ones(39);
            64w0x000000ffffffffff &&& 64w0x000001ffffffffff : set_trailing_ones(40);
            64w0x000001ffffffffff &&& 64w0x000003ffffffffff : set_trailing_ones(41);
            64w0x000003ffffffffff &&& 64w0x000007ffffffffff : set_trailing_ones(42);
            64w0x000007ffffffffff &&& 64w0x00000fffffffffff : set_trailing_ones(43);
            64w0x00000fffffffffff &&& 64w0x00001fffffffffff : set_trailing_ones(44);
            64w0x00001fffffffffff &&& 64w0x00003fffffffffff : set_trailing_ones(45);
            64w0x00003fffffffffff &&& 64w0x00007fffffffffff : set_trailing_ones(46);
            64w0x00007fffffffffff &&& 64w0x0000ffffffffffff : set_trailing_ones(47);
            64w0x0000ffffffffffff &&& 64w0x0001ffffffffffff : set_trailing_ones(48);
            64w0x0001ffffffffffff &&& 64w0x0003ffffffffffff : set_trailing_ones(49);
            64w0x0003ffffffffffff &&& 64w0x0007ffffffffffff : set_trailing_ones(50);
            64w0x0007ffffffffffff &&& 64w0x000fffffffffffff : set_trailing_ones(51);
            64w0x000fffffffffffff &&& 64w0x001fffffffffffff : set_trailing_ones(52);
            64w0x001fffffffffffff &&& 64w0x003fffffffffffff : set_trailing_ones(53);
            64w0x003fffffffffffff &&& 64w0x007fffffffffffff : set_trailing_ones(54);
            64w0x007fffffffffffff &&& 64w0x00ffffffffffffff : set_trailing_ones(55);
            64w0x00ffffffffffffff &&& 64w0x01ffffffffffffff : set_trailing_ones(56);
            64w0x01ffffffffffffff &&& 64w0x03ffffffffffffff : set_trailing_ones(57);
            64w0x03ffffffffffffff &&& 64w0x07ffffffffffffff : set_trailing_ones(58);
            64w0x07ffffffffffffff &&& 64w0x0fffffffffffffff : set_trailing_ones(59);
            64w0x0fffffffffffffff &&& 64w0x1fffffffffffffff : set_trailing_ones(60);
            64w0x1fffffffffffffff &&& 64w0x3fffffffffffffff : set_trailing_ones(61);
            64w0x3fffffffffffffff &&& 64w0x7fffffffffffffff : set_trailing_ones(62);
            64w0x7fffffffffffffff &&& 64w0xffffffffffffffff : set_trailing_ones(63);
            64w0xffffffffffffffff &&& 64w0xffffffffffffffff : set_trailing_ones(64);
        }
    }
