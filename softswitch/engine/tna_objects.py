"""The run-time objects of a TNA program's extern instances, built from the generator's
descriptions (ExternInfo) for the engine Switch: which control-plane registry each goes in
(the same registries as v1model's, so the STF runner and the P4Runtime server reach TNA
counters, meters, registers and action profiles by name as they do v1model ones)."""

from __future__ import annotations

from typing import Any

from softswitch.engine.codegen_info import ExternInfo
from softswitch.engine.codegen_types import bit_width
from softswitch.engine.externs import CounterArray, DirectCounter, DirectMeter, IndexedMeter
from softswitch.engine.hashes import CrcConfig
from softswitch.engine.tables import ActionProfile
from softswitch.engine.tna_externs import (
    GREEN,
    RED,
    YELLOW,
    DirectRegisterCells,
    ParserChecksum,
    ParserCounterState,
    TnaHash,
    TnaRegister,
)
from softswitch.errors import UnsupportedError
from softswitch.frontend import types as t

# registry name → the Switch attribute holding that kind of control-plane object
REGISTRIES = ("counter", "direct_counter", "meter", "direct_meter", "register", "profile")


def _counter_kind(value: Any) -> str:
    return {"PACKETS": "packets", "BYTES": "bytes"}.get(str(value), "packets_and_bytes")


def _meter_kind(value: Any) -> str:
    return "bytes" if str(value) == "BYTES" else "packets"


def _colors(a: dict[str, Any]) -> tuple[int, int, int]:
    """The values a meter returns for green, yellow and red (its constructor may set them)."""
    return (int(a.get("green", GREEN)), int(a.get("yellow", YELLOW)), int(a.get("red", RED)))


def _hash(spec: dict[str, Any], name: str) -> TnaHash:
    algo = str(spec.get("algo", "CRC32"))
    width = int(spec.get("width", 32))
    poly = spec.get("poly")
    if algo == "CUSTOM":
        if poly is None:
            raise UnsupportedError(f"Hash '{name}': CUSTOM without a CRCPolynomial")
        pw = int(poly["width"])
        if pw not in (8, 16, 32, 64):
            raise UnsupportedError(
                f"Hash '{name}': a {pw}-bit CRCPolynomial (softswitch has 8, 16, 32 and 64)"
            )
        reflected = bool(poly.get("reversed", False))
        config = CrcConfig(
            pw,
            int(poly["coeff"]) & ((1 << pw) - 1),
            int(poly.get("init", 0)),
            int(poly.get("xor", 0)),
            reflected,
            reflected,
        )
        return TnaHash(
            "CUSTOM",
            width,
            config,
            msb=bool(poly.get("msb", False)),
            extend=bool(poly.get("extended", True)),
        )
    return TnaHash(algo, width)


def build(x: ExternInfo, ns: dict[str, Any]) -> tuple[str | None, Any]:
    """(registry or None, object) for one TNA extern instance; objects another one refers to
    (a selector's Hash) must already be in `ns`."""
    a = x.args
    kind = x.kind
    if kind == "Counter":
        return "counter", CounterArray(x.name, int(a.get("size", 0)), _counter_kind(a.get("type")))
    if kind == "DirectCounter":
        return "direct_counter", DirectCounter(x.name, _counter_kind(a.get("type")))
    if kind == "Meter":
        meter = IndexedMeter(x.name, int(a.get("size", 0)), _meter_kind(a.get("type")))  # type: ignore[arg-type]
        meter.colors = _colors(a)  # type: ignore[attr-defined]
        return "meter", meter
    if kind == "DirectMeter":
        dmeter = DirectMeter(x.name, _meter_kind(a.get("type")))  # type: ignore[arg-type]
        dmeter.colors = _colors(a)  # type: ignore[attr-defined]
        return "direct_meter", dmeter
    if kind == "Register":
        cell = a.get("cell_type", t.BitType(32))
        fields: list[tuple[str, int]] = []
        if isinstance(cell, t.StructLikeType):
            fields = [(f, bit_width(ft)) for f, ft in cell.fields]
            width = sum(w for _, w in fields)
            signed = False
        else:
            width = bit_width(cell)
            signed = isinstance(cell, t.BitType) and cell.signed
        reg = TnaRegister(
            x.name, int(a.get("size", 0)), width, signed, int(a.get("initial", 0)), fields
        )
        return "register", reg
    if kind == "DirectRegister":
        cell = a.get("cell_type", t.BitType(32))
        width = (
            sum(bit_width(ft) for _, ft in cell.fields)
            if isinstance(cell, t.StructLikeType)
            else bit_width(cell)
        )
        return None, DirectRegisterCells(x.name, width, int(a.get("initial", 0)))
    if kind == "Hash":
        return None, _hash(a, x.name)
    if kind in ("ActionProfile", "ActionSelector"):
        selector = None
        if kind == "ActionSelector":
            if "hash_g" in a:
                selector = ns[a["hash_g"]]
            elif "hash_spec" in a:
                selector = _hash(a["hash_spec"], x.name)
            if "profile_g" in a:
                # ActionSelector(action_profile, ...): the selector chooses among that profile's
                # members; both names reach the one object
                shared = ns[a["profile_g"]]
                shared.selector = selector
                return "profile", shared
        return "profile", ActionProfile(x.name, int(a.get("size", 0) or 0), {}, selector)
    if kind == "Checksum":
        return None, ParserChecksum()
    if kind == "ParserCounter":
        return None, ParserCounterState()
    # RegisterAction, DirectRegisterAction, Random, Mirror, Resubmit, Digest, CRCPolynomial:
    # the generated code reaches their state elsewhere (the register, R.rng, R)
    return None, None


def build_all(externs: list[ExternInfo], ns: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """Build every instance (action selectors last: they use a Hash object), binding each in
    `ns` under its global name; returns (registry, object) in `externs` order."""
    built: dict[str, tuple[str | None, Any]] = {}
    for x in sorted(externs, key=lambda x: x.kind == "ActionSelector"):
        entry = build(x, ns)
        ns[x.gname] = entry[1]
        built[x.gname] = entry
    return [built[x.gname] for x in externs]
