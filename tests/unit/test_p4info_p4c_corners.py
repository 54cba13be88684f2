"""P4Info of the corpus's p4info_* programs (tests/p4): the corners where p4c's frontend decides
what the control plane sees (issue 25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2

from softswitch.compiler import compile_file
from softswitch.p4info import build_p4info
from softswitch.p4info.ids import Prefix, hashed_id

PROGRAMS = Path(__file__).resolve().parent.parent / "p4"


def p4info_of(name: str) -> p4info_pb2.P4Info:
    return build_p4info(compile_file(PROGRAMS / f"{name}.p4"))


def by_name(items: Any, name: str) -> Any:
    matches = [item for item in items if item.preamble.name == name]
    assert len(matches) == 1, [item.preamble.name for item in items]
    return matches[0]


def assert_actions(p4info: p4info_pb2.P4Info, names: list[str]) -> None:
    """The listed actions' names in order, each with its hashed id."""
    assert [a.preamble.name for a in p4info.actions] == names
    assert [a.preamble.id for a in p4info.actions] == [hashed_id(Prefix.ACTION, n)
                                                      for n in names]


def params(action: p4info_pb2.Action) -> list[tuple[int, str, int]]:
    return [(p.id, p.name, p.bitwidth) for p in action.params]


def test_directly_called_actions_are_listed_without_parameters() -> None:
    p4info = p4info_of("p4info_direct_actions")
    assert_actions(p4info, ["NoAction", "top_mark", "I.fwd", "I.mark"])
    # only called from the apply block: every argument is bound at the call
    assert params(by_name(p4info.actions, "I.mark")) == []
    assert params(by_name(p4info.actions, "top_mark")) == []
    # also listed by a table: the table's action, with its parameter
    assert params(by_name(p4info.actions, "I.fwd")) == [(1, "port", 9)]
    (t,) = p4info.tables
    assert [r.id for r in t.action_refs] == [hashed_id(Prefix.ACTION, n)
                                            for n in ("I.fwd", "NoAction")]


def test_absolute_and_top_level_names_next_to_a_local_action() -> None:
    p4info = p4info_of("p4info_action_names")
    assert_actions(p4info, ["NoAction", "set", "tag", "I.set"])
    # the suffix "set" is the top-level action's whole name: the local one's alias is I.set
    assert [a.preamble.alias for a in p4info.actions] == ["NoAction", "set", "tag", "I.set"]
    # the top-level set's directional parameter is bound by the table (p4c removes it)
    assert params(by_name(p4info.actions, "set")) == [(1, "v", 8)]
    assert params(by_name(p4info.actions, "I.set")) == [(1, "v", 8)]
    s1, s2, t = p4info.tables
    assert [r.id for r in t.action_refs] == [hashed_id(Prefix.ACTION, n) for n in ("I.set", "set")]
    assert t.initial_default_action.action_id == hashed_id(Prefix.ACTION, "set")
    assert [(a.param_id, a.value) for a in t.initial_default_action.arguments] == [(1, b"\x40")]
    # @name(".tag") in a control instantiated twice: one action, both tables refer to it
    for sub in (s1, s2):
        assert [r.id for r in sub.action_refs] == [hashed_id(Prefix.ACTION, n)
                                                  for n in ("tag", "NoAction")]


def test_code_after_a_return_or_exit_is_gone_where_p4c_removes_returns() -> None:
    p4info = p4info_of("p4info_dead_code")
    # dead_ret, dead_exit, dead_both and dead_direct follow a statement that always returns
    # or exits in an apply block with a return: RemoveReturns drops them. E has no return, so
    # its table after exit stays; a switch never counts as returning, nor does a table whose
    # actions all exit (p4c removes exits only in its midend).
    tables = ["I.exits", "I.after", "I.sw", "I.after_switch", "E.kept_after_exit"]
    assert [t.preamble.name for t in p4info.tables] == tables
    assert [t.preamble.id for t in p4info.tables] == [hashed_id(Prefix.TABLE, n) for n in tables]
    assert_actions(p4info, ["NoAction", "I.set_a", "I.set_b", "I.stop", "I.stop_marked",
                            "E.set_b"])
