"""The packet replication engine of BMv2 simple_switch: multicast groups and clone sessions.

Two views of one state, as in simple_switch_grpc:

* the BMv2 CLI view (``McSimplePreLAG``): groups (``mc_mgrp_create``), level-1 nodes each with
  a replication id (rid) and a port list (``mc_node_create`` returns a handle, the lowest free
  one), associations, LAG membership, and mirroring sessions (``mirroring_add[_mc]``);
* the P4Runtime view, mapped onto nodes the way the PI library (``PreMcMgr``/``PreCloneMgr``)
  maps it for BMv2: one node per distinct rid (``instance``) of a ``MulticastGroupEntry``, and a
  ``CloneSessionEntry`` becomes a hidden group ``32768 + session_id`` plus a mirroring session.

`replicate` gives BMv2's order: nodes in association order, each node's ports ascending, then
its LAGs. PI keeps a group's nodes in a libstdc++ ``unordered_map`` keyed by rid and creates
and attaches them in that map's iteration order, which `_libstdcxx_order` reproduces, so
P4Runtime groups replicate in the same order as on simple_switch_grpc.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from softswitch.errors import ControlPlaneError

Replica = tuple[int, int]  # (egress port, rid)

PORT_COUNT = 512  # BMv2 PortMap size: ports 0..511
LAG_COUNT = 256  # McSimplePreLAG::LAG_MAX_ENTRIES
MGID_TABLE_SIZE = 4096
L1_MAX_ENTRIES = 4096
MAX_RID = 0xFFFF  # egress_rid is bit<16>
MAX_MGID = 0xFFFF  # mcast_grp is bit<16>
MAX_MIRROR_SESSION_ID = (1 << 15) - 1
P4RT_CLONE_GROUP_BASE = 1 << 15  # PreMcMgr::first_reserved_group_id()
P4RT_MAX_CLONE_SESSION_ID = 511  # PreCloneMgr accepts 1..511
TOFINO_MAX_MIRROR_SESSION_ID = 1015  # Tofino 1's normal mirror sessions: 1..1015


@dataclass(frozen=True, slots=True)
class MirrorSession:
    """A simple_switch mirroring session: clone to `mgid`'s replicas, then to `egress_port`
    (either or both may be set). `packet_length_bytes` > 0 truncates clones to that length.

    BMv2 itself supports neither truncation nor a class of service for clone sessions (its
    P4Runtime layer rejects non-zero values); softswitch keeps them for the switch to apply.
    """

    egress_port: int | None = None
    mgid: int | None = None
    class_of_service: int = 0
    packet_length_bytes: int = 0


@dataclass(slots=True)
class _Node:
    rid: int
    ports: tuple[int, ...]  # ascending, distinct
    lags: tuple[int, ...]  # ascending, distinct
    group: int | None = None


_BUCKET_COUNTS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753)


def _libstdcxx_order(keys: Iterable[int]) -> list[int]:
    """Iteration order of a libstdc++ ``std::unordered_map<uint32_t, T>`` after inserting the
    distinct `keys` in order (identity hash, max load factor 1, prime bucket growth).

    A new key goes to the front of its bucket's run of nodes, or to the front of the list when
    its bucket is empty; growing the table re-inserts the nodes the same way, in list order.
    """
    order: list[int] = []
    nbuckets = 0
    level = -1

    def insert(into: list[int], key: int, n: int) -> None:
        bucket = key % n
        for i, other in enumerate(into):
            if other % n == bucket:
                into.insert(i, key)
                return
        into.insert(0, key)

    seen: set[int] = set()
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        if len(order) + 1 > nbuckets:
            level += 1
            nbuckets = _BUCKET_COUNTS[level]
            old, order = order, []
            for other in old:
                insert(order, other, nbuckets)
        insert(order, key, nbuckets)
    return order


def _check_range(what: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise ControlPlaneError(f"{what} {value} out of range [{low}, {high}]")


class PacketReplicationEngine:
    """Multicast groups, nodes, LAGs and mirroring sessions of one simple_switch."""

    def __init__(self) -> None:
        self._groups: dict[int, list[int]] = {}  # mgid -> node handles, association order
        self._nodes: dict[int, _Node] = {}
        self._lags: dict[int, tuple[int, ...]] = {}  # lag index -> member ports ascending
        self._mirrors: dict[int, MirrorSession] = {}
        # P4Runtime groups: group id -> {rid: node handle} in PI's unordered_map order
        self._p4rt_groups: dict[int, dict[int, int]] = {}
        self._cache: dict[int, tuple[Replica, ...]] = {}
        # the largest P4Runtime clone session id (PI's 511 for BMv2; a TNA switch sets Tofino's)
        self.max_clone_session_id = P4RT_MAX_CLONE_SESSION_ID
        # called with this engine after every change (the native fabric core's mirror of what
        # `replicate` and `clone_targets` answer: native/fabric_core.py)
        self.native: Callable[[PacketReplicationEngine], None] | None = None
        # bumped on every change: the C walk's mirror (native/pipeline.py) is refreshed when
        # it moved
        self.version = 0

    def _changed(self) -> None:
        self.version += 1
        if self.native is not None:
            self.native(self)

    def sessions(self) -> list[int]:
        """Every mirroring session id (CLI and P4Runtime), in creation order."""
        return list(self._mirrors)

    def groups(self) -> list[int]:
        """Every multicast group id (CLI and P4Runtime, clone sessions' hidden ones too)."""
        return list(self._groups)

    # ---- BMv2 CLI view -------------------------------------------------------------------

    def mc_mgrp_create(self, mgid: int) -> None:
        """Create group `mgid`; re-creating an existing group keeps it unchanged (as BMv2)."""
        _check_range("multicast group id", mgid, 0, MAX_MGID)
        if mgid in self._groups:
            return
        if len(self._groups) >= MGID_TABLE_SIZE:
            raise ControlPlaneError(f"cannot create multicast group {mgid}: the table is full")
        self._groups[mgid] = []
        self._changed()

    def mc_mgrp_destroy(self, mgid: int) -> None:
        """Delete group `mgid` (a missing group is not an error, as BMv2); its nodes stay,
        dissociated."""
        handles = self._groups.pop(mgid, None)
        for handle in handles or ():
            self._nodes[handle].group = None
        self._cache.clear()
        self._changed()

    def mc_node_create(self, rid: int, ports: Iterable[int], lags: Iterable[int] = ()) -> int:
        """Create a node replicating to `ports` (and one member of each LAG in `lags`) with
        replication id `rid`; return its handle, the lowest unused one."""
        _check_range("replication id", rid, 0, MAX_RID)
        port_set, lag_set = self._port_set(ports), self._lag_set(lags)
        if len(self._nodes) >= L1_MAX_ENTRIES:
            raise ControlPlaneError("cannot create multicast node: the node table is full")
        handle = 0
        while handle in self._nodes:
            handle += 1
        self._nodes[handle] = _Node(rid, port_set, lag_set)
        return handle

    def mc_node_update(self, handle: int, ports: Iterable[int], lags: Iterable[int] = ()) -> None:
        """Replace the ports and LAGs of node `handle`."""
        node = self._node(handle)
        node.ports, node.lags = self._port_set(ports), self._lag_set(lags)
        self._cache.clear()
        self._changed()

    def mc_node_associate(self, mgid: int, handle: int) -> None:
        """Append node `handle` to group `mgid`'s replication list."""
        node = self._node(handle)
        handles = self._group(mgid)
        if node.group is not None:
            raise ControlPlaneError(
                f"multicast node {handle} is already associated with group {node.group}"
            )
        handles.append(handle)
        node.group = mgid
        self._cache.clear()
        self._changed()

    def mc_node_dissociate(self, mgid: int, handle: int) -> None:
        """Remove node `handle` from group `mgid`."""
        node = self._node(handle)
        handles = self._group(mgid)
        if node.group != mgid:
            raise ControlPlaneError(f"multicast node {handle} is not associated with group {mgid}")
        handles.remove(handle)
        node.group = None
        self._cache.clear()
        self._changed()

    def mc_node_destroy(self, handle: int) -> None:
        """Delete node `handle`, dissociating it first if needed (BMv2 allows that)."""
        node = self._node(handle)
        if node.group is not None:
            self._groups[node.group].remove(handle)
        del self._nodes[handle]
        self._cache.clear()
        self._changed()

    def mc_set_lag_membership(self, lag_index: int, ports: Iterable[int]) -> None:
        """Set the member ports of LAG `lag_index`."""
        _check_range("LAG index", lag_index, 0, LAG_COUNT - 1)
        self._lags[lag_index] = self._port_set(ports)
        self._cache.clear()
        self._changed()

    def mirroring_add(self, session_id: int, egress_port: int) -> None:
        """Clone session `session_id` to one port (CLI ``mirroring_add``)."""
        _check_range("egress port", egress_port, 0, PORT_COUNT - 1)
        self.mirroring_add_session(session_id, MirrorSession(egress_port=egress_port))

    def mirroring_add_mc(self, session_id: int, mgid: int) -> None:
        """Clone session `session_id` to a multicast group (CLI ``mirroring_add_mc``)."""
        _check_range("multicast group id", mgid, 0, MAX_MGID)
        self.mirroring_add_session(session_id, MirrorSession(mgid=mgid))

    def mirroring_add_session(self, session_id: int, session: MirrorSession) -> None:
        """Set (or replace) mirroring session `session_id`."""
        _check_range("mirroring session id", session_id, 0, MAX_MIRROR_SESSION_ID)
        if session.packet_length_bytes < 0:
            raise ControlPlaneError("clone packet_length_bytes must not be negative")
        self._mirrors[session_id] = session
        self._changed()

    def mirroring_delete(self, session_id: int) -> None:
        """Delete mirroring session `session_id`."""
        if self._mirrors.pop(session_id, None) is None:
            raise ControlPlaneError(f"mirroring session {session_id} does not exist")
        self._changed()

    def mirroring_get(self, session_id: int) -> MirrorSession | None:
        """Session `session_id`, or None (a clone to it is then silently skipped)."""
        return self._mirrors.get(session_id)

    # ---- data plane ------------------------------------------------------------------------

    def replicate(self, mgid: int, lag_hash: int = 0) -> tuple[Replica, ...]:
        """The (egress port, rid) copies for group `mgid`, in BMv2's order; empty for an
        unknown group. simple_switch passes `lag_hash` 0, selecting each LAG's first member."""
        cached = self._cache.get(mgid)
        if cached is not None:
            return cached
        handles = self._groups.get(mgid)
        if handles is None:
            return ()
        out: list[Replica] = []
        uses_lag = False
        for handle in handles:
            node = self._nodes[handle]
            rid = node.rid
            out.extend((port, rid) for port in node.ports)
            for lag in node.lags:
                uses_lag = True
                members = self._lags.get(lag)
                if members:
                    out.append((members[lag_hash % len(members)], rid))
        result = tuple(out)
        if not uses_lag:
            self._cache[mgid] = result
        return result

    def clone_targets(self, session_id: int) -> tuple[MirrorSession, tuple[Replica, ...]] | None:
        """For a clone to `session_id`: the session and its (egress port, rid) copies, the
        multicast ones first, then the session's port; None when the session does not exist
        (BMv2 then makes no clone).

        The port copy gets rid 0, or the last multicast copy's rid when there is one: BMv2
        sends the same clone there after the multicast loop left that rid in it.
        """
        session = self._mirrors.get(session_id)
        if session is None:
            return None
        copies: tuple[Replica, ...] = ()
        if session.mgid is not None:
            copies = self.replicate(session.mgid)
        if session.egress_port is not None:
            rid = copies[-1][1] if copies else 0
            copies = (*copies, (session.egress_port, rid))
        return session, copies

    def native_sets(self) -> list[tuple[int, int, int, tuple[Replica, ...]]]:
        """What a C mirror of this engine holds: (0, group, 0, `replicate(group)`) per
        multicast group, then (1, session, its clone length, its `clone_targets` copies) per
        clone session."""
        sets = [(0, g, 0, self.replicate(g)) for g in self.groups()]
        for sid in self.sessions():
            found = self.clone_targets(sid)
            if found is not None:
                sets.append((1, sid, found[0].packet_length_bytes, found[1]))
        return sets

    # ---- P4Runtime view --------------------------------------------------------------------

    def has_group(self, group_id: int) -> bool:
        """Whether P4Runtime multicast group `group_id` exists."""
        return group_id in self._p4rt_groups and group_id < P4RT_CLONE_GROUP_BASE

    def insert_group(self, group_id: int, replicas: Sequence[Replica]) -> None:
        """P4Runtime INSERT of a ``MulticastGroupEntry`` with (egress_port, instance) replicas."""
        _check_range("multicast group id", group_id, 1, P4RT_CLONE_GROUP_BASE - 1)
        if group_id in self._p4rt_groups:
            raise ControlPlaneError(f"multicast group {group_id} already exists")
        self._p4rt_create(group_id, replicas)

    def modify_group(self, group_id: int, replicas: Sequence[Replica]) -> None:
        """P4Runtime MODIFY: nodes of kept rids keep their place, new rids are appended."""
        if not self.has_group(group_id):
            raise ControlPlaneError(f"multicast group {group_id} does not exist")
        self._p4rt_modify(group_id, replicas)

    def delete_group(self, group_id: int) -> None:
        """P4Runtime DELETE of multicast group `group_id`."""
        if not self.has_group(group_id):
            raise ControlPlaneError(f"multicast group {group_id} does not exist")
        self._p4rt_delete(group_id)

    def set_group(self, group_id: int, replicas: Sequence[Replica]) -> None:
        """Insert group `group_id`, or modify it if it exists."""
        if self.has_group(group_id):
            self.modify_group(group_id, replicas)
        else:
            self.insert_group(group_id, replicas)

    def group_replicas(self, group_id: int) -> list[Replica]:
        """A P4Runtime read of group `group_id` (PI's order: by node, ports ascending)."""
        nodes = self._p4rt_groups.get(group_id)
        if nodes is None:
            raise ControlPlaneError(f"multicast group {group_id} does not exist")
        return [(port, rid) for rid, h in nodes.items() for port in self._nodes[h].ports]

    def group_ids(self) -> list[int]:
        """The P4Runtime multicast groups (not the hidden clone-session groups), ascending."""
        return sorted(g for g in self._p4rt_groups if g < P4RT_CLONE_GROUP_BASE)

    def has_clone_session(self, session_id: int) -> bool:
        """Whether P4Runtime clone session `session_id` exists."""
        return session_id + P4RT_CLONE_GROUP_BASE in self._p4rt_groups

    def insert_clone_session(
        self,
        session_id: int,
        replicas: Sequence[Replica],
        class_of_service: int = 0,
        packet_length_bytes: int = 0,
    ) -> None:
        """P4Runtime INSERT of a ``CloneSessionEntry`` (ids 1..511, as PI allows)."""
        _check_range("clone session id", session_id, 1, self.max_clone_session_id)
        if self.has_clone_session(session_id):
            raise ControlPlaneError(f"clone session {session_id} already exists")
        session = self._clone_session(session_id, class_of_service, packet_length_bytes)
        self._p4rt_create(P4RT_CLONE_GROUP_BASE + session_id, replicas)
        self._mirrors[session_id] = session
        self._changed()

    def modify_clone_session(
        self,
        session_id: int,
        replicas: Sequence[Replica],
        class_of_service: int = 0,
        packet_length_bytes: int = 0,
    ) -> None:
        """P4Runtime MODIFY of clone session `session_id`."""
        if not self.has_clone_session(session_id):
            raise ControlPlaneError(f"clone session {session_id} does not exist")
        session = self._clone_session(session_id, class_of_service, packet_length_bytes)
        self._p4rt_modify(P4RT_CLONE_GROUP_BASE + session_id, replicas)
        self._mirrors[session_id] = session
        self._changed()

    def delete_clone_session(self, session_id: int) -> None:
        """P4Runtime DELETE of clone session `session_id`."""
        if not self.has_clone_session(session_id):
            raise ControlPlaneError(f"clone session {session_id} does not exist")
        self._mirrors.pop(session_id, None)
        self._p4rt_delete(P4RT_CLONE_GROUP_BASE + session_id)
        self._changed()

    def clone_session_ids(self) -> list[int]:
        """The P4Runtime clone sessions, ascending."""
        base = P4RT_CLONE_GROUP_BASE
        return sorted(g - base for g in self._p4rt_groups if g >= base)

    def reset(self) -> None:
        """Forget every group, node, LAG and session (a new pipeline config)."""
        for table in (self._groups, self._nodes, self._lags, self._mirrors, self._p4rt_groups):
            table.clear()
        self._cache.clear()
        self._changed()

    # ---- internals -------------------------------------------------------------------------

    def _node(self, handle: int) -> _Node:
        node = self._nodes.get(handle)
        if node is None:
            raise ControlPlaneError(f"invalid multicast node handle {handle}")
        return node

    def _group(self, mgid: int) -> list[int]:
        handles = self._groups.get(mgid)
        if handles is None:
            raise ControlPlaneError(f"multicast group {mgid} does not exist")
        return handles

    @staticmethod
    def _port_set(ports: Iterable[int]) -> tuple[int, ...]:
        result = sorted(set(ports))
        for port in result:
            _check_range("egress port", port, 0, PORT_COUNT - 1)
        return tuple(result)

    @staticmethod
    def _lag_set(lags: Iterable[int]) -> tuple[int, ...]:
        result = sorted(set(lags))
        for lag in result:
            _check_range("LAG index", lag, 0, LAG_COUNT - 1)
        return tuple(result)

    @staticmethod
    def _clone_session(session_id: int, cos: int, length: int) -> MirrorSession:
        if cos < 0 or length < 0:
            raise ControlPlaneError(
                f"clone session {session_id}: class_of_service and packet_length_bytes "
                "must not be negative"
            )
        return MirrorSession(
            mgid=P4RT_CLONE_GROUP_BASE + session_id,
            class_of_service=cos,
            packet_length_bytes=length,
        )

    def _p4rt_nodes(self, group_id: int, replicas: Sequence[Replica]) -> dict[int, tuple[int, ...]]:
        """rid -> ports, in PI's unordered_map order; duplicates are rejected as PI does."""
        by_rid: dict[int, set[int]] = {}
        for port, rid in replicas:
            _check_range("replica egress port", port, 0, PORT_COUNT - 1)
            _check_range("replica instance", rid, 0, MAX_RID)
            ports = by_rid.setdefault(rid, set())
            if port in ports:
                raise ControlPlaneError(
                    f"multicast group {group_id}: duplicate replica (port {port}, instance {rid})"
                )
            ports.add(port)
        return {rid: tuple(sorted(by_rid[rid])) for rid in _libstdcxx_order(by_rid)}

    def _p4rt_create(self, group_id: int, replicas: Sequence[Replica]) -> None:
        nodes = self._p4rt_nodes(group_id, replicas)
        if group_id in self._groups:
            raise ControlPlaneError(
                f"multicast group {group_id} already exists (created through the BMv2 CLI)"
            )
        if len(self._nodes) + len(nodes) > L1_MAX_ENTRIES:
            raise ControlPlaneError(f"multicast group {group_id}: the node table is full")
        self.mc_mgrp_create(group_id)
        handles: dict[int, int] = {}
        for rid, ports in nodes.items():
            handles[rid] = self.mc_node_create(rid, ports)
            self.mc_node_associate(group_id, handles[rid])
        self._p4rt_groups[group_id] = handles

    def _p4rt_modify(self, group_id: int, replicas: Sequence[Replica]) -> None:
        nodes = self._p4rt_nodes(group_id, replicas)
        old = self._p4rt_groups[group_id]
        added = sum(1 for rid in nodes if rid not in old)
        if len(self._nodes) + added > L1_MAX_ENTRIES:
            raise ControlPlaneError(f"multicast group {group_id}: the node table is full")
        handles: dict[int, int] = {}
        for rid, ports in nodes.items():
            handle = old.get(rid)
            if handle is None:
                handle = self.mc_node_create(rid, ports)
                self.mc_node_associate(group_id, handle)
            else:
                self.mc_node_update(handle, ports)
            handles[rid] = handle
        for rid, handle in old.items():
            if rid not in nodes:
                self.mc_node_destroy(handle)
        self._p4rt_groups[group_id] = handles

    def _p4rt_delete(self, group_id: int) -> None:
        for handle in self._p4rt_groups.pop(group_id).values():
            if handle in self._nodes:  # the BMv2 CLI may have destroyed it meanwhile
                self.mc_node_destroy(handle)
        self.mc_mgrp_destroy(group_id)
