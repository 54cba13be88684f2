"""``p4.v1.Action`` ⇄ engine action (spec, argument tuple) for one table or action profile."""

from __future__ import annotations

from finsy.proto import p4i, p4r

from softswitch.engine.support import noop
from softswitch.engine.tables import ActionSpec
from softswitch.runtime.server import bytestrings
from softswitch.runtime.server.p4info_index import P4InfoIndex, TableInfo
from softswitch.runtime.server.write_error import invalid


def parse_action(index: P4InfoIndex, info: TableInfo, action: p4r.Action, *,
                 default: bool, where: str) -> tuple[ActionSpec, tuple[int, ...]]:
    """Validate `action` for `info`'s table (as a table entry, or its default when `default`)."""
    ainfo = index.action(action.action_id)
    if action.action_id not in info.actions:
        raise invalid(f"{where}: action '{ainfo.name}' is not one of table "
                      f"'{info.name}''s actions")
    scope = info.scopes[action.action_id]
    if default and scope == p4i.ActionRef.TABLE_ONLY:
        raise invalid(f"{where}: action '{ainfo.name}' is @tableonly: not a default action")
    if not default and scope == p4i.ActionRef.DEFAULT_ONLY:
        raise invalid(f"{where}: action '{ainfo.name}' is @defaultonly: not for entries")
    spec = info.actions[action.action_id]
    if spec is None:  # a P4Info-only @defaultonly NoAction (p4c adds it; the engine runs noop)
        spec = ActionSpec(ainfo.name, noop, (), -1)
    if ainfo.problem is not None:
        raise invalid(f"{where}: {ainfo.problem}")
    values: list[int | None] = [None] * len(ainfo.params)
    for param in action.params:
        found = ainfo.params.get(param.param_id)
        if found is None:
            raise invalid(f"{where}: action '{ainfo.name}' has no parameter with id "
                          f"{param.param_id}")
        i, pname, width = found
        if values[i] is not None:
            raise invalid(f"{where}: action '{ainfo.name}' parameter '{pname}' given twice")
        values[i] = bytestrings.decode(param.value, width,
                                       f"{where}: action '{ainfo.name}' parameter '{pname}'")
    missing = [name for (i, name, _w) in ainfo.params.values() if values[i] is None]
    if missing:
        raise invalid(f"{where}: action '{ainfo.name}' needs parameter '{missing[0]}'")
    return spec, tuple(v for v in values if v is not None)


def action_proto(info: TableInfo, index: P4InfoIndex, name: str,
                 args: tuple[int, ...]) -> p4r.Action:
    """The ``p4.v1.Action`` for engine action `name` with `args` in `info`'s table."""
    action_id = info.action_ids.get(name)
    if action_id is None:
        raise invalid(f"table '{info.name}': engine action '{name}' has no P4Info id")
    ainfo = index.action(action_id)
    msg = p4r.Action(action_id=action_id)
    for pid, (i, _name, width) in ainfo.params.items():
        value = args[i] if i < len(args) else 0
        msg.params.add(param_id=pid, value=bytestrings.encode(value, width))
    return msg
