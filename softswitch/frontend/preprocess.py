"""A C-style preprocessor for P4 source, with a map from output positions back to the sources.

It does what p4c asks of ``cpp``: ``#include``, object- and function-like ``#define`` (with ``#``
and ``##``), ``#undef``, ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` and
``#error``.  ``#line``, ``#pragma`` and ``#warning`` are dropped.

Layout is preserved so that locations stay exact: every source line yields exactly one output
line (an ``#include`` line yields the included file's lines instead), comments become spaces of
the same width, and a function-like macro call spanning several lines is expanded on its first
line, followed by empty lines.  ``PreprocessedSource.location`` maps an output (line, column)
back to the original file:line:column; text produced by a macro maps to its invocation.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from softswitch.errors import P4SyntaxError, SourceLocation
from softswitch.file_check import file_problem
from softswitch.limits import DEFAULT_LIMITS, Limits

__all__ = ["ARCH_DIR", "BMV2_PREDEFINED", "PreprocessedSource", "preprocess"]

ARCH_DIR = Path(__file__).resolve().parent.parent / "arch"
"""Where ``core.p4`` and ``v1model.p4`` live: searched last, like p4c's ``p4include``."""

BMV2_PREDEFINED: Mapping[str, str] = MappingProxyType({"__p4c__": "1", "__TARGET_BMV2__": "1"})
"""Macros p4c-bm2-ss defines before preprocessing; pass them in ``defines`` to behave alike."""

_MAX_INCLUDE_DEPTH = 200
_COMMAND_LINE = "<command-line>"

# ---------------------------------------------------------------------------------------------
# Location map


@dataclass(frozen=True, slots=True)
class _Segment:
    """Output columns from ``out_col`` on come from ``file:line:col``.

    ``linear`` segments are source text copied verbatim (column offsets carry over); the others
    are macro expansions, all of whose columns map to the invocation.
    """

    out_col: int
    file: str
    line: int
    col: int
    linear: bool


@dataclass(frozen=True, slots=True)
class _LineMap:
    file: str
    line: int
    segments: tuple[_Segment, ...]
    starts: tuple[int, ...]


class PreprocessedSource:
    """The expanded text of a P4 program and where each of its characters came from."""

    def __init__(self, text: str, line_maps: Sequence[_LineMap], files: Sequence[str]) -> None:
        self.text = text
        self._maps = tuple(line_maps)
        self.files: tuple[str, ...] = tuple(files)
        """Every file read, main file first (for dependency tracking)."""

    def location(self, line: int, column: int) -> SourceLocation:
        """Map a 1-based (line, column) in ``text`` to the original file, line and column."""
        if not self._maps:
            return SourceLocation(self.files[0] if self.files else "<input>", 1, column)
        if line > len(self._maps):  # the end of the text: point just past the last line
            line = len(self._maps)
            column = len(self.text.removesuffix("\n").rsplit("\n", 1)[-1]) + 1
        lm = self._maps[max(line, 1) - 1]
        if not lm.segments:
            return SourceLocation(lm.file, lm.line, max(column, 1))
        idx = max(bisect_right(lm.starts, column) - 1, 0)
        seg = lm.segments[idx]
        if seg.linear:
            return SourceLocation(seg.file, seg.line, max(seg.col + column - seg.out_col, 1))
        return SourceLocation(seg.file, seg.line, seg.col)


# ---------------------------------------------------------------------------------------------
# Tokens

_WS, _NL, _IDENT, _NUMBER, _STRING, _PUNCT = range(6)

_TOKEN_RE = re.compile(
    r"""(?P<ws>[ \t\f\v\r]+)
      | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<number>\.?[0-9](?:[eEpP][+-]|\.(?!\.)|[A-Za-z0-9_])*)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<punct>\#\#|\.\.\.|&&&|\|[+-]\|=?|<<=|>>=|[-+*/%&|^<>=!]=|&&|\|\||<<|>>|\+\+|\.\.|::|->|.)""",
    re.VERBOSE,
)
_KINDS = {"ws": _WS, "ident": _IDENT, "number": _NUMBER, "string": _STRING, "punct": _PUNCT}
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_OP_CHARS = frozenset("+-*/%<>=!&|^~.:?#@")

Loc = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class _Tok:
    """A preprocessing token.

    ``loc`` is the token's own position for source text, or the outermost macro invocation for
    text a macro produced (``expanded``).  ``hide`` is the set of macros that must not expand
    this token again (Prosser's hide sets).
    """

    kind: int
    text: str
    loc: Loc
    expanded: bool = False
    hide: frozenset[str] = frozenset()


def _tokenize(text: str, file: str, line: int, col: int = 1) -> list[_Tok]:
    toks = []
    for m in _TOKEN_RE.finditer(text):
        toks.append(_Tok(_KINDS[m.lastgroup or "punct"], m.group(), (file, line, col + m.start())))
    return toks


def _strip_ws(toks: list[_Tok]) -> list[_Tok]:
    lo, hi = 0, len(toks)
    while lo < hi and toks[lo].kind in (_WS, _NL):
        lo += 1
    while hi > lo and toks[hi - 1].kind in (_WS, _NL):
        hi -= 1
    return toks[lo:hi]


def _next_non_ws(toks: Sequence[_Tok], i: int) -> int:
    while i < len(toks) and toks[i].kind in (_WS, _NL):
        i += 1
    return i


def _spell(toks: Sequence[_Tok]) -> str:
    """Token text with each whitespace run as one space (for ``#`` and error messages)."""
    parts: list[str] = []
    for t in _strip_ws(list(toks)):
        if t.kind in (_WS, _NL):
            if parts and parts[-1] != " ":
                parts.append(" ")
        else:
            parts.append(t.text)
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Comments


_COMMENT_OR_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|/\*')


def _blank_comments(text: str, file: str) -> str:
    """Replace every comment by spaces of the same width (newlines kept), leaving strings."""
    out: list[str] = []
    pos = 0
    while (m := _COMMENT_OR_STRING_RE.search(text, pos)) is not None:
        s = m.group()
        if s.startswith('"'):
            out.append(text[pos : m.end()])
            pos = m.end()
            continue
        out.append(text[pos : m.start()])
        if s.startswith("//"):
            out.append(" " * len(s))
            pos = m.end()
            continue
        end = text.find("*/", m.end())
        if end < 0:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise P4SyntaxError("unterminated /* comment", SourceLocation(file, line, col))
        out.append(re.sub(r"[^\n]", " ", text[m.start() : end + 2]))
        pos = end + 2
    out.append(text[pos:])
    return "".join(out)


_UNDECODABLE_RE = re.compile("[\udc80-\udcff]")


def _reject_undecodable(text: str, file: str) -> None:
    """Raise at the first byte that is not UTF-8 outside a comment (comments were blanked)."""
    m = _UNDECODABLE_RE.search(text)
    if m is None:
        return
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    byte = ord(m.group()) - 0xDC00
    raise P4SyntaxError(
        f"the file is not UTF-8 text: byte 0x{byte:02x} cannot be decoded",
        SourceLocation(file, line, col),
    )


# ---------------------------------------------------------------------------------------------
# Macros


@dataclass(frozen=True, slots=True)
class _Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    variadic: bool
    body: tuple[_Tok, ...]


class _NeedMoreLines(Exception):
    """A macro call's argument list continues on the next source line: `closers` more ``)``
    than ``(`` must come (0: the next line opens it)."""

    def __init__(self, closers: int) -> None:
        super().__init__(closers)
        self.closers = closers


def _error(message: str, loc: Loc) -> P4SyntaxError:
    return P4SyntaxError(message, SourceLocation(*loc))


class _Expander:
    """Macro table and expansion (C semantics: arguments pre-expanded, result rescanned).

    Every substitution is charged the characters it produces against `limits.macro_expansion`:
    a rescanned result is charged again when it expands, so the work of nested macros, not
    just their output, is bounded (doubling macros stop after a megabyte, not at 2**40)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.macros: dict[str, _Macro] = {}
        self.limits = limits
        self.expanded = 0  # characters substituted so far
        self._names_re: re.Pattern[str] | None = None  # the macro names, rebuilt on change
        self._hide_sets: dict[tuple[frozenset[str], str], frozenset[str]] = {}

    def mentions_macro(self, text: str) -> bool:
        if not self.macros:
            return False
        if self._names_re is None:
            names = "|".join(sorted(map(re.escape, self.macros), key=len, reverse=True))
            self._names_re = re.compile(rf"(?<![A-Za-z0-9_])(?:{names})(?![A-Za-z0-9_])")
        return self._names_re.search(text) is not None

    def define(self, toks: list[_Tok], loc: Loc) -> None:
        """``toks``: what follows ``#define``."""
        i = _next_non_ws(toks, 0)
        if i == len(toks) or toks[i].kind != _IDENT:
            raise _error("macro name missing after #define", toks[i].loc if i < len(toks) else loc)
        name = toks[i].text
        if name == "defined":
            raise _error("'defined' cannot be used as a macro name", toks[i].loc)
        i += 1
        params: tuple[str, ...] | None = None
        variadic = False
        if i < len(toks) and toks[i].text == "(":  # no space before '(': function-like
            names: list[str] = []
            i = _next_non_ws(toks, i + 1)
            if i < len(toks) and toks[i].text == ")":
                i += 1
            else:
                while True:
                    if i < len(toks) and toks[i].text == "...":
                        variadic = True
                        names.append("__VA_ARGS__")
                        i = _next_non_ws(toks, i + 1)
                        if i >= len(toks) or toks[i].text != ")":
                            raise _error(f"expected ')' after '...' in macro '{name}'", loc)
                        i += 1
                        break
                    if i >= len(toks) or toks[i].kind != _IDENT:
                        raise _error(f"bad parameter list in macro '{name}'", loc)
                    if toks[i].text in names:
                        raise _error(f"duplicate macro parameter '{toks[i].text}'", toks[i].loc)
                    names.append(toks[i].text)
                    i = _next_non_ws(toks, i + 1)
                    if i < len(toks) and toks[i].text == ")":
                        i += 1
                        break
                    if i >= len(toks) or toks[i].text != ",":
                        raise _error(f"expected ',' or ')' in parameters of macro '{name}'", loc)
                    i = _next_non_ws(toks, i + 1)
            params = tuple(names)
        body = self._normalize_body(_strip_ws(toks[i:]))
        self._check_body(name, params, body)
        self.macros[name] = _Macro(name, params, variadic, tuple(body))
        self._names_re = None

    @staticmethod
    def _normalize_body(toks: list[_Tok]) -> list[_Tok]:
        body: list[_Tok] = []
        for t in toks:
            if t.kind in (_WS, _NL):
                if body and body[-1].kind != _WS:
                    body.append(_Tok(_WS, " ", t.loc))
            else:
                body.append(t)
        return body

    @staticmethod
    def _check_body(name: str, params: tuple[str, ...] | None, body: list[_Tok]) -> None:
        if body and (body[0].text == "##" or body[-1].text == "##"):
            raise _error(f"'##' cannot be at either end of macro '{name}'", body[0].loc)
        if params is None:
            return
        for i, t in enumerate(body):
            if t.text == "#":
                j = _next_non_ws(body, i + 1)
                if j >= len(body) or body[j].text not in params:
                    raise _error(f"'#' is not followed by a parameter in macro '{name}'", t.loc)

    def charge(self, characters: int, loc: Loc) -> None:
        """Count `characters` of expansion work done at `loc` against limits.macro_expansion."""
        self.expanded += characters
        if self.expanded > self.limits.macro_expansion:
            raise self.limits.refuse("macro_expansion", "macro expansion", self.expanded,
                                     SourceLocation(*loc))

    def _hiding(self, hide: frozenset[str], name: str) -> frozenset[str]:
        """`hide` with `name` added, one shared set per distinct result: an expansion's
        tokens each hold one, and a set per token took a kilobyte a token."""
        key = (hide, name)
        found = self._hide_sets.get(key)
        if found is None:
            found = self._hide_sets[key] = hide | {name}
        return found

    def undefine(self, name: str) -> None:
        self.macros.pop(name, None)
        self._names_re = None

    # -- expansion ------------------------------------------------------------------------------

    def expand(
        self,
        toks: list[_Tok],
        *,
        can_extend: bool = False,
        next_line_opens_paren: bool = False,
    ) -> list[_Tok]:
        """Fully expand ``toks``.

        With ``can_extend``, a call whose arguments run past the end raises ``_NeedMoreLines``
        (the caller appends the next line and retries); so does a function-like macro name at
        the very end when ``next_line_opens_paren``.
        """
        stack = toks[::-1]
        out: list[_Tok] = []
        while stack:
            t = stack.pop()
            macro = self.macros.get(t.text) if t.kind == _IDENT else None
            if macro is None or t.text in t.hide:
                out.append(t)
                continue
            if macro.params is None:
                body = self._substitute(macro, [], self._hiding(t.hide, macro.name), t.loc)
                stack.extend(reversed(body))
                continue
            j = len(stack) - 1
            while j >= 0 and stack[j].kind in (_WS, _NL):
                j -= 1
            if j < 0:
                if next_line_opens_paren:
                    raise _NeedMoreLines(0)
                out.append(t)
                continue
            if stack[j].text != "(":
                out.append(t)
                continue
            del stack[j:]
            args, rparen = self._collect_args(macro, t, stack, can_extend)
            hide = self._hiding(t.hide & rparen.hide, macro.name)
            stack.extend(reversed(self._substitute(macro, args, hide, t.loc)))
        return out

    def _collect_args(
        self, macro: _Macro, name_tok: _Tok, stack: list[_Tok], can_extend: bool
    ) -> tuple[list[list[_Tok]], _Tok]:
        assert macro.params is not None
        args: list[list[_Tok]] = [[]]
        depth = 0
        while True:
            if not stack:
                if can_extend:
                    raise _NeedMoreLines(depth + 1)
                raise _error(f"unterminated argument list invoking macro '{macro.name}'",
                             name_tok.loc)
            t = stack.pop()
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                if depth == 0:
                    break
                depth -= 1
            elif t.text == "," and depth == 0 and not (
                macro.variadic and len(args) == len(macro.params)
            ):
                args.append([])
                continue
            args[-1].append(t)
        args = [_strip_ws(a) for a in args]
        nparams = len(macro.params)
        if nparams == 0 and args == [[]]:
            args = []
        elif macro.variadic and len(args) == nparams - 1:
            args.append([])
        if len(args) != nparams:
            raise _error(
                f"macro '{macro.name}' expects {nparams} argument{'s' if nparams != 1 else ''},"
                f" got {len(args)}",
                name_tok.loc,
            )
        return args, t

    def _substitute(
        self, macro: _Macro, args: list[list[_Tok]], hide: frozenset[str], loc: Loc
    ) -> list[_Tok]:
        params = {p: i for i, p in enumerate(macro.params or ())}
        body = macro.body
        out: list[_Tok] = []
        i = 0
        while i < len(body):
            b = body[i]
            if b.text == "#" and macro.params is not None:
                k = _next_non_ws(body, i + 1)
                out.append(_stringize(args[params[body[k].text]], b.loc))
                i = k + 1
            elif b.text == "##":
                k = _next_non_ws(body, i + 1)
                right = list(args[params[body[k].text]]) if body[k].text in params else [body[k]]
                while out and out[-1].kind == _WS:
                    out.pop()
                if out and right:
                    left = out.pop()
                    out.extend(_tokenize(left.text + right[0].text, *left.loc))
                    out.extend(right[1:])
                else:
                    out.extend(right)
                i = k + 1
            elif b.kind == _IDENT and b.text in params:
                arg = args[params[b.text]]
                k = _next_non_ws(body, i + 1)
                pasted = k < len(body) and body[k].text == "##"
                out.extend(arg if pasted else self.expand(list(arg)))
                i += 1
            else:
                out.append(b)
                i += 1
        self.charge(sum(len(t.text) for t in out), loc)
        # one hide set shared by the tokens that add nothing to it
        return [
            _Tok(_WS if t.kind == _NL else t.kind, " " if t.kind == _NL else t.text, loc, True,
                 hide if t.hide <= hide else t.hide | hide)
            for t in out
        ]


def _stringize(arg: list[_Tok], loc: Loc) -> _Tok:
    parts = []
    for t in arg:
        text = t.text
        if t.kind == _STRING:
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(_Tok(t.kind, text, t.loc))
    return _Tok(_STRING, '"' + _spell(parts) + '"', loc)


# ---------------------------------------------------------------------------------------------
# #if expressions


_EXPR_TOKEN_RE = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]*|"
                            r"(\|\||&&|<<|>>|<=|>=|==|!=|[-+*/%<>!~&|^?:()]))")


class _IfExpression:
    """Evaluates the integer constant expression of ``#if`` (after macro expansion)."""

    def __init__(self, text: str, loc: Loc) -> None:
        self.loc = loc
        self.items: list[int | str] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _EXPR_TOKEN_RE.match(text, pos)
            if m is None:
                bad = text[pos:].strip().split()[0]
                raise _error(f"invalid token '{bad}' in #if expression", loc)
            if m.group(1) is not None:
                self.items.append(_parse_int(m.group(1), loc))
            else:
                self.items.append(m.group(2))
            pos = m.end()
        self.pos = 0

    def evaluate(self) -> int:
        if not self.items:
            raise _error("#if with no expression", self.loc)
        try:
            value = self._conditional()
        except RecursionError:
            raise _error("#if expression nested too deeply", self.loc) from None
        if self.pos != len(self.items):
            raise _error(f"unexpected '{self.items[self.pos]}' in #if expression", self.loc)
        return value

    def _peek(self) -> int | str | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def _expect(self, op: str) -> None:
        if self._peek() != op:
            raise _error(f"expected '{op}' in #if expression", self.loc)
        self.pos += 1

    def _conditional(self) -> int:
        cond = self._binary(0)
        if self._peek() != "?":
            return cond
        self.pos += 1
        then = self._conditional()
        self._expect(":")
        other = self._conditional()
        return then if cond else other

    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
        ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
    )

    def _binary(self, level: int) -> int:
        if level == len(self._LEVELS):
            return self._unary()
        left = self._binary(level + 1)
        while (op := self._peek()) in self._LEVELS[level]:
            self.pos += 1
            right = self._binary(level + 1)
            left = self._apply(str(op), left, right)
        return left

    def _apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%"):
            if b == 0:
                raise _error("division by zero in #if expression", self.loc)
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward 0
            return _wrap(q if op == "/" else a - q * b)
        if op in ("<<", ">>") and b < 0:
            raise _error("negative shift count in #if expression", self.loc)
        if op in ("<<", ">>") and b >= 64:  # everything shifted out, as cpp does
            return -1 if op == ">>" and a < 0 else 0
        ops: dict[str, Callable[[int, int], int]] = {
            "||": lambda x, y: int(bool(x) or bool(y)), "&&": lambda x, y: int(bool(x and y)),
            "|": lambda x, y: x | y, "^": lambda x, y: x ^ y, "&": lambda x, y: x & y,
            "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
            "<": lambda x, y: int(x < y), ">": lambda x, y: int(x > y),
            "<=": lambda x, y: int(x <= y), ">=": lambda x, y: int(x >= y),
            "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y,
            "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        }
        return _wrap(ops[op](a, b))

    def _unary(self) -> int:
        item = self._peek()
        if item is None:
            raise _error("#if expression ends unexpectedly", self.loc)
        self.pos += 1
        if isinstance(item, int):
            return item
        if item == "(":
            value = self._conditional()
            self._expect(")")
            return value
        operand = {"-", "+", "!", "~"}
        if item in operand:
            v = self._unary()
            return _wrap({"-": -v, "+": v, "!": int(not v), "~": ~v}[item])
        raise _error(f"unexpected '{item}' in #if expression", self.loc)


def _parse_int(text: str, loc: Loc) -> int:
    if len(text.lstrip("0")) > 30:  # also keeps int() clear of Python's limit on decimal digits
        raise _error(f"integer constant '{text[:20]}...' is too large in #if expression", loc)
    try:
        if text[:2] in ("0x", "0X"):
            value = int(text[2:], 16)
        elif text[:2] in ("0b", "0B"):
            value = int(text[2:], 2)
        elif len(text) > 1 and text[0] == "0":
            value = int(text, 8)
        else:
            value = int(text)
    except ValueError:
        raise _error(f"invalid integer constant '{text}' in #if expression", loc) from None
    if value >= 1 << 64:
        raise _error(f"integer constant '{text}' is too large in #if expression", loc)
    return _wrap(value)


def _wrap(value: int) -> int:
    """``value`` as cpp's 64-bit ``intmax_t`` holds it (so that no result grows unbounded)."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


# ---------------------------------------------------------------------------------------------
# Conditional-inclusion state


@dataclass(slots=True)
class _Cond:
    loc: Loc
    parent_active: bool
    active: bool
    taken: bool
    seen_else: bool = False


# ---------------------------------------------------------------------------------------------
# The driver


_DIRECTIVE_RE = re.compile(r"[ \t\f\v]*#[ \t\f\v]*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)?")


@dataclass(slots=True)
class _Output:
    lines: list[str] = field(default_factory=list)
    maps: list[_LineMap] = field(default_factory=list)

    def blank(self, file: str, line: int) -> None:
        self.lines.append("")
        self.maps.append(_LineMap(file, line, (), ()))

    def verbatim(self, text: str, file: str, line: int) -> None:
        self.lines.append(text)
        seg = (_Segment(1, file, line, 1, True),) if text else ()
        self.maps.append(_LineMap(file, line, seg, tuple(s.out_col for s in seg)))

    def tokens(self, toks: list[_Tok], file: str, line: int) -> None:
        """Render expanded tokens as one output line, recording where each run came from."""
        parts: list[str] = []
        segs: list[_Segment] = []
        col = 1
        prev: _Tok | None = None
        for t in toks:
            text = " " if t.kind == _NL else t.text
            if not text:
                continue
            if (prev is not None and (prev.expanded or t.expanded)
                    and _would_join(parts[-1][-1], text[0])):
                parts.append(" ")
                col += 1
            last = segs[-1] if segs else None
            if t.expanded:
                if last is None or last.linear or (last.file, last.line, last.col) != t.loc:
                    segs.append(_Segment(col, *t.loc, False))
            else:
                f, ln, c = t.loc
                if (last is None or not last.linear or last.file != f or last.line != ln
                        or last.col + col - last.out_col != c):
                    segs.append(_Segment(col, f, ln, c, True))
            parts.append(text)
            col += len(text)
            prev = t
        self.lines.append("".join(parts))
        self.maps.append(_LineMap(file, line, tuple(segs), tuple(s.out_col for s in segs)))


def _would_join(a: str, b: str) -> bool:
    """Whether two characters from different tokens would lex as one token if adjacent."""
    return (a in _WORD_CHARS and b in _WORD_CHARS) or (a in _OP_CHARS and b in _OP_CHARS)


@dataclass(slots=True)
class _FileContext:
    path: Path
    display: str
    lines: list[str]
    conds: list[_Cond] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return not self.conds or self.conds[-1].active


class _Preprocessor:
    def __init__(self, include_dirs: Sequence[Path], limits: Limits = DEFAULT_LIMITS) -> None:
        self.include_dirs = include_dirs
        self.limits = limits
        self.bytes_read = 0  # of every file read, each time (limits.source_bytes)
        self.expander = _Expander(limits)
        self.out = _Output()
        self.stack: list[Path] = []  # resolved paths of the files being read
        self.files: list[str] = []

    # -- files ----------------------------------------------------------------------------------

    def run_file(self, path: Path, display: str, include_loc: Loc | None) -> None:
        where = SourceLocation(*include_loc) if include_loc else None
        try:
            # undecodable bytes survive as lone surrogates, so that comments may hold them
            raw = self._read(path, display, where).decode("utf-8", errors="surrogateescape")
        except OSError as exc:
            raise P4SyntaxError(f"cannot read {display}: {exc.strerror}", where) from None
        raw = raw.removeprefix("\ufeff")  # a UTF-8 byte-order mark, as cpp drops it
        text = _blank_comments(raw.replace("\r\n", "\n"), display)
        _reject_undecodable(text, display)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if display not in self.files:
            self.files.append(display)
        self.stack.append(path.resolve())
        ctx = _FileContext(path, display, lines)
        try:
            self._run_lines(ctx)
        finally:
            self.stack.pop()
        if ctx.conds:
            raise _error("unterminated conditional directive (missing #endif)", ctx.conds[0].loc)

    def _read(self, path: Path, display: str, where: SourceLocation | None) -> bytes:
        """The bytes of `path`, charged to limits.source_bytes (its size is checked first, so
        a huge file is refused without reading it)."""
        size = path.stat().st_size
        self.limits.check("source_bytes", f"reading {display}", self.bytes_read + size, where)
        data = path.read_bytes()
        self.bytes_read += len(data)
        self.limits.check("source_bytes", f"reading {display}", self.bytes_read, where)
        return data

    def _run_lines(self, ctx: _FileContext) -> None:
        lines, file = ctx.lines, ctx.display
        i = 0
        while i < len(lines):
            line = lines[i]
            m = _DIRECTIVE_RE.match(line)
            if m is not None:
                last = i
                while lines[last].endswith("\\") and last + 1 < len(lines):
                    last += 1
                joined = "".join(ln[:-1] if ln.endswith("\\") else ln
                                 for ln in lines[i : last + 1])
                emitted = self._directive(ctx, joined, i + 1)
                for k in range(i, last + 1):
                    if not (emitted and k == i):
                        self.out.blank(file, k + 1)
                i = last + 1
            elif not ctx.active:
                self.out.blank(file, i + 1)
                i += 1
            elif not self.expander.mentions_macro(line):
                self.out.verbatim(line, file, i + 1)
                i += 1
            else:
                i = self._expand_text_lines(ctx, i)

    def _expand_text_lines(self, ctx: _FileContext, first: int) -> int:
        """Expand the line ``first`` (and following ones a macro call spans); return next."""
        lines, file = ctx.lines, ctx.display
        toks = _tokenize(lines[first], file, first + 1)
        last = first
        while True:
            nxt = last + 1
            more = nxt < len(lines) and _DIRECTIVE_RE.match(lines[nxt]) is None
            try:
                result = self.expander.expand(
                    toks, can_extend=more,
                    next_line_opens_paren=more and lines[nxt].lstrip().startswith("("),
                )
                break
            except RecursionError:
                raise _error("macro calls nested too deeply", (file, first + 1, 1)) from None
            except _NeedMoreLines as need:
                # Every try expands all of it again: charged as expansion, so that a chain of
                # multi-line calls cannot take quadratic time unbounded.
                self.expander.charge(len(toks), (file, first + 1, 1))
                last = self._take_lines(ctx, toks, last, need.closers)
        self.out.tokens(result, file, first + 1)
        for k in range(first + 1, last + 1):
            self.out.blank(file, k + 1)
        return last + 1

    def _take_lines(self, ctx: _FileContext, toks: list[_Tok], last: int, closers: int) -> int:
        """Append to `toks` the lines after `last` up to the one where `closers` more ``)``
        than ``(`` have come (the call's arguments are collected unexpanded: raw parentheses
        close it), or up to a directive or the end; return the last line taken. All at once:
        a line at a time, a call spanning n lines cost n tries."""
        lines, file = ctx.lines, ctx.display
        need = closers
        while last + 1 < len(lines) and _DIRECTIVE_RE.match(lines[last + 1]) is None:
            nxt = last + 1
            toks.append(_Tok(_NL, "\n", (file, last + 1, len(lines[last]) + 1)))
            new = _tokenize(lines[nxt], file, nxt + 1)
            toks.extend(new)
            last = nxt
            for t in new:
                if t.text == "(":
                    need += 1
                elif t.text == ")":
                    need -= 1
                    if need <= 0:
                        return last
            if need <= 0:
                return last
        return last

    # -- directives -----------------------------------------------------------------------------

    def _directive(self, ctx: _FileContext, text: str, line: int) -> bool:
        """Handle one directive line; return True when it emitted output lines (#include)."""
        m = _DIRECTIVE_RE.match(text)
        assert m is not None
        file = ctx.display
        name = m.group(1) or ""
        name_loc: Loc = (file, line, (m.start(1) if m.group(1) else text.index("#")) + 1)
        rest = _tokenize(text[m.end() :], file, line, m.end() + 1)
        if name in ("if", "ifdef", "ifndef"):
            parent = ctx.active
            value = parent and self._condition(name, rest, name_loc)
            ctx.conds.append(_Cond(name_loc, parent, value, value))
            return False
        if name in ("elif", "else", "endif"):
            self._branch(ctx, name, rest, name_loc)
            return False
        if not ctx.active:
            return False  # anything else in a skipped group is ignored, as in C
        if name == "define":
            self.expander.define(rest, name_loc)
        elif name == "undef":
            ident = _strip_ws(rest)
            if not ident or ident[0].kind != _IDENT:
                raise _error("macro name missing after #undef", name_loc)
            self.expander.undefine(ident[0].text)
        elif name == "include":
            self._include(ctx, rest, name_loc)
            return True
        elif name == "error":
            raise _error(f"#error {_spell(rest)}".rstrip(), name_loc)
        elif name in ("pragma", "line", "warning", "ident", "") or name.isdigit():
            pass  # dropped: they do not change the program text
        else:
            raise _error(f"unknown preprocessor directive '#{name}'", name_loc)
        return False

    def _branch(self, ctx: _FileContext, name: str, rest: list[_Tok], loc: Loc) -> None:
        if not ctx.conds:
            raise _error(f"#{name} without #if", loc)
        cond = ctx.conds[-1]
        if name == "endif":
            ctx.conds.pop()
            return
        if cond.seen_else:
            raise _error(f"#{name} after #else", loc)
        if name == "else":
            cond.seen_else = True
            cond.active = cond.parent_active and not cond.taken
            cond.taken = True
            return
        if cond.taken or not cond.parent_active:
            cond.active = False
            return
        cond.active = self._condition("if", rest, loc)
        cond.taken = cond.active

    def _condition(self, kind: str, rest: list[_Tok], loc: Loc) -> bool:
        if kind in ("ifdef", "ifndef"):
            toks = _strip_ws(rest)
            if not toks or toks[0].kind != _IDENT:
                raise _error(f"macro name missing after #{kind}", loc)
            defined = toks[0].text in self.expander.macros
            return defined if kind == "ifdef" else not defined
        return self._evaluate(rest, loc)

    def _evaluate(self, rest: list[_Tok], loc: Loc) -> bool:
        # `defined X` must be resolved before expansion so X itself is not expanded
        toks: list[_Tok] = []
        i = 0
        while i < len(rest):
            t = rest[i]
            if t.kind == _IDENT and t.text == "defined":
                j = _next_non_ws(rest, i + 1)
                paren = j < len(rest) and rest[j].text == "("
                if paren:
                    j = _next_non_ws(rest, j + 1)
                if j >= len(rest) or rest[j].kind != _IDENT:
                    raise _error("'defined' must be followed by a macro name", t.loc)
                value = "1" if rest[j].text in self.expander.macros else "0"
                if paren:
                    j = _next_non_ws(rest, j + 1)
                    if j >= len(rest) or rest[j].text != ")":
                        raise _error("missing ')' after 'defined'", t.loc)
                toks.append(_Tok(_NUMBER, value, t.loc))
                i = j + 1
                continue
            toks.append(t)
            i += 1
        try:
            expanded = self.expander.expand(toks)
        except RecursionError:
            raise _error("macro calls nested too deeply", loc) from None
        # identifiers left after expansion count as 0, as in C
        text = " ".join("0" if t.kind == _IDENT else t.text
                        for t in expanded if t.kind not in (_WS, _NL))
        if any(t.kind == _STRING for t in expanded):
            raise _error("string literal in #if expression", loc)
        return _IfExpression(text, loc).evaluate() != 0

    def _include(self, ctx: _FileContext, rest: list[_Tok], loc: Loc) -> None:
        toks = _strip_ws(rest)
        if toks and toks[0].kind not in (_STRING,) and toks[0].text != "<":
            try:
                toks = _strip_ws(self.expander.expand(toks))  # #include MACRO
            except RecursionError:
                raise _error("macro calls nested too deeply", loc) from None
        spelled = "".join(t.text for t in toks)
        where = toks[0].loc if toks else loc
        if not toks or not (
            (spelled.startswith('"') and spelled.endswith('"') and len(spelled) > 1)
            or (spelled.startswith("<") and spelled.endswith(">"))
        ):
            raise _error('#include expects "FILE" or <FILE>', where)
        name = spelled[1:-1]
        if not name:
            raise _error("empty file name in #include", where)
        target = self._find_include(name, quoted=spelled[0] == '"', includer=ctx.path)
        if target is None:
            raise _error(f"cannot find include file '{name}'", where)
        resolved = target.resolve()
        if resolved in self.stack and not self._guard_defined(target, SourceLocation(*where)):
            chain = " -> ".join(p.name for p in [*self.stack, resolved])
            raise _error(f"#include cycle: {chain}", where)
        if len(self.stack) >= _MAX_INCLUDE_DEPTH:
            raise _error("#include nested too deeply", where)
        try:
            self.run_file(target, str(target), where)
        except RecursionError:  # Python's stack ran out before _MAX_INCLUDE_DEPTH
            raise _error("#include nested too deeply", where) from None

    def _find_include(self, name: str, *, quoted: bool, includer: Path) -> Path | None:
        candidates: list[Path] = [includer.parent] if quoted else []
        candidates += [*self.include_dirs, ARCH_DIR]
        for folder in candidates:
            p = folder / name
            if file_problem(p) is None:   # (a name the system refuses: no such file here)
                return p
        return None

    def _guard_defined(self, path: Path, where: SourceLocation) -> bool:
        """Whether ``path`` is wrapped in an include guard whose macro is now defined."""
        try:
            data = self._read(path, str(path), where)
            text = _blank_comments(data.decode("utf-8", errors="replace"), str(path))
        except (OSError, P4SyntaxError):
            return False
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        if not lines or not re.fullmatch(r"#\s*endif\b.*", lines[-1]):
            return False
        m = re.fullmatch(r"#\s*(?:ifndef\s+(\w+)|if\s+!\s*defined\s*\(?\s*(\w+)\s*\)?)\s*",
                         lines[0])
        return m is not None and (m.group(1) or m.group(2)) in self.expander.macros

    # -- command-line defines -------------------------------------------------------------------

    def define_from_command_line(self, name: str, value: str) -> None:
        loc: Loc = (_COMMAND_LINE, 1, 1)
        toks = _tokenize(f"{name} {value}", _COMMAND_LINE, 1)
        if not toks or toks[0].kind != _IDENT:
            raise _error(f"bad macro name in -D{name}", loc)
        self.expander.define(toks, loc)


def preprocess(
    path: Path | str,
    include_dirs: Sequence[Path | str] = (),
    defines: Mapping[str, str] = {},  # read only, so a shared default is safe
    limits: Limits = DEFAULT_LIMITS,
) -> PreprocessedSource:
    """Preprocess the P4 file ``path``; raise P4SyntaxError (located) on any problem, and a
    LimitError past `limits` (source bytes read, macro expansion).

    ``defines`` holds ``-D NAME[=VALUE]`` definitions (use "1" when there is no value); a name
    may carry a parameter list, e.g. ``{"SQUARE(x)": "((x)*(x))"}``.
    """
    main = Path(path)
    pp = _Preprocessor([Path(d) for d in include_dirs], limits)
    for name, value in defines.items():
        pp.define_from_command_line(name, value)
    why = file_problem(main)
    if why is not None:
        raise P4SyntaxError(f"cannot read {main}: {why}")
    pp.run_file(main, str(path), None)
    return PreprocessedSource("\n".join(pp.out.lines) + "\n" if pp.out.lines else "",
                              pp.out.maps, pp.files)

