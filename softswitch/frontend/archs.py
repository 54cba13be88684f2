"""The architectures softswitch checks programs for, and what the checker needs to know of each.

A program's architecture is "v1model" (p4c-bm2-ss for BMv2 simple_switch) or "tna" (bf-p4c for
Tofino 1). The compile driver picks it from the include file (`arch_of_files`) or `--arch`; the
checker then accepts only the externs that architecture's compiler translates, and binds the
main package of that architecture (frontend/blocks.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from softswitch.errors import P4Error


@dataclass(frozen=True)
class Architecture:
    name: str
    include: str  # the architecture file a program includes (in softswitch/arch/)
    compiler: str  # the compiler softswitch stands in for, named in messages
    predefined: Mapping[str, str]  # macros that compiler defines before preprocessing
    extern_objects: frozenset[str]  # extern object types it translates
    extern_functions: frozenset[str]  # extern functions it translates
    # table properties naming extern instances: property -> the extern types allowed
    table_externs: Mapping[str, tuple[str, ...]]
    selector: str  # the action selector extern (a table with a `selector` key needs one)
    bool_properties: frozenset[str]  # table properties holding a constant bool


# core.p4's extern functions every architecture has.
_CORE_FUNCTIONS = frozenset({"verify", "static_assert"})

V1MODEL = Architecture(
    name="v1model",
    include="v1model.p4",
    compiler="p4c-bm2-ss",
    # p4c-bm2-ss's own (p4c's CompilerOptions add __p4c__; the BMv2 back end __TARGET_BMV2__)
    predefined=MappingProxyType({"__p4c__": "1", "__TARGET_BMV2__": "1"}),
    extern_objects=frozenset(
        {"counter", "direct_counter", "meter", "direct_meter", "register", "action_profile",
         "action_selector", "Checksum16"}
    ),
    extern_functions=_CORE_FUNCTIONS | {
        "mark_to_drop", "hash", "random", "digest", "truncate", "assert", "assume", "log_msg",
        "verify_checksum", "verify_checksum_with_payload",
        "update_checksum", "update_checksum_with_payload",
        "clone", "clone3", "clone_preserving_field_list",
        "resubmit", "resubmit_preserving_field_list",
        "recirculate", "recirculate_preserving_field_list",
    },
    table_externs=MappingProxyType({"implementation": ("action_profile", "action_selector"),
                                    "counters": ("direct_counter",),
                                    "meters": ("direct_meter",)}),
    selector="action_selector",
    bool_properties=frozenset({"largest_priority_wins", "support_timeout"}),
)  # fmt: skip

TNA = Architecture(
    name="tna",
    include="tna.p4",
    compiler="bf-p4c",
    # bf-p4c (BFN_Options::process) defines __TARGET_TOFINO__=1 for --target tofino; p4c's
    # CompilerOptions add __p4c__
    predefined=MappingProxyType({"__p4c__": "1", "__TARGET_TOFINO__": "1"}),
    extern_objects=frozenset(
        {"Checksum", "ParserCounter", "CRCPolynomial", "Hash", "Random", "Counter",
         "DirectCounter", "Meter", "DirectMeter", "Register", "DirectRegister", "RegisterAction",
         "DirectRegisterAction", "ActionProfile", "ActionSelector", "Mirror", "Resubmit",
         "Digest"}
    ),
    extern_functions=_CORE_FUNCTIONS | {"port_metadata_unpack"},
    table_externs=MappingProxyType({"implementation": ("ActionProfile", "ActionSelector"),
                                    "counters": ("DirectCounter",),
                                    "meters": ("DirectMeter",),
                                    "registers": ("DirectRegister",)}),
    selector="ActionSelector",
    bool_properties=frozenset({"largest_priority_wins", "idle_timeout"}),
)  # fmt: skip

ARCHITECTURES: Mapping[str, Architecture] = MappingProxyType({"v1model": V1MODEL, "tna": TNA})


def architecture(name: str) -> Architecture:
    arch = ARCHITECTURES.get(name.lower())
    if arch is None:
        raise P4Error(f"unknown architecture '{name}' (softswitch has {', '.join(ARCHITECTURES)})")
    return arch


def arch_of_files(files: Iterable[str]) -> str | None:
    """The architecture whose include file was read (None: neither). Both is an error."""
    names = {Path(f).name for f in files}
    found = [a.name for a in ARCHITECTURES.values() if a.include in names]
    if len(found) > 1:
        raise P4Error(
            f"the program includes both {' and '.join(ARCHITECTURES[a].include for a in found)}: "
            "one architecture per program"
        )
    return found[0] if found else None


def unknown_extern_message(arch: Architecture, name: str) -> str:
    if arch is V1MODEL:
        return (
            f"unknown extern '{name}': p4c-bm2-ss translates only the extern objects of "
            "v1model.p4 (BMv2 has no other)"
        )
    return (
        f"unknown extern '{name}': softswitch's {arch.name.upper()} has only the extern "
        f"objects of {arch.include}"
    )


def unknown_extern_function_message(arch: Architecture, name: str) -> str:
    if arch is V1MODEL:
        return (
            f"unknown extern function '{name}': p4c-bm2-ss translates only the extern "
            "functions of core.p4 and v1model.p4 (BMv2 has no other)"
        )
    return (
        f"unknown extern function '{name}': softswitch's {arch.name.upper()} has only the "
        f"extern functions of core.p4 and {arch.include}"
    )
