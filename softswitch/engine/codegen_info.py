"""What code generation produces besides the source: descriptions of run-time objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from softswitch.engine.tables import KeyField, Match


@dataclass
class ActionInfo:
    name: str
    fn: str  # global function name, called as fn(*ctx, _a)
    params: tuple[tuple[str, int], ...]
    aid: int
    default_only: bool = False
    table_only: bool = False


@dataclass
class EntryInfo:
    matches: list[Match]
    action: str
    args: tuple[int, ...]
    priority: int | None


@dataclass
class TableInfo:
    gname: str
    name: str
    key_fields: list[KeyField]
    mode: str
    actions: list[ActionInfo]
    default_action: str
    default_args: tuple[int, ...]
    const_default: bool
    entries: list[EntryInfo]
    entries_const: bool
    size: int
    profile: str | None = None  # gname of an action_profile/action_selector
    direct_counter: str | None = None
    direct_meter: str | None = None


@dataclass
class ExternInfo:
    gname: str
    name: str
    kind: str  # the extern type name: counter, register, meter, action_selector...
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class GeneratedProgram:
    source: str
    tables: list[TableInfo]
    externs: list[ExternInfo]
    value_sets: list[ExternInfo]
    block_fns: dict[str, str]  # v1model role → function name
    header_cls: str
    meta_cls: str
    sm_cls: str
    field_lists: dict[int, str]  # @field_list index → copier function
    hash_fns: dict[str, str]  # global name → HashAlgorithm member

