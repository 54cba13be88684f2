"""ActionProfileMember / ActionProfileGroup entities and one-shot action sets, as PI does them.

The engine's `ActionProfile` keeps members and groups by id; P4Runtime member and group ids
are used as they are. What the engine lacks is kept here:

- member weights: like PI's action profile manager on BMv2 (which has no weights), a member
  of weight w is in the group w times — the extra w-1 are hidden engine members with the same
  action, ids from 2**32 up (P4Runtime ids are 32-bit, so they never collide);
- watch ports (stored and read back, not acted on: softswitch ports never go down);
- one-shot action sets (``action_profile_action_set`` in a table entry): a hidden group (or,
  for a profile without selector, a hidden member). A profile is programmed either with
  members/groups or one-shot, never both (PI's rule): mixing is INVALID_ARGUMENT.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
from finsy.proto import p4i, p4r

from softswitch.engine.tables import ActionProfile, Member
from softswitch.errors import ControlPlaneError
from softswitch.runtime.server.actions import action_proto, parse_action
from softswitch.runtime.server.p4info_index import P4InfoIndex, TableInfo
from softswitch.runtime.server.write_error import (
    P4RuntimeWriteError,
    already_exists,
    invalid,
    not_found,
)

HIDDEN_BASE = 1 << 32


@dataclass
class _GroupState:
    max_size: int
    members: dict[int, p4r.ActionProfileGroup.Member] = field(default_factory=dict)
    hidden: list[int] = field(default_factory=list)  # extra engine members for weights


@dataclass
class _ProfileState:
    proto: p4i.ActionProfile
    engine: ActionProfile
    members: dict[int, p4r.ActionProfileMember] = field(default_factory=dict)
    groups: dict[int, _GroupState] = field(default_factory=dict)
    oneshot: int = 0  # one-shot action sets in use
    hidden_of: dict[int, list[int]] = field(default_factory=dict)  # member → its weight copies


class ActionProfiles:
    """Members and groups of every action profile of one pipeline."""

    def __init__(self, index: P4InfoIndex) -> None:
        self.index = index
        self._profiles = {pid: _ProfileState(proto, engine)
                          for pid, (proto, engine) in index.profiles.items()}
        self._next_hidden = HIDDEN_BASE

    # -- members ------------------------------------------------------------------------------

    def write_member(self, kind: int, msg: p4r.ActionProfileMember) -> None:
        state = self._state(msg.action_profile_id)
        where = f"action profile '{state.proto.preamble.name}' member {msg.member_id}"
        if kind == p4r.Update.DELETE:
            if msg.member_id not in state.members:
                raise not_found(f"{where} does not exist")
            self._check_unused(state, msg.member_id, where)
            self._engine(lambda: state.engine.delete_member(msg.member_id), where)
            del state.members[msg.member_id]
            return
        if state.oneshot:
            raise invalid(f"{where}: the profile is programmed with one-shot action sets")
        info = self._table_info(state)
        spec, args = parse_action(self.index, info, msg.action, default=False, where=where)
        if kind == p4r.Update.INSERT:
            if msg.member_id in state.members:
                raise already_exists(f"{where} already exists")
            self._engine(lambda: state.engine.add_member(spec.name, args, msg.member_id), where)
        elif kind == p4r.Update.MODIFY:
            if msg.member_id not in state.members:
                raise not_found(f"{where} does not exist")
            for mid in (msg.member_id, *state.hidden_of.get(msg.member_id, ())):
                self._engine(lambda m=mid: state.engine.modify_member(m, spec.name, args),
                             where)
        else:
            raise invalid(f"{where}: update type {kind} is not INSERT/MODIFY/DELETE")
        stored = p4r.ActionProfileMember()
        stored.CopyFrom(msg)
        state.members[msg.member_id] = stored

    def read_members(self, msg: p4r.ActionProfileMember) -> Iterator[p4r.Entity]:
        for pid, state in self._select(msg.action_profile_id):
            for mid in sorted(state.members):
                if (msg.member_id and mid != msg.member_id) or mid not in state.members:
                    continue  # (deleted since the read began)
                member = state.engine.member(mid)
                info = self._table_info(state)
                out = p4r.Entity()
                m = out.action_profile_member
                m.action_profile_id, m.member_id = pid, mid
                m.action.CopyFrom(action_proto(info, self.index, member.action, member.args))
                yield out

    # -- groups -------------------------------------------------------------------------------

    def write_group(self, kind: int, msg: p4r.ActionProfileGroup) -> None:
        state = self._state(msg.action_profile_id)
        name = state.proto.preamble.name
        where = f"action profile '{name}' group {msg.group_id}"
        if not state.proto.with_selector:
            raise invalid(f"{where}: '{name}' has no selector, so no groups")
        if kind == p4r.Update.DELETE:
            group = state.groups.get(msg.group_id)
            if group is None:
                raise not_found(f"{where} does not exist")
            self._check_unused(state, None, where, group_id=msg.group_id)
            self._clear_group(state, msg.group_id, group)
            self._engine(lambda: state.engine.delete_group(msg.group_id), where)
            del state.groups[msg.group_id]
            return
        if kind not in (p4r.Update.INSERT, p4r.Update.MODIFY):
            raise invalid(f"{where}: update type {kind} is not INSERT/MODIFY/DELETE")
        if state.oneshot:
            raise invalid(f"{where}: the profile is programmed with one-shot action sets")
        if kind == p4r.Update.INSERT and msg.group_id in state.groups:
            raise already_exists(f"{where} already exists")
        if kind == p4r.Update.MODIFY and msg.group_id not in state.groups:
            raise not_found(f"{where} does not exist")
        members = self._check_group_members(state, msg, where)
        if kind == p4r.Update.INSERT:
            self._engine(lambda: state.engine.create_group(msg.group_id), where)
            group = state.groups[msg.group_id] = _GroupState(msg.max_size)
        else:
            group = state.groups[msg.group_id]
            if msg.max_size and msg.max_size != group.max_size:
                raise invalid(f"{where}: max_size cannot change ({group.max_size} → "
                              f"{msg.max_size})")
            self._clear_group(state, msg.group_id, group)
        for member in members:
            self._add_to_group(state, msg.group_id, group, member)
            stored = p4r.ActionProfileGroup.Member()
            stored.CopyFrom(member)
            group.members[member.member_id] = stored

    def read_groups(self, msg: p4r.ActionProfileGroup) -> Iterator[p4r.Entity]:
        for pid, state in self._select(msg.action_profile_id):
            for gid, group in sorted(state.groups.items()):
                if (msg.group_id and gid != msg.group_id) or state.groups.get(gid) is not group:
                    continue  # (deleted since the read began)
                out = p4r.Entity()
                g = out.action_profile_group
                g.action_profile_id, g.group_id, g.max_size = pid, gid, group.max_size
                for member in group.members.values():
                    g.members.add().CopyFrom(member)
                yield out

    # -- one-shot action sets (table entries) -------------------------------------------------

    def oneshot_create(self, profile_id: int, action_set: p4r.ActionProfileActionSet,
                       where: str) -> tuple[Member | None, int | None]:
        """Program a one-shot set: (engine member, None) or (None, engine group id)."""
        state = self._state(profile_id)
        if state.members or state.groups:
            raise invalid(f"{where}: action profile '{state.proto.preamble.name}' is "
                          "programmed with members/groups, not one-shot action sets")
        actions = list(action_set.action_profile_actions)
        if not actions:
            raise invalid(f"{where}: empty action_profile_action_set")
        info = self._table_info(state)
        parsed = []
        for a in actions:
            if a.weight < 0:
                raise invalid(f"{where}: negative weight {a.weight}")
            parsed.append((parse_action(self.index, info, a.action, default=False,
                                        where=where), max(a.weight, 1)))
        if not state.proto.with_selector and (len(actions) != 1 or actions[0].weight > 1):
            raise invalid(f"{where}: action profile '{state.proto.preamble.name}' has no "
                          "selector: a one-shot set takes exactly one action of weight 1")
        created: list[int] = []
        gid: int | None = None
        try:
            for (spec, args), weight in parsed:
                for _ in range(weight):
                    mid = self._hidden_id()
                    state.engine.add_member(spec.name, args, mid)
                    created.append(mid)
            if state.proto.with_selector:
                gid = self._hidden_id()
                state.engine.create_group(gid)
                for mid in created:
                    state.engine.add_member_to_group(gid, mid)
        except ControlPlaneError as exc:  # undo, so a failed write changes nothing
            if gid is not None and gid in state.engine.groups:
                state.engine.groups[gid].members.clear()
                state.engine.delete_group(gid)
            for mid in created:
                state.engine.delete_member(mid)
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
        state.oneshot += 1
        if gid is None:
            return state.engine.member(created[0]), None
        return None, gid

    def oneshot_delete(self, profile_id: int, member: Member | None, group_id: int | None) -> None:
        state = self._state(profile_id)
        if group_id is not None:
            group = state.engine.group(group_id)
            mids = [m.handle for m in group.members]
            group.members.clear()
            state.engine.delete_group(group_id)
        else:
            mids = [member.handle] if member is not None else []
        for mid in mids:
            state.engine.delete_member(mid)
        state.oneshot -= 1

    def oneshot_proto(self, profile_id: int, info: TableInfo, member: Member | None,
                      group_id: int | None) -> p4r.ActionProfileActionSet:
        state = self._state(profile_id)
        members = ([member] if member is not None
                   else list(state.engine.group(group_id).members) if group_id is not None
                   else [])
        out = p4r.ActionProfileActionSet()
        for m in members:  # equal consecutive copies are one action of a larger weight
            proto = action_proto(info, self.index, m.action, m.args)
            actions = out.action_profile_actions
            if actions and actions[-1].action == proto:
                actions[-1].weight += 1
            else:
                actions.add(action=proto, weight=1)
        return out

    def has_oneshot(self, profile_id: int) -> bool:
        """Whether `profile_id` is programmed with one-shot action sets."""
        return self._state(profile_id).oneshot > 0

    # -- internals ----------------------------------------------------------------------------

    def _state(self, profile_id: int) -> _ProfileState:
        self.index.profile(profile_id)  # NOT_FOUND for an unknown id
        return self._profiles[profile_id]

    def _select(self, profile_id: int) -> Iterator[tuple[int, _ProfileState]]:
        if profile_id == 0:
            yield from self._profiles.items()
        else:
            yield profile_id, self._state(profile_id)

    def _table_info(self, state: _ProfileState) -> TableInfo:
        tables = self.index.profile_tables(state.proto.preamble.id)
        if not tables:
            raise invalid(f"action profile '{state.proto.preamble.name}' is used by no table")
        return tables[0]

    def _hidden_id(self) -> int:
        self._next_hidden += 1
        return self._next_hidden

    def _check_unused(self, state: _ProfileState, member_id: int | None, where: str, *,
                      group_id: int | None = None) -> None:
        """A member or group still referenced by a group or a table entry cannot go."""
        if member_id is not None:
            for gid, group in state.groups.items():
                if member_id in group.members:
                    raise P4RuntimeWriteError(grpc.StatusCode.FAILED_PRECONDITION,
                                              f"{where} is in group {gid}")
        for info in self.index.profile_tables(state.proto.preamble.id):
            for entry in info.table.entries.values():
                if (member_id is not None and entry.member is not None
                        and entry.member.handle == member_id) or (
                        group_id is not None and entry.group is not None
                        and entry.group.handle == group_id):
                    raise P4RuntimeWriteError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        f"{where} is used by an entry of table '{info.name}'")

    def _check_group_members(self, state: _ProfileState, msg: p4r.ActionProfileGroup,
                             where: str) -> list[p4r.ActionProfileGroup.Member]:
        seen: set[int] = set()
        total = 0
        for member in msg.members:
            if member.member_id in seen:
                raise invalid(f"{where}: member {member.member_id} listed twice")
            seen.add(member.member_id)
            if member.member_id not in state.members:
                raise not_found(f"{where}: member {member.member_id} does not exist")
            if member.weight < 0:
                raise invalid(f"{where}: member {member.member_id} has negative weight")
            total += max(member.weight, 1)
        limit = state.proto.max_group_size
        if limit and msg.max_size > limit:
            raise invalid(f"{where}: max_size {msg.max_size} is above the profile's "
                          f"max_group_size {limit}")
        size = msg.max_size or (state.groups[msg.group_id].max_size
                                if msg.group_id in state.groups else 0)
        for cap in (size, limit):
            if cap and total > cap:
                raise P4RuntimeWriteError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                          f"{where}: {total} members (with weights) exceed "
                                          f"the group size {cap}")
        # weight copies take engine member slots: check up front so a failure changes nothing
        old = state.groups.get(msg.group_id)
        freed = len(old.hidden) if old is not None else 0
        copies = total - len(msg.members)
        if len(state.engine.members) - freed + copies > state.engine.size:
            raise P4RuntimeWriteError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                      f"{where}: member weights need {copies} more slots than "
                                      f"the profile's size {state.engine.size} leaves")
        return list(msg.members)

    def _add_to_group(self, state: _ProfileState, gid: int, group: _GroupState,
                      member: p4r.ActionProfileGroup.Member) -> None:
        where = f"action profile '{state.proto.preamble.name}' group {gid}"
        self._engine(lambda: state.engine.add_member_to_group(gid, member.member_id), where)
        engine_member = state.engine.member(member.member_id)
        for _ in range(max(member.weight, 1) - 1):
            hid = self._hidden_id()
            self._engine(lambda h=hid: state.engine.add_member(
                engine_member.action, engine_member.args, h), where)
            self._engine(lambda h=hid: state.engine.add_member_to_group(gid, h), where)
            group.hidden.append(hid)
            state.hidden_of.setdefault(member.member_id, []).append(hid)

    def _clear_group(self, state: _ProfileState, gid: int, group: _GroupState) -> None:
        engine_group = state.engine.group(gid)
        engine_group.members.clear()
        for hid in group.hidden:
            state.engine.delete_member(hid)
            for copies in state.hidden_of.values():
                if hid in copies:
                    copies.remove(hid)
        group.hidden.clear()
        group.members.clear()

    @staticmethod
    def _engine(fn: object, where: str) -> None:
        try:
            fn()  # type: ignore[operator]
        except ControlPlaneError as exc:
            raise P4RuntimeWriteError.from_engine(exc, where) from exc
