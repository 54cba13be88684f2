"""PacketReplicationEngineEntry: multicast groups and clone sessions on the engine's PRE.

Replicas name their port either as P4Runtime 1.4's ``port`` bytestring or the older
``egress_port`` integer; a read answers in the form the group was written with.
``backup_replicas`` are UNIMPLEMENTED (simple_switch has no port liveness).

Clone sessions on v1model as PI's pre_clone_mgr.cpp serves them for simple_switch_grpc: an
INSERT with a non-zero ``class_of_service`` is UNIMPLEMENTED ("COS for clone sessions not
supported yet": BMv2 queues a clone by the priority its pipeline gives it), and a MODIFY
changes the replicas only (the session keeps the ``class_of_service`` and
``packet_length_bytes`` it was inserted with). TNA takes both, as Tofino's mirror sessions
have a queue and a length of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from finsy.proto import p4r

from softswitch.engine.pre import PacketReplicationEngine, Replica
from softswitch.errors import ControlPlaneError
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.write_error import (
    P4RuntimeWriteError,
    already_exists,
    invalid,
    not_found,
    unimplemented,
)


@dataclass
class _Written:
    port_bytes: bool
    metadata: bytes = b""


def _replicas(replicas: Sequence[p4r.Replica], where: str) -> tuple[list[Replica], bool]:
    out: list[Replica] = []
    port_bytes = False
    for r in replicas:
        if r.backup_replicas:
            raise unimplemented(f"{where}: backup_replicas")
        if r.WhichOneof("port_kind") == "port":
            port_bytes = True
            port = bytestrings.decode(r.port, 32, f"{where} replica port")
        else:
            port = r.egress_port
        out.append((port, r.instance))
    return out, port_bytes


def _replica_protos(replicas: Sequence[Replica], port_bytes: bool,
                    into: object) -> None:
    for port, rid in replicas:
        if port_bytes:
            into.add(port=bytestrings.encode(port), instance=rid)  # type: ignore[attr-defined]
        else:
            into.add(egress_port=port, instance=rid)  # type: ignore[attr-defined]


class Replication:
    """Multicast groups and clone sessions written through P4Runtime."""

    def __init__(self, pre: PacketReplicationEngine, arch: str = "v1model") -> None:
        self.pre = pre
        self.bmv2 = arch != "tna"   # PI's clone-session rules (module docstring)
        self._groups: dict[int, _Written] = {}
        self._sessions: dict[int, _Written] = {}

    def write(self, kind: int, msg: p4r.PacketReplicationEngineEntry) -> None:
        which = msg.WhichOneof("type")
        if which == "multicast_group_entry":
            self._write_group(kind, msg.multicast_group_entry)
        elif which == "clone_session_entry":
            self._write_session(kind, msg.clone_session_entry)
        else:
            raise invalid("empty PacketReplicationEngineEntry")

    def _write_group(self, kind: int, g: p4r.MulticastGroupEntry) -> None:
        gid = g.multicast_group_id
        where = f"multicast group {gid}"
        if gid == 0:
            raise invalid("multicast group id 0 is reserved (no multicast)")
        replicas, port_bytes = _replicas(g.replicas, where)
        _check_existence(kind, self.pre.has_group(gid), where)
        try:
            if kind == p4r.Update.INSERT:
                self.pre.insert_group(gid, replicas)
            elif kind == p4r.Update.MODIFY:
                self.pre.modify_group(gid, replicas)
            else:
                self.pre.delete_group(gid)
                self._groups.pop(gid, None)
                return
        except ControlPlaneError as exc:
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
        self._groups[gid] = _Written(port_bytes, g.metadata)

    def _write_session(self, kind: int, s: p4r.CloneSessionEntry) -> None:
        sid = s.session_id
        where = f"clone session {sid}"
        if sid == 0:
            raise invalid("clone session id 0 is invalid")
        replicas, port_bytes = _replicas(s.replicas, where)
        _check_existence(kind, self.pre.has_clone_session(sid), where)
        if self.bmv2 and kind == p4r.Update.INSERT and s.class_of_service != 0:
            raise unimplemented(f"{where}: class_of_service {s.class_of_service} (COS for "
                                "clone sessions is not supported by simple_switch_grpc)")
        cos, length = s.class_of_service, s.packet_length_bytes
        old = self.pre.mirroring_get(sid) if kind == p4r.Update.MODIFY and self.bmv2 else None
        if old is not None:   # PI's MODIFY rewrites the replicas only
            cos, length = old.class_of_service, old.packet_length_bytes
        try:
            if kind == p4r.Update.INSERT:
                self.pre.insert_clone_session(sid, replicas, cos, length)
            elif kind == p4r.Update.MODIFY:
                self.pre.modify_clone_session(sid, replicas, cos, length)
            else:
                self.pre.delete_clone_session(sid)
                self._sessions.pop(sid, None)
                return
        except ControlPlaneError as exc:
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
        self._sessions[sid] = _Written(port_bytes)

    def read(self, msg: p4r.PacketReplicationEngineEntry) -> Iterator[p4r.Entity]:
        which = msg.WhichOneof("type")
        if which == "multicast_group_entry":
            wanted = msg.multicast_group_entry.multicast_group_id
            for gid in self.pre.group_ids():
                if (wanted and gid != wanted) or not self.pre.has_group(gid):
                    continue  # (deleted since the read began)
                written = self._groups.get(gid, _Written(False))
                out = p4r.Entity()
                g = out.packet_replication_engine_entry.multicast_group_entry
                g.multicast_group_id = gid
                g.metadata = written.metadata
                _replica_protos(self.pre.group_replicas(gid), written.port_bytes, g.replicas)
                yield out
        elif which == "clone_session_entry":
            wanted = msg.clone_session_entry.session_id
            for sid in self.pre.clone_session_ids():
                if (wanted and sid != wanted) or not self.pre.has_clone_session(sid):
                    continue  # (deleted since the read began)
                session = self.pre.mirroring_get(sid)
                written = self._sessions.get(sid, _Written(False))
                out = p4r.Entity()
                s = out.packet_replication_engine_entry.clone_session_entry
                s.session_id = sid
                if session is not None:
                    s.class_of_service = session.class_of_service
                    s.packet_length_bytes = session.packet_length_bytes
                    if session.mgid is not None:
                        _replica_protos(self.pre.group_replicas(session.mgid),
                                        written.port_bytes, s.replicas)
                yield out
        else:
            raise invalid("empty PacketReplicationEngineEntry in a read")


def _check_existence(kind: int, exists: bool, where: str) -> None:
    """INSERT needs a new id, MODIFY and DELETE an existing one; other update types are refused."""
    if kind == p4r.Update.INSERT:
        if exists:
            raise already_exists(f"{where} already exists")
    elif kind in (p4r.Update.MODIFY, p4r.Update.DELETE):
        if not exists:
            raise not_found(f"{where} does not exist")
    else:
        raise invalid(f"{where}: update type {kind} is not INSERT/MODIFY/DELETE")
