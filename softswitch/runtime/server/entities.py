"""EntityStore: P4Runtime entities (writes and reads) ⇄ one pipeline's engine `Switch`.

The server calls `write` once per ``Update`` (it owns batching and atomicity) and `read`
once per requested ``Entity`` (wildcards expand here). Every rejected request raises
`P4RuntimeWriteError` with a gRPC code and a message naming the object; the switch state is
then unchanged. The work is split by entity family:

- table_entries.py — TableEntry (match keys, actions, default entries, direct data);
- action_profiles.py — members, groups (weights, watch ports) and one-shot action sets;
- extern_entries.py — counters, meters (indexed and direct), registers;
- replication.py — multicast groups and clone sessions;
- digests.py — digest configs, value sets, engine digests as P4Data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from finsy.proto import p4i, p4r
from finsy.proto.p4.v1 import p4data_pb2

from softswitch.engine.externs import Digest
from softswitch.engine.switch import Switch
from softswitch.runtime.server.action_profiles import ActionProfiles
from softswitch.runtime.server.digests import Digests, ValueSets
from softswitch.runtime.server.extern_entries import ExternEntries
from softswitch.runtime.server.p4info_index import P4InfoIndex
from softswitch.runtime.server.replication import Replication
from softswitch.runtime.server.table_entries import TableEntries
from softswitch.runtime.server.write_error import P4RuntimeWriteError, invalid, unimplemented

__all__ = ["EntityStore", "P4RuntimeWriteError"]


class Pipeline(Protocol):
    """What EntityStore needs of a ForwardingPipeline (runtime/device.py)."""

    p4info: p4i.P4Info
    switch: Switch


class EntityStore:
    """All P4Runtime-visible state of one pipeline, over its engine `Switch`."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.index = P4InfoIndex(pipeline.p4info, pipeline.switch)
        self.profiles = ActionProfiles(self.index)
        self.tables = TableEntries(self.index, self.profiles)
        self.externs = ExternEntries(self.index, self.tables)
        self.replication = Replication(pipeline.switch.pre, pipeline.switch.arch)
        self.digests = Digests(self.index)
        self.value_sets = ValueSets(self.index)
        self._write_handlers = self._writers()
        self._read_handlers = self._readers()

    def write(self, update: p4r.Update) -> None:
        """Apply one INSERT/MODIFY/DELETE update."""
        kind = update.type
        if kind == p4r.Update.UNSPECIFIED:
            raise invalid("update type UNSPECIFIED")
        entity = update.entity
        if entity.HasField("table_entry"):  # the bulk of all writes: the shortest way
            self.tables.write(kind, entity.table_entry)
            return
        which = entity.WhichOneof("entity")
        handler = self._write_handlers.get(which or "")
        if handler is None:
            if which is None:
                raise invalid("the update has no entity")
            raise unimplemented(f"writing {which} is not supported")
        handler(kind, getattr(entity, which))

    def write_encoded(self, data: bytes, start: int, end: int) -> bool:
        """`write` of the Update at ``data[start:end]`` (a WriteRequest's bytes) when it is a
        plain table entry update; False, with nothing changed, when `write` must take the
        parsed Update instead (TableEntries.write_encoded)."""
        return self.tables.write_encoded(data, start, end)

    def read(self, entity: p4r.Entity) -> Iterator[p4r.Entity]:
        """Every entity matching `entity` (zero ids and unset fields are wildcards), lazily:
        the server pulls them in chunks, holding the device lock for each chunk only, so a
        write may come between two chunks (the readers iterate over copies, and skip objects
        deleted meanwhile). A bad request raises on the first pull."""
        which = entity.WhichOneof("entity")
        handler = self._read_handlers.get(which or "")
        if handler is None:
            if which is None:
                raise invalid("the read request has an empty entity")
            raise unimplemented(f"reading {which} is not supported")
        return handler(getattr(entity, which))

    def read_encoded(self, entity: p4r.Entity) -> Iterator[tuple[int, bytes]] | None:
        """`read` as (P4Info id, the Entity's wire bytes) for the table entry reads a
        controller makes to reconcile (TableEntries.read_encoded); None: `read` answers."""
        if entity.WhichOneof("entity") != "table_entry":
            return None
        return self.tables.read_encoded(entity.table_entry)

    def digest_config(self, digest_id: int) -> p4r.DigestEntry.Config | None:
        """The config written for `digest_id`, or None (digests are then not streamed)."""
        return self.digests.config(digest_id)

    def digest_to_p4data(self, digest: Digest) -> tuple[int, p4data_pb2.P4Data]:
        """(P4Info digest id, P4Data) for a digest the engine produced."""
        return self.digests.to_p4data(digest)

    # -- dispatch -----------------------------------------------------------------------------

    def _writers(self) -> dict[str, Any]:
        return {
            "table_entry": self.tables.write,
            "action_profile_member": self.profiles.write_member,
            "action_profile_group": self.profiles.write_group,
            "counter_entry": self.externs.write_counter,
            "direct_counter_entry": self.externs.write_direct_counter,
            "meter_entry": self.externs.write_meter,
            "direct_meter_entry": self.externs.write_direct_meter,
            "register_entry": self.externs.write_register,
            "packet_replication_engine_entry": self.replication.write,
            "digest_entry": self.digests.write,
            "value_set_entry": self.value_sets.write,
        }

    def _readers(self) -> dict[str, Any]:
        return {
            "table_entry": self.tables.read,
            "action_profile_member": self.profiles.read_members,
            "action_profile_group": self.profiles.read_groups,
            "counter_entry": self.externs.read_counters,
            "direct_counter_entry": self.externs.read_direct_counters,
            "meter_entry": self.externs.read_meters,
            "direct_meter_entry": self.externs.read_direct_meters,
            "register_entry": self.externs.read_registers,
            "packet_replication_engine_entry": self.replication.read,
            "digest_entry": self.digests.read,
            "value_set_entry": self.value_sets.read,
        }
