"""Action profiles and selectors of the C engine: the Python `ActionProfile` stays the record
(validation, ids, P4Runtime reads); its `native` mirror installs every accepted member and
group change into the profile's ``ss_profile``, which the generated tables read (a member's
action by C id, a group's member ids in handle order for the selector's choice)."""

from __future__ import annotations

from typing import Any

from softswitch.engine.tables import ActionProfile, Group, Member
from softswitch.native.tables import words


class NativeProfileMirror:
    """Keeps one ss_profile equal to an ActionProfile's members and groups."""

    def __init__(self, ffi: Any, lib: Any, cprofile: Any, actions: dict[str, int],
                 profile: ActionProfile) -> None:
        self.ffi, self.lib, self.cprofile = ffi, lib, cprofile
        self.actions = actions  # control-plane action name → C action id
        self.profile = profile

    def attach(self) -> None:
        """Install what the profile holds already and follow it."""
        for member in self.profile.members.values():
            self.member_set(member)
        for group in self.profile.groups.values():
            self.group_set(group)
        self.profile.native = self

    def member_set(self, member: Member) -> None:
        args = words(member.args)
        aid = self.actions.get(member.action, -1)
        found = self.lib.ss_profile_member_set(self.cprofile, member.handle, aid,
                                               len(member.args),
                                               self.ffi.new("uint64_t[]", args or [0]))
        if found == self.ffi.NULL:
            raise RuntimeError(f"action profile '{self.profile.name}': the C store refused "
                               f"member {member.handle}")

    def member_deleted(self, member_id: int) -> None:
        self.lib.ss_profile_member_del(self.cprofile, member_id)

    def group_set(self, group: Group) -> None:
        ids = [m.handle for m in group.members]
        if self.lib.ss_profile_group_set(self.cprofile, group.handle, len(ids),
                                         self.ffi.new("int64_t[]", ids or [0])):
            raise RuntimeError(f"action selector '{self.profile.name}': the C store refused "
                               f"group {group.handle}")

    def group_deleted(self, group_id: int) -> None:
        self.lib.ss_profile_group_del(self.cprofile, group_id)
