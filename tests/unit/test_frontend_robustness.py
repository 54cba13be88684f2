"""The frontend never shows a Python traceback: bad input gives a located P4Error or compiles.

Mutated corpus programs (deleted, duplicated, swapped, inserted, truncated and renamed tokens),
random text and bytes, and pathological shapes (deep nesting, long lines, unterminated strings and
comments, undecodable bytes, missing files) all go through preprocess, parse and (when the type
checker imports) check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from softswitch.compiler import compile_file
from softswitch.errors import P4Error
from softswitch.frontend import ast
from softswitch.frontend.parser import parse, parse_text
from softswitch.frontend.preprocess import ARCH_DIR, BMV2_PREDEFINED, preprocess

try:  # the checker is written separately; the syntax stages are fuzzed even without it
    from softswitch.frontend.typecheck import check
except ImportError:  # pragma: no cover - depends on the checker's progress
    check = None

ROOT = Path(__file__).resolve().parents[2]


def _read_corpus() -> dict[str, str]:
    """The seed programs, read once: other work may add or remove corpus files meanwhile."""
    out: dict[str, str] = {}
    for path in [*sorted((ROOT / "tests" / "p4").glob("*.p4")), ARCH_DIR / "v1model.p4"]:
        try:
            out[path.name] = path.read_text(encoding="utf-8")
        except OSError:
            continue
    return out


CORPUS = _read_corpus()
TEXTS = list(CORPUS.values())

# Rough P4 tokens: enough to cut, swap and rename at token boundaries.
_TOKEN_RE = re.compile(r'[A-Za-z_]\w*|\d\w*|"[^"\n]*"|//[^\n]*|/\*|\*/|&&&|\.\.\.|[<>=!&|]=|\S')
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
_INSERTS = [
    *"{}()[]<>;,.=:?@#_\"\\/*\n",
    "&&&", "..", "...", "{#}", "//", "/*", "*/", "1w", "8w0", "0x", "4s", "1_", "'", "$", "\x00",
    "header", "header_union", "struct", "enum", "typedef", "type", "extern", "control", "parser",
    "package", "state", "transition", "select", "table", "key", "actions", "entries", "apply",
    "action", "if", "else", "switch", "default", "return", "exit", "const", "bit", "int",
    "varbit", "tuple", "bool", "string", "void", "error", "match_kind", "value_set", "this",
    "in", "out", "inout", "abstract", "list", "priority",
    "#define", "#define X(a) a", "#if", "#ifdef X", "#else", "#endif", "#undef", '#include "x.p4"',
    "#include <core.p4>", "#error", "#pragma",
]  # fmt: skip
_DIRECTIVES = [
    "#define X", "#define F(a) a", "#define G(a, b) a ## b", "#define S(a) #a",
    "#define V(...) f(__VA_ARGS__)",
    "#define true false", "#define bit int", "#define apply F(", "#define X X X", "#undef F",
    "#if 0", "#if 1", "#if 0408", "#if 1 << 100", "#ifdef __p4c__", "#ifndef X", "#elif 1", "#else",
    "#endif", "#include <core.p4>", '#include "v1model.p4"', "#include", "#error boom", "#",
    "#line 3", "#pragma foo", "#warning w", "#bogus",
]  # fmt: skip
_LOCATED = re.compile(r"(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: \S")


# -- helpers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # module-scoped: hypothesis refuses function-scoped fixtures that persist across examples
    return tmp_path_factory.mktemp("robustness")


def _frontend(path: Path) -> None:
    """Every frontend stage the compile driver runs, with p4c's BMv2 predefined macros."""
    source = preprocess(path, (), BMV2_PREDEFINED)
    program = parse(source)
    if check is not None:
        check(program, source_file=str(path))


def _assert_located_inside(err: P4Error, main: Path) -> None:
    text = str(err)
    m = _LOCATED.match(text)
    assert m is not None, f"error without file:line:col: {text!r}"
    file, line, col = m["file"], int(m["line"]), int(m["col"])
    named = Path(file)
    assert named == main or named.parent == ARCH_DIR, f"error points outside the input: {text}"
    lines = named.read_bytes().decode("utf-8", errors="replace").split("\n")
    assert 1 <= line <= len(lines), f"line out of range: {text}"
    assert 1 <= col <= len(lines[line - 1]) + 1, f"column out of range: {text}"


def _outcome(path: Path, run: Callable[[Path], object] = _frontend) -> P4Error | None:
    """Run the frontend on `path`: None when it compiles, the P4Error otherwise.

    Any other exception escapes and fails the test with its traceback."""
    try:
        run(path)
    except P4Error as err:
        return err
    return None


def _assert_clean(path: Path) -> None:
    err = _outcome(path)
    if err is not None:
        _assert_located_inside(err, path)


def _write(folder: Path, content: str | bytes, name: str = "fuzz.p4") -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


# -- mutations of real programs -------------------------------------------------------------------


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """A corpus program with one to three random edits."""
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(_edit(text))
    return text


def _edit(text: str) -> st.SearchStrategy[str]:
    spans = _spans(text) or [(0, len(text))]
    n = len(spans)
    index = st.integers(0, n - 1)

    def delete(a: int, length: int) -> str:
        b = min(n - 1, a + length)
        return text[: spans[a][0]] + text[spans[b][1] :]

    def duplicate(a: int, length: int) -> str:
        lo, hi = spans[a][0], spans[min(n - 1, a + length)][1]
        return text[:hi] + text[lo:hi] + text[hi:]

    def swap(a: int, b: int) -> str:
        (s1, e1), (s2, e2) = sorted([spans[a], spans[b]])
        if s2 < e1:  # the same token
            return text
        return text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]

    def insert(pos: int, word: str) -> str:
        return text[:pos] + f" {word} " + text[pos:]

    def truncate(pos: int) -> str:
        return text[:pos]

    def delete_chars(pos: int, length: int) -> str:
        return text[:pos] + text[pos + length :]

    idents = [s for s in spans if _IDENT_RE.fullmatch(text[s[0] : s[1]])] or spans

    def rename(a: int, b: int) -> str:
        (s, e), (s2, e2) = idents[a % len(idents)], idents[b % len(idents)]
        return text[:s] + text[s2:e2] + text[e:]

    def directive_line(pos: int, directive: str) -> str:
        start = text.rfind("\n", 0, pos) + 1
        return text[:start] + directive + "\n" + text[start:]

    def splice(other: str, a: int, length: int) -> str:
        a %= len(other) + 1
        at = spans[a % n][0]
        return text[:at] + other[a : a + length] + text[at:]

    size = st.sampled_from([0, 0, 1, 2, 5, 30])
    pos = st.integers(0, len(text))
    return st.one_of(
        st.builds(delete, index, size),
        st.builds(duplicate, index, size),
        st.builds(swap, index, index),
        st.builds(insert, pos, st.sampled_from(_INSERTS)),
        st.builds(truncate, pos),
        st.builds(delete_chars, pos, st.integers(1, 40)),
        st.builds(rename, index, index),
        st.builds(directive_line, pos, st.sampled_from(_DIRECTIVES)),
        st.builds(splice, st.sampled_from(TEXTS), st.integers(0, 10**6), st.integers(1, 400)),
    )


_FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(text=_mutated())
def test_mutated_corpus_programs_compile_or_give_a_located_error(workdir: Path, text: str) -> None:
    _assert_clean(_write(workdir, text))


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(TEXTS) - 1), data=st.data())
def test_every_prefix_cut_gives_a_located_error(
    workdir: Path, index: int, data: st.DataObject
) -> None:
    """Truncation at a token boundary: the text can only be incomplete or still valid."""
    text = TEXTS[index]
    spans = _spans(text)
    cut = spans[data.draw(st.integers(0, len(spans) - 1))][0]
    _assert_clean(_write(workdir, text[:cut]))


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_unmutated_corpus_still_goes_through_the_syntax_stages(tmp_path: Path, name: str) -> None:
    """Guards the fuzzing itself: the seeds it starts from must be valid programs."""
    parse(preprocess(_write(tmp_path, CORPUS[name], name), (), BMV2_PREDEFINED))


# -- random input ---------------------------------------------------------------------------------

_P4ISH = st.text(
    alphabet=st.sampled_from(list("abxyz_019 \t\n{}()[]<>;,.=:?@#\"\\/*+-&|^!~%'$")), max_size=300
)


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(_P4ISH, st.text(max_size=200)))
def test_random_text(workdir: Path, text: str) -> None:
    _assert_clean(_write(workdir, text))


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes(workdir: Path, data: bytes) -> None:
    _assert_clean(_write(workdir, data))


@settings(max_examples=100, deadline=None)
@given(
    pieces=st.lists(st.sampled_from([*_INSERTS, "X", "1", "a.b", "f(x)", "bit<8>"]), max_size=40)
)
def test_random_keyword_soup(workdir: Path, pieces: list[str]) -> None:
    _assert_clean(_write(workdir, " ".join(pieces)))


@settings(max_examples=100, deadline=None)
@given(text=_P4ISH)
def test_parse_text_without_preprocessing(text: str) -> None:
    try:
        parse_text(text, "t.p4")
    except P4Error as err:
        assert re.match(r"t\.p4:\d+:\d+: error: ", str(err)), str(err)


# -- pathological shapes (each a regression case for a crash that was fixed) -----------------------

_MAIN = (ROOT / "tests" / "p4" / "arith.p4").read_text(encoding="utf-8")


def _deep_cases() -> Iterator[tuple[str, str, str]]:
    """(id, text, the innermost fragment the error should point into)."""
    n = 3000
    yield "parentheses", f"const bit<8> X = {'(' * n}1{')' * n};\n", "("
    yield "unary minus", f"const bit<8> X = {'-' * n}1;\n", "-"
    yield "blocks", f"control C() {{ apply {'{' * n}{'}' * n} }}\n", "{"
    yield "if chain", f"control C() {{ apply {{ {'if (true) ' * n}; }} }}\n", "if (true)"
    yield "index", f"const bit<8> X = a{'[a' * n}{']' * n};\n", "[a"
    yield "tuple types", f"typedef {'tuple<' * n}bit{'>' * n} T;\n", "tuple<"
    yield "ternary", f"const bit<8> X = {'true ? 1 : ' * n}1;\n", "true ? 1 : "
    yield "list braces", f"const bit<8> X = {'{' * n}{'}' * n};\n", "{"
    yield "compound target", f"control C() {{ apply {{ x{'[a' * 400}{']' * 400} += 1; }} }}\n", "[a"


@pytest.mark.parametrize(
    ("text", "fragment"), [c[1:] for c in _deep_cases()], ids=[c[0] for c in _deep_cases()]
)
def test_deep_nesting_is_a_located_error_not_a_recursion_error(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = _write(tmp_path, text)
    err = _outcome(path)
    assert err is not None
    _assert_located_inside(err, path)
    assert "too deep" in err.message
    loc = err.location
    assert loc is not None and loc.line == 1
    # the error is inside the nested run, not at the start of the declaration
    start = text.index(fragment)
    assert start < loc.column <= text.rindex(fragment) + len(fragment) + 1, str(err)


def test_moderate_nesting_still_compiles(tmp_path: Path) -> None:
    depth = 60
    extra = (
        f"const bit<8> X = {'(' * depth}1{')' * depth};\n"
        f"control C() {{ apply {'{' * depth}{'}' * depth} }}\n"
    )
    _frontend(_write(tmp_path, extra + _MAIN))


@pytest.mark.parametrize(
    "text",
    [
        "#if " + "(" * 3000 + "1" + ")" * 3000 + "\n#endif\n",
        "#if " + "-" * 3000 + "1\n#endif\n",
        "#define F(x) (x)\nconst bit<8> X = " + "F(" * 2000 + "1" + ")" * 2000 + ";\n",
        "#define F(x) x\n#if " + "F(" * 2000 + "1" + ")" * 2000 + "\n#endif\n",
    ],
    ids=["#if parentheses", "#if unary", "macro calls", "macro calls in #if"],
)
def test_deep_preprocessor_nesting_is_a_located_error(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, text)
    err = _outcome(path)
    assert err is not None and "too deep" in err.message
    _assert_located_inside(err, path)


def test_deep_annotation_body_is_accepted_as_free_text() -> None:
    # p4c takes any balanced tokens in an annotation body; only its value as arguments is lost
    body = "(" * 3000 + ")" * 3000
    (decl,) = parse_text(f"@note({body}) const bit<8> X = 1;").declarations
    assert isinstance(decl, ast.ConstantDecl)
    assert decl.annotations[0].name == "note" and decl.annotations[0].args == []


def test_deep_include_chain_is_a_located_error(tmp_path: Path) -> None:
    depth = 400
    for i in range(depth):
        _write(tmp_path, f'#include "f{i + 1}.p4"\n', f"f{i}.p4")
    _write(tmp_path, "const bit<8> X = 1;\n", f"f{depth}.p4")
    err = _outcome(tmp_path / "f0.p4")
    assert err is not None and "#include nested too deeply" in err.message
    assert err.location is not None and Path(err.location.file).parent == tmp_path


def test_very_long_line(tmp_path: Path) -> None:
    text = "const bit<8> X = " + "1 + " * 50_000 + "1;\n" + "const bit<8> Y = 1;" * 5000 + "\n"
    _assert_clean(_write(tmp_path, text))


def test_very_long_identifier_and_number(tmp_path: Path) -> None:
    text = f"const bit<8> {'x' * 100_000} = {'9' * 4000};\n"
    _assert_clean(_write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ('const string s = "abc\nconst bit<8> X = 1;\n', "unterminated string literal", 1, 18),
        ("const bit<8> X = 1;\n/* never closed\n\n", "unterminated /* comment", 2, 1),
        ('#define S "abc\nS\n', "unterminated string literal", 2, 1),
        ("const bit<8> X = 1; /", "expected a declaration, got '/'", 1, 21),
        ("const bit<8> X\x00 = 1;", "unknown character '\\x00'", 1, 15),
    ],
    ids=["string", "comment", "string from a macro", "lone slash at end", "NUL"],
)
def test_unterminated_and_unknown_text(
    tmp_path: Path, text: str, message: str, line: int, col: int
) -> None:
    path = _write(tmp_path, text)
    err = _outcome(path)
    assert err is not None, "accepted"
    assert str(err) == f"{path}:{line}:{col}: error: {message}"


def test_end_of_file_errors_point_past_the_last_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "control C() {\n  apply {\n    x = 1;")
    err = _outcome(path, lambda p: parse(preprocess(p)))
    assert str(err) == f"{path}:3:11: error: expected '}}' to end the block, got end of file"


def test_undecodable_byte_is_an_error_naming_file_and_place(tmp_path: Path) -> None:
    path = _write(tmp_path, b"const bit<8> X = 1;\nconst bit<8> \xff = 2;\n")
    err = _outcome(path)
    assert str(err) == (
        f"{path}:2:14: error: the file is not UTF-8 text: byte 0xff cannot be decoded"
    )


def test_undecodable_byte_in_an_included_file(tmp_path: Path) -> None:
    _write(tmp_path, b"\xc3\x28\n", "inc.p4")
    path = _write(tmp_path, 'const bit<8> X = 1;\n#include "inc.p4"\n')
    err = _outcome(path)
    assert err is not None and str(err).startswith(f"{tmp_path / 'inc.p4'}:1:1: error: ")


def test_undecodable_bytes_in_comments_are_accepted(tmp_path: Path) -> None:
    # p4c's lexer skips comment bytes unread: Latin-1 text in comments must not break a build
    text = b"// caf\xe9\n/* \xff\xfe */\n" + _MAIN.encode()
    _frontend(_write(tmp_path, text))


def test_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path, "\ufeffconst bit<8> X = 1;\nconst bit<8> Y = Z;\n")
    err = _outcome(path, lambda p: check(parse(preprocess(p))) if check else None)
    if err is not None:  # with the checker: 'Z' is reported at its exact column
        assert err.location is not None and (err.location.line, err.location.column) == (2, 18)
    parse(preprocess(path))


def test_empty_and_blank_files(tmp_path: Path) -> None:
    for text in ["", "\n\n\n", "   \t", "// only a comment", "/* */"]:
        path = _write(tmp_path, text)
        assert parse(preprocess(path)).declarations == []
        _assert_clean(path)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.p4"
    err = _outcome(missing)
    assert err is not None and str(err) == f"error: cannot read {missing}: no such file"


def test_a_name_too_long_is_a_clear_error(tmp_path: Path) -> None:
    long = tmp_path / ("x" * 300 + ".p4")
    err = _outcome(long)
    assert err is not None and str(err) == f"error: cannot read {long}: File name too long"


def test_directory_is_a_clear_error(tmp_path: Path) -> None:
    err = _outcome(tmp_path)
    assert err is not None and str(err) == f"error: cannot read {tmp_path}: it is a directory"


def test_include_of_a_directory_a_missing_file_or_a_name_too_long(tmp_path: Path) -> None:
    (tmp_path / "dir.p4").mkdir()
    # (a name longer than the system takes: ENAMETOOLONG, which Path.is_file raises)
    for name in ["dir.p4", "missing.p4", "x" * 300 + ".p4"]:
        path = _write(tmp_path, f'\n#include "{name}"\n')
        err = _outcome(path)
        assert str(err) == f"{path}:2:10: error: cannot find include file '{name}'"


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("0408", "invalid integer constant '0408' in #if expression"),
        ("9" * 5000, f"integer constant '{'9' * 20}...' is too large in #if expression"),
        ("0x1" + "0" * 16, "integer constant '0x10000000000000000' is too large in #if expression"),
    ],
    ids=["bad octal digit", "5000 digits", "over 64 bits"],
)
def test_bad_if_constants(tmp_path: Path, expr: str, message: str) -> None:
    path = _write(tmp_path, f"#if {expr}\n#endif\n")
    assert str(_outcome(path)) == f"{path}:1:2: error: {message}"


@pytest.mark.parametrize(
    ("expr", "taken"),
    [
        ("1 << 99999999999999", False),  # was unbounded Python arithmetic: hung on memory
        ("-1 >> 70", True),
        ("(1 << 63) < 0", True),  # 64-bit intmax_t, as cpp computes
        ("1 << 63 << 1 == 0", True),
        ("(-9223372036854775807 - 1) / -1 < 0", True),
    ],
)
def test_if_arithmetic_is_64_bit(tmp_path: Path, expr: str, taken: bool) -> None:
    path = _write(tmp_path, f"#if {expr}\nconst bit<8> YES = 1;\n#endif\n")
    assert ("YES" in preprocess(path).text) == taken


@pytest.mark.parametrize(
    ("literal", "shown"),
    [("9" * 5000, "9" * 20 + "..."), ("9" * 4500 + "w1", "9" * 20 + "...")],
    ids=["value", "width prefix"],
)
def test_decimal_literal_too_long_for_python(tmp_path: Path, literal: str, shown: str) -> None:
    path = _write(tmp_path, f"const bit<8> X = {literal};\n")
    assert str(_outcome(path)) == (
        f"{path}:1:18: error: integer literal '{shown}' is too long (more than 4000 digits)"
    )


def test_long_hex_literal_is_fine(tmp_path: Path) -> None:
    path = _write(tmp_path, f"const bit<8> X = 0x{'f' * 5000};\n")
    (decl,) = parse(preprocess(path)).declarations
    assert isinstance(decl, ast.ConstantDecl) and isinstance(decl.init, ast.IntLiteral)
    assert decl.init.number == (1 << 20000) - 1


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("const bit<99999999999999999999> X = 1;", "widths over 65536 bits"),
        ("const int<99999999999999999999> X = 1;", "widths over 65536 bits"),
        ("const bit<(1 << 40)> X = 0;", "widths over 65536 bits"),
        ("header h_t { varbit<99999999999999999999> v; }", "widths over 65536 bits"),
        ("const int X = 1 << 99999999999999;", "not a compile-time constant"),
        ("const tuple<bit<8>> X = {1, 2};", "has 1 elements, the list has 2"),
    ],
)
def test_absurd_declarations_are_located_errors(
    tmp_path: Path, declaration: str, message: str
) -> None:
    source = tmp_path / "absurd.p4"
    source.write_text("#include <v1model.p4>\n" + declaration + "\n")
    with pytest.raises(P4Error) as info:
        compile_file(source)
    assert message in str(info.value)
    assert info.value.location is not None and info.value.location.line == 2
