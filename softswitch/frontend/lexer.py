"""Split preprocessed P4_16 text into tokens.

Every ``>`` is its own token: whether ``>>`` is a shift or two closing angle brackets
(``register<bit<8>>``) depends on context, so the parser rebuilds shifts from adjacent ``>``
tokens (`Token.end` equals the next token's `pos`). Characters P4 does not know become
``UNEXPECTED`` tokens rather than errors, because p4c accepts any token inside annotation bodies;
the parser reports them as "unknown character" everywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from softswitch.errors import P4SyntaxError, SourceLocation

# Token kinds besides keywords (kind == the keyword) and punctuation (kind == its text).
ID = "ID"
INT = "INT"
STRING = "STRING"
UNEXPECTED = "UNEXPECTED"
EOF = "EOF"

KEYWORDS = frozenset(
    [
        "abstract", "action", "bit", "bool", "break", "const", "continue", "control", "default",
        "else", "enum", "error", "exit", "extern", "false", "for", "header", "header_union", "if",
        "in", "inout", "int", "match_kind", "out", "package", "parser", "return", "select",
        "string", "struct", "switch", "table", "this", "transition", "true", "tuple", "typedef",
        "varbit", "value_set", "void",
    ]
)  # fmt: skip
"""Reserved words. ``apply key actions state entries type priority list`` are contextual: the
grammar lets them name things, so they are lexed as identifiers and recognised by the parser."""

_PUNCT = sorted(
    [
        "{#}",
        "&&&",
        "|+|=",
        "|-|=",
        "|+|",
        "|-|",
        "...",
        "..",
        "<<=",
        "&&",
        "||",
        "==",
        "!=",
        ">=",
        "<=",
        "<<",
        "++",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "&=",
        "|=",
        "^=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "|",
        "&",
        "^",
        "~",
        "[",
        "]",
        "{",
        "}",
        "<",
        ">",
        "(",
        ")",
        "!",
        ":",
        ",",
        "?",
        ".",
        "=",
        ";",
        "@",
    ],
    key=len,
    reverse=True,
)

_TOKEN_RE = re.compile(
    r"(?P<nl>\n)"
    r"|(?P<ws>[ \t\r\f\v]+)"
    r"|(?P<lc>//[^\n]*)"
    r"|(?P<bc>/\*)"
    r"|(?P<num>(?:[0-9][0-9_]*[ws])?"
    r"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|[0-9][0-9_]*))"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
    r'|(?P<str>")'
    r"|(?P<punct>" + "|".join(re.escape(p) for p in _PUNCT) + ")"
)
_STRING_BODY_RE = re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL)
_WORD_CHAR_RE = re.compile(r"[A-Za-z0-9_]")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
_WIDTH_RE = re.compile(r"([0-9][0-9_]*)([ws])")
_RADIX = {"x": 16, "b": 2, "o": 8, "d": 10}


@dataclass(slots=True, eq=False)
class Token:
    """One token. `pos`/`end` are offsets in the text; `line`/`col` are 1-based in the text.

    `value` is the int for INT (with `width`/`signed` from a ``8w``/``4s`` prefix) and the
    decoded string for STRING.
    """

    kind: str
    text: str
    pos: int
    end: int
    line: int
    col: int
    value: Any = None
    width: int | None = None
    signed: bool = False

    def describe(self) -> str:
        """How an error message names this token."""
        if self.kind == EOF:
            return "end of file"
        if self.kind == STRING:
            return "string literal"
        return f"'{self.text}'"


LocationFn = Callable[[int, int], SourceLocation]


def tokenize(text: str, location: LocationFn) -> list[Token]:
    """The tokens of `text`, ending with an EOF token; `location` maps (line, col) for errors."""
    return list(iter_tokens(text, location))


def iter_tokens(text: str, location: LocationFn) -> Iterator[Token]:
    """The tokens of `text` as they are lexed (the parser takes them as it needs them, so the
    first syntax error of a long file comes without lexing the rest), ending with EOF."""
    match = _TOKEN_RE.match
    pos = 0
    line = 1
    line_start = 0
    n = len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            yield Token(UNEXPECTED, text[pos], pos, pos + 1, line, pos - line_start + 1)
            pos += 1
            continue
        kind = m.lastgroup
        end = m.end()
        if kind == "nl":
            line += 1
            line_start = end
        elif kind == "id":
            word = m.group()
            if word == "_":
                k = "_"
            elif word in KEYWORDS:
                k = word
            else:
                k = ID
            yield Token(k, word, pos, end, line, pos - line_start + 1)
        elif kind == "punct":
            p = m.group()
            yield Token(p, p, pos, end, line, pos - line_start + 1)
        elif kind == "num":
            col = pos - line_start + 1
            if end < n and _WORD_CHAR_RE.match(text, end):
                bad = re.match(r"[A-Za-z0-9_]*", text[end:])
                lexeme = m.group() + (bad.group() if bad else "")
                raise P4SyntaxError(f"malformed integer literal '{lexeme}'", location(line, col))
            yield _int_token(m.group(), pos, end, line, col, location)
        elif kind == "str":
            col = pos - line_start + 1
            sm = _STRING_BODY_RE.match(text, end)
            if sm is None:
                raise P4SyntaxError("unterminated string literal", location(line, col))
            end = sm.end()
            raw = text[pos:end]
            yield Token(STRING, raw, pos, end, line, col, value=_unescape(raw[1:-1]))
            nls = raw.count("\n")
            if nls:
                line += nls
                line_start = pos + raw.rfind("\n") + 1
        elif kind == "bc":
            close = text.find("*/", end)
            if close < 0:
                raise P4SyntaxError("unterminated comment", location(line, pos - line_start + 1))
            end = close + 2
            nls = text.count("\n", pos, end)
            if nls:
                line += nls
                line_start = text.rfind("\n", pos, end) + 1
        # "ws" and "lc" produce nothing
        pos = end
    yield Token(EOF, "", n, n, line, n - line_start + 1)


def _int_token(lexeme: str, pos: int, end: int, line: int, col: int, location: LocationFn) -> Token:
    width: int | None = None
    signed = False
    digits = lexeme
    m = _WIDTH_RE.match(lexeme)
    if m is not None:
        width = _convert(m.group(1).replace("_", ""), 10, lexeme, line, col, location)
        signed = m.group(2) == "s"
        digits = lexeme[m.end() :]
    radix = 10
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "xXbBoOdD":
        radix = _RADIX[digits[1].lower()]
        digits = digits[2:]
    digits = digits.replace("_", "")
    if not digits:
        raise P4SyntaxError(f"malformed integer literal '{lexeme}'", location(line, col))
    value = _convert(digits, radix, lexeme, line, col, location)
    return Token(INT, lexeme, pos, end, line, col, value=value, width=width, signed=signed)


# Python refuses decimal conversions past this many digits (a guard against quadratic time).
_MAX_DECIMAL_DIGITS = 4000


def _convert(
    digits: str, radix: int, lexeme: str, line: int, col: int, location: LocationFn
) -> int:
    if radix == 10 and len(digits.lstrip("0")) > _MAX_DECIMAL_DIGITS:
        shown = lexeme if len(lexeme) <= 20 else lexeme[:20] + "..."
        raise P4SyntaxError(
            f"integer literal '{shown}' is too long (more than {_MAX_DECIMAL_DIGITS} digits)",
            location(line, col),
        )
    return int(digits, radix)


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)
