"""CheckedProgram: what the type checker hands to the engine and the P4Info generator."""

from __future__ import annotations

from dataclasses import dataclass, field

from softswitch.frontend import ast
from softswitch.limits import DEFAULT_LIMITS, Limits


@dataclass(eq=False)
class BlockInstance:
    """One instantiated parser or control, with the path p4c uses to name what it contains.

    `path` is the control-plane prefix: for the blocks of the main package it is the block's type
    name (``MyIngress``) as p4c writes it; a sub-control instance ``Sub() s;`` inside MyIngress has
    path ``MyIngress.s``. `ctor_args` are the constant constructor arguments by parameter name.
    `children` maps local instance names (InstanceDecl of a parser/control) to their instances.
    """

    decl: ast.ParserDecl | ast.ControlDecl
    path: str
    ctor_args: dict[str, object] = field(default_factory=dict)
    children: dict[str, BlockInstance] = field(default_factory=dict)
    # main-package blocks: for each apply parameter of `decl`, in order, the name of the
    # architecture block type's parameter it stands for (TNA programs leave out trailing
    # @optional ones: ["pkt", "hdr", "ig_md", "ig_intr_md"] for an ingress parser)
    arch_params: list[str] = field(default_factory=list)


@dataclass(eq=False)
class CheckedProgram:
    """A type-checked program of architecture `arch` ("v1model" or "tna").

    blocks: the main package's blocks by role, in package order. v1model (V1Switch's six):
    "parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser". tna (the
    Pipeline given to Switch): "ingress_parser", "ingress", "ingress_deparser",
    "egress_parser", "egress", "egress_deparser"; `pipe_name` is the Pipeline instance's name
    ("" when written inline in Switch(...)).
    errors: every `error` member in declaration order; its code is its index (NoError = 0).
    """

    program: ast.Program
    main: ast.InstanceDecl
    blocks: dict[str, BlockInstance]
    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    source_file: str = ""
    arch: str = "v1model"
    pipe_name: str = ""
    limits: Limits = DEFAULT_LIMITS  # what it was checked under; the engine's bounds too

    def error_code(self, name: str) -> int:
        return self.errors.index(name)
