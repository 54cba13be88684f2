"""One program on both engines at once: `TwinSwitch` has the Switch API, does every call on a
Python-engine Switch and a C-engine Switch, and fails the test as soon as their answers (output
packets, handles, reads, errors) differ; `assert_same_state` compares every counter, register
and direct counter at the end."""

from __future__ import annotations

from typing import Any

from softswitch.engine.switch import Switch
from softswitch.ir.checked import CheckedProgram

_PLAIN = (int, str, bytes, bool, float, type(None))


def _plain(value: Any) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    return False


class Both:
    """Attribute access and calls on two objects, compared (non-plain results wrapped again)."""

    def __init__(self, py: Any, c: Any) -> None:
        self._py, self._c = py, c

    @staticmethod
    def _join(a: Any, b: Any, what: str) -> Any:
        if _plain(a) or _plain(b):
            assert a == b, f"{what}: Python engine {a!r}, C engine {b!r}"
            return a
        return Both(a, b)

    def __getattr__(self, name: str) -> Any:
        a, b = getattr(self._py, name), getattr(self._c, name)
        if not callable(a):
            return self._join(a, b, name)

        def call(*args: Any, **kw: Any) -> Any:
            args = tuple(x._py if isinstance(x, Both) else x for x in args)
            try:
                ra = a(*args, **kw)
            except Exception as exc:  # the C engine must refuse alike
                try:
                    b(*args, **kw)
                except type(exc):
                    raise exc from None
                raise AssertionError(f"{name}: the Python engine raised {exc!r}, "
                                     "the C engine did not") from None
            rb = b(*args, **kw)
            return self._join(ra, rb, name)
        return call


class TwinSwitch(Both):
    """Switch(program) on the Python and the C engine."""

    def __init__(self, program: CheckedProgram, **kw: Any) -> None:
        py = Switch(program, engine="python", **kw)
        c = Switch(program, engine="c", **kw)
        assert c.engine == "c"
        super().__init__(py, c)

    @property
    def python(self) -> Switch:
        return self._py  # type: ignore[no-any-return]

    @property
    def native(self) -> Switch:
        return self._c  # type: ignore[no-any-return]


def state(sw: Switch) -> dict[str, Any]:
    """Every counter cell, register cell and direct counter of `sw`, and its digests."""
    out: dict[str, Any] = {}
    for name, counter in sw._counters.items():
        out[f"counter {name}"] = [counter.read(i) for i in range(counter.size)]
    for name, register in sw._registers.items():
        out[f"register {name}"] = [register.read(i) for i in range(register.size)]
    for name in sw.table_names():
        table = sw.table(name)
        if table.has_counter:
            out[f"direct {name}"] = {e.handle: tuple(e.cnt) for e in table.get_entries()}
    out["digests"] = list(sw.digests)
    out["internal_errors"] = sw.pipeline.internal_errors
    return out


def assert_same_state(twin: TwinSwitch) -> None:
    a, b = state(twin.python), state(twin.native)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], f"{key} differs between the engines"
    assert a["internal_errors"] == 0
