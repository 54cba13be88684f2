"""Recursive-descent parser for P4_16 (spec v1.2.x grammar, as far as v1model programs use it).

Builds the nodes of `softswitch.frontend.ast`. Locations point into the original files (through
`PreprocessedSource.location`): a declaration's `loc` is its name (as p4c reports them), every
other node's `loc` is its first token.

Two decisions need more than one token of lookahead, as in p4c:

* declaration or statement — ``T x;``, ``T(1) x;`` are declarations, ``a[1] = 2;`` and
  ``f(x);`` are not: decided by scanning the tokens, since a type is always followed by a name;
* cast or parenthesised expression, and ``f<T>(x)`` or ``a < b`` — decided with the set of
  type names seen so far (declared types, typedefs, type parameters in scope), like p4c's
  ``TYPE_IDENTIFIER`` feedback into its lexer.

Constructs softswitch does not implement (``this``, ``list<T>``, abstract method implementations
in instantiations) raise `UnsupportedError`.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn, Protocol, TypeVar

from softswitch.errors import P4Error, P4SyntaxError, SourceLocation, UnsupportedError
from softswitch.frontend import ast
from softswitch.frontend.lexer import (
    EOF,
    ID,
    INT,
    KEYWORDS,
    STRING,
    UNEXPECTED,
    Token,
    iter_tokens,
)

__all__ = ["SourceText", "parse", "parse_file", "parse_text"]


class SourceText(Protocol):
    """What the parser needs from a `PreprocessedSource`."""

    text: str

    def location(self, line: int, column: int) -> SourceLocation: ...


class _PlainSource:
    """Unpreprocessed text: positions map to themselves."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename

    def location(self, line: int, column: int) -> SourceLocation:
        return SourceLocation(self.filename, line, column)


def literal_base(text: str) -> int:
    """The radix an integer literal is written in: ``0x1F``, ``8w0b101`` → 16, 2."""
    digits = text.split("w", 1)[-1].split("s", 1)[-1] if text[:1].isdigit() else text
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "xXbBoOdD":
        return {"x": 16, "b": 2, "o": 8, "d": 10}[digits[1].lower()]
    return 10


def parse(source: SourceText) -> ast.Program:
    """Parse preprocessed source (a `PreprocessedSource`) into a Program."""
    parser = _Parser(source)
    try:
        return parser.program()
    except RecursionError:
        # Python's stack is the parser's nesting limit; report where the input got too deep
        # rather than a traceback (the cursor is still at the innermost token reached).
        raise P4SyntaxError(
            "nesting too deep (parentheses, blocks, types or expressions)", parser.loc(parser.tok)
        ) from None


def parse_text(text: str, filename: str = "<string>") -> ast.Program:
    """Parse P4 text without preprocessing (no ``#include``/``#define``)."""
    return parse(_PlainSource(text, filename))


_NO_DEFINES: Mapping[str, str] = MappingProxyType({})


def parse_file(
    path: Path | str,
    include_dirs: Sequence[Path | str] = (),
    defines: Mapping[str, str] = _NO_DEFINES,
) -> ast.Program:
    """Preprocess and parse a P4 file."""
    from softswitch.frontend.preprocess import preprocess

    return parse(preprocess(path, include_dirs, defines))


# ---------------------------------------------------------------------------------------------

_T = TypeVar("_T")

# Binary operators and their precedence (higher binds tighter), from the spec's table: note that
# `&`, `^`, `|` bind tighter than comparisons in P4_16, unlike C.
_BINARY_PREC = {
    "||": 1,
    "&&": 2,
    "==": 3, "!=": 3,
    "<": 4, ">": 4, "<=": 4, ">=": 4,
    "|": 5,
    "^": 6,
    "&": 7,
    "<<": 8, ">>": 8,
    "++": 9, "+": 9, "-": 9, "|+|": 9, "|-|": 9,
    "*": 10, "/": 10, "%": 10,
}  # fmt: skip
_COMPOUND_ASSIGN = {
    "+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "&=": "&", "|=": "|", "^=": "^",
    "<<=": "<<", "|+|=": "|+|", "|-|=": "|-|",
}  # fmt: skip
_PREFIX_OPS = frozenset("!~-+")
# Keywords that always begin a type.
_TYPE_KEYWORDS = frozenset(["bit", "int", "varbit", "bool", "string", "tuple", "match_kind"])
_BASE_TYPE_NAMES = frozenset(["bool", "string", "void", "error", "match_kind"])
_STRUCT_LIKE = {"header": ast.HeaderDecl, "header_union": ast.HeaderUnionDecl,
                "struct": ast.StructDecl}  # fmt: skip
_DIRECTIONS = frozenset(["in", "out", "inout"])


# Tokens lexed before parsing starts; each time the parser runs past the tokens lexed so far,
# twice as many more are lexed and the top-level declaration it was in is parsed again.
_FIRST_TOKENS = 4096


class _Parser:
    """The parser state. Tokens are lexed as parsing needs them, so that the first syntax error
    of a long file (10 MB of garbage) comes at once, not after lexing all of it: reading past
    the tokens lexed so far raises IndexError (every token access indexes `toks`; `peek` raises
    it too), which `program` answers by lexing more and parsing the declaration again."""

    def __init__(self, source: SourceText) -> None:
        self.src = source
        self._lexer = iter_tokens(source.text, source.location)
        self.toks: list[Token] = []
        self._lexed_all = False
        self._lex(_FIRST_TOKENS)
        self.i = 0
        # Type names in scope: [0] holds the top-level declarations, the rest type parameters.
        self.type_scopes: list[set[str]] = [set()]
        self._declared: list[str] = []  # names added to type_scopes[0], in order

    def _lex(self, n: int) -> None:
        """Lex up to `n` more tokens."""
        self.toks.extend(itertools.islice(self._lexer, n))
        self._lexed_all = bool(self.toks) and self.toks[-1].kind == EOF

    # -- token helpers ---------------------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        toks = self.toks
        j = self.i + k
        if j < len(toks):
            return toks[j]
        if not self._lexed_all:
            raise IndexError(j)  # `program` lexes more and parses the declaration again
        return toks[-1]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != EOF:
            self.i += 1
        return t

    def accept(self, kind: str) -> Token | None:
        t = self.toks[self.i]
        if t.kind == kind:
            self.i += 1
            return t
        return None

    def at_word(self, word: str) -> bool:
        t = self.toks[self.i]
        return t.kind == ID and t.text == word

    def expect(self, kind: str, context: str) -> Token:
        t = self.toks[self.i]
        if t.kind != kind:
            self.fail(f"expected '{kind}' {context}, got {t.describe()}")
        self.i += 1
        return t

    def expect_name(self, context: str) -> Token:
        t = self.toks[self.i]
        if t.kind != ID:
            what = "keyword " + t.describe() if t.text in KEYWORDS else t.describe()
            self.fail(f"expected a name {context}, got {what}")
        self.i += 1
        return t

    def loc(self, t: Token) -> SourceLocation:
        return self.src.location(t.line, t.col)

    def fail(self, message: str, t: Token | None = None) -> NoReturn:
        t = t or self.toks[self.i]
        if t.kind == UNEXPECTED:
            shown = t.text if t.text.isprintable() else ascii(t.text)[1:-1]
            message = f"unknown character '{shown}'"
            if t.text == "#":
                message += " (preprocessor directives need parse_file, not parse_text)"
        raise P4SyntaxError(message, self.loc(t))

    def unsupported(self, what: str, t: Token | None = None) -> NoReturn:
        raise UnsupportedError(what, self.loc(t or self.toks[self.i]))

    def speculate(self, fn: Callable[[], _T]) -> _T | None:
        """Run `fn`; on a syntax error rewind and return None (bounded backtracking)."""
        saved = self.i
        try:
            return fn()
        except P4Error:
            self.i = saved
            return None

    # -- type names ------------------------------------------------------------------------

    def is_type_name(self, name: str) -> bool:
        return any(name in scope for scope in self.type_scopes)

    def declare_type(self, name: str) -> None:
        if name not in self.type_scopes[0]:
            self.type_scopes[0].add(name)
            self._declared.append(name)

    def push_type_params(self, params: list[ast.TypeParameter]) -> None:
        self.type_scopes.append({p.name for p in params})

    def pop_type_params(self) -> None:
        self.type_scopes.pop()

    # -- program and declarations ----------------------------------------------------------

    def program(self) -> ast.Program:
        decls: list[ast.Declaration] = []
        more = _FIRST_TOKENS
        while True:
            start, declared = self.i, len(self._declared)
            try:
                if self.tok.kind == EOF:
                    break
                if not self.accept(";"):
                    decls.append(self.declaration())
            except IndexError:
                if self._lexed_all:
                    raise  # not the end of the tokens lexed so far: a parser bug
                # ran past the tokens lexed so far: undo the declaration, lex more, again
                self.i = start
                for name in self._declared[declared:]:
                    self.type_scopes[0].discard(name)
                del self._declared[declared:]
                del self.type_scopes[1:]
                more *= 2
                self._lex(more)
        return ast.Program(declarations=decls, loc=self.src.location(1, 1))

    def declaration(self) -> ast.Declaration:
        annos = self.annotations()
        t = self.tok
        k = t.kind
        if k == "const":
            return self.constant_decl(annos)
        if k == "extern":
            return self.extern_decl(annos)
        if k == "action":
            return self.action_decl(annos)
        if k == "parser":
            return self.parser_decl(annos)
        if k == "control":
            return self.control_decl(annos)
        if k == "package":
            return self.package_decl(annos)
        if k in _STRUCT_LIKE:
            return self.struct_like_decl(annos)
        if k == "enum":
            return self.enum_decl(annos)
        if k == "typedef" or (t.kind == ID and t.text == "type" and self.peek().kind != "("):
            return self.typedef_decl(annos)
        if k in ("error", "match_kind") and self.peek().kind == "{":
            return self.member_list_decl(annos)
        if k == "table":
            self.fail("a table must be declared inside a control")
        if k == "state":
            self.fail("a parser state must be declared inside a parser")
        if not self.at_type_start():
            self.fail(f"expected a declaration, got {t.describe()}")
        type_ref = self.parse_type("")
        if self.tok.kind == "(":
            return self.instantiation(annos, type_ref)
        if self.tok.kind == ID:
            return self.function_decl(annos, type_ref)
        self.fail(
            f"expected '(' or a name after the type in this declaration, got {self.tok.describe()}"
        )

    def at_type_start(self) -> bool:
        k = self.tok.kind
        return k in (ID, ".", "void", "error", "_") or k in _TYPE_KEYWORDS

    def constant_decl(self, annos: list[ast.Annotation]) -> ast.ConstantDecl:
        self.expect("const", "")
        type_ref = self.parse_type("after 'const'")
        name = self.expect_name("for the constant")
        self.expect("=", f"after constant name '{name.text}'")
        init = self.expression()
        self.expect(";", "after constant declaration")
        return ast.ConstantDecl(
            name=name.text, type_ref=type_ref, init=init, annotations=annos, loc=self.loc(name)
        )

    def instantiation(self, annos: list[ast.Annotation], type_ref: ast.TypeRef) -> ast.InstanceDecl:
        args = self.arguments()
        name = self.expect_name("for the instance")
        initializer: list[ast.FunctionDecl] = []
        if self.accept("="):
            initializer = self.object_initializer(name.text)
        self.expect(";", "after instantiation")
        return ast.InstanceDecl(
            name=name.text, type_ref=type_ref, args=args, annotations=annos, loc=self.loc(name),
            initializer=initializer,
        )

    def object_initializer(self, instance: str) -> list[ast.FunctionDecl]:
        """``= { void apply(...) { ... } ... }``: the implementations of the extern's abstract
        methods (the spec's objInitializer; instances inside it are not supported)."""
        self.expect("{", f"to begin the initializer of '{instance}'")
        methods: list[ast.FunctionDecl] = []
        while not self.accept("}"):
            annos = self.annotations()
            if not self.at_type_start():
                self.fail(
                    f"expected a method implementation in the initializer of '{instance}', "
                    f"got {self.tok.describe()}"
                )
            start = self.tok
            ret = self.parse_type("")
            if self.tok.kind == "(":
                self.unsupported("instantiations inside an initializer block", start)
            methods.append(self.function_decl(annos, ret))
        return methods

    def variable_decl(
        self, annos: list[ast.Annotation], type_ref: ast.TypeRef, end: str | None = ";"
    ) -> ast.VariableDecl:
        """``T x = e;`` — with `end` None (a ``for`` clause) the ';' is not consumed."""
        name = self.expect_name("for the variable")
        init = None
        if self.accept("="):
            init = self.expression()
        if end is not None:
            self.expect(end, "after variable declaration")
        return ast.VariableDecl(
            name=name.text, type_ref=type_ref, init=init, annotations=annos, loc=self.loc(name)
        )

    def typed_local(self, annos: list[ast.Annotation]) -> ast.Declaration:
        """A variable or an instance: ``T x = e;`` / ``T(args) x;``."""
        type_ref = self.parse_type("")
        if self.tok.kind == "(":
            return self.instantiation(annos, type_ref)
        return self.variable_decl(annos, type_ref)

    def function_decl(self, annos: list[ast.Annotation], ret: ast.TypeRef) -> ast.FunctionDecl:
        name = self.expect_name("for the function")
        tps = self.type_params()
        self.push_type_params(tps)
        try:
            params = self.parameter_list(f"of function '{name.text}'")
            body = self.block([])
        finally:
            self.pop_type_params()
        return ast.FunctionDecl(
            name=name.text,
            return_type=ret,
            type_params=tps,
            params=params,
            body=body,
            annotations=annos,
            loc=self.loc(name),
        )

    def action_decl(self, annos: list[ast.Annotation]) -> ast.ActionDecl:
        self.expect("action", "")
        name = self.expect_name("after 'action'")
        params = self.parameter_list(f"of action '{name.text}'")
        body = self.block([])
        return ast.ActionDecl(
            name=name.text, params=params, body=body, annotations=annos, loc=self.loc(name)
        )

    def extern_decl(self, annos: list[ast.Annotation]) -> ast.Declaration:
        self.expect("extern", "")
        t = self.tok
        if t.kind == ID:
            j = self.i + 1
            if self.toks[j].kind == "<":
                j = self.skip_angles(j) or j
            if self.toks[j].kind == "{":
                return self.extern_object(annos)
            if self.toks[j].kind == ";":  # forward declaration
                self.advance()
                self.advance()
                self.declare_type(t.text)
                return ast.ExternDecl(name=t.text, annotations=annos, loc=self.loc(t))
        ret = self.parse_type("as the return type of the extern function")
        name = self.expect_name("for the extern function")
        tps = self.type_params()
        self.push_type_params(tps)
        try:
            params = self.parameter_list(f"of extern function '{name.text}'")
        finally:
            self.pop_type_params()
        self.expect(";", "after extern function declaration")
        return ast.ExternFunctionDecl(
            name=name.text,
            return_type=ret,
            type_params=tps,
            params=params,
            annotations=annos,
            loc=self.loc(name),
        )

    def extern_object(self, annos: list[ast.Annotation]) -> ast.ExternDecl:
        name = self.expect_name("after 'extern'")
        self.declare_type(name.text)
        tps = self.type_params()
        self.push_type_params(tps)
        methods: list[ast.MethodPrototype] = []
        try:
            self.expect("{", f"to begin extern '{name.text}'")
            while not self.accept("}"):
                methods.append(self.method_prototype(name.text))
        finally:
            self.pop_type_params()
        return ast.ExternDecl(
            name=name.text, type_params=tps, methods=methods, annotations=annos, loc=self.loc(name)
        )

    def method_prototype(self, extern_name: str) -> ast.MethodPrototype:
        annos = self.annotations()
        if self.tok.kind == EOF:
            self.fail(f"expected '}}' to end extern '{extern_name}', got end of file")
        is_abstract = self.accept("abstract") is not None
        t = self.tok
        if t.kind == ID and t.text == extern_name and self.peek().kind == "(":
            self.advance()
            params = self.parameter_list(f"of the constructor of '{extern_name}'")
            self.expect(";", "after constructor declaration")
            return ast.MethodPrototype(
                name=extern_name,
                params=params,
                is_constructor=True,
                is_abstract=is_abstract,
                annotations=annos,
                loc=self.loc(t),
            )
        ret = self.parse_type(f"as a method return type in extern '{extern_name}'")
        name = self.expect_name("for the method")
        tps = self.type_params()
        self.push_type_params(tps)
        try:
            params = self.parameter_list(f"of method '{name.text}'")
        finally:
            self.pop_type_params()
        self.expect(";", f"after method '{name.text}'")
        return ast.MethodPrototype(
            name=name.text,
            return_type=ret,
            type_params=tps,
            params=params,
            is_abstract=is_abstract,
            annotations=annos,
            loc=self.loc(name),
        )

    def package_decl(self, annos: list[ast.Annotation]) -> ast.PackageTypeDecl:
        self.expect("package", "")
        name = self.expect_name("after 'package'")
        self.declare_type(name.text)
        tps = self.type_params()
        self.push_type_params(tps)
        try:
            params = self.parameter_list(f"of package '{name.text}'")
        finally:
            self.pop_type_params()
        self.expect(";", "after package declaration")
        return ast.PackageTypeDecl(
            name=name.text, type_params=tps, params=params, annotations=annos, loc=self.loc(name)
        )

    def struct_like_decl(self, annos: list[ast.Annotation]) -> ast.StructLikeDecl:
        kw = self.advance()
        cls = _STRUCT_LIKE[kw.kind]
        name = self.expect_name(f"after '{kw.kind}'")
        self.declare_type(name.text)
        tps = self.type_params()
        self.push_type_params(tps)
        fields: list[ast.StructField] = []
        try:
            self.expect("{", f"to begin {kw.kind} '{name.text}'")
            while not self.accept("}"):
                fannos = self.annotations()
                if self.tok.kind == EOF:
                    self.fail(f"expected '}}' to end {kw.kind} '{name.text}', got end of file")
                ftype = self.parse_type(f"for a field of {kw.kind} '{name.text}'")
                fname = self.expect_name(f"for a field of {kw.kind} '{name.text}'")
                self.expect(";", f"after field '{fname.text}'")
                fields.append(
                    ast.StructField(
                        name=fname.text, type_ref=ftype, annotations=fannos, loc=self.loc(fname)
                    )
                )
        finally:
            self.pop_type_params()
        return cls(
            name=name.text, fields=fields, type_params=tps, annotations=annos, loc=self.loc(name)
        )

    def enum_decl(self, annos: list[ast.Annotation]) -> ast.EnumDecl:
        self.expect("enum", "")
        underlying = None
        if not (self.tok.kind == ID and self.peek().kind == "{"):
            underlying = self.parse_type("as the enum's underlying type")
        name = self.expect_name("for the enum")
        self.declare_type(name.text)
        self.expect("{", f"to begin enum '{name.text}'")
        members: list[ast.EnumMember] = []
        while self.tok.kind != "}":
            mannos = self.annotations()
            m = self.expect_name(f"for a member of enum '{name.text}'")
            init = None
            if underlying is not None:
                self.expect("=", f"after '{m.text}': members of a serializable enum need a value")
                init = self.expression()
            members.append(
                ast.EnumMember(name=m.text, init=init, annotations=mannos, loc=self.loc(m))
            )
            if not self.accept(","):
                break
        self.expect("}", f"to end enum '{name.text}'")
        return ast.EnumDecl(
            name=name.text,
            members=members,
            underlying=underlying,
            annotations=annos,
            loc=self.loc(name),
        )

    def typedef_decl(self, annos: list[ast.Annotation]) -> ast.TypedefDecl:
        kw = self.advance()
        is_newtype = kw.kind == ID  # `type`
        if self.tok.kind in ("header", "header_union", "struct", "enum"):
            self.unsupported(f"{kw.text} of an inline {self.tok.kind} declaration")
        type_ref = self.parse_type(f"after '{kw.text}'")
        name = self.expect_name(f"for the {kw.text}")
        self.expect(";", f"after {kw.text} declaration")
        self.declare_type(name.text)
        return ast.TypedefDecl(
            name=name.text,
            type_ref=type_ref,
            is_newtype=is_newtype,
            annotations=annos,
            loc=self.loc(name),
        )

    def member_list_decl(self, annos: list[ast.Annotation]) -> ast.Declaration:
        kw = self.advance()
        self.expect("{", f"after '{kw.kind}'")
        names: list[str] = []
        while self.tok.kind != "}":
            names.append(self.expect_name(f"in the {kw.kind} declaration").text)
            if not self.accept(","):
                break
        self.expect("}", f"to end the {kw.kind} declaration")
        cls = ast.ErrorDecl if kw.kind == "error" else ast.MatchKindDecl
        return cls(name=kw.kind, members=names, annotations=annos, loc=self.loc(kw))

    # -- parameters ------------------------------------------------------------------------

    def type_params(self) -> list[ast.TypeParameter]:
        if self.tok.kind != "<":
            return []
        self.advance()
        out: list[ast.TypeParameter] = []
        while True:
            t = self.expect_name("for a type parameter")
            out.append(ast.TypeParameter(name=t.text, loc=self.loc(t)))
            if not self.accept(","):
                break
        self.expect(">", "to close the type parameter list")
        return out

    def parameter_list(self, context: str) -> list[ast.Parameter]:
        self.expect("(", f"to begin the parameters {context}")
        params: list[ast.Parameter] = []
        if self.accept(")"):
            return params
        while True:
            annos = self.annotations()
            direction = ""
            if self.tok.kind in _DIRECTIONS:
                direction = self.advance().kind
            type_ref = self.parse_type(f"for a parameter {context}")
            name = self.expect_name(f"for a parameter {context}")
            default = None
            if self.accept("="):
                default = self.expression()
            params.append(
                ast.Parameter(
                    name=name.text,
                    direction=direction,
                    type_ref=type_ref,
                    default=default,
                    annotations=annos,
                    loc=self.loc(name),
                )
            )
            if not self.accept(","):
                break
        self.expect(")", f"to end the parameters {context}")
        return params

    # -- annotations -----------------------------------------------------------------------

    def annotations(self) -> list[ast.Annotation]:
        out: list[ast.Annotation] = []
        while self.toks[self.i].kind == "@":
            out.append(self.annotation())
        return out

    def annotation(self) -> ast.Annotation:
        at = self.advance()
        name = self.tok
        if name.kind != ID and name.text not in KEYWORDS:
            self.fail(f"expected an annotation name after '@', got {name.describe()}")
        self.advance()
        if name.text == "pragma":
            return self.pragma(at)
        opener = self.tok.kind
        if opener not in ("(", "["):
            return ast.Annotation(name=name.text, loc=self.loc(at))
        closer = ")" if opener == "(" else "]"
        open_tok = self.advance()
        start = self.i
        depth = 0
        while True:
            t = self.tok
            if t.kind == EOF:
                self.fail(f"unterminated body of annotation '@{name.text}'", open_tok)
            if t.kind == opener:
                depth += 1
            elif t.kind == closer:
                if depth == 0:
                    break
                depth -= 1
            self.advance()
        body_toks = self.toks[start : self.i]
        close_tok = self.advance()
        body = self.src.text[open_tok.end : close_tok.pos].strip()
        args = self.annotation_args(body_toks, close_tok)
        return ast.Annotation(name=name.text, args=args, body=body, loc=self.loc(at),
                              structured=opener == "[")

    def pragma(self, at: Token) -> ast.Annotation:
        """``@pragma name tokens...`` up to the end of the line (P4_14-style)."""
        name = self.expect_name("after '@pragma'")
        start = self.i
        while self.tok.kind != EOF and self.tok.line == name.line:
            self.advance()
        body_toks = self.toks[start : self.i]
        body = ""
        if body_toks:
            body = self.src.text[body_toks[0].pos : body_toks[-1].end]
        end = self.tok
        return ast.Annotation(
            name=name.text, args=self.annotation_args(body_toks, end), body=body, loc=self.loc(at)
        )

    def annotation_args(self, body: list[Token], end: Token) -> list[ast.Expression]:
        """Best effort: the body as an expression list, or [] if it is not one."""
        if not body:
            return []
        saved_toks, saved_i, saved_all = self.toks, self.i, self._lexed_all
        self.toks = [*body, Token(EOF, "", end.pos, end.pos, end.line, end.col)]
        self.i = 0
        self._lexed_all = True  # these tokens end with their own EOF
        try:
            args = [self.expression()]
            while self.accept(",") and self.tok.kind != EOF:
                args.append(self.expression())
            return args if self.tok.kind == EOF else []
        except (P4Error, RecursionError):  # p4c accepts any balanced tokens in a body
            return []
        finally:
            self.toks, self.i, self._lexed_all = saved_toks, saved_i, saved_all

    # -- types -----------------------------------------------------------------------------

    def parse_type(self, context: str) -> ast.TypeRef:
        t = self.tok
        k = t.kind
        loc = self.loc(t)
        ref: ast.TypeRef
        if k in ("bit", "int"):
            self.advance()
            if self.accept("<"):
                width = self.width(k)
                self.expect(">", f"to close '{k}<'")
                ref = ast.BitTypeRef(width=width, signed=k == "int", loc=loc)
            elif k == "bit":
                ref = ast.BitTypeRef(width=ast.IntLiteral(number=1, loc=loc), loc=loc)
            else:
                ref = ast.BaseTypeRef(name="int", loc=loc)
            return ref
        if k == "varbit":
            self.advance()
            self.expect("<", "after 'varbit'")
            width = self.width(k)
            self.expect(">", "to close 'varbit<'")
            return ast.VarbitTypeRef(max_width=width, loc=loc)
        if k in _BASE_TYPE_NAMES:
            self.advance()
            return ast.BaseTypeRef(name=k, loc=loc)
        if k == "_":
            self.advance()
            return ast.BaseTypeRef(name="_", loc=loc)
        if k == "tuple":
            self.advance()
            self.expect("<", "after 'tuple'")
            return ast.TupleTypeRef(elements=self.type_args(), loc=loc)
        if k == "." or k == ID:
            prefix = "." if self.accept(".") else ""
            name = self.expect_name("for a type")
            if name.text == "list" and self.tok.kind == "<":
                self.unsupported("list types", name)
            type_args: list[ast.TypeRef] = []
            if self.accept("<"):
                type_args = self.type_args()
            ref = ast.NamedTypeRef(name=prefix + name.text, type_args=type_args, loc=loc)
            if self.accept("["):
                size = self.expression()
                self.expect("]", "to close the header stack size")
                ref = ast.StackTypeRef(element=ref, size=size, loc=loc)
            return ref
        what = f" {context}" if context else ""
        self.fail(f"expected a type{what}, got {t.describe()}")

    def width(self, kw: str) -> ast.Expression:
        t = self.tok
        if t.kind == INT:
            self.advance()
            return ast.IntLiteral(
                number=t.value, width=t.width, signed=t.signed, base=literal_base(t.text),
                loc=self.loc(t))
        if t.kind == "(":
            self.advance()
            e = self.expression()
            self.expect(")", f"to close the width expression of '{kw}'")
            return e
        if t.kind == ID:  # a constant name: p4c wants parentheses, we are lenient
            self.advance()
            return ast.PathExpression(name=t.text, loc=self.loc(t))
        self.fail(
            f"expected a width (an integer or a parenthesised expression) after "
            f"'{kw}<', got {t.describe()}"
        )

    def type_args(self) -> list[ast.TypeRef]:
        """Type arguments after ``<``, through the closing ``>``."""
        out: list[ast.TypeRef] = []
        if self.accept(">"):
            return out
        while True:
            out.append(self.parse_type("as a type argument"))
            if not self.accept(","):
                break
        self.expect(">", "to close the type argument list")
        return out

    def skip_angles(self, j: int) -> int | None:
        """Index after the ``>`` matching the ``<`` at `j`, or None if it does not close."""
        depth = 0
        toks = self.toks
        while True:
            k = toks[j].kind
            if k == "<":
                depth += 1
            elif k == ">":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif k in (";", "{", "}", EOF):
                return None
            j += 1

    def skip_balanced(self, j: int) -> int | None:
        """Index after the bracket closing the one at `j` (``(`` or ``[``)."""
        opener = self.toks[j].kind
        closer = ")" if opener == "(" else "]"
        depth = 0
        toks = self.toks
        while True:
            k = toks[j].kind
            if k == opener:
                depth += 1
            elif k == closer:
                depth -= 1
                if depth == 0:
                    return j + 1
            elif k in (";", "{", "}", EOF):
                return None
            j += 1

    def scan_type(self, j: int) -> int | None:
        """Index after a named type starting at `j` (syntax only), or None."""
        toks = self.toks
        if toks[j].kind == ".":
            j += 1
        if toks[j].kind != ID:
            return None
        j += 1
        if toks[j].kind == "<":
            j2 = self.skip_angles(j)
            if j2 is None:
                return None
            j = j2
        if toks[j].kind == "[":
            j2 = self.skip_balanced(j)
            if j2 is None:
                return None
            j = j2
        return j

    def at_type_args(self) -> bool:
        """At ``<`` that opens type arguments (``f<bit<8>>(x)``), not a less-than."""
        t = self.peek()
        k = t.kind
        if k in _TYPE_KEYWORDS or k in ("void", "_"):
            return True
        if k == "error":
            return self.peek(2).kind != "."
        if k == ".":
            t = self.peek(2)
            k = t.kind
        return k == ID and self.is_type_name(t.text)

    # -- parser ----------------------------------------------------------------------------

    def block_decl(
        self,
        keyword: str,
        type_decl: type[ast.ParserTypeDecl] | type[ast.ControlTypeDecl],
        decl_class: type[ast.ParserDecl] | type[ast.ControlDecl],
        annos: list[ast.Annotation],
        parse_body: Callable[[Any, str], None],
    ) -> ast.Declaration:
        """``parser``/``control``: a type declaration (ends with ';') or a declaration whose
        constructor parameters and opening '{' are read here and body by `parse_body`."""
        self.expect(keyword, "")
        name = self.expect_name(f"after '{keyword}'")
        self.declare_type(name.text)
        tps = self.type_params()
        self.push_type_params(tps)
        try:
            params = self.parameter_list(f"of {keyword} '{name.text}'")
            if self.accept(";"):
                return type_decl(
                    name=name.text,
                    type_params=tps,
                    params=params,
                    annotations=annos,
                    loc=self.loc(name),
                )
            ctor_params: list[ast.Parameter] = []
            if self.tok.kind == "(":
                ctor_params = self.parameter_list(f"of the constructor of '{name.text}'")
            self.expect("{", f"or ';' after the parameters of {keyword} '{name.text}'")
            decl = decl_class(
                name=name.text,
                type_params=tps,
                params=params,
                ctor_params=ctor_params,
                annotations=annos,
                loc=self.loc(name),
            )
            parse_body(decl, name.text)
            return decl
        finally:
            self.pop_type_params()

    def parser_decl(self, annos: list[ast.Annotation]) -> ast.Declaration:
        return self.block_decl("parser", ast.ParserTypeDecl, ast.ParserDecl, annos,
                               self.parser_body)

    def parser_body(self, decl: ast.ParserDecl, name: str) -> None:
        while not self.accept("}"):
            if self.tok.kind == EOF:
                self.fail(f"expected '}}' to end parser '{name}', got end of file")
            lannos = self.annotations()
            if self.at_word("state") and self.peek().kind == ID:
                decl.states.append(self.parser_state(lannos))
            elif decl.states:
                self.fail(
                    f"expected a state or '}}' in parser '{name}', got {self.tok.describe()}"
                )
            else:
                decl.locals.append(self.parser_local(lannos))

    def parser_local(self, annos: list[ast.Annotation]) -> ast.Declaration:
        k = self.tok.kind
        if k == "const":
            return self.constant_decl(annos)
        if k == "value_set":
            return self.value_set_decl(annos)
        if not self.at_type_start():
            self.fail(f"expected a declaration or a state in the parser, got {self.tok.describe()}")
        return self.typed_local(annos)

    def value_set_decl(self, annos: list[ast.Annotation]) -> ast.ValueSetDecl:
        self.expect("value_set", "")
        self.expect("<", "after 'value_set'")
        etype = self.parse_type("as the value_set element type")
        self.expect(">", "to close 'value_set<'")
        self.expect("(", "before the value_set size")
        size = self.expression()
        self.expect(")", "after the value_set size")
        name = self.expect_name("for the value_set")
        self.expect(";", "after value_set declaration")
        return ast.ValueSetDecl(
            name=name.text, element_type=etype, size=size, annotations=annos, loc=self.loc(name)
        )

    def parser_state(self, annos: list[ast.Annotation]) -> ast.ParserState:
        self.advance()  # `state`
        name = self.expect_name("after 'state'")
        self.expect("{", f"to begin state '{name.text}'")
        stmts: list[ast.Statement | ast.Declaration] = []
        while self.tok.kind not in ("}", "transition", EOF):
            if self.tok.kind in ("for", "switch"):  # not parserStatements (spec, p4c grammar)
                what = "a 'for' loop" if self.tok.kind == "for" else "a switch statement"
                self.fail(f"{what} cannot be a statement of a parser state")
            stmts.append(self.statement_or_decl())
        transition: ast.Expression | None = None
        if self.tok.kind == "transition":
            self.advance()
            if self.tok.kind == "select":
                transition = self.select_expression()
            else:
                target = self.expect_name("after 'transition' (a state name or 'select')")
                transition = ast.PathExpression(name=target.text, loc=self.loc(target))
                self.expect(";", f"after 'transition {target.text}'")
        if self.tok.kind != "}":
            after = " after the transition" if transition is not None else ""
            self.fail(f"expected '}}' to end state '{name.text}'{after}, got {self.tok.describe()}")
        self.advance()
        return ast.ParserState(
            name=name.text,
            statements=stmts,
            transition=transition,
            annotations=annos,
            loc=self.loc(name),
        )

    def select_expression(self) -> ast.SelectExpression:
        kw = self.advance()
        self.expect("(", "after 'select'")
        selectors: list[ast.Expression] = []
        if self.tok.kind != ")":
            selectors.append(self.expression())
            while self.accept(","):
                selectors.append(self.expression())
        self.expect(")", "to close the select key list")
        self.expect("{", "to begin the select cases")
        cases: list[ast.SelectCase] = []
        while not self.accept("}"):
            start = self.tok
            if start.kind == EOF:
                self.fail("expected '}' to end the select cases, got end of file")
            keys = self.keyset()
            keyset = (
                keys[0]
                if len(keys) == 1
                else ast.ListExpression(elements=keys, loc=self.loc(start))
            )
            self.expect(":", "after the select case keyset")
            state = self.expect_name("for the next state in the select case")
            self.expect(";", f"after select case ': {state.text}'")
            cases.append(ast.SelectCase(keyset=keyset, state=state.text, loc=self.loc(start)))
        return ast.SelectExpression(selectors=selectors, cases=cases, loc=self.loc(kw))

    def keyset(self) -> list[ast.Expression]:
        """The elements of a keyset: ``(k1, k2)`` or one simple keyset.

        A parenthesised single keyset (``(5 &&& 7)``) counts as one element, not a tuple of one:
        both match a single selector the same way.
        """
        if self.tok.kind == "(":
            elems = self.speculate(self.tuple_keyset)
            if elems is not None:
                return elems
        return [self.simple_keyset()]

    def tuple_keyset(self) -> list[ast.Expression]:
        self.advance()
        elems = [self.simple_keyset()]
        while self.accept(","):
            elems.append(self.simple_keyset())
        self.expect(")", "to close the keyset tuple")
        if self.tok.kind != ":":
            # `(a) + 1 : s` — the parentheses were part of an expression; rewind
            self.fail("not a tuple keyset")
        return elems

    def simple_keyset(self) -> ast.Expression:
        t = self.tok
        if t.kind in ("default", "_"):
            self.advance()
            return ast.DefaultExpression(loc=self.loc(t))
        e = self.expression()
        if self.accept("&&&"):
            return ast.MaskExpression(left=e, right=self.expression(), loc=self.loc(t))
        if self.accept(".."):
            return ast.RangeExpression(left=e, right=self.expression(), loc=self.loc(t))
        return e

    # -- control and tables ----------------------------------------------------------------

    def control_decl(self, annos: list[ast.Annotation]) -> ast.Declaration:
        return self.block_decl("control", ast.ControlTypeDecl, ast.ControlDecl, annos,
                               self.control_body)

    def control_body(self, decl: ast.ControlDecl, name: str) -> None:
        while not (self.at_word("apply") and self.peek().kind in ("{", "@")):
            if self.tok.kind in ("}", EOF):
                self.fail(
                    f"expected 'apply {{ ... }}' in control '{name}', got {self.tok.describe()}"
                )
            decl.locals.append(self.control_local(self.annotations()))
        self.advance()
        decl.body = self.block(self.annotations())
        self.expect("}", f"to end control '{name}' after its apply block")

    def control_local(self, annos: list[ast.Annotation]) -> ast.Declaration:
        k = self.tok.kind
        if k == "const":
            return self.constant_decl(annos)
        if k == "action":
            return self.action_decl(annos)
        if k == "table":
            return self.table_decl(annos)
        if not self.at_type_start():
            self.fail(
                f"expected a declaration or 'apply' in the control, got {self.tok.describe()}"
            )
        return self.typed_local(annos)

    def table_decl(self, annos: list[ast.Annotation]) -> ast.TableDecl:
        self.expect("table", "")
        name = self.expect_name("after 'table'")
        table = ast.TableDecl(name=name.text, annotations=annos, loc=self.loc(name))
        self.expect("{", f"to begin table '{name.text}'")
        entries_at: Token | None = None
        while not self.accept("}"):
            start, had_entries = self.i, table.entries is not None
            self.table_property(table)
            if not had_entries and table.entries is not None:
                entries_at = next(t for t in self.toks[start : self.i] if t.text == "entries")
            elif entries_at is not None and self.toks[start].text == "key":
                # p4c type-checks the properties in order: entries need the key's type
                self.fail(
                    f"table '{name.text}': Entries list must be after table key", entries_at
                )
        return table

    def table_property(self, table: ast.TableDecl) -> None:
        annos = self.annotations()
        const = self.accept("const")
        t = self.tok
        if t.kind == EOF:
            self.fail(f"expected '}}' to end table '{table.name}', got end of file")
        if t.kind == ID and t.text in ("key", "actions") and self.peek().kind == "=":
            if annos or const:
                self.fail(
                    f"the '{t.text}' property takes no annotations or 'const'",
                    t if not annos else None,
                )
            self.advance()
            self.advance()
            if t.text == "key":
                table.keys.extend(self.key_elements(table.name))
            else:
                table.actions.extend(self.action_list(table.name))
            return
        if t.kind == ID and t.text == "entries" and self.peek().kind == "=":
            self.advance()
            self.advance()
            table.entries = self.entries(table.name, const is not None)
            table.entries_const = const is not None
            return
        pname = self.expect_name(f"for a property of table '{table.name}'")
        self.expect("=", f"after table property '{pname.text}'")
        vstart = self.tok
        value = self.expression()
        self.expect(";", f"after table property '{pname.text}'")
        if pname.text == "default_action":
            table.default_action = self.action_ref_of(value, vstart, annos)
            table.default_action_const = const is not None
        else:
            table.properties.append(
                ast.TableProperty(
                    name=pname.text,
                    value=value,
                    is_const=const is not None,
                    annotations=annos,
                    loc=self.loc(pname),
                )
            )

    def key_elements(self, table: str) -> list[ast.KeyElement]:
        self.expect("{", "after 'key ='")
        out: list[ast.KeyElement] = []
        while not self.accept("}"):
            start = self.tok
            if start.kind == EOF:
                self.fail(f"expected '}}' to end the key of table '{table}', got end of file")
            expr = self.expression()
            self.expect(":", "between the key expression and its match kind")
            kind = self.expect_name("for the match kind")
            kannos = self.annotations()
            self.expect(";", f"after key element ': {kind.text}'")
            out.append(
                ast.KeyElement(
                    expr=expr, match_kind=kind.text, annotations=kannos, loc=self.loc(start)
                )
            )
        return out

    def action_list(self, table: str) -> list[ast.ActionRef]:
        self.expect("{", "after 'actions ='")
        out: list[ast.ActionRef] = []
        while not self.accept("}"):
            annos = self.annotations()
            if self.tok.kind == EOF:
                self.fail(f"expected '}}' to end the actions of table '{table}', got end of file")
            ref = self.action_ref(annos)
            self.expect(";", f"after action '{ref.name}' in the actions list")
            out.append(ref)
        return out

    def action_ref(self, annos: list[ast.Annotation]) -> ast.ActionRef:
        start = self.tok
        prefix = "." if self.accept(".") else ""
        name = self.expect_name("for an action")
        args = self.arguments() if self.tok.kind == "(" else []
        return ast.ActionRef(
            name=prefix + name.text, args=args, annotations=annos, loc=self.loc(start)
        )

    def action_ref_of(
        self, e: ast.Expression, start: Token, annos: list[ast.Annotation]
    ) -> ast.ActionRef:
        """The action named by a ``default_action = ...`` expression."""
        callee: ast.Expression = e
        args: list[ast.Argument] = []
        if isinstance(e, ast.MethodCall) and not e.type_args:
            callee, args = e.callee, e.args
        if not isinstance(callee, ast.PathExpression):
            self.fail("default_action must name an action, e.g. 'default_action = drop();'", start)
        name = ("." if callee.is_global else "") + callee.name
        return ast.ActionRef(name=name, args=args, annotations=annos, loc=e.loc)

    def entries(self, table: str, const: bool) -> list[ast.TableEntryDecl]:
        self.expect("{", "after 'entries ='")
        out: list[ast.TableEntryDecl] = []
        while not self.accept("}"):
            start = self.tok
            if start.kind == EOF:
                self.fail(f"expected '}}' to end the entries of table '{table}', got end of file")
            annos = self.annotations()
            entry_const = self.accept("const") is not None
            priority = None
            if self.at_word("priority") and self.peek().kind == "=":
                self.advance()
                self.advance()
                priority = self.expression()
                self.expect(":", "after the entry priority")
            keys = self.keyset()
            self.expect(":", "between the entry keys and its action")
            action = self.action_ref([])
            annos += self.annotations()
            self.expect(";", "after table entry")
            out.append(
                ast.TableEntryDecl(
                    keys=keys,
                    action=action,
                    priority=priority,
                    is_const=const or entry_const,
                    annotations=annos,
                    loc=self.loc(start),
                )
            )
        return out

    # -- statements ------------------------------------------------------------------------

    def block(self, annos: list[ast.Annotation]) -> ast.BlockStatement:
        open_tok = self.expect("{", "to begin a block")
        stmts: list[ast.Statement | ast.Declaration] = []
        while not self.accept("}"):
            if self.tok.kind == EOF:
                self.fail("expected '}' to end the block, got end of file")
            stmts.append(self.statement_or_decl())
        return ast.BlockStatement(statements=stmts, annotations=annos, loc=self.loc(open_tok))

    def statement(self, context: str) -> ast.Statement:
        t = self.tok
        s = self.statement_or_decl()
        if not isinstance(s, ast.Statement):
            self.fail(f"a declaration cannot be the body of {context}; wrap it in {{ }}", t)
        return s  # type: ignore[return-value]

    def statement_or_decl(self) -> ast.Statement | ast.Declaration:
        annos = self.annotations()
        t = self.tok
        k = t.kind
        loc = self.loc(t)
        if k == "{":
            return self.block(annos)
        if k == "if":
            self.advance()
            self.expect("(", "after 'if'")
            cond = self.expression()
            self.expect(")", "after the 'if' condition")
            then = self.statement("an 'if'")
            otherwise = self.statement("an 'else'") if self.accept("else") else None
            return ast.IfStatement(
                cond=cond, then=then, otherwise=otherwise, annotations=annos, loc=loc
            )
        if k == "switch":
            return self.switch_statement(annos)
        if k == "return":
            self.advance()
            value = None if self.tok.kind == ";" else self.expression()
            self.expect(";", "after return statement")
            return ast.ReturnStatement(value=value, annotations=annos, loc=loc)
        if k == "exit":
            self.advance()
            self.expect(";", "after 'exit'")
            return ast.ExitStatement(annotations=annos, loc=loc)
        if k == ";":
            self.advance()
            return ast.EmptyStatement(annotations=annos, loc=loc)
        if k == "const":
            return self.constant_decl(annos)
        if k == "for":
            return self.for_statement(annos)
        if k in ("break", "continue"):
            self.advance()
            self.expect(";", f"after '{k}'")
            cls = ast.BreakStatement if k == "break" else ast.ContinueStatement
            return cls(annotations=annos, loc=loc)
        if k == "transition":
            self.fail("'transition' is only allowed at the end of a parser state")
        if k == "this":
            self.unsupported("'this'")
        if self.at_declaration():
            return self.typed_local(annos)
        return self.assignment_or_call(annos)

    def at_declaration(self) -> bool:
        t = self.tok
        k = t.kind
        if k in _TYPE_KEYWORDS:
            return True
        if k == "error":
            return self.peek().kind != "."
        if k not in (ID, "."):
            return False
        j = self.scan_type(self.i)
        if j is None:
            return False
        nk = self.toks[j].kind
        if nk == ID:
            return True
        if nk == "(":
            j2 = self.skip_balanced(j)
            return j2 is not None and self.toks[j2].kind == ID
        return False

    def assignment_or_call(
        self, annos: list[ast.Annotation], end: str | None = ";"
    ) -> ast.Statement:
        """An assignment or method call statement; with `end` None (a ``for`` clause) the
        terminating ';' is left to the caller."""
        start = self.tok
        loc = self.loc(start)
        if start.kind in (ID, ".", "(", "error"):
            lhs = self.postfix()
        else:
            self.fail(f"expected a statement, got {start.describe()}")
        t = self.tok
        k = t.kind
        if k == "=":
            self.advance()
            rhs = self.expression()
            if end is not None:
                self.expect(end, "after assignment")
            return ast.AssignmentStatement(lhs=lhs, rhs=rhs, annotations=annos, loc=loc)
        op = _COMPOUND_ASSIGN.get(k)
        if op is None and k == ">" and self.peek().kind == ">=" and self.peek().pos == t.end:
            op = ">>"
            self.advance()
        if op is not None:
            self.advance()
            rhs = self.expression()
            if end is not None:
                self.expect(end, f"after '{op}=' assignment")
            # `a op= b` means `a = a op b`; the target is copied so each node has one parent
            value = ast.BinaryOp(op=op, left=copy.deepcopy(lhs), right=rhs, loc=lhs.loc)
            return ast.AssignmentStatement(lhs=lhs, rhs=value, annotations=annos, loc=loc,
                                           compound=op)
        if isinstance(lhs, ast.MethodCall):
            if end is not None:
                self.expect(end, "after method call")
            return ast.MethodCallStatement(call=lhs, annotations=annos, loc=loc)
        self.fail(
            f"expected '=' or '(' after '{self.src.text[start.pos : self.toks[self.i - 1].end]}'"
            f", got {t.describe()}"
        )

    def for_statement(self, annos: list[ast.Annotation]) -> ast.Statement:
        """``for (init; cond; updates) s`` or ``for (T x in collection) s`` (P4_16 1.2.5)."""
        kw = self.advance()
        self.expect("(", "after 'for'")
        loc = self.loc(kw)
        if self.at_for_in():
            var_annos = self.annotations()
            var: ast.VariableDecl | None = None
            ref: ast.PathExpression | None = None
            if self.peek().kind == "in":
                # p4c's grammar (as the spec's) has only ``for (T x in ...)``: its ToP4 even
                # prints the declaration back for a loop over a variable declared before
                self.fail(
                    f"syntax error, unexpected 'in': a for-in loop declares its variable "
                    f"('for (<type> {self.tok.text} in ...)')",
                    self.peek(),
                )
            else:
                type_ref = self.parse_type("for the loop variable")
                name = self.expect_name("for the loop variable")
                var = ast.VariableDecl(
                    name=name.text, type_ref=type_ref, annotations=var_annos, loc=self.loc(name)
                )
            self.expect("in", "after the loop variable")
            start = self.tok
            collection = self.expression()
            if self.accept(".."):
                collection = ast.RangeExpression(
                    left=collection, right=self.expression(), loc=self.loc(start)
                )
            self.expect(")", "after the loop collection")
            body = self.statement("a 'for'")
            return ast.ForInStatement(
                var=var, ref=ref, collection=collection, body=body, annotations=annos, loc=loc
            )
        init: list[ast.Statement | ast.Declaration] = []
        if self.tok.kind != ";":
            init.append(self.for_clause_item(allow_decl=True))
            while self.accept(","):
                init.append(self.for_clause_item(allow_decl=True))
        self.expect(";", "after the 'for' initializers")
        cond = self.expression()
        self.expect(";", "after the 'for' condition")
        updates: list[ast.Statement] = []
        if self.tok.kind != ")":
            updates.append(self.for_clause_item(allow_decl=False))  # type: ignore[arg-type]
            while self.accept(","):
                updates.append(self.for_clause_item(allow_decl=False))  # type: ignore[arg-type]
        self.expect(")", "after the 'for' updates")
        body = self.statement("a 'for'")
        return ast.ForStatement(
            init=init, cond=cond, updates=updates, body=body, annotations=annos, loc=loc
        )

    def at_for_in(self) -> bool:
        """After ``for (``: ``[@a] T x in`` or ``x in`` follows (not an initializer)."""
        j = self.i
        toks = self.toks
        while toks[j].kind == "@":  # annotations of the loop variable
            j += 1
            if toks[j].kind == ID or toks[j].text in KEYWORDS:
                j += 1
            if toks[j].kind in ("(", "["):
                j2 = self.skip_balanced(j)
                if j2 is None:
                    return False
                j = j2
        if toks[j].kind == ID and toks[j + 1].kind == "in":
            return True
        if toks[j].kind in _TYPE_KEYWORDS:
            saved = self.i
            self.i = j
            try:
                self.parse_type("")
                return self.tok.kind == ID and self.peek().kind == "in"
            except P4Error:
                return False
            finally:
                self.i = saved
        k = self.scan_type(j)
        return k is not None and toks[k].kind == ID and toks[k + 1].kind == "in"

    def for_clause_item(self, allow_decl: bool) -> ast.Statement | ast.Declaration:
        """One initializer (a declaration too) or update of a three-clause ``for``."""
        annos = self.annotations()
        if allow_decl and self.at_declaration():
            return self.variable_decl(annos, self.parse_type(""), end=None)
        return self.assignment_or_call(annos, end=None)

    def switch_statement(self, annos: list[ast.Annotation]) -> ast.SwitchStatement:
        kw = self.advance()
        self.expect("(", "after 'switch'")
        expr = self.expression()
        self.expect(")", "after the switch expression")
        self.expect("{", "to begin the switch cases")
        cases: list[ast.SwitchCase] = []
        labels: list[ast.Expression] = []
        first: Token | None = None
        while not self.accept("}"):
            t = self.tok
            if t.kind == EOF:
                self.fail("expected '}' to end the switch, got end of file")
            if t.kind == "{":
                self.fail("expected a switch label before '{'")
            first = first or t
            if self.accept("default"):
                labels.append(ast.DefaultExpression(loc=self.loc(t)))
            else:
                labels.append(self.expression())
            self.expect(":", "after the switch label")
            if self.tok.kind in ("{", "@"):
                body = self.block(self.annotations())
                cases.append(ast.SwitchCase(labels=labels, body=body, loc=self.loc(first)))
                labels, first = [], None
        if labels and first is not None:
            cases.append(ast.SwitchCase(labels=labels, body=None, loc=self.loc(first)))
        return ast.SwitchStatement(expr=expr, cases=cases, annotations=annos, loc=self.loc(kw))

    # -- expressions -----------------------------------------------------------------------

    def expression(self) -> ast.Expression:
        cond = self.binary(1)
        if self.toks[self.i].kind != "?":
            return cond
        self.advance()
        then = self.expression()
        self.expect(":", "in the conditional expression 'c ? a : b'")
        otherwise = self.expression()
        return ast.Ternary(cond=cond, then=then, otherwise=otherwise, loc=cond.loc)

    def binary_op(self) -> tuple[str, int] | None:
        """The binary operator at the cursor and how many tokens it spans."""
        t = self.toks[self.i]
        k = t.kind
        if k == ">":
            nxt = self.toks[self.i + 1]
            if nxt.pos == t.end:
                if nxt.kind == ">":
                    return ">>", 2
                if nxt.kind == ">=":  # `>>=`: a compound assignment, not an operator
                    return None
            return ">", 1
        if k in _BINARY_PREC:
            return k, 1
        return None

    def binary(self, min_prec: int) -> ast.Expression:
        left = self.prefix()
        while True:
            op = self.binary_op()
            if op is None:
                return left
            prec = _BINARY_PREC[op[0]]
            if prec < min_prec:
                return left
            self.i += op[1]
            right = self.binary(prec + 1)
            left = ast.BinaryOp(op=op[0], left=left, right=right, loc=left.loc)

    def prefix(self) -> ast.Expression:
        t = self.toks[self.i]
        if t.kind in _PREFIX_OPS:
            self.advance()
            operand = self.prefix()
            return ast.UnaryOp(op=t.kind, operand=operand, loc=self.loc(t))
        if t.kind == "(":
            target = self.cast_target()
            if target is not None:
                operand = self.prefix()
                if isinstance(operand, ast.StructExpression) and operand.type_ref is None:
                    operand.type_ref = target
                    operand.loc = self.loc(t)
                    return operand
                return ast.Cast(target=target, expr=operand, loc=self.loc(t))
        return self.postfix()

    def cast_target(self) -> ast.TypeRef | None:
        """If a cast ``(T)`` starts here, consume it and return T."""
        nxt = self.peek()
        k = nxt.kind
        if k == "error":
            candidate = self.peek(2).kind != "."
        elif k in _TYPE_KEYWORDS:
            candidate = True
        elif k == ".":
            t2 = self.peek(2)
            candidate = t2.kind == ID and self.is_type_name(t2.text)
        else:
            candidate = k == ID and self.is_type_name(nxt.text) and self.peek(2).kind != "."
        if not candidate:
            return None

        def cast() -> ast.TypeRef:
            self.advance()
            target = self.parse_type("")
            self.expect(")", "")
            return target

        return self.speculate(cast)

    def postfix(self) -> ast.Expression:
        e = self.primary()
        toks = self.toks
        while True:
            t = toks[self.i]
            k = t.kind
            if k == ".":
                self.i += 1
                m = self.tok
                if m.kind != ID and m.text not in KEYWORDS:
                    self.fail(f"expected a member name after '.', got {m.describe()}")
                self.i += 1
                e = ast.Member(expr=e, member=m.text, loc=e.loc)
            elif k == "[":
                self.i += 1
                hi = self.expression()
                if self.accept(":"):
                    lo = self.expression()
                    self.expect("]", "to close the bit slice")
                    e = ast.Slice(expr=e, hi=hi, lo=lo, loc=e.loc)
                else:
                    self.expect("]", "to close the index")
                    e = ast.ArrayIndex(expr=e, index=hi, loc=e.loc)
            elif k == "(":
                e = ast.MethodCall(callee=e, args=self.arguments(), loc=e.loc)
            elif k == "<" and self.at_type_args():
                type_args = self.speculate(self.call_type_args)
                if type_args is None:
                    return e
                e = ast.MethodCall(callee=e, type_args=type_args, args=self.arguments(), loc=e.loc)
            else:
                return e

    def call_type_args(self) -> list[ast.TypeRef]:
        self.advance()
        args = self.type_args()
        if self.tok.kind != "(":
            self.fail("not a generic call")
        return args

    def primary(self) -> ast.Expression:
        t = self.toks[self.i]
        k = t.kind
        if k == ID:
            self.i += 1
            return ast.PathExpression(name=t.text, loc=self.loc(t))
        if k == INT:
            self.i += 1
            return ast.IntLiteral(
                number=t.value, width=t.width, signed=t.signed, base=literal_base(t.text),
                loc=self.loc(t))
        if k == STRING:
            self.i += 1
            return ast.StringLiteral(text=t.value, loc=self.loc(t))
        if k in ("true", "false"):
            self.i += 1
            return ast.BoolLiteral(bool_value=k == "true", loc=self.loc(t))
        if k == ".":
            self.i += 1
            name = self.expect_name("after '.'")
            return ast.PathExpression(name=name.text, is_global=True, loc=self.loc(t))
        if k == "error":
            self.i += 1
            return ast.PathExpression(name="error", loc=self.loc(t))
        if k == "(":
            self.i += 1
            e = self.expression()
            self.expect(")", "to close the parenthesis")
            return e
        if k == "{":
            return self.brace_expression()
        if k == "{#}":
            self.i += 1
            return ast.InvalidHeaderExpression(loc=self.loc(t))
        if k == "this":
            self.unsupported("'this'")
        if k == "...":
            self.i += 1
            return ast.DotsExpression(loc=self.loc(t))
        self.fail(f"expected an expression, got {t.describe()}")

    def brace_expression(self) -> ast.Expression:
        open_tok = self.advance()
        loc = self.loc(open_tok)
        if self.tok.kind == ID and self.peek().kind == "=":
            fields: list[ast.NamedExpression] = []
            dots = False
            while self.tok.kind != "}":
                if self.tok.kind == "...":  # `{a = 1, ...}`: last, then only an optional ','
                    self.advance()
                    dots = True
                    self.accept(",")
                    break
                name = self.expect_name("for a field in the struct expression")
                self.expect("=", f"after field name '{name.text}'")
                fields.append(
                    ast.NamedExpression(name=name.text, expr=self.expression(), loc=self.loc(name))
                )
                if not self.accept(","):
                    break
            self.expect("}", "to close the struct expression")
            return ast.StructExpression(fields=fields, dots=dots, loc=loc)
        elements: list[ast.Expression] = []
        while self.tok.kind != "}":
            elements.append(self.expression())
            if not self.accept(","):
                break
        self.expect("}", "to close the list expression")
        return ast.ListExpression(elements=elements, loc=loc)

    def arguments(self) -> list[ast.Argument]:
        self.expect("(", "to begin the arguments")
        args: list[ast.Argument] = []
        if self.accept(")"):
            return args
        while True:
            t = self.tok
            name = None
            if t.kind == ID and self.peek().kind == "=":
                name = t.text
                self.i += 2
            a = self.tok
            if a.kind == "_":
                self.advance()
                expr: ast.Expression = ast.DontCareExpression(loc=self.loc(a))
            else:
                expr = self.expression()
            args.append(ast.Argument(expr=expr, name=name, loc=self.loc(t)))
            if not self.accept(","):
                break
        self.expect(")", "to close the argument list")
        return args
