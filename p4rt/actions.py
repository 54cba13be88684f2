"""Action calls: an action and its parameter values, resolved and checked against P4Info."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from finsy.proto import p4i, p4r

from p4rt.errors import EncodeError
from p4rt.schema import Key, NameIndex, Schema
from p4rt.values import check_width, decode, int_to_bytes, to_int


class ActionCall(NamedTuple):
    """An action with its parameter values (ints; bytes for width-less translated types)."""

    name: str
    params: dict[str, int | bytes]
    weight: int = 1              # in one-shot action sets only
    watch_port: int | None = None

    def __str__(self) -> str:
        args = ", ".join(f"{name}={_hex(value)}" for name, value in self.params.items())
        return f"{self.name}({args})"


def _hex(value: int | bytes) -> str:
    return f"{value:#x}" if isinstance(value, int) else repr(value)


def _param_value(param: p4i.Action.Param, value: object, what: str) -> int | bytes:
    if param.bitwidth == 0 and isinstance(value, bytes | str):
        try:
            return to_int(value, what)  # type: ignore[arg-type]
        except EncodeError:
            return value if isinstance(value, bytes) else value.encode()
    return check_width(to_int(value, what), param.bitwidth, what)  # type: ignore[arg-type]


def make_action_call(schema: Schema, actions: NameIndex[p4i.Action], name: Key,
                     args: Sequence[object], params: Mapping[str, object],
                     weight: int = 1, watch_port: int | None = None) -> ActionCall:
    """Resolve an action among `actions` and check and canonicalise its parameter values."""
    info = actions.get(name)
    action_name = info.preamble.name
    if len(args) == 1 and isinstance(args[0], Mapping):
        params = {**args[0], **params}
        args = ()
    declared = list(info.params)
    if len(args) > len(declared):
        raise EncodeError(f"action {action_name} takes {len(declared)} parameter(s), "
                          f"got {len(args)} positional values")
    values: dict[str, int | bytes] = {}
    for param, value in zip(declared, args, strict=False):
        values[param.name] = _param_value(param, value, f"action {action_name} param {param.name}")
    for key, value in params.items():
        param = schema.param(info, key)
        if param.name in values:
            raise EncodeError(f"action {action_name}: parameter {param.name} given twice")
        values[param.name] = _param_value(param, value, f"action {action_name} param {param.name}")
    missing = [param.name for param in declared if param.name not in values]
    if missing:
        wanted = ", ".join(param.name for param in declared)
        raise EncodeError(f"action {action_name}: missing parameter(s) {', '.join(missing)} "
                          f"(it takes: {wanted})")
    ordered = {param.name: values[param.name] for param in declared}
    return ActionCall(action_name, ordered, weight, watch_port)


def action_to_proto(schema: Schema, call: ActionCall) -> p4r.Action:
    info = schema.action(call.name)
    message = p4r.Action(action_id=info.preamble.id)
    for param in info.params:
        value = call.params[param.name]
        message.params.add(param_id=param.id,
                           value=value if isinstance(value, bytes) else int_to_bytes(value))
    return message


def action_from_proto(schema: Schema, message: p4r.Action, weight: int = 1,
                      watch_port: int | None = None) -> ActionCall:
    info = schema.action(message.action_id)
    params: dict[str, int | bytes] = {}
    for item in message.params:
        param = schema.param(info, item.param_id)
        params[param.name] = item.value if param.bitwidth == 0 else decode(item.value)
    return ActionCall(info.preamble.name, params, weight, watch_port)
