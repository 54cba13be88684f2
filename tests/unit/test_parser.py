"""The P4_16 lexer and parser: node shapes, precedence, ``>>``, annotations, errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from softswitch.errors import P4Error, P4SyntaxError, SourceLocation, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.lexer import EOF, ID, INT, STRING, UNEXPECTED, tokenize
from softswitch.frontend.parser import parse, parse_file, parse_text
from softswitch.frontend.preprocess import preprocess

ROOT = Path(__file__).resolve().parents[2]
ARCH = ROOT / "softswitch" / "arch"
CORPUS = ROOT / "tests" / "p4"


def _loc(line: int, col: int) -> SourceLocation:
    return SourceLocation("<string>", line, col)


def at(src: str, needle: str) -> SourceLocation:
    """Where `needle` first occurs in `src`."""
    offset = src.index(needle)
    line = src.count("\n", 0, offset) + 1
    return _loc(line, offset - (src.rfind("\n", 0, offset) + 1) + 1)


def decls(src: str) -> list[ast.Declaration]:
    return parse_text(src).declarations


def expr(text: str, prelude: str = "") -> ast.Expression:
    """`text` parsed as the initializer of a constant."""
    d = decls(f"{prelude}\nconst int X = {text};")[-1]
    assert isinstance(d, ast.ConstantDecl)
    return d.init


def body(text: str, prelude: str = "") -> list[ast.Statement | ast.Declaration]:
    """The statements of an apply block containing `text`."""
    d = decls(f"{prelude}\ncontrol C() {{ apply {{ {text} }} }}")[-1]
    assert isinstance(d, ast.ControlDecl)
    return d.body.statements


def show(e: ast.Expression) -> str:
    """A fully parenthesised rendering, to check tree shapes compactly."""
    match e:
        case ast.BinaryOp(op=op, left=left, right=right):
            return f"({show(left)} {op} {show(right)})"
        case ast.UnaryOp(op=op, operand=operand):
            return f"({op}{show(operand)})"
        case ast.Ternary(cond=c, then=t, otherwise=o):
            return f"({show(c)} ? {show(t)} : {show(o)})"
        case ast.IntLiteral(number=n, width=w, signed=s):
            return f"{w}{'s' if s else 'w'}{n}" if w is not None else str(n)
        case ast.PathExpression(name=name, is_global=g):
            return ("." if g else "") + name
        case ast.Member(expr=inner, member=m):
            return f"{show(inner)}.{m}"
        case ast.ArrayIndex(expr=inner, index=i):
            return f"{show(inner)}[{show(i)}]"
        case ast.Slice(expr=inner, hi=hi, lo=lo):
            return f"{show(inner)}[{show(hi)}:{show(lo)}]"
        case ast.MethodCall(callee=callee, type_args=targs, args=args):
            ta = f"<{', '.join(show_type(t) for t in targs)}>" if targs else ""
            shown = [(f"{a.name}=" if a.name else "") + show(a.expr) for a in args]
            return f"{show(callee)}{ta}({', '.join(shown)})"
        case ast.Cast(target=t, expr=inner):
            return f"(({show_type(t)}) {show(inner)})"
        case ast.BoolLiteral(bool_value=b):
            return str(b).lower()
        case ast.StringLiteral(text=text):
            return repr(text)
        case ast.ListExpression(elements=elems):
            return "{" + ", ".join(show(x) for x in elems) + "}"
        case ast.StructExpression(fields=fields, type_ref=t):
            prefix = f"({show_type(t)}) " if t is not None else ""
            return prefix + "{" + ", ".join(f"{f.name} = {show(f.expr)}" for f in fields) + "}"
        case ast.MaskExpression(left=left, right=right):
            return f"{show(left)} &&& {show(right)}"
        case ast.RangeExpression(left=left, right=right):
            return f"{show(left)} .. {show(right)}"
        case ast.DefaultExpression():
            return "default"
        case ast.DontCareExpression():
            return "_"
        case ast.InvalidHeaderExpression():
            return "{#}"
    raise AssertionError(f"unexpected node {e!r}")


def show_type(t: ast.TypeRef) -> str:
    match t:
        case ast.BitTypeRef(width=w, signed=s):
            return f"{'int' if s else 'bit'}<{show(w)}>"
        case ast.VarbitTypeRef(max_width=w):
            return f"varbit<{show(w)}>"
        case ast.BaseTypeRef(name=name):
            return name
        case ast.NamedTypeRef(name=name, type_args=args):
            return name + (f"<{', '.join(show_type(a) for a in args)}>" if args else "")
        case ast.StackTypeRef(element=el, size=size):
            return f"{show_type(el)}[{show(size)}]"
        case ast.TupleTypeRef(elements=els):
            return f"tuple<{', '.join(show_type(a) for a in els)}>"
    raise AssertionError(f"unexpected type {t!r}")


def syntax_error(src: str) -> P4SyntaxError:
    with pytest.raises(P4SyntaxError) as info:
        parse_text(src)
    return info.value


# ---------------------------------------------------------------------------------------------
# Lexer


def _lex(text: str) -> list[tuple[str, str]]:
    toks = tokenize(text, _loc)
    assert toks[-1].kind == EOF
    return [(t.kind, t.text) for t in toks[:-1]]


def test_lexer_keywords_identifiers_and_contextual_words() -> None:
    assert _lex("table t apply key _ x_1") == [
        ("table", "table"),
        (ID, "t"),
        (ID, "apply"),
        (ID, "key"),
        ("_", "_"),
        (ID, "x_1"),
    ]


@pytest.mark.parametrize(
    ("text", "value", "width", "signed"),
    [
        ("10", 10, None, False),
        ("0x0A", 10, None, False),
        ("0XfF", 255, None, False),
        ("0b1010", 10, None, False),
        ("0B1_0", 2, None, False),
        ("0o17", 15, None, False),
        ("0d99", 99, None, False),
        ("010", 10, None, False),
        ("1_000", 1000, None, False),
        ("8w10", 10, 8, False),
        ("8w0xFF", 255, 8, False),
        ("16w0b1", 1, 16, False),
        ("4s3", 3, 4, True),
        ("32s0x7fff_ffff", 0x7FFFFFFF, 32, True),
    ],
)
def test_lexer_integer_literals(text: str, value: int, width: int | None, signed: bool) -> None:
    (tok, _eof) = tokenize(text, _loc)
    assert (tok.kind, tok.value, tok.width, tok.signed) == (INT, value, width, signed)


def test_lexer_string_escapes() -> None:
    (tok, _eof) = tokenize(r'"a\"b\\c\nd\te"', _loc)
    assert tok.kind == STRING
    assert tok.value == 'a"b\\c\nd\te'


def test_lexer_punctuation_longest_match() -> None:
    kinds = [k for k, _ in _lex("&&& && & |+| |-| || | ++ + .. . <<= << <= {#} { ... |+|=")]
    assert kinds == ["&&&", "&&", "&", "|+|", "|-|", "||", "|", "++", "+", "..", ".", "<<=", "<<",
                     "<=", "{#}", "{", "...", "|+|="]  # fmt: skip


def test_lexer_emits_single_closing_angles() -> None:
    toks = tokenize("a>>b >> c > >d", _loc)
    kinds = [t.kind for t in toks]
    assert kinds == [ID, ">", ">", ID, ">", ">", ID, ">", ">", ID, EOF]
    # adjacency tells a shift from two separate '>'
    assert toks[1].end == toks[2].pos
    assert toks[7].end != toks[8].pos


def test_lexer_comments_and_positions() -> None:
    toks = tokenize("a // x\n/* y\n z */ b\n  c", _loc)
    assert [(t.text, t.line, t.col) for t in toks[:-1]] == [("a", 1, 1), ("b", 3, 7), ("c", 4, 3)]


def test_lexer_unknown_character_is_a_token() -> None:
    assert _lex("a $ b") == [(ID, "a"), (UNEXPECTED, "$"), (ID, "b")]


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ("a /* never closed", "unterminated comment", 1, 3),
        ('x = "abc', "unterminated string literal", 1, 5),
        ("x = 0xZZ;", "malformed integer literal '0xZZ'", 1, 5),
        ("x = 4s-3;", "malformed integer literal '4s'", 1, 5),
        ("\n  12ab", "malformed integer literal '12ab'", 2, 3),
    ],
)
def test_lexer_errors(text: str, message: str, line: int, col: int) -> None:
    with pytest.raises(P4SyntaxError) as info:
        tokenize(text, _loc)
    assert info.value.message == message
    assert info.value.location == _loc(line, col)


# ---------------------------------------------------------------------------------------------
# Expressions


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("a + b * c", "(a + (b * c))"),
        ("a - b - c", "((a - b) - c)"),
        ("a * b / c % d", "(((a * b) / c) % d)"),
        # in P4_16 the bitwise operators bind tighter than comparisons (unlike C)
        ("a & b == c", "((a & b) == c)"),
        ("a | b != c ^ d", "((a | b) != (c ^ d))"),
        ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
        ("a < b | c", "(a < (b | c))"),
        ("a == b < c", "(a == (b < c))"),
        ("a && b || c && d", "((a && b) || (c && d))"),
        ("a || b && c", "(a || (b && c))"),
        ("a << 2 + 1", "(a << (2 + 1))"),
        ("a >> 2 & m", "((a >> 2) & m)"),
        ("a ++ b + c", "((a ++ b) + c)"),
        ("a + b ++ c", "((a + b) ++ c)"),
        ("a |+| b |-| c", "((a |+| b) |-| c)"),
        ("a <= b", "(a <= b)"),
        ("a >= b", "(a >= b)"),
        ("a > b", "(a > b)"),
        ("-a * b", "((-a) * b)"),
        ("-a.b", "(-a.b)"),
        ("!a && ~b == +c", "((!a) && ((~b) == (+c)))"),
        ("- - a", "(-(-a))"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a ? b ? c : d : e", "(a ? (b ? c : d) : e)"),
        ("a || b ? c + 1 : d", "((a || b) ? (c + 1) : d)"),
        ("(a + b) * c", "((a + b) * c)"),
        ("x[7:0]", "x[7:0]"),
        ("x[i + 1]", "x[(i + 1)]"),
        ("h.s[2].f[3:1]", "h.s[2].f[3:1]"),
        ("t.apply().hit", "t.apply().hit"),
        ("error.NoMatch", "error.NoMatch"),
        ("E.A", "E.A"),
        (".g + 1", "(.g + 1)"),
        ("f(1, x = 2, y = _)", "f(1, x=2, y=_)"),
        ("f(_)", "f(_)"),
        ("{a, 8w1, {b}}", "{a, 8w1, {b}}"),
        ("{}", "{}"),
        ("{a = 1, b = c + 1,}", "{a = 1, b = (c + 1)}"),
        ("{#}", "{#}"),
        ('"hi"', "'hi'"),
        ("true && false", "(true && false)"),
        ("a >> b >> c", "((a >> b) >> c)"),
        ("a > b >> c", "(a > (b >> c))"),
    ],
)
def test_expression_shapes(text: str, shape: str) -> None:
    assert show(expr(text)) == shape


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("(bit<8>) x", "((bit<8>) x)"),
        ("(bit<8>) x + 1", "(((bit<8>) x) + 1)"),
        ("(bit<8>)(x + 1)", "((bit<8>) (x + 1))"),
        ("(int<4>) -x", "((int<4>) (-x))"),
        ("(T) x.y", "((T) x.y)"),
        ("(T) -1", "((T) (-1))"),
        ("(T)(x)", "((T) x)"),
        ("(bool) b", "((bool) b)"),
        ("(.T) x", "((.T) x)"),
        ("(T) {a = 1}", "(T) {a = 1}"),
        ("(tuple<bit<8>, bool>) {1, true}", "((tuple<bit<8>, bool>) {1, true})"),
        ("(error) e", "((error) e)"),
        ("(bit<(W + 1)>) x", "((bit<(W + 1)>) x)"),
        # not type names: parenthesised expressions
        ("(v) - 1", "(v - 1)"),
        ("(E.A)", "E.A"),
        ("(error.NoMatch)", "error.NoMatch"),
    ],
)
def test_casts_versus_parentheses(text: str, shape: str) -> None:
    prelude = "typedef bit<8> T; const int W = 3; enum E { A }"
    assert show(expr(text, prelude)) == shape


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("f<bit<8>>(x)", "f<bit<8>>(x)"),
        ("f<bit<8>, T>(x)", "f<bit<8>, T>(x)"),
        ("p.lookahead<H>()", "p.lookahead<H>()"),
        ("register<bit<32>>(1024)", "register<bit<32>>(1024)"),
        ("g<tuple<bit<8>>>()", "g<tuple<bit<8>>>()"),
        ("g<H[2]>()", "g<H[2]>()"),
        # not type arguments: comparisons and shifts
        ("a < b", "(a < b)"),
        ("a < b > (c)", "((a < b) > c)"),
        ("a < H", "(a < H)"),
        ("a >> (b)", "(a >> b)"),
    ],
)
def test_generic_calls_versus_less_than(text: str, shape: str) -> None:
    assert show(expr(text, "header H { } typedef bit<8> T;")) == shape


def test_shift_right_versus_closing_angles_in_types() -> None:
    (inst,) = [d for d in decls("register<bit<8>>(4) r;") if isinstance(d, ast.InstanceDecl)]
    assert show_type(inst.type_ref) == "register<bit<8>>"
    assert show(expr("x >>1")) == "(x >> 1)"
    assert show(expr("x>>1")) == "(x >> 1)"
    with pytest.raises(P4SyntaxError, match="expected an expression, got '>'"):
        expr("x > > 1")


def test_literal_details() -> None:
    lit = expr("8w255")
    assert isinstance(lit, ast.IntLiteral)
    assert (lit.number, lit.width, lit.signed) == (255, 8, False)
    s = expr('"a\\tb"')
    assert isinstance(s, ast.StringLiteral)
    assert s.text == "a\tb" and s.value == "a\tb"
    b = expr("false")
    assert isinstance(b, ast.BoolLiteral) and b.bool_value is False
    g = expr(".x")
    assert isinstance(g, ast.PathExpression) and g.is_global and g.name == "x"


def test_struct_cast_folds_into_struct_expression() -> None:
    e = expr("(S) {a = 1}", "struct S { bit<8> a; }")
    assert isinstance(e, ast.StructExpression)
    assert isinstance(e.type_ref, ast.NamedTypeRef) and e.type_ref.name == "S"
    assert e.loc == _loc(2, 15)


def test_expression_locations() -> None:
    e = expr("a +\n  b.c[1]")
    assert isinstance(e, ast.BinaryOp)
    assert e.loc == _loc(2, 15)
    assert e.right.loc == _loc(3, 3)
    assert isinstance(e.right, ast.ArrayIndex)
    assert e.right.index.loc == _loc(3, 7)


# ---------------------------------------------------------------------------------------------
# Types and top-level declarations


def test_type_references() -> None:
    src = """
    typedef bit<8> B;
    typedef int<16> I;
    typedef bit U;
    typedef int N;
    typedef varbit<320> V;
    typedef bool Z;
    typedef string S;
    typedef error Er;
    typedef match_kind M;
    typedef .B G;
    typedef H[4] St;
    typedef tuple<bit<8>, bool> Tp;
    typedef bit<(2 * 4)> W;
    type bit<9> PortId_t;
    header H { }
    """
    got = {
        d.name: (show_type(d.type_ref), d.is_newtype)
        for d in decls(src)
        if isinstance(d, ast.TypedefDecl)
    }
    assert got == {
        "B": ("bit<8>", False),
        "I": ("int<16>", False),
        "U": ("bit<1>", False),
        "N": ("int", False),
        "V": ("varbit<320>", False),
        "Z": ("bool", False),
        "S": ("string", False),
        "Er": ("error", False),
        "M": ("match_kind", False),
        "G": (".B", False),
        "St": ("H[4]", False),
        "Tp": ("tuple<bit<8>, bool>", False),
        "W": ("bit<(2 * 4)>", False),
        "PortId_t": ("bit<9>", True),
    }


def test_headers_structs_unions_generics() -> None:
    h, u, s, g = decls("""
    @controller_header("packet_in") header h_t { bit<8> a; @field_list(1) bit<16> b; varbit<32> o; }
    header_union u_t { h_t x; h_t y; }
    struct s_t { h_t[3] stack; u_t u; }
    struct pair<T, U> { T first; U second; }
    """)
    assert isinstance(h, ast.HeaderDecl) and h.name == "h_t"
    assert h.string_annotation("controller_header") == "packet_in"
    assert [f.name for f in h.fields] == ["a", "b", "o"]
    fl = h.fields[1].annotation("field_list")
    assert fl is not None and show(fl.args[0]) == "1"
    assert isinstance(u, ast.HeaderUnionDecl) and [f.name for f in u.fields] == ["x", "y"]
    assert isinstance(s, ast.StructDecl) and show_type(s.fields[0].type_ref) == "h_t[3]"
    assert isinstance(g, ast.StructDecl)
    assert [p.name for p in g.type_params] == ["T", "U"]
    assert show_type(g.fields[0].type_ref) == "T"
    assert h.loc == _loc(2, 44)
    assert h.fields[1].loc == _loc(2, 83)


def test_enums_errors_match_kinds() -> None:
    e, se, err, mk = decls("""
    enum Color { Red, Green, }
    enum bit<8> Op { Add = 1, Sub = 8w2 }
    error { Bad, Worse }
    match_kind { exact, lpm, }
    """)
    assert isinstance(e, ast.EnumDecl) and e.underlying is None
    assert [m.name for m in e.members] == ["Red", "Green"]
    assert isinstance(se, ast.EnumDecl) and se.underlying is not None
    assert show_type(se.underlying) == "bit<8>"
    assert [(m.name, show(m.init)) for m in se.members if m.init] == [("Add", "1"), ("Sub", "8w2")]
    assert (
        isinstance(err, ast.ErrorDecl) and err.name == "error" and err.members == ["Bad", "Worse"]
    )
    assert isinstance(mk, ast.MatchKindDecl) and mk.members == ["exact", "lpm"]


def test_constants_and_instances() -> None:
    c, i, m = decls("""
    const bit<16> ETH = 0x0800;
    @name("ingress.c") counter(32w1024, CounterType.packets) c;
    V1Switch(P(), I(x = 1)) main;
    """)
    assert isinstance(c, ast.ConstantDecl) and show(c.init) == "2048"
    assert isinstance(i, ast.InstanceDecl) and i.control_plane_name() == "ingress.c"
    assert [show(a.expr) for a in i.args] == ["32w1024", "CounterType.packets"]
    assert i.args[0].expr.loc == _loc(3, 32)
    assert isinstance(m, ast.InstanceDecl) and show_type(m.type_ref) == "V1Switch"
    assert [show(a.expr) for a in m.args] == ["P()", "I(x=1)"]


def test_externs() -> None:
    reg, ck, rnd, fwd, hsh = decls("""
    @noWarn("x") extern register<T, I> {
        register(bit<32> size);
        @noSideEffects void read(out T result, in I index);
        void write(in I index, in T value);
        abstract T on<U>(in U u);
    }
    extern Checksum16 { Checksum16(); bit<16> get<D>(in D data); }
    extern void random<T>(out T result, in T lo, in T hi);
    extern Forward;
    extern O hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);
    """)
    assert isinstance(reg, ast.ExternDecl) and [t.name for t in reg.type_params] == ["T", "I"]
    ctor, read, write, on = reg.methods
    assert ctor.is_constructor and ctor.name == "register" and ctor.return_type is None
    assert [(p.name, p.direction, show_type(p.type_ref)) for p in ctor.params] == [
        ("size", "", "bit<32>")
    ]
    assert read.annotation("noSideEffects") is not None
    assert [(p.name, p.direction) for p in read.params] == [("result", "out"), ("index", "in")]
    assert write.return_type is not None and show_type(write.return_type) == "void"
    assert on.is_abstract and [t.name for t in on.type_params] == ["U"]
    assert isinstance(ck, ast.ExternDecl) and ck.methods[1].name == "get"
    assert isinstance(rnd, ast.ExternFunctionDecl) and [t.name for t in rnd.type_params] == ["T"]
    assert isinstance(fwd, ast.ExternDecl) and fwd.methods == []
    assert isinstance(hsh, ast.ExternFunctionDecl) and show_type(hsh.return_type) == "O"


def test_functions_actions_and_defaults() -> None:
    f, a, pkg = decls("""
    bit<8> max<T>(in T a, in T b = 3) { return a > b ? (bit<8>) a : (bit<8>) (T) b; }
    @name(".drop") action drop(inout standard_metadata_t sm, bit<9> port) { mark_to_drop(sm); }
    package V1Switch<H, M>(Parser<H, M> p, @optional Deparser<H> d);
    """)
    assert isinstance(f, ast.FunctionDecl) and f.params[1].default is not None
    (ret,) = f.body.statements
    assert isinstance(ret, ast.ReturnStatement) and ret.value is not None
    assert show(ret.value) == "((a > b) ? ((bit<8>) a) : ((bit<8>) ((T) b)))"
    assert isinstance(a, ast.ActionDecl) and a.control_plane_name() == ".drop"
    assert [(p.name, p.direction) for p in a.params] == [("sm", "inout"), ("port", "")]
    assert isinstance(pkg, ast.PackageTypeDecl) and [t.name for t in pkg.type_params] == ["H", "M"]
    assert show_type(pkg.params[0].type_ref) == "Parser<H, M>"
    assert pkg.params[1].annotation("optional") is not None


def test_parser_and_control_type_declarations() -> None:
    p, c = decls("""
    parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta);
    @pipeline control Ingress<H, M>(inout H hdr, inout M meta);
    """)
    assert isinstance(p, ast.ParserTypeDecl) and len(p.params) == 3
    assert isinstance(c, ast.ControlTypeDecl) and c.annotation("pipeline") is not None


# ---------------------------------------------------------------------------------------------
# Parsers


PARSER = """
parser P(packet_in pkt, out headers h)(bit<8> limit) {
    value_set<bit<16>>(4) pvs;
    const bit<8> K = 2;
    bit<8> tmp;
    Checksum16() ck;
    state start {
        pkt.extract(h.eth);
        tmp = pkt.lookahead<bit<8>>();
        verify(tmp != 0, error.NoMatch);
        transition select(h.eth.type, tmp) {
            (0x0800, _): v4;
            (0x86dd &&& 0xffff, 1 .. 5): v6;
            (pvs, default): accept;
            default: reject;
        }
    }
    @name("v4") state v4 {
        pkt.extract(h.ip.next);
        transition select(h.ip.last.proto) {
            6: accept;
            (7): accept;
            (8 &&& 0xf): accept;
            (a) + 1: accept;
            _: v4;
        }
    }
    state v6 { transition accept; }
    state empty { }
}
"""


def test_parser_declaration() -> None:
    (p,) = decls(PARSER)
    assert isinstance(p, ast.ParserDecl)
    assert [x.name for x in p.ctor_params] == ["limit"]
    vs, k, tmp, ck = p.locals
    assert isinstance(vs, ast.ValueSetDecl) and show_type(vs.element_type) == "bit<16>"
    assert show(vs.size) == "4"
    assert isinstance(k, ast.ConstantDecl)
    assert isinstance(tmp, ast.VariableDecl)
    assert isinstance(ck, ast.InstanceDecl)
    assert [s.name for s in p.states] == ["start", "v4", "v6", "empty"]
    start = p.states[0]
    extract, assign, verify = start.statements
    assert isinstance(extract, ast.MethodCallStatement)
    assert isinstance(assign, ast.AssignmentStatement)
    assert show(assign.rhs) == "pkt.lookahead<bit<8>>()"
    assert isinstance(verify, ast.MethodCallStatement)
    sel = start.transition
    assert isinstance(sel, ast.SelectExpression)
    assert [show(s) for s in sel.selectors] == ["h.eth.type", "tmp"]
    assert [(show(c.keyset), c.state) for c in sel.cases] == [
        ("{2048, default}", "v4"),
        ("{34525 &&& 65535, 1 .. 5}", "v6"),
        ("{pvs, default}", "accept"),
        ("default", "reject"),
    ]
    assert p.states[1].control_plane_name() == "v4"
    sel4 = p.states[1].transition
    assert isinstance(sel4, ast.SelectExpression)
    assert [show(c.keyset) for c in sel4.cases] == ["6", "7", "8 &&& 15", "(a + 1)", "default"]
    v6 = p.states[2].transition
    assert isinstance(v6, ast.PathExpression) and v6.name == "accept"
    assert p.states[3].transition is None
    assert start.loc == at(PARSER, "start {")
    assert sel.cases[1].loc == at(PARSER, "(0x86dd")


def test_parser_statements_may_include_ifs_blocks_and_declarations() -> None:
    (p,) = decls("""
    parser P(packet_in pkt) {
        state start {
            bit<8> x = 1;
            { x = 2; }
            if (x == 2) { x = 3; }
            transition accept;
        }
    }""")
    assert isinstance(p, ast.ParserDecl)
    kinds = [type(s).__name__ for s in p.states[0].statements]
    assert kinds == ["VariableDecl", "BlockStatement", "IfStatement"]


# ---------------------------------------------------------------------------------------------
# Controls and tables


TABLES = """
control I(inout headers h, inout standard_metadata_t sm)(bit<32> n) {
    direct_counter(CounterType.packets) dc;
    bit<8> v = 0;
    action a(bit<9> port) { sm.egress_spec = port; }
    action b(inout bit<8> x, bit<8> y) { x = y; }
    @name("ingress.t") table t {
        key = {
            h.ip.dst : lpm @name("dst");
            h.ip.src[7:0] : ternary;
            sm.ingress_port : exact;
        }
        actions = {
            a;
            @defaultonly b(v);
            @tableonly .NoAction;
        }
        const default_action = b(v, 8w1);
        size = 1024;
        counters = dc;
        implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w14);
        @hidden meters = m;
        support_timeout = true;
        const largest_priority_wins = false;
        priority_delta = 10;
        const entries = {
            (0x0a000000 &&& 0xff000000, _, 1) : a(1);
            priority = 5 : (1, 2 .. 3, default) : b(v, 2) @priority(7);
            const priority = (3 + 4) : (_, _, _) : .NoAction();
            @noWarn("x") (2, 3, 4) : a(9);
        }
    }
    table u {
        key = { }
        actions = { a; }
        default_action = a(0);
        entries = { 5 : a(5); }
    }
    apply {
        if (t.apply().hit) { u.apply(); }
    }
}
"""


def test_control_declaration_and_tables() -> None:
    (c,) = decls(TABLES)
    assert isinstance(c, ast.ControlDecl)
    assert [p.name for p in c.ctor_params] == ["n"]
    dc, v, a, b, t, u = c.locals
    assert isinstance(dc, ast.InstanceDecl) and isinstance(v, ast.VariableDecl)
    assert isinstance(a, ast.ActionDecl) and isinstance(b, ast.ActionDecl)
    assert isinstance(t, ast.TableDecl) and t.control_plane_name() == "ingress.t"
    assert [(show(k.expr), k.match_kind) for k in t.keys] == [
        ("h.ip.dst", "lpm"),
        ("h.ip.src[7:0]", "ternary"),
        ("sm.ingress_port", "exact"),
    ]
    assert t.keys[0].string_annotation("name") == "dst"
    assert [r.name for r in t.actions] == ["a", "b", ".NoAction"]
    assert t.actions[1].annotation("defaultonly") is not None
    assert [show(x.expr) for x in t.actions[1].args] == ["v"]
    assert t.actions[2].annotation("tableonly") is not None
    assert t.default_action is not None and t.default_action.name == "b"
    assert [show(x.expr) for x in t.default_action.args] == ["v", "8w1"]
    assert t.default_action_const
    props = {p.name: (show(p.value), p.is_const) for p in t.properties}
    assert props == {
        "size": ("1024", False),
        "counters": ("dc", False),
        "implementation": ("action_selector(HashAlgorithm.crc16, 32w64, 32w14)", False),
        "meters": ("m", False),
        "support_timeout": ("true", False),
        "largest_priority_wins": ("false", True),
        "priority_delta": ("10", False),
    }
    meters = t.property("meters")
    assert meters is not None and meters.annotation("hidden") is not None
    assert t.entries is not None and t.entries_const
    e0, e1, e2, e3 = t.entries
    assert [show(k) for k in e0.keys] == ["167772160 &&& 4278190080", "default", "1"]
    assert e0.action.name == "a" and [show(x.expr) for x in e0.action.args] == ["1"]
    assert e0.priority is None and e0.is_const
    assert e1.priority is not None and show(e1.priority) == "5"
    assert [show(k) for k in e1.keys] == ["1", "2 .. 3", "default"]
    assert e1.annotation("priority") is not None
    assert e2.priority is not None and show(e2.priority) == "(3 + 4)"
    assert e2.action.name == ".NoAction"
    assert e3.annotation("noWarn") is not None
    assert e1.loc == at(TABLES, "priority = 5")
    assert isinstance(u, ast.TableDecl)
    assert u.keys == [] and not u.default_action_const and not u.entries_const
    assert u.entries is not None and [show(k) for k in u.entries[0].keys] == ["5"]
    assert not u.entries[0].is_const
    (if_stmt,) = c.body.statements
    assert isinstance(if_stmt, ast.IfStatement) and show(if_stmt.cond) == "t.apply().hit"


def test_statements() -> None:
    stmts = body(
        """
        h.x = 1;
        h.s[0].f[3:0] = 4w2;
        f();
        g<bit<8>>(x);
        T y;
        T z = (T) 1;
        H[2] st;
        bit<8> w = 1;
        const bit<8> k = 3;
        Checksum16() ck;
        if (a) b = 1; else if (c) b = 2; else { b = 3; }
        { }
        ;
        return;
        exit;
        @atomic { r.read(x, 0); }
        my_ctrl.apply(h);
        x += 1;
        x >>= 2;
        x |+|= 3;
        """,
        "typedef bit<8> T; header H { }",
    )
    kinds = [type(s).__name__ for s in stmts]
    assert kinds == [
        "AssignmentStatement",
        "AssignmentStatement",
        "MethodCallStatement",
        "MethodCallStatement",
        "VariableDecl",
        "VariableDecl",
        "VariableDecl",
        "VariableDecl",
        "ConstantDecl",
        "InstanceDecl",
        "IfStatement",
        "BlockStatement",
        "EmptyStatement",
        "ReturnStatement",
        "ExitStatement",
        "BlockStatement",
        "MethodCallStatement",
        "AssignmentStatement",
        "AssignmentStatement",
        "AssignmentStatement",
    ]
    gcall = stmts[3]
    assert isinstance(gcall, ast.MethodCallStatement) and show(gcall.call) == "g<bit<8>>(x)"
    st = stmts[6]
    assert isinstance(st, ast.VariableDecl) and show_type(st.type_ref) == "H[2]"
    if_stmt = stmts[10]
    assert isinstance(if_stmt, ast.IfStatement) and isinstance(if_stmt.otherwise, ast.IfStatement)
    assert isinstance(if_stmt.otherwise.otherwise, ast.BlockStatement)
    atomic = stmts[15]
    assert isinstance(atomic, ast.BlockStatement) and atomic.annotation("atomic") is not None
    compound = [s for s in stmts[17:] if isinstance(s, ast.AssignmentStatement)]
    assert [show(s.rhs) for s in compound] == ["(x + 1)", "(x >> 2)", "(x |+| 3)"]
    # the target is copied, not shared, in the desugared right-hand side
    assert isinstance(compound[0].rhs, ast.BinaryOp) and compound[0].rhs.left is not compound[0].lhs
    assert stmts[0].loc.line == 3


def test_switch_with_fall_through_and_default() -> None:
    (sw,) = body("""
        switch (t.apply().action_run) {
            a: { x = 1; }
            b:
            c: { x = 2; }
            default: { }
        }
    """)
    assert isinstance(sw, ast.SwitchStatement)
    assert show(sw.expr) == "t.apply().action_run"
    assert [[show(lbl) for lbl in case.labels] for case in sw.cases] == [
        ["a"],
        ["b", "c"],
        ["default"],
    ]
    assert all(case.body is not None for case in sw.cases)
    (trailing,) = body("switch (x) { 1: { } 2: }")
    assert isinstance(trailing, ast.SwitchStatement)
    assert trailing.cases[-1].body is None


def test_for_loops() -> None:
    three, in_range, in_stack, in_list = body(
        """
        @unroll for (bit<8> i = 0, j = 1; i < 4; i = i + 1, f(j)) { if (i == 2) { continue; } break; }
        for (bit<8> k in 1 .. n + 1) x = k;
        for (@a H h in hs) { }
        for (T v in {1, 2}) ;
        """,
        "typedef bit<8> T; header H { }",
    )
    assert isinstance(three, ast.ForStatement) and three.annotation("unroll") is not None
    assert [type(s).__name__ for s in three.init] == ["VariableDecl", "AssignmentStatement"]
    assert show(three.cond) == "(i < 4)"
    assert [type(s).__name__ for s in three.updates] == [
        "AssignmentStatement",
        "MethodCallStatement",
    ]
    assert isinstance(three.body, ast.BlockStatement)
    if_stmt, brk = three.body.statements
    assert isinstance(brk, ast.BreakStatement)
    assert isinstance(if_stmt, ast.IfStatement) and isinstance(if_stmt.then, ast.BlockStatement)
    assert isinstance(if_stmt.then.statements[0], ast.ContinueStatement)
    assert isinstance(in_range, ast.ForInStatement) and in_range.var is not None
    assert isinstance(in_range.collection, ast.RangeExpression)
    assert show(in_range.collection.right) == "(n + 1)"
    assert isinstance(in_stack, ast.ForInStatement) and in_stack.var is not None
    assert in_stack.var.annotation("a") is not None and show(in_stack.collection) == "hs"
    assert isinstance(in_list, ast.ForInStatement)
    assert isinstance(in_list.collection, ast.ListExpression)


def test_for_in_over_a_variable_declared_before_is_a_syntax_error() -> None:
    # p4c's grammar, as the spec's, has only for (T x in ...)
    with pytest.raises(P4SyntaxError, match="unexpected 'in': a for-in loop declares") as info:
        body("for (x in 0 .. 3) { }")
    line = "control C() { apply { for (x in 0 .. 3) { } } }"  # as body() writes it
    assert info.value.location is not None
    assert (info.value.location.line, info.value.location.column) == (2, line.index(" in ") + 2)


def test_for_loop_is_not_a_parser_state_statement() -> None:
    with pytest.raises(P4SyntaxError, match="cannot be a statement of a parser state"):
        parse_text("parser p() { state start { for (x in 0 .. 1) { } transition accept; } }")


# ---------------------------------------------------------------------------------------------
# Annotations


def test_annotation_forms() -> None:
    (h,) = decls("""
    @name("x") @id(1) @priority(2) @hidden @deprecated("use y")
    @pkginfo(name = "p", version = "1")
    @structured[k = 1, j = "s"] @list[1, "two"]
    @raw(a + b $ {) @nested(f(1, (2)))
    @pragma my_pragma 1 2
    header h_t { }
    """)
    assert isinstance(h, ast.HeaderDecl)
    by = {a.name: a for a in h.annotations}
    assert h.string_annotation("name") == "x"
    assert show(by["id"].args[0]) == "1" and by["id"].body == "1"
    assert show(by["priority"].args[0]) == "2"
    assert by["hidden"].args == [] and by["hidden"].body == ""
    assert by["deprecated"].body == '"use y"'
    assert by["pkginfo"].args == [] and by["pkginfo"].body == 'name = "p", version = "1"'
    assert by["structured"].body == 'k = 1, j = "s"'
    assert [show(a) for a in by["list"].args] == ["1", "'two'"]
    assert by["raw"].args == [] and by["raw"].body == "a + b $ {"
    assert by["nested"].body == "f(1, (2))"
    assert [show(a) for a in by["nested"].args] == ["f(1, 2)"]
    assert by["my_pragma"].body == "1 2" and [show(a) for a in by["my_pragma"].args] == []
    assert by["name"].loc == _loc(2, 5)


def test_annotations_on_parameters_statements_and_locals() -> None:
    (c,) = decls("""
    control C(@optional in bit<8> x) {
        @name("r") register<bit<8>>(1) r;
        @hidden bit<8> v;
        apply { @name("s") bit<8> w = 0; }
    }""")
    assert isinstance(c, ast.ControlDecl)
    assert c.params[0].annotation("optional") is not None
    assert [d.control_plane_name() for d in c.locals] == ["r", None]
    assert c.locals[1].annotation("hidden") is not None
    w = c.body.statements[0]
    assert isinstance(w, ast.VariableDecl) and w.control_plane_name() == "s"


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("src", "message", "line", "col"),
    [
        (
            "control C() { apply { x = 1\n  y = 2; } }",
            "expected ';' after assignment, got 'y'",
            2,
            3,
        ),
        ("header h { bit<8> a }", "expected ';' after field 'a', got '}'", 1, 21),
        ("const bit<8> x = ;", "expected an expression, got ';'", 1, 18),
        ("control C() { apply { x = $; } }", "unknown character '$'", 1, 27),
        ("#include <core.p4>", "unknown character '#'", 1, 1),
        (
            "control C() { apply { f(1) } }",
            "expected ';' after method call, got '}'",
            1,
            28,
        ),
        ("control C() { apply { a b c; } }", "expected ';' after variable declaration", 1, 27),
        ("control C() { apply { x.y + 1; } }", "expected '=' or '(' after 'x.y', got '+'", 1, 27),
        ("control C() { }", "expected 'apply { ... }' in control 'C', got '}'", 1, 15),
        ("parser P() { state s { transition x; y = 1; } }", "expected '}' to end state 's'", 1, 38),
        ("x = 1;", "expected '(' or a name after the type in this declaration", 1, 3),
        ("const bit<8> table = 1;", "expected a name for the constant, got keyword 'table'", 1, 14),
        ("control C() { table t { key = { x; } } apply { } }", "expected ':' between", 1, 34),
        ("control C() { apply { ", "expected '}' to end the block, got end of file", 1, 23),
        ("struct s { bit<8 > a; } }", "expected a declaration, got '}'", 1, 25),
        ("enum bit<8> E { A }", "members of a serializable enum need a value", 1, 19),
        ("control C() { apply { if (x) bit<8> y; } }", "a declaration cannot be the body", 1, 30),
        ('@name("x" header h { }', "unterminated body of annotation '@name'", 1, 6),
    ],
)
def test_syntax_errors(src: str, message: str, line: int, col: int) -> None:
    err = syntax_error(src)
    assert message in err.message
    assert err.location == _loc(line, col)
    assert str(err).startswith(f"<string>:{line}:{col}: error: ")


@pytest.mark.parametrize(
    "src",
    [
        "control C() { apply { this.x = 1; } }",
        "typedef list<bit<8>> L;",
        "typedef struct { bit<8> a; } S;",
    ],
)
def test_unsupported_constructs(src: str) -> None:
    with pytest.raises(UnsupportedError, match="not supported by softswitch"):
        parse_text(src)


def test_dots_default_initializers() -> None:
    """``...`` (spec 8.26): alone, last in a list, and after the fields of a struct expression."""
    prog = parse_text("const S a = ...; const S b = {1, ...}; const S c = {x = 1, ..., };")
    a, b, c = (d.init for d in prog.declarations)  # type: ignore[attr-defined]
    assert isinstance(a, ast.DotsExpression)
    assert isinstance(b, ast.ListExpression) and isinstance(b.elements[1], ast.DotsExpression)
    assert isinstance(c, ast.StructExpression) and c.dots and [f.name for f in c.fields] == ["x"]


# ---------------------------------------------------------------------------------------------
# Preprocessed sources, the architecture files and the corpus


class _ShiftedSource:
    """A stand-in PreprocessedSource whose text starts 10 lines into 'orig.p4'."""

    def __init__(self, text: str) -> None:
        self.text = text

    def location(self, line: int, column: int) -> SourceLocation:
        return SourceLocation("orig.p4", line + 10, column)


def test_parse_maps_locations_through_the_source() -> None:
    prog = parse(_ShiftedSource("header h { }\n  const bit<8> x = 1;"))
    assert prog.declarations[1].loc == SourceLocation("orig.p4", 12, 16)
    with pytest.raises(P4SyntaxError) as info:
        parse(_ShiftedSource("\n  const bit<8> x = 1"))
    assert str(info.value) == "orig.p4:12:21: error: expected ';' after constant declaration, " \
        "got end of file"  # fmt: skip


def test_parse_file_maps_locations_to_included_files(tmp_path: Path) -> None:
    (tmp_path / "defs.p4").write_text("header h_t {\n    bit<8> a;\n}\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "defs.p4"\n#define W 16\nconst bit<W> x = 1;\nconst bit<8> y = ;\n')
    with pytest.raises(P4SyntaxError) as info:
        parse_file(main)
    assert info.value.location == SourceLocation(str(main), 4, 18)
    main.write_text('#include "defs.p4"\n#define W 16\nconst bit<W> x = 1;\n')
    h, x = parse_file(main).declarations
    assert h.loc.file.endswith("defs.p4") and h.loc.line == 1 and h.loc.column == 8
    assert isinstance(h, ast.HeaderDecl) and h.fields[0].loc.line == 2
    assert x.loc == SourceLocation(str(main), 3, 14)


def test_v1model_architecture_parses() -> None:
    prog = parse_file(ARCH / "v1model.p4")
    names = {d.name for d in prog.declarations}
    assert {"packet_in", "standard_metadata_t", "V1Switch", "register", "mark_to_drop"} <= names
    v1switch = next(d for d in prog.declarations if d.name == "V1Switch")
    assert isinstance(v1switch, ast.PackageTypeDecl) and len(v1switch.params) == 6


CORPUS_FILES = sorted(CORPUS.glob("*.p4"))
BAD_FILES = sorted((CORPUS / "bad").glob("*.p4"))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_corpus_parses(path: Path) -> None:
    prog = parse_file(path)
    assert any(d.name == "main" for d in prog.declarations)


@pytest.mark.parametrize("path", BAD_FILES, ids=lambda p: p.name)
def test_bad_corpus_fails_only_with_p4_errors(path: Path) -> None:
    # mostly semantic errors (they parse); a syntax error must be the one the header announces
    header = dict(
        line[3:].split(":", 1)
        for line in path.read_text().splitlines()
        if line.startswith("// expect-")
    )
    try:
        parse_file(path)
    except P4Error as e:
        assert e.location is not None and e.location.file == str(path)
        if "expect-line" in header:
            assert e.location.line == int(header["expect-line"])
        if "expect-error" in header:
            assert header["expect-error"].strip() in e.message


def test_parse_speed() -> None:
    # v1model.p4 plus a synthetic program of a few hundred lines of typical code
    control = TABLES.replace("control I(", "control I{n}(")
    text = preprocess(ARCH / "v1model.p4").text + "\nstruct headers { }\n"
    text += "\n".join(control.replace("{n}", str(n)) for n in range(10))
    text += "\n".join(PARSER.replace("parser P(", f"parser P{n}(") for n in range(5))
    assert text.count("\n") > 800
    start = time.perf_counter()
    prog = parse_text(text)
    elapsed = time.perf_counter() - start
    assert len(prog.declarations) > 60
    assert elapsed < 0.5
