// A fragment, included inside the TNA controls that check an EV number against the connection's
// EV set (HostTx: probes and reports the host names an EV in; PlaneRx: feedback): v1model's
// nic_ev_in_set (v1model/ev_set.p4) multiplies backups by planes, which a Tofino ALU cannot;
// both are powers of two (tx_connection and local_qp say so), so a const table gives the product.
// The set is EVs 0 .. ev_mask + ev_span (ev_count active, then backups x planes).
    bit<16> ev_span;

    @hidden action ev_span_is(bit<16> span) { ev_span = span; }

    // Why: backups x planes for the EV-set check (no multiplier). Fixed: const entries, hidden
    // from the control plane; a pair not listed gives no backups (only the active EVs exist).
    @hidden
    table ev_set_span {
        key = {
            meta.planes  : exact;
            meta.backups : exact;
        }
        actions = { ev_span_is; }
        default_action = ev_span_is(0);
        const entries = {
            (1, 1) : ev_span_is(1);   (1, 2) : ev_span_is(2);   (1, 4) : ev_span_is(4);
            (1, 8) : ev_span_is(8);   (1, 16) : ev_span_is(16); (1, 32) : ev_span_is(32);
            (1, 64) : ev_span_is(64); (1, 128) : ev_span_is(128);
            (2, 1) : ev_span_is(2);   (2, 2) : ev_span_is(4);   (2, 4) : ev_span_is(8);
            (2, 8) : ev_span_is(16);  (2, 16) : ev_span_is(32); (2, 32) : ev_span_is(64);
            (2, 64) : ev_span_is(128);
            (4, 1) : ev_span_is(4);   (4, 2) : ev_span_is(8);   (4, 4) : ev_span_is(16);
            (4, 8) : ev_span_is(32);  (4, 16) : ev_span_is(64); (4, 32) : ev_span_is(128);
            (8, 1) : ev_span_is(8);   (8, 2) : ev_span_is(16);  (8, 4) : ev_span_is(32);
            (8, 8) : ev_span_is(64);  (8, 16) : ev_span_is(128);
        }
    }
