"""Which program (P4Info + device config) a device gets, by its topology target: the v1model
program for `bmv2`, a compiled TNA program for `tofino-stratum` / `tofino-pi`, packed the way the
target's P4Runtime server takes it (tofino_config.py). `mrc-ctl push` and `mrc-ctl run` share it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from controller.devices.session import Program
from controller.topology.model import Switch


def program_for(switch: Switch, program: Program,
                targets: Mapping[str, Program] | None) -> Program:
    """The program (so the device config) for `switch`'s target; ValueError when none given."""
    return program_for_target(switch.target, program, targets)


def program_for_target(target: str, program: Program | None,
                       targets: Mapping[str, Program] | None,
                       option: str = "--tofino-out") -> Program:
    """`program` for a `bmv2` device, `targets[target]` for a Tofino one (topology.model.TARGETS);
    ValueError saying what is missing (`option`: the command-line option that gives it)."""
    if target == "bmv2":
        if program is None:
            raise ValueError("target bmv2: no program for it")
        return program
    chosen = (targets or {}).get(target)
    if chosen is None:
        raise ValueError(f"target {target}: no device config for it ({option} DIR: bf-p4c's "
                         "output folder)")
    return chosen


TOFINO_PACKINGS = {"tofino-stratum": "stratum", "tofino-pi": "pi"}  # target -> packing


def tofino_programs(out: str | Path, p4info: str | Path | None,
                    targets: Iterable[str]) -> dict[str, Program]:
    """target -> Program for each Tofino target in `targets` (bmv2 is left out), from a compiled
    TNA program in `out` and its P4Info (`p4info`, default OUT/p4info.txt).

    `out` is bf-p4c's output folder (or its .conf): each target gets the compiler's files packed
    its way (tofino_config.py). It may instead be what softswitch writes for `make tna` without
    bf-p4c (P4Info + IR JSON, no .conf): then every Tofino target gets that IR as it is, which
    softswitches standing in for Tofino devices run. Raises TofinoConfigError or SchemaError."""
    from controller.devices.tofino_config import pack_pi, pack_stratum, read_output
    from p4rt.schema import Schema

    wanted = sorted({t for t in targets if t != "bmv2"})
    path = Path(out)
    p4info_path = Path(p4info) if p4info is not None else (
        (path if path.is_dir() else path.parent) / "p4info.txt")
    ir = softswitch_ir(path)
    configs: dict[str, bytes]
    if ir is not None:
        configs = dict.fromkeys(wanted, ir.read_bytes())
        source = ir
    else:
        compiled = read_output(path)
        packers = {"stratum": pack_stratum, "pi": pack_pi}
        configs = {t: packers[TOFINO_PACKINGS[t]](compiled) for t in wanted}
        source = path
    schema = Schema.load(p4info_path)
    return {t: Program(schema.p4info, configs[t], f"{p4info_path} + {source}") for t in wanted}


_IR_START = b'{"format":"softswitch-ir"'  # how softswitch's IR JSON begins (ir/serialize.py)


def softswitch_ir(out: Path) -> Path | None:
    """The softswitch IR JSON in `out` (a folder without a .conf holding one, or the file itself),
    None when `out` is something else; TofinoConfigError for the IR of a non-TNA program or a
    folder with several."""
    from controller.devices.tofino_config import TofinoConfigError

    if out.is_dir():
        if any(out.glob("*.conf")):
            return None
        found = [f for f in sorted(out.glob("*.json")) if _starts_with(f, _IR_START)]
        if len(found) > 1:
            raise TofinoConfigError(f"{out}: several softswitch IR files "
                                    f"({', '.join(f.name for f in found)}); name the one to use")
    else:
        found = [out] if out.suffix == ".json" and _starts_with(out, _IR_START) else []
    if not found:
        return None
    try:
        arch = json.loads(found[0].read_bytes()).get("arch", "v1model")
    except (OSError, ValueError) as error:
        raise TofinoConfigError(f"{found[0]}: not a readable softswitch IR ({error})") from None
    if arch != "tna":
        raise TofinoConfigError(f"{found[0]}: the IR of a {arch} program; a Tofino device runs "
                                "a TNA program (softswitch compile --arch tna)")
    return found[0]


def _starts_with(path: Path, prefix: bytes) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(len(prefix)) == prefix
    except OSError:
        return False
