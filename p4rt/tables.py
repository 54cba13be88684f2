"""Table entries and the action profile members and groups they may point to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from finsy.proto import p4i, p4r

from p4rt.actions import ActionCall, action_from_proto, action_to_proto, make_action_call
from p4rt.entity import DELETE, CounterData, Entity, MeterConfig
from p4rt.errors import EncodeError
from p4rt.matches import Match, format_match, match_from_proto, match_to_proto, to_match
from p4rt.schema import Key, Schema
from p4rt.values import decode, int_to_bytes

_KIND = p4i.MatchField.MatchType
_NEEDS_PRIORITY = (_KIND.TERNARY, _KIND.RANGE, _KIND.OPTIONAL)


class TableEntry(Entity):
    """A table entry; `TableEntry(schema)` with no table is the all-tables read wildcard."""

    def __init__(self, schema: Schema, table: Key | None = None, *,
                 match: Mapping[str, object] | None = None, action: Key | None = None,
                 params: Mapping[str, object] | None = None, priority: int = 0,
                 is_default: bool = False, member_id: int | None = None,
                 group_id: int | None = None, idle_timeout_ns: int = 0, metadata: bytes = b"",
                 counter_data: CounterData | None = None,
                 meter_config: MeterConfig | None = None) -> None:
        self.schema = schema
        self.info: p4i.Table | None = None if table is None else schema.table(table)
        self.matches: dict[str, Match] = {}
        self.action_call: ActionCall | None = None
        self.member_id = member_id
        self.group_id = group_id
        self.action_set: list[ActionCall] | None = None
        self.priority = priority
        self.is_default = is_default
        self.idle_timeout_ns = idle_timeout_ns
        self.metadata = metadata
        self.counter_data = counter_data
        self.meter_config = meter_config
        self.is_const = False
        if match:
            self.match(match)
        if action is not None:
            self.action(action, **dict(params or {}))

    @property
    def table(self) -> p4i.Table:
        if self.info is None:
            raise EncodeError("this wildcard TableEntry names no table")
        return self.info

    @property
    def name(self) -> str:
        return self.info.preamble.name if self.info is not None else "*"

    def match(self, fields: Mapping[str, object] | None = None, /, **named: object) -> TableEntry:
        """Set match fields by name (any unique dot-suffix); don't-care values are left out."""
        for key, value in {**(fields or {}), **named}.items():
            field = self.schema.match_field(self.table, key)
            what = f"table {self.name} field {field.name}"
            canonical = to_match(field, value, what)
            if canonical is None:
                self.matches.pop(field.name, None)
            else:
                self.matches[field.name] = canonical
        return self

    def action(self, name: Key, *args: object, **params: object) -> TableEntry:
        """Set a direct action; params by name, or positionally in declaration order."""
        self.action_call = make_action_call(self.schema, self.schema.table_actions(self.table),
                                            name, args, params)
        self.member_id = self.group_id = self.action_set = None
        return self

    def member(self, member_id: int) -> TableEntry:
        self.member_id, self.group_id, self.action_call, self.action_set = member_id, None, None, None
        return self

    def group(self, group_id: int) -> TableEntry:
        self.group_id, self.member_id, self.action_call, self.action_set = group_id, None, None, None
        return self

    def one_shot(self, *actions: tuple[Any, ...] | ActionCall) -> TableEntry:
        """A one-shot selector action set: each item (action, params[, weight[, watch_port]])."""
        calls = []
        index = self.schema.table_actions(self.table)
        for item in actions:
            if isinstance(item, ActionCall):
                item = (item.name, item.params, item.weight, item.watch_port)
            name, params, *rest = item
            calls.append(make_action_call(self.schema, index, name, (), dict(params), *rest))
        self.action_set = calls
        self.action_call = self.member_id = self.group_id = None
        return self

    def with_priority(self, priority: int) -> TableEntry:
        self.priority = priority
        return self

    def as_default(self) -> TableEntry:
        self.is_default = True
        return self

    def check_write(self, kind: int) -> None:
        table = self.table
        has_action = (self.action_call is not None or self.member_id is not None
                      or self.group_id is not None or self.action_set is not None)
        if kind != DELETE and not has_action and not self.is_default:
            raise EncodeError(f"table {self.name}: an entry to write needs an action")
        if self.is_default:
            if self.matches:
                raise EncodeError(f"table {self.name}: the default entry takes no match fields")
            self._check_scope(p4i.ActionRef.TABLE_ONLY, "as an entry action only")
            return
        for field in table.match_fields:
            if field.match_type == _KIND.EXACT and field.name not in self.matches:
                raise EncodeError(f"table {self.name}: exact field {field.name} needs a value")
        needs_priority = any(field.match_type in _NEEDS_PRIORITY for field in table.match_fields)
        if needs_priority and self.priority <= 0:
            raise EncodeError(f"table {self.name}: a positive priority is required "
                              "(the table has ternary, range or optional fields)")
        if not needs_priority and self.priority:
            raise EncodeError(f"table {self.name}: priority must be 0 "
                              "(the table has only exact and lpm fields)")
        if kind != DELETE:
            self._check_scope(p4i.ActionRef.DEFAULT_ONLY, "as the default action only")

    def _check_scope(self, refused: int, wording: str) -> None:
        if self.action_call is None:
            return
        ref = self.schema.action_ref(self.table, self.schema.action(self.action_call.name).preamble.id)
        if ref is not None and ref.scope == refused:
            raise EncodeError(f"table {self.name}: action {self.action_call.name} "
                              f"may be used {wording}")

    def to_entity(self) -> p4r.Entity:
        message = p4r.TableEntry(priority=self.priority, is_default_action=self.is_default,
                                 idle_timeout_ns=self.idle_timeout_ns, metadata=self.metadata)
        if self.info is None:
            return p4r.Entity(table_entry=message)
        message.table_id = self.info.preamble.id
        # Sorted by field id, so equal entries give equal messages whatever the order of .match()
        fields = [(self.schema.match_field(self.info, name), match)
                  for name, match in self.matches.items()]
        for field, match in sorted(fields, key=lambda pair: pair[0].id):
            message.match.append(match_to_proto(field, match))
        if self.action_call is not None:
            message.action.action.CopyFrom(action_to_proto(self.schema, self.action_call))
        elif self.member_id is not None:
            message.action.action_profile_member_id = self.member_id
        elif self.group_id is not None:
            message.action.action_profile_group_id = self.group_id
        elif self.action_set is not None:
            action_set = message.action.action_profile_action_set
            for call in self.action_set:
                item = action_set.action_profile_actions.add(weight=call.weight)
                item.action.CopyFrom(action_to_proto(self.schema, call))
                if call.watch_port is not None:
                    item.watch_port = int_to_bytes(call.watch_port)
        if self.counter_data is not None:
            message.counter_data.CopyFrom(self.counter_data.to_proto())
        if self.meter_config is not None:
            message.meter_config.CopyFrom(self.meter_config.to_proto())
        return p4r.Entity(table_entry=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.TableEntry) -> TableEntry:
        entry = cls(schema, message.table_id or None, priority=message.priority,
                    is_default=message.is_default_action, idle_timeout_ns=message.idle_timeout_ns,
                    metadata=message.metadata)
        entry.is_const = message.is_const
        for item in message.match:
            field = schema.match_field(entry.table, item.field_id)
            entry.matches[field.name] = match_from_proto(item)
        kind = message.action.WhichOneof("type")
        if kind == "action":
            entry.action_call = action_from_proto(schema, message.action.action)
        elif kind == "action_profile_member_id":
            entry.member_id = message.action.action_profile_member_id
        elif kind == "action_profile_group_id":
            entry.group_id = message.action.action_profile_group_id
        elif kind == "action_profile_action_set":
            entry.action_set = [
                action_from_proto(schema, item.action, item.weight,
                                  decode(item.watch_port) if item.HasField("watch_port") else None)
                for item in message.action.action_profile_action_set.action_profile_actions]
        if message.HasField("counter_data"):
            entry.counter_data = CounterData.from_proto(message.counter_data)
        if message.HasField("meter_config"):
            entry.meter_config = MeterConfig.from_proto(message.meter_config)
        return entry

    def __repr__(self) -> str:
        parts = [self.name]
        if self.matches:
            widths = {field.name: field.bitwidth for field in self.table.match_fields}
            text = ", ".join(f"{name}={format_match(match, widths.get(name, 0))}"
                             for name, match in self.matches.items())
            parts.append(f"match=[{text}]")
        if self.is_default:
            parts.append("default")
        if self.action_call is not None:
            parts.append(f"action={self.action_call}")
        if self.member_id is not None:
            parts.append(f"member={self.member_id}")
        if self.group_id is not None:
            parts.append(f"group={self.group_id}")
        if self.action_set is not None:
            parts.append("one_shot=[" + ", ".join(f"{call}*{call.weight}"
                                                  for call in self.action_set) + "]")
        if self.priority:
            parts.append(f"priority={self.priority}")
        if self.counter_data is not None:
            parts.append(f"counter={tuple(self.counter_data)}")
        return f"TableEntry({', '.join(parts)})"


# -- action profiles ------------------------------------------------------------------------------

class ActionProfileMember(Entity):
    def __init__(self, schema: Schema, profile: Key, member_id: int = 0,
                 action: Key | None = None, params: Mapping[str, object] | None = None) -> None:
        self.schema = schema
        self.info = schema.action_profile(profile)
        self.member_id = member_id
        self.action_call: ActionCall | None = None
        if action is not None:
            self.action(action, **dict(params or {}))

    def action(self, name: Key, *args: object, **params: object) -> ActionProfileMember:
        self.action_call = make_action_call(self.schema, self.schema.profile_actions(self.info),
                                            name, args, params)
        return self

    def check_write(self, kind: int) -> None:
        if kind != DELETE and self.action_call is None:
            raise EncodeError(f"action profile {self.info.preamble.name} member "
                              f"{self.member_id}: an action is required")

    def to_entity(self) -> p4r.Entity:
        message = p4r.ActionProfileMember(action_profile_id=self.info.preamble.id,
                                          member_id=self.member_id)
        if self.action_call is not None:
            message.action.CopyFrom(action_to_proto(self.schema, self.action_call))
        return p4r.Entity(action_profile_member=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.ActionProfileMember) -> ActionProfileMember:
        member = cls(schema, message.action_profile_id, message.member_id)
        if message.HasField("action"):
            member.action_call = action_from_proto(schema, message.action)
        return member

    def __repr__(self) -> str:
        return (f"ActionProfileMember({self.info.preamble.name}, {self.member_id}, "
                f"{self.action_call})")


class GroupMember(NamedTuple):
    member_id: int
    weight: int = 1
    watch_port: int | None = None


class ActionProfileGroup(Entity):
    def __init__(self, schema: Schema, profile: Key, group_id: int = 0,
                 members: Iterable[int | tuple[int, ...] | GroupMember] = (),
                 max_size: int = 0) -> None:
        self.schema = schema
        self.info = schema.action_profile(profile)
        self.group_id = group_id
        self.max_size = max_size
        self.members: list[GroupMember] = []
        self.add(*members)

    def add(self, *members: int | tuple[int, ...] | GroupMember) -> ActionProfileGroup:
        """Add members: ids, (id, weight) or (id, weight, watch_port)."""
        for item in members:
            self.members.append(GroupMember(item) if isinstance(item, int) else GroupMember(*item))
        return self

    def to_entity(self) -> p4r.Entity:
        message = p4r.ActionProfileGroup(action_profile_id=self.info.preamble.id,
                                         group_id=self.group_id, max_size=self.max_size)
        for member in self.members:
            item = message.members.add(member_id=member.member_id, weight=member.weight)
            if member.watch_port is not None:
                item.watch_port = int_to_bytes(member.watch_port)
        return p4r.Entity(action_profile_group=message)

    @classmethod
    def from_proto(cls, schema: Schema, message: p4r.ActionProfileGroup) -> ActionProfileGroup:
        group = cls(schema, message.action_profile_id, message.group_id,
                    max_size=message.max_size)
        for item in message.members:
            watch = decode(item.watch_port) if item.HasField("watch_port") else None
            group.members.append(GroupMember(item.member_id, item.weight, watch))
        return group

    def __repr__(self) -> str:
        return f"ActionProfileGroup({self.info.preamble.name}, {self.group_id}, {self.members})"
