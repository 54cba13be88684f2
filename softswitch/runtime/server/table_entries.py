"""TableEntry ⇄ engine `Table`: match keys, actions, priorities, default entries, extras.

Rules (P4Runtime spec 9.1, PI's ``device_mgr.cpp``):
- a ternary/lpm/range/optional field that is "don't care" is omitted; sending it with an
  all-wildcard value (mask 0, prefix length 0, the full range) is INVALID_ARGUMENT; exact
  fields are required; an LPM value has no bits past its prefix, a ternary value none outside
  its mask;
- priority is required (> 0) iff the table has a ternary, range or optional field, else 0;
- the default entry is only MODIFYed (INSERT/DELETE of it are INVALID_ARGUMENT); a MODIFY
  with no action resets it to the program's default; a const default is PERMISSION_DENIED,
  as is any change to a table with const entries;
- MODIFY without counter_data / meter_config leaves the entry's counters and meter as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from finsy.proto import p4i, p4r

from p4rt.protowire import VarintTooLong
from softswitch.engine.meters import Meter
from softswitch.engine.tables import (
    ActionSpec,
    Entry,
    ExactMatch,
    LpmMatch,
    Match,
    Member,
    OptionalMatch,
    RangeMatch,
    TernaryMatch,
)
from softswitch.errors import ControlPlaneError
from softswitch.runtime.server import bytestrings, wire
from softswitch.runtime.server.action_profiles import ActionProfiles
from softswitch.runtime.server.actions import action_proto, parse_action
from softswitch.runtime.server.p4info_index import (
    MATCH_KINDS,
    FastPath,
    P4InfoIndex,
    TableInfo,
)
from softswitch.runtime.server.write_error import (
    P4RuntimeWriteError,
    already_exists,
    invalid,
    not_found,
    permission_denied,
    unimplemented,
    update_type_name,
)

_INSERT, _MODIFY, _DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass
class _Extra:
    """What P4Runtime stores with an entry that the engine does not."""

    controller_metadata: int = 0
    metadata: bytes = b""
    idle_timeout_ns: int = 0
    oneshot_profile: int | None = None  # profile id when the action is a one-shot set

    @property
    def plain(self) -> bool:
        """Nothing a read-back shows (a MODIFY stores this for every entry it changes)."""
        return not (self.controller_metadata or self.metadata or self.idle_timeout_ns
                    or self.oneshot_profile is not None)


class TableEntries:
    """Table entries of every table of one pipeline."""

    def __init__(self, index: P4InfoIndex, profiles: ActionProfiles) -> None:
        self.index = index
        self.profiles = profiles
        self._extras: dict[tuple[int, int], _Extra] = {}
        # the tables `write_encoded` reads, and each table's `read_encoded` writer (wire.py)
        self._layout = wire.PipelineLayout(list(index.tables.values()))
        self._encoders: dict[int, wire.EntryEncoder] = {}

    # -- write --------------------------------------------------------------------------------

    def write(self, kind: int, msg: p4r.TableEntry) -> None:
        info = self.index.tables.get(msg.table_id) or self.index.table(msg.table_id)
        fast = info.fast
        if fast is not None:
            if kind == _INSERT:
                if self._fast_insert(info, fast, msg):
                    return
            elif kind in (_MODIFY, _DELETE):
                entry = self._fast_find(info, fast, msg)
                if entry is not None:
                    where = f"table '{info.name}'"
                    if kind == _DELETE:
                        self._delete(info, entry, where)
                    else:
                        self._modify_checked(info, msg, entry, where)
                    return
        where = f"table '{info.name}'"
        if kind not in (p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE):
            raise invalid(f"{where}: update type {kind} is not INSERT/MODIFY/DELETE")
        if msg.is_default_action:
            if kind != p4r.Update.MODIFY:
                raise invalid(f"{where}: the default entry can only be modified, not "
                              f"{update_type_name(kind)}")
            self._modify_default(info, msg, where)
            return
        if info.proto.is_const_table:
            raise permission_denied(f"{where} has const entries: it cannot be changed")
        matches = self.parse_matches(info, msg, where)
        priority = self._priority(info, msg, where)
        engine_priority = priority if info.table.needs_priority else None
        if kind == p4r.Update.DELETE:
            self._delete(info, self._find(info, matches, engine_priority, where), where)
            return
        self._check_extras(info, msg, where)
        if not msg.HasField("action"):
            raise invalid(f"{where}: an entry needs an action")
        if kind == p4r.Update.INSERT:
            if info.table.mode != "none" and info.table.find_entry(matches,
                                                                   engine_priority):
                raise already_exists(f"{where}: an entry with this match key"
                                     f"{' and priority' if priority else ''} exists")
            self._insert(info, msg, matches, engine_priority, where)
        else:
            entry = self._find(info, matches, engine_priority, where)
            self._modify(info, msg, entry, where)

    def write_encoded(self, data: bytes, start: int, end: int) -> bool:
        """Apply the Update at ``data[start:end]`` (a WriteRequest's bytes, wire.py) when it
        is a plain INSERT, MODIFY or DELETE of a table entry (a direct action, no direct
        resources or idle timeout) in the layout clients send; False, with nothing changed,
        for anything else or anything wrong: the parsed Update then takes `write`, which
        does the same or finds the error and words it. The checks are `_fast_insert`'s and
        `_fast_find`'s."""
        try:
            decoded = self._layout.decode(data, start, end)
        except (IndexError, wire.Irregular, VarintTooLong):
            return False
        if decoded is None:
            return False
        kind, info, matches, priority, spec, args, controller_metadata, metadata = decoded
        if (priority <= 0) if info.needs_priority else (priority != 0):
            return False
        table = info.table
        if kind == _INSERT:
            try:
                handle = table.add_checked_entry(matches, spec, args, priority)
            except ControlPlaneError:   # ALREADY_EXISTS, full: the general path words them
                return False
            if controller_metadata or metadata:
                self._extras[(info.id, handle)] = _Extra(controller_metadata, metadata)
            return True
        entry = table.find_checked_entry(matches, priority)
        if entry is None:
            return False
        if kind == _DELETE:
            self._delete(info, entry, f"table '{info.name}'")
        else:   # `_modify`'s direct-action case: the action, then the request's extras
            table.modify_checked_entry(entry.handle, spec, args)
            self._extras[(info.id, entry.handle)] = _Extra(controller_metadata, metadata)
        return True

    def _delete(self, info: TableInfo, entry: Entry, where: str) -> None:
        self._engine(lambda: info.table.delete_entry(entry.handle), where)
        extra = self._extras.pop((info.id, entry.handle), _Extra())
        if extra.oneshot_profile is not None:
            self.profiles.oneshot_delete(extra.oneshot_profile, entry.member,
                                         entry.group.handle if entry.group else None)

    def _modify_checked(self, info: TableInfo, msg: p4r.TableEntry, entry: Entry,
                        where: str) -> None:
        """MODIFY of an entry found by `_fast_find`: the general path's remaining checks."""
        self._check_extras(info, msg, where)
        if not msg.HasField("action"):
            raise invalid(f"{where}: an entry needs an action")
        self._modify(info, msg, entry, where)

    def _fast_find(self, info: TableInfo, fast: FastPath,
                   msg: p4r.TableEntry) -> Entry | None:
        """The existing entry a MODIFY/DELETE names, found with one decoding of its key;
        None when the general path must decide (an error, or no such entry)."""
        if msg.is_default_action:
            return None
        matches = self._decode_key(fast, msg)
        if matches is None:
            return None
        priority = msg.priority
        if (priority <= 0) if info.needs_priority else (priority != 0):
            return None
        return info.table.find_checked_entry(matches, priority)

    def _fast_insert(self, info: TableInfo, fast: FastPath, msg: p4r.TableEntry) -> bool:
        """INSERT a plain entry (direct action, no direct resources or idle timeout) in one
        pass; False, with nothing changed, for anything else or anything wrong: the general
        path then does the insert or finds the error and reports it precisely. Every check of
        the general path and the engine happens here too, once."""
        if msg.is_default_action:
            return False
        matches = self._decode_key(fast, msg)
        if matches is None:
            return False
        priority = msg.priority
        if (priority <= 0) if info.needs_priority else (priority != 0):
            return False
        if (msg.idle_timeout_ns or msg.HasField("counter_data")
                or msg.HasField("meter_config") or msg.HasField("meter_counter_data")):
            return False
        # when the action oneof holds a member, group or action set, `action.action` is an
        # empty Action whose id 0 is no P4Info id, so decoding fails and the general path runs
        decoded = self._decode_action(fast, msg.action.action)
        if decoded is None:
            return False
        try:
            # ALREADY_EXISTS, full, const: the general path words them for P4Runtime
            handle = info.table.add_checked_entry(matches, decoded[0], decoded[1], priority)
        except ControlPlaneError:
            return False
        if msg.controller_metadata or msg.metadata:
            self._extras[(info.id, handle)] = _Extra(msg.controller_metadata, msg.metadata)
        return True

    @staticmethod
    def _decode_key(fast: FastPath, msg: p4r.TableEntry) -> tuple[Match, ...] | None:
        """The engine's normalised key for `msg`, or None if any field is not plainly valid
        (the checks of `_parse_field` and `parse_matches`, without their messages)."""
        defaults = fast.defaults
        out = list(defaults)
        decoders = fast.decoders
        from_bytes = int.from_bytes
        fields = msg.match
        for k in range(len(fields)):   # indexing is faster than upb's iterator
            fm = fields[k]
            d = decoders.get(fm.field_id)
            if d is None:
                return None
            i = d.index
            kind = d.kind
            # a field given twice: its slot no longer holds the default
            if out[i] is not defaults[i] or fm.WhichOneof("field_match_type") != kind:
                return None
            width = d.width
            m: Match
            if kind == "lpm":
                lpm = fm.lpm
                data, plen = lpm.value, lpm.prefix_len
                value = from_bytes(data, "big")
                if not data or not 0 < plen <= width or value >> width \
                        or value & (d.full >> plen):
                    return None
                m = LpmMatch(value, plen)
            elif kind == "exact":
                data = fm.exact.value
                value = from_bytes(data, "big")
                if not data or value >> width:
                    return None
                m = ExactMatch(value)
            elif kind == "ternary":
                t = fm.ternary
                vdata, mdata = t.value, t.mask
                value, mask = from_bytes(vdata, "big"), from_bytes(mdata, "big")
                if not vdata or not mdata or value >> width or mask >> width or mask == 0 \
                        or value & ~mask:
                    return None
                m = TernaryMatch(value, mask)
            elif kind == "range":
                r = fm.range
                ldata, hdata = r.low, r.high
                low, high = from_bytes(ldata, "big"), from_bytes(hdata, "big")
                if not ldata or not hdata or low >> width or high >> width or low > high \
                        or (low == 0 and high == d.full):
                    return None
                m = RangeMatch(low, high)
            else:
                data = fm.optional.value
                value = from_bytes(data, "big")
                if not data or value >> width:
                    return None
                m = OptionalMatch(value)
            out[i] = m
        for i in fast.required:  # exact fields must be given
            if out[i] is None:
                return None
        return tuple(out)  # type: ignore[arg-type]

    @staticmethod
    def _decode_action(fast: FastPath,
                       action: p4r.Action) -> tuple[ActionSpec, tuple[int, ...]] | None:
        """(spec, args) for an entry action, or None if it is not plainly valid (the checks
        of `parse_action`, without their messages)."""
        found = fast.actions.get(action.action_id)
        if found is None:
            return None
        spec, ids, widths, by_id = found
        params = action.params
        values: list[int] = []
        if len(params) == len(ids):   # the usual order, parameter ids ascending
            from_bytes = int.from_bytes
            for k, pid in enumerate(ids):   # indexing is faster than upb's iterator
                param = params[k]
                data = param.value
                value = from_bytes(data, "big")
                if param.param_id != pid or not data or value >> widths[k]:
                    break
                values.append(value)
            else:
                return spec, tuple(values)
        return TableEntries._decode_params(spec, by_id, params)

    @staticmethod
    def _decode_params(spec: ActionSpec, by_id: dict[int, tuple[int, int]],
                       params: Iterable[p4r.Action.Param],
                       ) -> tuple[ActionSpec, tuple[int, ...]] | None:
        """`_decode_action` for parameters in any order."""
        values: list[int | None] = [None] * len(by_id)
        for param in params:
            p = by_id.get(param.param_id)
            if p is None:
                return None
            i, width = p
            data = param.value
            value = int.from_bytes(data, "big")
            if values[i] is not None or not data or value >> width:
                return None
            values[i] = value
        if None in values:
            return None
        return spec, tuple(values)  # type: ignore[arg-type]

    def _insert(self, info: TableInfo, msg: p4r.TableEntry, matches: list[Match | None],
                priority: int | None, where: str) -> None:
        table = info.table
        action = msg.action
        which = action.WhichOneof("type")
        meter_rates = self._meter_rates(info, msg, where)
        extra = self._extra(msg)
        if which == "action":
            if table.profile is not None:
                raise invalid(f"{where} uses an action profile: give a member, group or "
                              "action set, not an action")
            spec, args = parse_action(self.index, info, action.action, default=False,
                                      where=where)
            handle = self._engine(lambda: table.add_entry(matches, spec.name, args, priority),
                                  where)
        else:
            pid = self._profile_id(info, where)
            if which == "action_profile_member_id":
                self._check_member(pid, action.action_profile_member_id, where)
                handle = self._engine(lambda: table.add_member_entry(
                    matches, action.action_profile_member_id, priority), where)
            elif which == "action_profile_group_id":
                self._check_group(pid, action.action_profile_group_id, where)
                handle = self._engine(lambda: table.add_group_entry(
                    matches, action.action_profile_group_id, priority), where)
            elif which == "action_profile_action_set":
                member, gid = self.profiles.oneshot_create(
                    pid, action.action_profile_action_set, where)
                try:
                    if gid is not None:
                        handle = self._engine(lambda: table.add_group_entry(
                            matches, gid, priority), where)
                    else:
                        assert member is not None
                        handle = self._engine(lambda: table.add_member_entry(
                            matches, member.handle, priority), where)
                except P4RuntimeWriteError:
                    self.profiles.oneshot_delete(pid, member, gid)
                    raise
                extra.oneshot_profile = pid
            else:
                raise invalid(f"{where}: the entry's action is empty")
        entry = table.entry(handle)
        self._apply_direct(info, msg, entry, meter_rates)
        self._extras[(info.id, handle)] = extra

    def _modify(self, info: TableInfo, msg: p4r.TableEntry, entry: Entry, where: str) -> None:
        table = info.table
        action = msg.action
        which = action.WhichOneof("type")
        meter_rates = self._meter_rates(info, msg, where)
        old = self._extras.get((info.id, entry.handle), _Extra())
        extra = self._extra(msg)
        if which == "action":
            if table.profile is not None:
                raise invalid(f"{where} uses an action profile: give a member, group or "
                              "action set, not an action")
            decoded = (self._decode_action(info.fast, action.action) if info.fast is not None
                       else None)
            if decoded is not None:
                spec, args = decoded
                self._engine(lambda: table.modify_checked_entry(entry.handle, spec, args), where)
            else:  # the general path: it finds and words any error
                spec, args = parse_action(self.index, info, action.action, default=False,
                                          where=where)
                self._engine(lambda: table.modify_entry(entry.handle, spec.name, args), where)
        else:
            pid = self._profile_id(info, where)
            member: Member | None = None
            gid: int | None = None
            if which == "action_profile_member_id":
                self._check_member(pid, action.action_profile_member_id, where)
                member = table.profile.member(action.action_profile_member_id)  # type: ignore[union-attr]
            elif which == "action_profile_group_id":
                self._check_group(pid, action.action_profile_group_id, where)
                gid = action.action_profile_group_id
            elif which == "action_profile_action_set":
                member, gid = self.profiles.oneshot_create(
                    pid, action.action_profile_action_set, where)
                extra.oneshot_profile = pid
            else:
                raise invalid(f"{where}: the entry's action is empty")
            if old.oneshot_profile is not None:
                self.profiles.oneshot_delete(old.oneshot_profile, entry.member,
                                             entry.group.handle if entry.group else None)
            table.point_entry(entry, member, table.profile.group(gid)  # type: ignore[union-attr]
                              if gid is not None else None)
        self._apply_direct(info, msg, entry, meter_rates)
        self._extras[(info.id, entry.handle)] = extra

    def _modify_default(self, info: TableInfo, msg: p4r.TableEntry, where: str) -> None:
        where = f"{where} default entry"
        if msg.match:
            raise invalid(f"{where}: a default entry has no match fields")
        if msg.priority:
            raise invalid(f"{where}: a default entry has no priority")
        if info.proto.const_default_action_id:
            raise permission_denied(f"{where}: the default action is const")
        table = info.table
        if msg.HasField("action"):
            if msg.action.WhichOneof("type") != "action":
                raise unimplemented(f"{where}: only a direct action can be the default "
                                    "(as on BMv2)")
            spec, args = parse_action(self.index, info, msg.action.action, default=True,
                                      where=where)
        else:  # reset to the program's default action
            initial = info.proto.initial_default_action
            proto = p4r.Action(action_id=initial.action_id)
            for arg in initial.arguments:
                proto.params.add(param_id=arg.param_id, value=arg.value)
            spec, args = parse_action(self.index, info, proto, default=True, where=where)
        if msg.HasField("meter_config"):
            raise unimplemented(f"{where}: a meter configuration for the default entry")
        if spec.name in table.actions:
            self._engine(lambda: table.set_default_action(spec.name, args), where)
        else:  # P4Info's implicit @defaultonly NoAction: the engine runs noop
            table.default.set_action(spec, ())
        if msg.HasField("counter_data"):
            table.default.cnt[:] = [msg.counter_data.packet_count, msg.counter_data.byte_count]

    # -- read ---------------------------------------------------------------------------------

    def read(self, msg: p4r.TableEntry) -> Iterator[p4r.Entity]:
        infos = ([self.index.table(msg.table_id)] if msg.table_id
                 else list(self.index.tables.values()))
        for info in infos:
            where = f"table '{info.name}'"
            if msg.is_default_action:
                yield self._default_entity(info, msg)
                continue
            if msg.match:
                matches = self.parse_matches(info, msg, where)
                priority = msg.priority if info.table.needs_priority else None
                found = info.table.find_entry(matches, priority)
                entries = [found] if found is not None else []
            else:
                entries = info.table.get_entries()
            live = info.table.entries
            for entry in entries:
                if msg.priority and entry.priority != msg.priority:
                    continue
                if live.get(entry.handle) is not entry:  # deleted since the read began
                    continue
                yield self.entry_entity(info, entry, msg)

    def read_encoded(self, msg: p4r.TableEntry) -> Iterator[tuple[int, bytes]] | None:
        """`read` for the reads a controller makes to reconcile (every entry of every
        table, or of one), as (table id, the Entity's wire bytes) — the bytes of `read`'s
        entities; None for any other request (a key, a priority, direct data asked for, the
        default entry): `read` answers it."""
        if (msg.is_default_action or len(msg.match) or msg.priority
                or msg.HasField("counter_data") or msg.HasField("meter_config")):
            return None
        return self._read_encoded(msg)

    def _read_encoded(self, msg: p4r.TableEntry) -> Iterator[tuple[int, bytes]]:
        infos = ([self.index.table(msg.table_id)] if msg.table_id
                 else list(self.index.tables.values()))
        extras = self._extras
        for info in infos:
            encoder = self._encoders.get(info.id)
            if encoder is None:
                encoder = self._encoders[info.id] = wire.EntryEncoder(info, self.index)
            live = info.table.entries
            for entry in info.table.get_entries():
                if live.get(entry.handle) is not entry:  # deleted since the read began
                    continue
                extra = extras.get((info.id, entry.handle))
                data = encoder.encode(entry) if extra is None or extra.plain else None
                if data is None:   # anything but a plain entry: as `read` makes it
                    data = self.entry_entity(info, entry, msg).SerializeToString()
                yield info.id, data

    def entry_entity(self, info: TableInfo, entry: Entry,
                     request: p4r.TableEntry | None = None) -> p4r.Entity:
        out = p4r.Entity()
        te = out.table_entry
        te.table_id = info.id
        for (fid, (i, f)) in info.fields.items():
            self._match_proto(te, fid, f, entry.matches[i])
        if info.needs_priority:
            te.priority = entry.priority
        extra = self._extras.get((info.id, entry.handle), _Extra())
        pid = info.proto.implementation_id
        if extra.oneshot_profile is not None:
            te.action.action_profile_action_set.CopyFrom(self.profiles.oneshot_proto(
                pid, info, entry.member, entry.group.handle if entry.group else None))
        elif entry.group is not None:
            te.action.action_profile_group_id = entry.group.handle
        elif entry.member is not None:
            te.action.action_profile_member_id = entry.member.handle
        else:
            te.action.action.CopyFrom(action_proto(info, self.index, entry.action, entry.args))
        te.controller_metadata = extra.controller_metadata
        te.metadata = extra.metadata
        te.idle_timeout_ns = extra.idle_timeout_ns
        te.is_const = info.proto.is_const_table
        self._direct_data(info, entry, te, request)
        return out

    def _default_entity(self, info: TableInfo, request: p4r.TableEntry) -> p4r.Entity:
        out = p4r.Entity()
        te = out.table_entry
        te.table_id = info.id
        te.is_default_action = True
        default = info.table.default
        if default.action:
            te.action.action.CopyFrom(action_proto(info, self.index, default.action,
                                                   default.args))
        self._direct_data(info, default, te, request)
        return out

    def _direct_data(self, info: TableInfo, entry: Entry, te: p4r.TableEntry,
                     request: p4r.TableEntry | None) -> None:
        if request is None:
            return
        if request.HasField("counter_data") and info.table.has_counter:
            te.counter_data.packet_count, te.counter_data.byte_count = entry.cnt
        if request.HasField("meter_config") and entry.meter is not None:
            rates = entry.meter.rates()
            if rates is not None:
                te.meter_config.cir, te.meter_config.cburst = rates.cir, rates.cburst
                te.meter_config.pir, te.meter_config.pburst = rates.pir, rates.pburst

    # -- lookups for direct resources --------------------------------------------------------

    def find(self, msg: p4r.TableEntry, where: str) -> tuple[TableInfo, Entry]:
        """The entry `msg` names (its match key and priority): NOT_FOUND if none."""
        info = self.index.table(msg.table_id)
        matches = self.parse_matches(info, msg, where)
        priority = self._priority(info, msg, where)
        return info, self._find(info, matches, priority if info.table.needs_priority else None,
                                where)

    # -- match keys ---------------------------------------------------------------------------

    def parse_matches(self, info: TableInfo, msg: p4r.TableEntry,
                      where: str) -> list[Match | None]:
        out: list[Match | None] = [None] * len(info.fields)
        for fm in msg.match:
            found = info.fields.get(fm.field_id)
            if found is None:
                raise invalid(f"{where} has no match field with id {fm.field_id}")
            i, f = found
            fwhere = f"{where} field '{f.name}'"
            if out[i] is not None:
                raise invalid(f"{fwhere} given twice")
            out[i] = self._parse_field(f, fm, fwhere)
        for (i, f) in info.fields.values():
            if out[i] is None and f.match_type == p4i.MatchField.EXACT:
                raise invalid(f"{where} field '{f.name}': an exact field needs a value")
        return out

    @staticmethod
    def _parse_field(f: p4i.MatchField, fm: p4r.FieldMatch, where: str) -> Match:
        kind = MATCH_KINDS.get(f.match_type)
        which = fm.WhichOneof("field_match_type")
        if kind is None:
            raise unimplemented(f"{where}: match kind of P4Info type {f.match_type}")
        if which != kind:
            raise invalid(f"{where} is a {kind} field, got a {which} match")
        width = f.bitwidth
        if width < 0:
            raise invalid(f"{where}: the P4Info gives it a negative bitwidth ({width})")
        full = (1 << width) - 1
        if which == "exact":
            return ExactMatch(bytestrings.decode(fm.exact.value, width, where))
        if which == "lpm":
            plen = fm.lpm.prefix_len
            if plen == 0:
                raise invalid(f"{where}: a /0 prefix is a don't care: omit the field")
            if not 0 < plen <= width:
                raise invalid(f"{where}: prefix length {plen} is out of 1..{width}")
            value = bytestrings.decode(fm.lpm.value, width, where)
            if value & (full >> plen):
                raise invalid(f"{where}: value {value:#x} has bits set past the /{plen} prefix")
            return LpmMatch(value, plen)
        if which == "ternary":
            value = bytestrings.decode(fm.ternary.value, width, where)
            mask = bytestrings.decode(fm.ternary.mask, width, where)
            if mask == 0:
                raise invalid(f"{where}: mask 0 is a don't care: omit the field")
            if value & ~mask:
                raise invalid(f"{where}: value {value:#x} has bits outside mask {mask:#x}")
            return TernaryMatch(value, mask)
        if which == "range":
            low = bytestrings.decode(fm.range.low, width, where)
            high = bytestrings.decode(fm.range.high, width, where)
            if low > high:
                raise invalid(f"{where}: range low {low:#x} > high {high:#x}")
            if low == 0 and high == full:
                raise invalid(f"{where}: the full range is a don't care: omit the field")
            return RangeMatch(low, high)
        return OptionalMatch(bytestrings.decode(fm.optional.value, width, where))

    @staticmethod
    def _match_proto(te: p4r.TableEntry, fid: int, f: p4i.MatchField, m: Match) -> None:
        full = (1 << f.bitwidth) - 1
        if isinstance(m, ExactMatch):
            te.match.add(field_id=fid).exact.value = bytestrings.encode(m.value)
        elif isinstance(m, LpmMatch):
            if m.prefix_len:
                fm = te.match.add(field_id=fid)
                fm.lpm.value, fm.lpm.prefix_len = bytestrings.encode(m.value), m.prefix_len
        elif isinstance(m, TernaryMatch):
            if m.mask:
                fm = te.match.add(field_id=fid)
                fm.ternary.value = bytestrings.encode(m.value)
                fm.ternary.mask = bytestrings.encode(m.mask)
        elif isinstance(m, RangeMatch):
            if (m.low, m.high) != (0, full):
                fm = te.match.add(field_id=fid)
                fm.range.low, fm.range.high = bytestrings.encode(m.low), bytestrings.encode(m.high)
        elif isinstance(m, OptionalMatch) and m.value is not None:
            te.match.add(field_id=fid).optional.value = bytestrings.encode(m.value)

    # -- helpers ------------------------------------------------------------------------------

    @staticmethod
    def _priority(info: TableInfo, msg: p4r.TableEntry, where: str) -> int:
        if info.needs_priority:
            if msg.priority <= 0:
                raise invalid(f"{where} has ternary/range/optional fields: an entry needs a "
                              f"priority > 0 (got {msg.priority})")
        elif msg.priority:
            raise invalid(f"{where} has no ternary/range/optional field: priority must be 0 "
                          f"(got {msg.priority})")
        return msg.priority

    def _find(self, info: TableInfo, matches: list[Match | None], priority: int | None,
              where: str) -> Entry:
        try:
            entry = info.table.find_entry(matches, priority)
        except ControlPlaneError as exc:
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
        if entry is None:
            raise not_found(f"{where}: no entry with this match key"
                            f"{' and priority' if priority else ''}")
        return entry

    @staticmethod
    def _check_extras(info: TableInfo, msg: p4r.TableEntry, where: str) -> None:
        if msg.idle_timeout_ns and \
                info.proto.idle_timeout_behavior == p4i.Table.NO_TIMEOUT:
            raise invalid(f"{where} does not support idle timeout (idle_timeout_ns "
                          f"{msg.idle_timeout_ns})")
        if msg.idle_timeout_ns < 0:
            raise invalid(f"{where}: negative idle_timeout_ns")
        if msg.HasField("counter_data") and not info.table.has_counter:
            raise invalid(f"{where} has no direct counter: counter_data is not allowed")
        if msg.HasField("meter_config") and info.table.meter_kind is None:
            raise invalid(f"{where} has no direct meter: meter_config is not allowed")
        if msg.HasField("meter_counter_data"):
            raise unimplemented(f"{where}: meter_counter_data (per-colour counters)")

    @staticmethod
    def _extra(msg: p4r.TableEntry) -> _Extra:
        return _Extra(msg.controller_metadata, msg.metadata, msg.idle_timeout_ns)

    @staticmethod
    def _meter_rates(info: TableInfo, msg: p4r.TableEntry,
                     where: str) -> tuple[int, int, int, int] | None:
        """Validate the entry's meter config up front, so a bad one changes nothing."""
        if not msg.HasField("meter_config"):
            return None
        c = msg.meter_config
        rates = (c.cir, c.cburst, c.pir, c.pburst)
        try:
            Meter("packets").set_rates(*rates)
        except ControlPlaneError as exc:
            raise invalid(f"{where}: {exc}") from exc
        return rates

    @staticmethod
    def _apply_direct(info: TableInfo, msg: p4r.TableEntry, entry: Entry,
                      rates: tuple[int, int, int, int] | None) -> None:
        if msg.HasField("counter_data"):
            entry.cnt[:] = [msg.counter_data.packet_count, msg.counter_data.byte_count]
        if rates is not None and entry.meter is not None:
            if any(rates):
                entry.meter.set_rates(*rates)
            else:
                entry.meter.reset_rates()

    def _profile_id(self, info: TableInfo, where: str) -> int:
        pid = info.proto.implementation_id
        if not pid or info.table.profile is None:
            raise invalid(f"{where} has no action profile: give an action")
        return pid

    def _check_member(self, pid: int, member_id: int, where: str) -> None:
        profile = self.index.profile(pid)[1]
        if member_id not in profile.members or member_id >= (1 << 32):
            raise not_found(f"{where}: action profile member {member_id} does not exist")
        if self.profiles.has_oneshot(pid):
            raise invalid(f"{where}: the action profile is programmed with one-shot sets")

    def _check_group(self, pid: int, group_id: int, where: str) -> None:
        proto, profile = self.index.profile(pid)
        if not proto.with_selector:
            raise invalid(f"{where}: action profile '{proto.preamble.name}' has no selector, "
                          "so no groups")
        if group_id not in profile.groups or group_id >= (1 << 32):
            raise not_found(f"{where}: action profile group {group_id} does not exist")

    @staticmethod
    def _engine(fn: object, where: str) -> int:
        try:
            return fn()  # type: ignore[operator, no-any-return]
        except ControlPlaneError as exc:
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
