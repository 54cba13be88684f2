"""The P4 preprocessor: includes, macros, conditionals and the output-to-source location map."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from softswitch.errors import P4SyntaxError, SourceLocation
from softswitch.frontend.preprocess import ARCH_DIR, PreprocessedSource, preprocess


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(tmp_path: Path, text: str, **kwargs: object) -> PreprocessedSource:
    return preprocess(write(tmp_path, "main.p4", text), **kwargs)  # type: ignore[arg-type]


def lines_of(src: PreprocessedSource) -> list[str]:
    return src.text.split("\n")


def code(src: PreprocessedSource) -> str:
    """The non-blank output lines, stripped, joined by newlines."""
    return "\n".join(ln.strip() for ln in lines_of(src) if ln.strip())


def find(src: PreprocessedSource, needle: str) -> tuple[int, int]:
    """1-based (line, column) of the first occurrence of ``needle`` in the output."""
    for n, line in enumerate(lines_of(src), 1):
        col = line.find(needle)
        if col >= 0:
            return n, col + 1
    raise AssertionError(f"{needle!r} not in output:\n{src.text}")


def located(src: PreprocessedSource, needle: str) -> SourceLocation:
    return src.location(*find(src, needle))


def syntax_error(tmp_path: Path, text: str, **kwargs: object) -> P4SyntaxError:
    with pytest.raises(P4SyntaxError) as info:
        run(tmp_path, text, **kwargs)
    return info.value


# --- includes ----------------------------------------------------------------------------------


def test_quoted_include_searches_the_including_files_folder_first(tmp_path: Path) -> None:
    write(tmp_path, "src/hdr.p4", "const bit<8> FROM_SRC = 1;\n")
    write(tmp_path, "inc/hdr.p4", "const bit<8> FROM_INC = 1;\n")
    main = write(tmp_path, "src/main.p4", '#include "hdr.p4"\n')
    out = preprocess(main, include_dirs=[tmp_path / "inc"])
    assert "FROM_SRC" in out.text
    assert "FROM_INC" not in out.text


def test_angle_include_ignores_the_including_files_folder(tmp_path: Path) -> None:
    write(tmp_path, "src/hdr.p4", "const bit<8> FROM_SRC = 1;\n")
    write(tmp_path, "inc/hdr.p4", "const bit<8> FROM_INC = 1;\n")
    main = write(tmp_path, "src/main.p4", "#include <hdr.p4>\n")
    out = preprocess(main, include_dirs=[tmp_path / "inc"])
    assert "FROM_INC" in out.text
    assert "FROM_SRC" not in out.text


def test_include_dirs_are_searched_in_order_before_the_arch_folder(tmp_path: Path) -> None:
    write(tmp_path, "a/x.p4", "A_WINS\n")
    write(tmp_path, "b/x.p4", "B_WINS\n")
    write(tmp_path, "b/core.p4", "MY_CORE\n")
    main = write(tmp_path, "main.p4", '#include "x.p4"\n#include <core.p4>\n')
    out = preprocess(main, include_dirs=[tmp_path / "a", tmp_path / "b"])
    assert code(out) == "A_WINS\nMY_CORE"


def test_include_target_can_be_a_macro(tmp_path: Path) -> None:
    write(tmp_path, "arch.p4", "ARCH_TEXT\n")
    out = run(tmp_path, '#define ARCH "arch.p4"\n#include ARCH\n')
    assert code(out) == "ARCH_TEXT"


def test_missing_include_reports_the_include_line(tmp_path: Path) -> None:
    err = syntax_error(tmp_path, "// first\n  #include <nowhere.p4>\n")
    assert "nowhere.p4" in err.message
    assert err.location == SourceLocation(str(tmp_path / "main.p4"), 2, 12)


def test_missing_include_inside_an_include_reports_that_file(tmp_path: Path) -> None:
    inner = write(tmp_path, "inner.p4", '\n\n#include "gone.p4"\n')
    err = syntax_error(tmp_path, '#include "inner.p4"\n')
    assert err.location is not None
    assert (Path(err.location.file), err.location.line) == (inner, 3)


def test_include_cycle_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.p4", '#include "b.p4"\n')
    write(tmp_path, "b.p4", '#include "a.p4"\n')
    err = syntax_error(tmp_path, '#include "a.p4"\n')
    assert "cycle" in err.message
    assert "a.p4 -> b.p4 -> a.p4" in err.message


def test_include_guards_stop_double_and_cyclic_inclusion(tmp_path: Path) -> None:
    write(tmp_path, "a.p4", '#ifndef A_P4\n#define A_P4\n#include "b.p4"\nA_BODY\n#endif\n')
    write(tmp_path, "b.p4", '#ifndef B_P4\n#define B_P4\n#include "a.p4"\nB_BODY\n#endif\n')
    out = run(tmp_path, '#include "a.p4"\n#include "a.p4"\n#include "b.p4"\n')
    assert code(out) == "B_BODY\nA_BODY"


def test_v1model_include_yields_the_architecture(tmp_path: Path) -> None:
    out = run(tmp_path, "#include <core.p4>\n#include <v1model.p4>\nMAIN_TEXT\n")
    text = out.text
    assert "package V1Switch<H, M>" in text
    assert text.count("extern packet_in") == 1  # core.p4's guard held
    assert "const bit<32> __v1model_version = 20180101;" in text
    assert "PortId_t" not in text  # only from V1MODEL_VERSION 20200408 on
    assert re.search(r"match_kind\s*{\s*range,\s*optional,\s*selector\s*}", text)
    assert code(out).endswith("MAIN_TEXT")
    assert "#" not in re.sub(r'"[^"]*"', "", text)  # every directive was consumed
    loc = located(out, "package V1Switch")
    assert Path(loc.file) == ARCH_DIR / "v1model.p4"
    source_lines = (ARCH_DIR / "v1model.p4").read_text().splitlines()
    assert source_lines[loc.line - 1].startswith("package V1Switch")


def test_v1model_version_20200408_selects_port_typedef_and_index_types(tmp_path: Path) -> None:
    out = run(tmp_path, "#include <v1model.p4>\n", defines={"V1MODEL_VERSION": "20200408"})
    assert "typedef bit<9>  PortId_t;" in out.text
    assert "extern register<T, I>" in out.text
    assert "const bit<32> __v1model_version = 20200408;" in out.text


def test_arch_declarations_keep_p4c_member_order() -> None:
    core = (ARCH_DIR / "core.p4").read_text()
    v1 = (ARCH_DIR / "v1model.p4").read_text()

    def members(text: str, head: str) -> list[str]:
        body = re.search(re.escape(head) + r"\s*{(.*?)}", text, re.S)
        assert body is not None, head
        no_comments = re.sub(r"//[^\n]*", "", body.group(1))
        return [m.split()[-1] for m in no_comments.replace(";", ",").split(",") if m.strip()]

    assert members(core, "error") == [
        "NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
        "ParserTimeout", "ParserInvalidArgument",
    ]
    assert members(core, "match_kind") == ["exact", "ternary", "lpm"]
    assert members(v1, "enum HashAlgorithm") == [
        "crc32", "crc32_custom", "crc16", "crc16_custom", "random", "identity", "csum16",
        "xor16",
    ]
    assert members(v1, "enum CloneType") == ["I2E", "E2E"]
    fields = re.findall(r"(\w+);", v1.split("struct standard_metadata_t")[1].split("\n}")[0])
    assert list(dict.fromkeys(fields)) == [
        "ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
        "enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth",
        "ingress_global_timestamp", "egress_global_timestamp", "mcast_grp", "egress_rid",
        "checksum_error", "parser_error", "priority",
    ]


# --- macros ------------------------------------------------------------------------------------


def test_object_like_macros_and_nested_expansion(tmp_path: Path) -> None:
    out = run(tmp_path, "#define W 16\n#define T bit<W>\nT x;\n")
    assert code(out) == "bit<16> x;"


def test_function_like_macros_with_parenthesised_arguments(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#define ADD(a, b) ((a) + (b))\n#define TWICE(x) ADD(x, x)\n"
        "y = ADD(f(1, 2), (3, 4));\nz = TWICE(ADD(1, 2));\n",
    )
    assert code(out) == "y = ((f(1, 2)) + ((3, 4)));\nz = ((((1) + (2))) + (((1) + (2))));"


def test_a_function_like_name_without_parentheses_is_left_alone(tmp_path: Path) -> None:
    out = run(tmp_path, "#define F(x) x\nF;\nF (7);\n")
    assert code(out) == "F;\n7;"


def test_a_macro_is_not_re_expanded_inside_its_own_expansion(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#define foo foo + 1\n#define A B\n#define B A\n"
        "#define F(x) G(x)\n#define G(y) y + F\nfoo;\nA;\nF(1)(2);\n",
    )
    assert code(out) == "foo + 1;\nA;\n1 + F(2);"


def test_stringize_and_paste(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        '#define S(x) #x\n#define CAT(a, b) a ## b\n#define N 5\n'
        's = S(a  "q"   b);\nCAT(hdr_, N) = CAT(8w, N);\n',
    )
    assert code(out) == 's = "a \\"q\\" b";\nhdr_N = 8wN;'


def test_variadic_macros(tmp_path: Path) -> None:
    out = run(tmp_path, "#define LOG(fmt, ...) log_msg(fmt, {__VA_ARGS__})\nLOG(\"x={}\", a, b);\n")
    assert code(out) == 'log_msg("x={}", {a, b});'


def test_expansion_does_not_glue_tokens(tmp_path: Path) -> None:
    out = run(tmp_path, "#define NEG(x) -x\n#define E\ny = NEG(-1);\nz = aE;\nw = a E b;\n")
    assert code(out) == "y = - -1;\nz = aE;\nw = a  b;"


def test_strings_and_comments_are_never_expanded(tmp_path: Path) -> None:
    out = run(tmp_path, '#define X 1\ns = "X is X"; // X\n/* #define Y 2 */ Y X\n')
    assert code(out) == 's = "X is X";\nY 1'


def test_undef(tmp_path: Path) -> None:
    out = run(tmp_path, "#define X 1\nX\n#undef X\nX\n")
    assert code(out) == "1\nX"


def test_multi_line_define_and_call(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#define SUM(a, b, c) \\\n   (a + \\\n    b + c)\nx = SUM(1,\n  2,\n  3);\nafter;\n",
    )
    lines = lines_of(out)
    assert lines[:3] == ["", "", ""]
    assert lines[3] == "x = (1 + 2 + 3);"
    assert lines[4:6] == ["", ""]
    assert lines[6] == "after;"
    assert out.location(7, 1).line == 7


def test_command_line_defines(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#ifdef FLAG\nflag = FLAG;\n#endif\nw = WIDTH;\nsq = SQ(3);\n",
        defines={"FLAG": "1", "WIDTH": "32", "SQ(x)": "((x) * (x))"},
    )
    assert code(out) == "flag = 1;\nw = 32;\nsq = ((3) * (3));"


# --- conditionals ------------------------------------------------------------------------------


def test_if_defined_and_arithmetic(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#define A 3\n"
        "#if defined(A) && defined A && !defined(B) && (A * 4 + 1) % 7 == 6 && 1 << 4 == 16\n"
        "yes1\n#endif\n"
        "#if A > 3 || -A >= 0\nno\n#elif A == 3 ? 0x10 == 16 : 0\nyes2\n#else\nno\n#endif\n"
        "#if UNDEFINED_NAME\nno\n#elif 7 / 2 == 3 && -7 / 2 == -3 && -7 % 2 == -1\nyes3\n#endif\n",
    )
    assert code(out) == "yes1\nyes2\nyes3"


def test_nested_conditionals_and_skipped_groups(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        "#ifdef NOPE\n#if 1/0\n#bogus directive\n#error not reached\n#endif\n#else\n"
        "#ifndef NOPE\nkept\n#endif\n#endif\n",
    )
    assert code(out) == "kept"


def test_ifndef_and_else_with_defined_macro(tmp_path: Path) -> None:
    out = run(tmp_path, "#define X\n#ifndef X\nno\n#else\nyes\n#endif\n")
    assert code(out) == "yes"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("ok\n#if 1\nx\n", 2, "missing #endif"),
        ("#endif\n", 1, "without #if"),
        ("#if 1\n#else\n#elif 1\n#endif\n", 3, "after #else"),
        ("\n#if 1 +\n#endif\n", 2, "#if"),
        ("#if (1\n#endif\n", 1, "')'"),
        ("#if 1 / 0\n#endif\n", 1, "division by zero"),
        ("\n\n#frobnicate\n", 3, "unknown preprocessor directive"),
        ("#define F(a, b) a\nF(1);\n", 2, "expects 2 arguments"),
        ("#define F(a) a\nx = F(1,\n", 2, "unterminated argument list"),
        ("#include nothing\n", 1, "#include expects"),
        ("x /* never closed\n", 1, "unterminated /* comment"),
    ],
)
def test_errors_are_located(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    err = syntax_error(tmp_path, text)
    assert fragment in err.message
    assert err.location is not None
    assert (err.location.file, err.location.line) == (str(tmp_path / "main.p4"), line)


def test_error_directive(tmp_path: Path) -> None:
    err = syntax_error(tmp_path, "#if 1\n  #error need   a v1model target\n#endif\n")
    assert err.message == "#error need a v1model target"
    assert err.location == SourceLocation(str(tmp_path / "main.p4"), 2, 4)
    assert str(err).startswith(f"{tmp_path / 'main.p4'}:2:4: error: #error need")


def test_pragma_and_line_are_dropped_keeping_line_numbers(tmp_path: Path) -> None:
    out = run(tmp_path, "#pragma once\n#line 40\nx;\n")
    assert lines_of(out)[:3] == ["", "", "x;"]
    assert out.location(3, 1).line == 3


# --- the line map ------------------------------------------------------------------------------


def test_token_in_an_included_file_maps_to_that_file(tmp_path: Path) -> None:
    inc = write(tmp_path, "lib/inc.p4", "// header\n\n    header h_t { bit<8> f; }\n")
    out = run(tmp_path, '\nbefore;\n#include "lib/inc.p4"\nafter;\n')
    main = str(tmp_path / "main.p4")
    loc = located(out, "h_t")
    assert (Path(loc.file), loc.line, loc.column) == (inc, 3, 12)
    assert located(out, "before") == SourceLocation(main, 2, 1)
    assert located(out, "after") == SourceLocation(main, 4, 1)


def test_token_after_a_multi_line_comment_keeps_its_line_and_column(tmp_path: Path) -> None:
    out = run(tmp_path, "a;\n/* one\n   two\n   three */  b;\n  c;\n")
    main = str(tmp_path / "main.p4")
    assert located(out, "b;") == SourceLocation(main, 4, 14)
    assert located(out, "c;") == SourceLocation(main, 5, 3)


def test_text_from_a_macro_maps_to_the_invocation(tmp_path: Path) -> None:
    out = run(tmp_path, "#define T bit<32>\n#define CALL(x) f(x, 1)\n  T v = CALL(w) + z;\n")
    main = str(tmp_path / "main.p4")
    line = lines_of(out)[2]
    assert line == "  bit<32> v = f(w, 1) + z;"
    n = 3
    assert out.location(n, line.index("bit") + 1) == SourceLocation(main, 3, 3)
    assert out.location(n, line.index("32") + 1) == SourceLocation(main, 3, 3)
    assert out.location(n, line.index(" v") + 2) == SourceLocation(main, 3, 5)
    assert out.location(n, line.index("f(") + 1) == SourceLocation(main, 3, 9)
    assert out.location(n, line.index("1)") + 1) == SourceLocation(main, 3, 9)
    assert out.location(n, line.index("z") + 1) == SourceLocation(main, 3, 19)


def test_every_output_line_maps_back_to_a_source_line_with_the_same_text(tmp_path: Path) -> None:
    inc = "x1;\n#ifdef NOPE\nskipped\n#endif\n  x2;\n"
    write(tmp_path, "inc.p4", inc)
    src = "a1;\n/* c\n */\n#include \"inc.p4\"\n   a2;\n"
    out = run(tmp_path, src)
    for n, line in enumerate(lines_of(out)[:-1], 1):
        if line.strip():
            loc = out.location(n, 1)
            original = Path(loc.file).read_text().splitlines()[loc.line - 1]
            assert original == line


def test_comment_text_is_blanked_with_the_same_width(tmp_path: Path) -> None:
    out = run(tmp_path, "a /* x */ b // y\n")
    assert lines_of(out)[0] == "a         b     "


def test_call_whose_parenthesis_is_on_the_next_line(tmp_path: Path) -> None:
    out = run(tmp_path, "#define F(x) [x]\ny = F\n  (1);\nnext;\n")
    assert lines_of(out)[1:4] == ["y = [1];", "", "next;"]
    assert out.location(4, 1) == SourceLocation(str(tmp_path / "main.p4"), 4, 1)


def test_type_macro_before_closing_angle_keeps_two_tokens(tmp_path: Path) -> None:
    out = run(tmp_path, "#define T8 bit<8>\nregister<T8>(4) r;\n")
    assert code(out) == "register<bit<8> >(4) r;"
