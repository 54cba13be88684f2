"""Packets per second per core of the real programs on each softswitch engine: the fabric switch
(p4src/switch/srv6_switch.p4) in its T0 and T1 roles and the MRC NIC (p4src/nic/mrc_nic.p4)
TX, RX and feedback paths, run with `Switch.process_packet` (the engine alone: no queues, no
threads, no gRPC), timed in CPU seconds of this process (time.process_time).

The switches are programmed as the emulator programs a real fabric: the controller's plan
(controller/plan) of a generated 2-plane radix-8 Clos of 16 NICs, its entries encoded by the
controller (`to_table_entry`) and written through the P4Runtime server's table code
(softswitch/runtime/server/table_entries.py) into the engine, no gRPC in between. The packets
are what the fabric carries: NIC A (its controller-planned entries) encapsulates host writes
to NIC B, under another T0, over every EV; each packet is then walked through the fabric
(A's T0, a T1, B's T0, NIC B), and each hop's (switch, port, packet) is kept:

- `t0_up`: a NIC's SRv6 packet into its T0 (uN: shift the uSID, route up to the T1);
- `t1`: the packet into a T1 (uN: shift, route down to the destination T0);
- `t0_down`: into the destination T0 (uN then uA: out of the NIC's port).

The switch roles are also run in batches (`Switch.process_batch`, one call per switch per
pass: engine "<engine>_batch") and, on the C engine, in bursts (`Switch.process_burst`, one
call per switch per pass, each switch's frames one `Burst` made once before the timing as a
replay tool loads its capture once; the outputs come back in one buffer: engine "c_burst").
The NIC paths are bench/nic_rate.py's, run on each engine. Both architectures' programs run:
v1model (p4src/switch/srv6_switch.p4, p4src/nic/mrc_nic.p4: rows "srv6_switch.*",
"mrc_nic.*") and TNA (p4src/switch/tna/srv6_switch.p4, p4src/nic/tna/mrc_nic.p4:
"srv6_switch_tna.*", "mrc_nic_tna.*"), programmed and fed alike. Every engine is tried:
"python" always, "c" when `Switch(program, engine="c")` builds (else recorded as unavailable,
with the reason). `python -m bench.engine_rate [--seconds S] [--arch A] [--engine E]` runs
these only.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import nic_rate
from controller.devices.reconcile import to_table_entry
from controller.plan.entries import PlannedEntry
from controller.plan.nic_plan import HOST_PORT, NicConnection, NicPlanner, nic_address, plane_port
from controller.plan.plan import FabricPlan
from controller.plan.usid import format_address
from controller.topology.generate import generate
from controller.topology.model import Tier, Topology
from mrc_transport.wire import Opcode, data_packet
from p4rt.schema import Schema
from softswitch.compiler import compile_file
from softswitch.engine.burst import Burst
from softswitch.engine.switch import Switch
from softswitch.ir.checked import CheckedProgram
from softswitch.p4info import build_p4info
from softswitch.runtime.server.action_profiles import ActionProfiles
from softswitch.runtime.server.p4info_index import P4InfoIndex
from softswitch.runtime.server.table_entries import TableEntries

ROOT = Path(__file__).resolve().parents[1]
SWITCH_PROGRAM = ROOT / "p4src" / "switch" / "srv6_switch.p4"
# per architecture: (switch program, NIC program, the rows' name suffix)
PROGRAMS = {"v1model": (SWITCH_PROGRAM, nic_rate.PROGRAM, ""),
            "tna": (ROOT / "p4src" / "switch" / "tna" / "srv6_switch.p4",
                    ROOT / "p4src" / "nic" / "tna" / "mrc_nic.p4", "_tna")}
ENGINES = ("python", "c")
BURST_ENGINES = ("c",)   # the Python engine's burst is its process_packet loop
FABRIC = {"planes": 2, "radix": 8, "nics": 16}    # bench/emulation.py's 16-NIC Clos
PAYLOAD_BYTES = 4096                              # the packets: 4 KiB
DISTINCT_PACKETS = 512                            # host writes; every EV used several times
SWITCH_ROLES = ("t0_up", "t1", "t0_down")

Hop = tuple[Any, int, bytes]   # (engine Switch, ingress port, frame)


@dataclass
class EngineRate:
    """One program path on one engine: packets in, CPU seconds, and what came out (the check
    that the program still did its job); `unavailable` names why an engine could not run."""

    name: str
    engine: str
    arch: str = "v1model"
    packets: int = 0
    cpu_seconds: float = 0.0
    outputs: dict[str, int] = field(default_factory=dict)
    unavailable: str = ""

    @property
    def packets_per_second(self) -> float:
        return self.packets / self.cpu_seconds if self.cpu_seconds else 0.0


def make_switch(program: CheckedProgram, engine: str) -> Switch:
    """An engine of `program`: the Python one as it always was, another by name."""
    if engine == "python":
        return Switch(program)
    return Switch(program, engine=engine)  # type: ignore[call-arg]


def engine_problem(program: CheckedProgram, engine: str) -> str:
    """Why `engine` cannot run `program` here ("" when it can)."""
    try:
        make_switch(program, engine)
    except Exception as error:
        return f"unavailable: {type(error).__name__}: {error}"
    return ""


class Installer:
    """Planned entries into an engine, as the P4Runtime server writes them (the controller's
    encoding, the server's decoding), without a server in between."""

    def __init__(self, program: CheckedProgram) -> None:
        self.p4info = build_p4info(program)
        self.schema = Schema(self.p4info)

    def install(self, sw: Switch, entries: Sequence[PlannedEntry],
                clone_sessions: dict[int, int] | None = None) -> None:
        index = P4InfoIndex(self.p4info, sw)
        tables = TableEntries(index, ActionProfiles(index))
        for entry in entries:
            message = to_table_entry(self.schema, entry).to_entity().table_entry
            tables.write(2 if entry.is_default else 1, message)   # MODIFY the default, INSERT
        for session, port in sorted((clone_sessions or {}).items()):
            sw.pre.mirroring_add(session, port)


@dataclass
class Walk:
    """The fabric's packets for one engine: each switch role's hops, and NIC B's inputs."""

    hops: dict[str, list[Hop]]
    delivered: int          # host writes NIC B handed its host at the end of the walk
    writes: int


def _pair(topology: Topology) -> tuple[str, str]:
    """NIC A (the first) and B (the first under another T0 in plane 0): their packets cross
    a T1."""
    a = topology.nics[0]
    t0 = a.attachments[0][0]
    b = next(n for n in topology.nics if n.attachments[0][0] != t0)
    return a.name, b.name


def walk_fabric(switch_program: CheckedProgram, nic_program: CheckedProgram, engine: str,
                writes: int = DISTINCT_PACKETS) -> Walk:
    """Program the fabric's switches and NICs A and B on `engine`, send `writes` host writes
    A -> B through it, and keep every switch hop by role."""
    topology = generate(**FABRIC, wiring="explicit")
    plan = FabricPlan(topology)
    a_name, b_name = _pair(topology)
    switches: dict[str, Switch] = {}
    installer = Installer(switch_program)
    for name in plan.switch_names:
        sw = switches[name] = make_switch(switch_program, engine)
        installer.install(sw, plan.switch(name))
    nic_installer = Installer(nic_program)
    planner = NicPlanner(plan)
    a_conn, b_conn = NicConnection(0, b_name, 0x100, 0x200), NicConnection(0, a_name, 0x200,
                                                                           0x100)
    nics: dict[str, Switch] = {}
    for name, conn in ((a_name, a_conn), (b_name, b_conn)):
        nic_plan = planner.plan_nic(name, [conn])
        nics[name] = make_switch(nic_program, engine)
        nic_installer.install(nics[name], nic_plan.entries, nic_plan.clone_sessions())
    a, b = topology.nic(a_name), topology.nic(b_name)
    hops: dict[str, list[Hop]] = {role: [] for role in SWITCH_ROLES}
    delivered = 0
    for psn in range(writes):
        payload = bytes([psn & 0xFF]) * PAYLOAD_BYTES
        frame = bytes(data_packet(
            src=format_address(nic_address(a)), dst=format_address(nic_address(b)),
            dest_qp=a_conn.peer_qp, psn=psn, opcode=Opcode.WRITE_ONLY, msn=psn & 0xFFFF,
            va=0x1000 + psn * PAYLOAD_BYTES, r_key=a_conn.r_key, dma_length=PAYLOAD_BYTES,
            payload=payload))
        [out] = nics[a_name].process_packet(HOST_PORT, frame)
        plane = out.port - plane_port(0)
        node, port = topology.peer(a_name, plane) or ("?", 0)
        data = out.data
        for _ in range(3):
            sw = switches[node]
            tier = topology.switch(node).tier
            role = "t1" if tier == Tier.T1 else ("t0_up" if topology.is_nic(
                (topology.peer(node, port) or ("", 0))[0]) else "t0_down")
            hops[role].append((sw, port, data))
            [out] = sw.process_packet(port, data)
            data = out.data
            peer = topology.peer(node, out.port)
            if peer is None:
                raise RuntimeError(f"{node} sent write {psn} out of unconnected port {out.port}")
            node, port = peer
        if node != b_name:
            raise RuntimeError(f"write {psn} reached {node}, not {b_name}")
        outs = nics[b_name].process_packet(plane_port(port), data)
        delivered += sum(o.port == HOST_PORT for o in outs)
    return Walk(hops, delivered, writes)


def _cpu_timed(seconds: float, one_pass: Callable[[], None]) -> tuple[int, float]:
    """Passes of `one_pass` until `seconds` of this process's CPU time have gone."""
    passes = 0
    start = time.process_time()
    while True:
        one_pass()
        passes += 1
        spent = time.process_time() - start
        if spent >= seconds:
            return passes, spent


def _by_switch(hops: list[Hop]) -> dict[int, tuple[Any, list[tuple[int, bytes]]]]:
    """`hops` grouped by switch, each switch's (port, frame) in order."""
    groups: dict[int, tuple[Any, list[tuple[int, bytes]]]] = {}
    for sw, port, data in hops:
        groups.setdefault(id(sw), (sw, []))[1].append((port, data))
    return groups


def _replay(name: str, engine: str, hops: list[Hop], switches: int, seconds: float,
            one_pass: Callable[[], int]) -> EngineRate:
    """`one_pass` (replaying `hops`, returning how many were forwarded) timed in CPU
    seconds; the rate and what came out."""
    outputs = {"forwarded": 0, "dropped_or_other": 0}

    def counted() -> None:
        forwarded = one_pass()
        outputs["forwarded"] += forwarded
        outputs["dropped_or_other"] += len(hops) - forwarded

    passes, cpu = _cpu_timed(seconds, counted)
    return EngineRate(f"srv6_switch.{name}", engine, packets=passes * len(hops),
                      cpu_seconds=cpu, outputs={**outputs, "distinct_packets": len(hops),
                                                "switches": switches})


def bench_role(role: str, hops: list[Hop], engine: str, seconds: float) -> EngineRate:
    """`hops` replayed into their switches; counts what left and on which kind of port."""
    def one_pass() -> int:
        return sum(len(sw.process_packet(port, data)) == 1 for sw, port, data in hops)
    return _replay(role, engine, hops, len({id(h[0]) for h in hops}), seconds, one_pass)


def bench_role_batch(role: str, hops: list[Hop], engine: str, seconds: float) -> EngineRate:
    """As `bench_role`, each switch's packets in one `Switch.process_batch` call (the C engine
    crosses into C once per batch instead of once per packet); recorded as engine
    "<engine>_batch"."""
    batches = list(_by_switch(hops).values())

    def one_pass() -> int:
        return sum(len(o) == 1 for sw, packets in batches for o in sw.process_batch(packets))
    return _replay(role, f"{engine}_batch", hops, len(batches), seconds, one_pass)


def bench_role_burst(role: str, hops: list[Hop], engine: str, seconds: float) -> EngineRate:
    """As `bench_role_batch`, each switch's packets one `Burst` (made before the timing, as a
    replay tool loads its capture once) in one `Switch.process_burst` call: no Python object
    per packet in or out; "forwarded" counts the outputs; recorded as engine
    "<engine>_burst"."""
    bursts = [(sw, Burst.of([d for _, d in packets], [p for p, _ in packets]))
              for sw, packets in _by_switch(hops).values()]

    def one_pass() -> int:
        return sum(len(sw.process_burst(burst)) for sw, burst in bursts)
    return _replay(role, f"{engine}_burst", hops, len(bursts), seconds, one_pass)


def bench_nic(engine: str, program: CheckedProgram, seconds: float) -> list[EngineRate]:
    """bench/nic_rate.py's three paths on `engine`, in CPU seconds."""
    batch = nic_rate.Batch.build(program, make=lambda p: make_switch(p, engine))
    out = []
    for bench in (nic_rate.bench_nic_tx, nic_rate.bench_nic_rx, nic_rate.bench_nic_feedback):
        r = bench(seconds, batch)
        out.append(EngineRate(f"mrc_nic.{r.name.removeprefix('nic_')}", engine,
                              packets=r.packets, cpu_seconds=r.cpu_seconds, outputs=r.outputs))
    return out


NAMES = (*(f"srv6_switch.{r}" for r in SWITCH_ROLES), "mrc_nic.tx", "mrc_nic.rx",
         "mrc_nic.feedback")


def _named(rates: list[EngineRate], arch: str) -> list[EngineRate]:
    """`rates` of `arch`'s programs, their names with the architecture's suffix."""
    suffix = PROGRAMS[arch][2]
    for r in rates:
        program, path = r.name.split(".", 1)
        r.name, r.arch = f"{program}{suffix}.{path}", arch
    return rates


def run_arch(arch: str, seconds: float, engines: Sequence[str] = ENGINES) -> list[EngineRate]:
    """Every program path of `arch`'s programs on every engine (an unavailable engine: one
    record per path)."""
    switch_path, nic_path, _ = PROGRAMS[arch]
    switch_program, nic_program = compile_file(switch_path), compile_file(nic_path)
    results: list[EngineRate] = []
    for engine in engines:
        problem = engine_problem(switch_program, engine) or engine_problem(nic_program, engine)
        if problem:
            results += [EngineRate(name, engine, unavailable=problem) for name in NAMES]
            continue
        walk = walk_fabric(switch_program, nic_program, engine)
        if walk.delivered != walk.writes:
            raise RuntimeError(f"{arch} {engine}: NIC B delivered {walk.delivered} of "
                               f"{walk.writes} writes walked through the fabric")
        for bench in (bench_role, bench_role_batch,
                      *((bench_role_burst,) if engine in BURST_ENGINES else ())):
            results += [bench(role, walk.hops[role], engine, seconds) for role in SWITCH_ROLES]
        results += bench_nic(engine, nic_program, seconds)
    return _named(results, arch)


def run_all(seconds: float, engines: Sequence[str] = ENGINES,
            archs: Sequence[str] = tuple(PROGRAMS)) -> list[EngineRate]:
    """Every architecture's program paths on every engine."""
    return [r for arch in archs for r in run_arch(arch, seconds, engines)]


CONFIGURATION: dict[str, object] = {
    "fabric": f"generated {FABRIC['planes']}-plane radix-{FABRIC['radix']} Clos, "
              f"{FABRIC['nics']} NICs, the controller's plan",
    "payload_bytes": PAYLOAD_BYTES, "distinct_packets": DISTINCT_PACKETS,
    "timing": "time.process_time of this process (one core), Switch.process_packet only "
              "(engine *_batch: Switch.process_batch, one call per switch per pass; *_burst: "
              "Switch.process_burst, one prebuilt Burst per switch per pass)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per path")
    parser.add_argument("--arch", action="append", choices=tuple(PROGRAMS),
                        help="only this architecture's programs (repeatable; default: all)")
    parser.add_argument("--engine", action="append", choices=ENGINES,
                        help="only this engine (repeatable; default: all)")
    args = parser.parse_args()
    for r in run_all(args.seconds, args.engine or ENGINES, args.arch or tuple(PROGRAMS)):
        if r.unavailable:
            print(f"{r.name:<24} {r.engine:<12} {r.unavailable}")
        else:
            print(f"{r.name:<24} {r.engine:<12} {r.packets:>8} {r.cpu_seconds:>6.2f} s CPU "
                  f"{r.packets_per_second:>10.0f} packets/s  {r.outputs}")


if __name__ == "__main__":
    main()
