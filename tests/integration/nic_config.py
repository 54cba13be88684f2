"""The MRC NIC's baseline configuration over P4Runtime: one connection between two NICs back to
back, as tests/unit/test_mrc_nic_program.py's `Nic` makes it on the engine (same sides, EV set,
paths, plane ports with the NIC's locator as source, SACK clone sessions) and
ptf_tests/nic/nic_base.py over P4Runtime; the pair itself is tests/nic_pair.py. Feedback needs
no table: it goes back to the return address the peer's data carries. Table entries and clone
sessions only (BMv2 refuses register writes), so it configures simple_switch_grpc and softswitch
alike.

    with SwitchConnection(address, device_id=0) as conn:
        conn.set_pipeline(p4info, ir_json)
        configure(conn, A, B)
"""

from __future__ import annotations

from nic_pair import (
    BACKUPS,
    COUNTER,
    EV_COUNT,
    HOST_PORT,
    PLANE_PORT,
    PLANES,
    PROFILE,
    R_KEY,
    T0_MAC,
    Side,
    locator,
    t1_usid,
    template,
)

from controller.plan.nic_plan import NIC_HOST_SESSION, EvProfile
from p4rt import CloneSessionEntry, CounterEntry, SwitchConnection, TableEntry
from p4rt.entity import Entity
from p4rt.schema import Schema


def nic_entities(schema: Schema, me: Side, peer: Side, *, ev_min_active: int = 2,
                 initial_psn: int = 0, probe_successes: int = 3) -> list[Entity]:
    """Everything NIC `me` needs for its connection to `peer`."""
    common = dict(profile=PROFILE, ev_mask=EV_COUNT - 1, planes=PLANES, backups=BACKUPS,
                  ev_min_active=ev_min_active)
    entities: list[Entity] = [
        TableEntry(schema, "tx_connection", match={"dst_addr": peer.address,
                                                   "dest_qp": peer.qp})
        .action("set_connection", conn=me.conn, dst_row=peer.row, dst_ua=peer.ua,
                 hand_off=PLANES, rotation=0, skip_us=EvProfile().skip_us, **common),
        TableEntry(schema, "local_qp", match={"dest_qp": me.qp})
        .action("set_local_qp", conn=me.conn, probe_successes=probe_successes,
                initial_psn=initial_psn, peer_qp=peer.qp, **common),
        TableEntry(schema, "rx_r_key", match={"dest_qp": me.qp, "r_key": R_KEY})
        .action("r_key_valid"),
    ]
    for ev in range(EV_COUNT + BACKUPS * PLANES):
        plane = ev % PLANES
        entities.append(TableEntry(schema, "ev_path", match={"profile": PROFILE, "ev": ev})
                        .action("set_path", plane=plane, t1_usid=t1_usid(plane, ev // PLANES)))
    for plane, port in PLANE_PORT.items():
        entities += [
            TableEntry(schema, "path_template", match={"plane": plane, "dst_row": peer.row})
            .action("via_t1", base=template(me, peer, plane)),
            TableEntry(schema, "plane_port", match={"plane": plane})
            .action("set_plane_port", port=port, smac=me.mac(plane), dmac=T0_MAC + plane,
                    src=locator(me, plane)),
            TableEntry(schema, "port_plane", match={"port": port})
            .action("set_rx_plane", plane=plane),
        ]
    return [*entities, CloneSessionEntry(NIC_HOST_SESSION, [HOST_PORT])]


def configure(conn: SwitchConnection, me: Side, peer: Side, **options: int) -> None:
    """Insert `nic_entities` on a switch whose pipeline is set (conn.schema known)."""
    if conn.schema is None:
        conn.get_pipeline()
    assert conn.schema is not None, "the switch has no pipeline"
    conn.insert(nic_entities(conn.schema, me, peer, **options))


def count(conn: SwitchConnection, name: str) -> int:
    """One cell of nic_counter (packets)."""
    assert conn.schema is not None
    [entry] = conn.read(CounterEntry(conn.schema, "nic_counter", COUNTER[name]))
    assert isinstance(entry, CounterEntry)
    return 0 if entry.data is None else entry.data.packet_count
