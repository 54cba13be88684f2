"""`mrc-ctl`: the controller's command line. One function per subcommand; each feature adds its
subparsers with an `add_*_parser(subparsers)` function listed in `_PARSERS`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from controller.topology.errors import TopologyError, YamlFileError
from p4rt.client import DEFAULT_BATCH_SIZE

DEFAULT_TOPOLOGY = "topology.yaml"  # what `topo generate` writes and `topo size` reads by default


# --- mrc-ctl topo ... ---------------------------------------------------------------------------


def cmd_topo_generate(args: argparse.Namespace) -> int:
    from controller.topology import sizing, yaml_io
    from controller.topology.generate import generate

    topo = generate(args.planes, args.radix, args.nics, name=args.name,
                    wiring="explicit" if args.explicit else "clos", sid_block=args.sid_block,
                    host=args.host, base_port=args.base_port)
    text = yaml_io.dumps(topo)
    size = sizing.size_of(topo)
    summary = (f"{topo.name}: {topo.planes} planes, radix {topo.radix}, {size.nics:,} NICs, "
               f"{size.switches:,} switches, {size.links:,} links")
    if args.output == "-":
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}: {summary}")
    return 0


def cmd_topo_size(args: argparse.Namespace) -> int:
    from controller.topology import sizing, yaml_io

    given = [args.switch_tbps, args.nic_gbps, args.planes]
    if any(v is not None for v in given):
        if args.topology is not None or any(v is None for v in given):
            raise TopologyError("size either a topology file or --switch-tbps, --nic-gbps and "
                                "--planes together")
        size = sizing.size_for(args.switch_tbps, args.nic_gbps, args.planes)
    else:
        path = args.topology or DEFAULT_TOPOLOGY
        if args.topology is None and not Path(path).exists():
            raise TopologyError(f"no topology given and no {DEFAULT_TOPOLOGY} here: pass a file "
                                "or --switch-tbps/--nic-gbps/--planes")
        size = sizing.size_of(yaml_io.load(path))
    sys.stdout.write(sizing.render(size))
    return 0


def cmd_topo_show(args: argparse.Namespace) -> int:
    from controller.topology import sizing, yaml_io
    from controller.topology.model import Tier

    topo = yaml_io.load(args.topology)
    if args.switch is not None:
        sw = topo.switch(args.switch) if topo.has_node(args.switch) else None
        if sw is None:
            raise TopologyError(f"no switch '{args.switch}'", topo.source)
        ep = sw.endpoint
        print(f"{sw.name}: {sw.tier} {sw.index} of plane {sw.plane}, radix {topo.radix_of(sw.name)}")
        if ep is not None:
            print(f"  P4Runtime {ep.grpc_address} device {ep.device_id} election "
                  f"{ep.election_id[0]}:{ep.election_id[1]}"
                  + (f" role {ep.role}" if ep.role else "") + (" TLS" if ep.tls_ca else ""))
        roles = topo.port_roles_of(sw.name)
        peers = {port: (peer, pp) for port, peer, pp in topo.neighbors(sw.name)}
        for port in sorted(set(roles) | set(peers)):
            peer = peers.get(port)
            if peer is None:
                to = "unconnected"
            elif topo.is_nic(peer[0]):
                to = f"{peer[0]} plane {peer[1]}"
            else:
                to = f"{peer[0]}:{peer[1]}"
            role = roles.get(port)
            print(f"  port {port:>4}  {role.value if role else '-':<8}  {to}")
        return 0
    size = sizing.size_of(topo)
    print(f"{topo.name} ({topo.source}): {topo.planes} planes, radix {topo.radix}, "
          f"{topo.wiring} wiring, SID block {topo.sid_block}")
    print(f"  {size.nics:,} NICs, {size.switches:,} switches, {size.links:,} links")
    for plane in range(topo.planes):
        t0, t1 = topo.switches_of(plane, Tier.T0), topo.switches_of(plane, Tier.T1)
        print(f"  plane {plane}: {len(t0)} T0 ({_span(t0)}), {len(t1)} T1 ({_span(t1)})")
    q = topo.qos
    print(f"  DSCP trimmable {q.dscp_trimmable}/{q.dscp_trimmable_retx}, trimmed "
          f"{q.dscp_trimmed}/{q.dscp_trimmed_lasthop}, control {q.dscp_control}; trim above "
          f"{q.trim_threshold} packets to {q.trim_bytes} B; ECN above {q.ecn_threshold}")
    eps = [s.endpoint for s in topo.switches if s.endpoint is not None]
    if eps:
        print(f"  P4Runtime: {eps[0].grpc_address} .. {eps[-1].grpc_address} "
              f"({len(eps)} switches with an endpoint)")
    if topo.port_roles:
        print(f"  {len(topo.port_roles)} configured port role(s)")
    return 0


def _span(switches: Sequence[Any]) -> str:
    if not switches:
        return "none"
    return switches[0].name if len(switches) == 1 else f"{switches[0].name}..{switches[-1].name}"


def add_topo_parser(sub: Any) -> None:
    topo = sub.add_parser("topo", help="topologies: generate, size, show")
    tsub = topo.add_subparsers(dest="topo_command", required=True)

    gen = tsub.add_parser("generate", help="write a standard multi-plane two-tier Clos topology")
    gen.add_argument("--planes", type=int, required=True, help="planes (NIC ports per NIC)")
    gen.add_argument("--radix", type=int, required=True, help="ports per switch (per plane)")
    gen.add_argument("--nics", type=int, default=None, help="NICs (default R²/2, the maximum)")
    gen.add_argument("-o", "--output", default=DEFAULT_TOPOLOGY,
                     help=f"output file (default {DEFAULT_TOPOLOGY}; '-' = stdout)")
    gen.add_argument("--name", default=None, help="topology name (default clos-PxR-N)")
    gen.add_argument("--explicit", action="store_true",
                     help="list every switch, NIC and cable (small fabrics) instead of clos wiring")
    gen.add_argument("--sid-block", default="fcbb:bbbb::/32", help="the /32 SID block")
    gen.add_argument("--host", default="127.0.0.1", help="P4Runtime host of every switch")
    gen.add_argument("--base-port", type=int, default=50000,
                     help="switch k serves P4Runtime on HOST:(BASE_PORT + k)")
    gen.set_defaults(func=cmd_topo_generate)

    size = tsub.add_parser("size", help="the sizing table of a topology, or of a switch/NIC/plane "
                                        "combination")
    size.add_argument("topology", nargs="?", default=None,
                      help=f"topology file (default {DEFAULT_TOPOLOGY}, as `generate` writes it)")
    size.add_argument("--switch-tbps", type=float, default=None, help="switch capacity, Tb/s")
    size.add_argument("--nic-gbps", type=float, default=None, help="NIC rate, Gb/s")
    size.add_argument("--planes", type=int, default=None, help="planes per NIC")
    size.set_defaults(func=cmd_topo_size)

    show = tsub.add_parser("show", help="summarise a topology, or one switch's ports")
    show.add_argument("topology", help="topology file")
    show.add_argument("--switch", default=None, help="list this switch's ports, peers and roles")
    show.set_defaults(func=cmd_topo_show)


# --- mrc-ctl push / fabric up -------------------------------------------------------------------


def _load_program(args: argparse.Namespace) -> Any:
    """The switch program: compiled from --program, or the --p4info/--config files as given."""
    from controller.devices.session import Program

    if (args.p4info is None) != (args.config is None):
        raise TopologyError("--p4info and --config go together (P4Info + device config)")
    if args.p4info is not None:
        return Program.from_files(args.p4info, args.config)
    return Program.compile(args.program)


def parse_election_id(text: str) -> tuple[int, int]:
    """--election-id: `LOW` or `HIGH,LOW`."""
    high, _, low = text.rpartition(",")
    try:
        return (int(high or 0), int(low))
    except ValueError:
        raise TopologyError(f"--election-id {text!r}: expected LOW or HIGH,LOW") from None


def _with_session_overrides(topo: Any, args: argparse.Namespace) -> Any:
    """The topology with --election-id/--role applied to every switch's endpoint."""
    import dataclasses

    changes: dict[str, Any] = {}
    if args.election_id is not None:
        changes["election_id"] = parse_election_id(args.election_id)
    if args.role is not None:
        changes["role"] = args.role
    if not changes:
        return topo
    switches = [dataclasses.replace(s, endpoint=dataclasses.replace(s.endpoint, **changes))
                if s.endpoint is not None else s for s in topo.switches]
    return dataclasses.replace(topo, switches=switches)


def _push_setup(args: argparse.Namespace) -> tuple[Any, Any, Any] | int:
    """(topology, plan, program), or the exit status after printing what went wrong."""
    from controller.plan.plan import build_plan
    from controller.plan.usid import PlanError
    from controller.topology import yaml_io
    from softswitch.errors import ControlPlaneError, P4Error

    try:
        topo = _with_session_overrides(yaml_io.load(args.topology), args)
        return topo, build_plan(topo), _load_program(args)
    except (PlanError, P4Error, ControlPlaneError) as exc:
        print(error_line(exc), file=sys.stderr)
        return 2


def error_line(exc: Exception) -> str:
    """`error: ...` for the user; a P4 error already says `FILE:LINE:COL: error: ...`."""
    from softswitch.errors import P4Error

    return str(exc) if isinstance(exc, P4Error) else f"error: {exc}"


def add_tofino_options(parser: Any, device: str = "") -> None:
    """--tofino-out DIR and --tofino-p4info FILE (`device` "nic": --tofino-nic-out and
    --tofino-nic-p4info): the compiled TNA program of the devices whose target is
    tofino-stratum or tofino-pi. `push` and `run` take the same."""
    infix = f"{device}-" if device else ""
    what, whose = ("NIC", "NICs") if device == "nic" else ("switch", "switches")
    parser.add_argument(f"--tofino-{infix}out", default=None, metavar="DIR",
                        help=f"bf-p4c's output folder (or its .conf) of the TNA {what} program: "
                             f"the device config of {whose} whose target is tofino-stratum or "
                             "tofino-pi (softswitch's `make tna` folder, P4Info + IR, also does)")
    parser.add_argument(f"--tofino-{infix}p4info", default=None, metavar="FILE",
                        help=f"the P4Info of --tofino-{infix}out (default DIR/p4info.txt)")


def tofino_programs(args: argparse.Namespace, targets: Iterable[str],
                    device: str = "") -> dict[str, Any]:
    """target -> Program for the Tofino targets among `targets`, from the options
    add_tofino_options(parser, device) added; {} when its --tofino-...-out is not given (a device
    of such a target then fails, naming the option). Raises TofinoConfigError, SchemaError."""
    from controller.devices.target_programs import tofino_programs as load

    name = f"tofino_{device}_" if device else "tofino_"
    out = getattr(args, f"{name}out")
    if out is None:
        return {}
    return load(out, getattr(args, f"{name}p4info"), targets)


def cmd_push(args: argparse.Namespace) -> int:
    from controller.devices.push import push
    from controller.devices.tofino_config import TofinoConfigError
    from softswitch.errors import ControlPlaneError

    setup = _push_setup(args)
    if isinstance(setup, int):
        return setup
    topo, plan, program = setup
    for name in args.switch or ():
        if name not in {s.name for s in topo.switches}:
            raise TopologyError(f"no switch '{name}'", topo.source)
    try:
        targets = tofino_programs(args, {s.target for s in topo.switches})
    except (TofinoConfigError, ControlPlaneError) as exc:  # a bad output folder or P4Info
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1:
        from controller.devices.sharded import push_sharded

        report = push_sharded(topo, program, workers=args.workers, switches=args.switch,
                              concurrency=args.concurrency, batch_size=args.batch_size,
                              connect_timeout=args.connect_timeout, targets=targets)
    else:
        report = push(topo, plan, program, concurrency=args.concurrency, switches=args.switch,
                      batch_size=args.batch_size, connect_timeout=args.connect_timeout,
                      progress=True, targets=targets)
    print(report.summary())
    return report.exit_code


def cmd_fabric_up(args: argparse.Namespace) -> int:
    import contextlib
    import signal
    import threading

    from controller.fabric_up import fabric_up

    setup = _push_setup(args)
    if isinstance(setup, int):
        return setup
    topo, plan, program = setup
    try:
        up = fabric_up(topo, plan, program, ephemeral_ports=args.ephemeral_ports,
                       concurrency=args.concurrency, progress=True)
    except OSError as exc:  # an endpoint address already taken
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with up:
        assert up.report is not None
        print(up.report.summary())
        print(f"fabric {topo.name}: {len(up.fabric.switches)} softswitches, "
              f"{len(up.fabric.hosts)} NIC ports; P4Runtime on "
              + ", ".join(f"{s.name}={s.endpoint.grpc_address}" for s in up.topology.switches
                          if s.endpoint is not None))
        if not up.report.ok:
            return up.report.exit_code
        stop = threading.Event()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
        print("running; Ctrl-C to stop" if args.seconds is None
              else f"running for {args.seconds:g} s", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait(args.seconds)
    return 0


def _add_program_args(parser: Any) -> None:
    parser.add_argument("topology", help="topology file")
    parser.add_argument("--program", default=str(Path(__file__).resolve().parents[1] / "p4src"
                                                 / "switch" / "srv6_switch.p4"),
                        help="P4 program (or IR JSON) to compile with softswitch "
                             "(default p4src/switch/srv6_switch.p4)")
    parser.add_argument("--p4info", default=None, help="P4Info file (instead of --program)")
    parser.add_argument("--config", default=None,
                        help="device config with --p4info: IR JSON (softswitch) or BMv2 JSON")
    parser.add_argument("--election-id", default=None,
                        help="override every switch's election id: LOW or HIGH,LOW")
    parser.add_argument("--role", default=None, help="override every switch's P4Runtime role")
    parser.add_argument("--concurrency", type=int, default=64,
                        help="switches pushed at once (default 64)")
    parser.add_argument("--connect-timeout", type=float, default=10.0,
                        help="seconds to wait for each switch (default 10)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                        help="updates per WriteRequest (default 1000)")


def add_push_parsers(sub: Any) -> None:
    push = sub.add_parser("push", help="push the plan to every switch (P4Runtime, reconciled)")
    _add_program_args(push)
    push.add_argument("--switch", action="append", default=None,
                      help="push only this switch (repeatable)")
    push.add_argument("--workers", type=int, default=1,
                      help="processes, each pushing a share of the switches (default 1)")
    add_tofino_options(push)
    push.set_defaults(func=cmd_push)

    fabric = sub.add_parser("fabric", help="in-process fabrics of softswitches")
    fsub = fabric.add_subparsers(dest="fabric_command", required=True)
    up = fsub.add_parser("up", help="start the topology as softswitches, push the plan, run")
    _add_program_args(up)
    up.add_argument("--ephemeral-ports", action="store_true",
                    help="serve P4Runtime on free 127.0.0.1 ports instead of the endpoints'")
    up.add_argument("--seconds", type=float, default=None,
                    help="stop after this long (default: run until Ctrl-C)")
    up.set_defaults(func=cmd_fabric_up)


# --- mrc-ctl tofino-config ... ------------------------------------------------------------------


def cmd_tofino_pack(args: argparse.Namespace) -> int:
    from controller.devices.tofino_config import TofinoConfigError, pack

    try:
        data = pack(args.out_dir, args.format)
        Path(args.output).write_bytes(data)
    except TofinoConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {args.output}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}: {len(data):,} bytes ({args.format} p4_device_config)")
    return 0


def cmd_tofino_unpack(args: argparse.Namespace) -> int:
    from controller.devices.tofino_config import (
        TofinoConfigError,
        detect_format,
        unpack,
        write_output,
    )

    try:
        data = Path(args.config).read_bytes()
    except OSError as exc:
        print(f"error: {args.config}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        fmt = args.format or detect_format(data, args.config)
        conf = write_output(unpack(data, fmt, args.config), args.output)
    except TofinoConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"unpacked {args.config} ({fmt}) to {conf.parent}: {conf.name}"
          + (" (the PI format carries no bfrt.json)" if fmt == "pi" else ""))
    return 0


def add_tofino_parser(sub: Any) -> None:
    tofino = sub.add_parser("tofino-config", help="Tofino p4_device_config: pack bf-p4c's output "
                                                  "for Stratum or PI, unpack it again")
    tsub = tofino.add_subparsers(dest="tofino_command", required=True)
    formats = ("stratum", "pi")
    pk = tsub.add_parser("pack", help="pack a bf-p4c output folder (OUT/<prog>.conf and the "
                                      "files it names) into p4_device_config bytes")
    pk.add_argument("out_dir", help="bf-p4c's output folder (or its .conf file)")
    pk.add_argument("-o", "--output", required=True, help="file to write the bytes to")
    pk.add_argument("--format", choices=formats, default="stratum",
                    help="stratum: BfPipelineConfig (stratum_bfrt; default); "
                         "pi: PI's legacy packing in a p4.tmp.P4DeviceConfig")
    pk.set_defaults(func=cmd_tofino_pack)
    up = tsub.add_parser("unpack", help="recreate the compiler's files from p4_device_config "
                                        "bytes")
    up.add_argument("config", help="device config file")
    up.add_argument("-o", "--output", required=True, help="folder to write the files to")
    up.add_argument("--format", choices=formats, default=None,
                    help="the packing (default: recognised from the bytes)")
    up.set_defaults(func=cmd_tofino_unpack)


# --- mrc-ctl plan / check -----------------------------------------------------------------------


def _load_plan(path: str) -> tuple[Any, Any]:
    from controller.plan.plan import build_plan
    from controller.topology import yaml_io

    topo = yaml_io.load(path)
    return topo, build_plan(topo)


def cmd_plan(args: argparse.Namespace) -> int:
    import json

    from controller.plan.usid import PlanError, format_address

    try:
        topo, plan = _load_plan(args.topology)
        if args.nic is not None:
            return cmd_plan_nic(args, topo, plan)
        if args.switch is not None and not topo.is_switch(args.switch):
            raise TopologyError(f"no switch '{args.switch}'", topo.source)
        if args.json:
            json.dump(plan.to_json(args.switch), sys.stdout, indent=1)
            print()
            return 0
        names = [args.switch] if args.switch is not None else plan.switch_names
        for name in names:
            entries = plan.switch(name)
            print(f"# {name}  uSID {plan.usid(name):#06x}  {len(entries)} entries")
            for e in entries:
                print(f"  {e.describe()}")
        if args.switch is None:
            print(f"# templates: {plan.templates.count()} (one per plane, source T0, destination T0)")
            for tpl in plan.templates:
                slots = " : ".join(s if isinstance(s, str) else f"{s:04x}" for s in tpl.segments)
                t1s = ", ".join(f"{n}={u:04x}" for n, u in tpl.t1_choices)
                print(f"  plane {tpl.plane} {tpl.src_t0} -> {tpl.dst_t0}: {slots}"
                      + (f"  T1 in {{{t1s}}}" if t1s else ""))
            print(f"# block {format_address(plan.block)}/32")
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `mrc-ctl plan ... | head`
        return 0
    return 0


def _ev_profile(args: argparse.Namespace) -> Any:
    from controller.plan.nic_plan import EvProfile

    return EvProfile(ev_count=args.ev_count, backups=args.backups,
                     ev_min_active=args.ev_min_active, probe_successes=args.probe_successes,
                     skip_us=args.skip_us)


def _nic_peers(topo: Any, nic: str, peers: list[str] | None) -> list[str]:
    """The peers named, or one NIC of every destination row (its own T0's included; a NIC under
    other T0s or ports per plane has a row of its own kind, plan/nic_rows.py): every template
    the NIC has is then used by some connection."""
    from controller.plan.usid import PlanError

    for name in [nic, *(peers or [])]:
        if not topo.is_nic(name):
            raise PlanError(f"{topo.source}: no NIC {name!r}")
    if peers:
        return peers
    from controller.plan.nic_rows import RowBook

    rows, by_row = RowBook(topo), {}
    for other in topo.nics:
        if other.name != nic:
            by_row.setdefault(rows.destination(other).row, other.name)
    return [by_row[row] for row in sorted(by_row)]


def _nic_connections(peers: list[str]) -> list[Any]:
    from controller.plan.nic_plan import QP_BASE, NicConnection

    return [NicConnection(i, peer, QP_BASE + i, QP_BASE + i) for i, peer in enumerate(peers)]


def cmd_plan_nic(args: argparse.Namespace, topo: Any, plan: Any) -> int:
    import json

    from controller.plan.nic_plan import MAX_CONNECTIONS, NicPlanner

    peers = _nic_peers(topo, args.nic, args.peer)[:MAX_CONNECTIONS]
    nic_plan = NicPlanner(plan).plan_nic(args.nic, _nic_connections(peers), _ev_profile(args),
                                         all_rows=True)
    if args.json:
        from controller.plan.plan import entry_json

        json.dump({"nic": args.nic, "peers": peers,
                   "clone_sessions": {target: {str(k): v for k, v in
                                               nic_plan.clone_sessions(target).items()}
                                      for target in ("bmv2", "tofino")},
                   "entries": [entry_json(e) for e in nic_plan.entries]}, sys.stdout, indent=1)
        print()
        return 0
    print(f"# NIC {args.nic}  {len(nic_plan.entries)} entries, connections to {', '.join(peers)}")
    for e in nic_plan.entries:
        print(f"  {e.describe()}")
    for target in ("bmv2", "tofino"):
        for session, port in sorted(nic_plan.clone_sessions(target).items()):
            print(f"  clone session {session} -> port {port} ({target})")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    import time

    from controller.plan.checker import check
    from controller.plan.usid import PlanError

    start = time.perf_counter()
    try:
        topo, plan = _load_plan(args.topology)
        if args.nic is not None:
            return _check_nic(args, topo, plan, start)
        result = check(topo, plan, mode=args.mode, max_errors=args.max_errors,
                       workers=args.workers)
        print(f"{result.summary()} in {time.perf_counter() - start:.1f} s")
        for err in result.errors:
            print(f"  {err}")
        ok = result.ok
        if result.mode == "paths":
            # The NICs' side of the same paths: every NIC's EVs towards every other NIC held
            # against the wiring (a fabric the per-hop proof needs is too big for this).
            from controller.plan.nic_checker import check_every_nic

            nics = check_every_nic(topo, plan, _ev_profile(args), args.max_errors)
            print(f"{nics.summary()} in {time.perf_counter() - start:.1f} s")
            for err in nics.errors:
                print(f"  {err}")
            ok = ok and nics.ok
    except PlanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if ok else 1


def _check_nic(args: argparse.Namespace, topo: Any, plan: Any, start: float) -> int:
    import time

    from controller.plan.nic_checker import check_nic_plan
    from controller.plan.nic_plan import MAX_CONNECTIONS, NicPlanner

    peers = _nic_peers(topo, args.nic, args.peer)
    planner, profile, failed = NicPlanner(plan), _ev_profile(args), False
    for first in range(0, len(peers), MAX_CONNECTIONS):   # one NIC holds 64 connections
        group = peers[first:first + MAX_CONNECTIONS]
        result = check_nic_plan(topo, plan, planner.plan_nic(
            args.nic, _nic_connections(group), profile), max_errors=args.max_errors)
        print(f"{result.summary()} (peers {group[0]}..{group[-1]}) in "
              f"{time.perf_counter() - start:.1f} s")
        for err in result.errors:
            print(f"  {err}")
        failed = failed or not result.ok
    return 1 if failed else 0


def _add_nic_options(parser: Any) -> None:
    parser.add_argument("--nic", default=None,
                        help="an MRC NIC's plan instead: its entries towards --peer NICs "
                             "(default: one NIC under every T0)")
    parser.add_argument("--peer", action="append", default=None, help="a connection's peer NIC")
    add_profile_options(parser)


def add_profile_options(parser: Any) -> None:
    """The EV profile (OCP MRC's) every NIC gets."""
    parser.add_argument("--ev-count", type=int, default=128, help="active EVs (128)")
    parser.add_argument("--backups", type=int, default=4, help="backup EVs per plane (4)")
    parser.add_argument("--ev-min-active", type=int, default=8, help="usable-EV floor (8)")
    parser.add_argument("--probe-successes", type=int, default=3,
                        help="answered probes that bring an EV back (3)")
    parser.add_argument("--skip-us", type=int, default=20,
                        help="µs a SKIP (ECN echo, in-fabric trim) holds for its EV's next turn "
                             "(20)")


def add_plan_parsers(sub: Any) -> None:
    plan = sub.add_parser("plan", help="print the static SRv6 plan (entries per switch, templates)")
    plan.add_argument("topology", help="topology file")
    plan.add_argument("--switch", default=None, help="only this switch (and its templates)")
    plan.add_argument("--json", action="store_true", help="JSON instead of text")
    _add_nic_options(plan)
    plan.set_defaults(func=cmd_plan)

    chk = sub.add_parser("check", help="prove, without packets, that the plan delivers every path")
    chk.add_argument("topology", help="topology file")
    chk.add_argument("--mode", choices=("auto", "paths", "per-hop"), default="auto",
                     help="walk every path, prove from per-hop facts, or pick by size (default)")
    chk.add_argument("--max-errors", type=int, default=10, help="stop after this many (10)")
    chk.add_argument("--workers", type=int, default=None,
                     help="processes for the per-hop proof (default: one per CPU)")
    _add_nic_options(chk)
    chk.set_defaults(func=cmd_check)


# --- mrc-ctl status / deny / allow ---------------------------------------------------------------


def _operator(args: argparse.Namespace) -> tuple[Any, Any]:
    from controller.repair.operator import DenyList, state_dir
    from controller.topology import yaml_io

    topo = yaml_io.load(args.topology)
    return topo, DenyList.load(state_dir(args.topology, args.state))


def cmd_deny(args: argparse.Namespace) -> int:
    from controller.repair.operator import OperatorError, describe, parse_target

    try:
        topo, denied = _operator(args)
        target = parse_target(topo, args.target)
        if not args.allow:
            denied.deny(target)
            print(f"denied {describe(target)} (until `mrc-ctl allow`)")
        elif denied.allow(target):
            print(f"allowed {describe(target)}")
        else:
            print(f"{describe(target)} was not denied")
    except OperatorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from controller.repair.operator import OperatorError, describe, read_status

    try:
        _, denied = _operator(args)
        status = read_status(denied.directory)
    except OperatorError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    targets = sorted(map(describe, denied.links)) + sorted(denied.switches)
    print(f"denied by the operator: {', '.join(targets) or 'none'}")
    if status is None:
        print(f"no controller status in {denied.directory} (no repair loop has run there)")
        return 0
    print(f"as of {status.get('at_s')} s:")
    for key, label in (("links_down", "links down"), ("switches_down", "switches down")):
        print(f"  {label}: {', '.join(status.get(key) or []) or 'none'}")  # type: ignore[arg-type]
    for key, label in (("evs_off_plan", "EVs off their planned path"),
                       ("denied_evs", "EVs DENIED")):
        found = status.get(key) or {}
        print(f"  {label}: " + (", ".join(f"{n} {c}" for n, c in found.items())  # type: ignore[union-attr]
                                or "none"))
    if "suspects" in status:   # a loop that confirms by probes (controller/repair/confirm.py)
        print(f"  suspects (being probed): {', '.join(status['suspects']) or 'none'}")  # type: ignore[arg-type]
        for v in status.get("verdicts") or []:  # type: ignore[union-attr]
            print("  verdict: " + " ".join(f"{k}={x}" for k, x in v.items() if k != "event"))
    idle = status.get("idle_probes")
    if isinstance(idle, dict):   # `mrc-ctl run`'s idle sweep (controller/daemon/idle_probes.py)
        print(f"  idle probes: every idle cable each {idle['interval_s']:g} s, {idle['sent']} sent, "
              f"{idle['lost']} lost")
    if "devices_total" in status:   # written by `mrc-ctl run`
        print(f"  devices programmed: {status['devices_ready']} of {status['devices_total']}")
        for state, names in (status.get("devices") or {}).items():  # type: ignore[union-attr]
            print(f"    {state}: {', '.join(names)}")
    for line in last_events(denied.directory, 5):
        print(f"  event: {line}")
    return 0


def last_events(directory: Path, count: int) -> list[str]:
    """The newest `count` lines of the event log, EV events left out (there are many)."""
    import json

    from controller.repair.operator import EVENTS

    path = directory / EVENTS
    if not path.exists():
        return []
    shown = []
    for line in path.read_text(errors="replace").splitlines()[-2000:]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") not in ("ev", "probe", "ev_ignored"):
            shown.append(" ".join(f"{k}={v}" for k, v in record.items()))
    return shown[-count:]


def add_operator_parsers(sub: Any) -> None:
    for name, what in (("deny", "take a link (T0:T1) or T1 out for maintenance"),
                       ("allow", "put a denied link or T1 back")):
        p = sub.add_parser(name, help=what)
        p.add_argument("topology", help="topology file")
        p.add_argument("target", help="T0:T1 (a cable) or a T1's name")
        p.add_argument("--state", default=None,
                       help="the controller's state directory (default: .mrc-ctl beside TOPO)")
        p.set_defaults(func=cmd_deny, allow=name == "allow")
    st = sub.add_parser("status", help="links and switches down, EVs moved or denied per NIC")
    st.add_argument("topology", help="topology file")
    st.add_argument("--state", default=None, help="the controller's state directory")
    st.set_defaults(func=cmd_status)


# --- the parser ---------------------------------------------------------------------------------

from controller.daemon.command import add_run_parser  # noqa: E402  (it uses the helpers above)
from emulation.command import add_emulate_parser  # noqa: E402
from emulation.sweep import add_sweep_parser  # noqa: E402

# Each feature's `add_*_parser(subparsers)`; append yours.
_PARSERS: list[Callable[[Any], None]] = [add_topo_parser, add_push_parsers,
                                          add_plan_parsers, add_operator_parsers,
                                          add_run_parser, add_emulate_parser, add_sweep_parser,
                                          add_tofino_parser]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mrc-ctl", description="the MRC SRv6 fabric controller")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in _PARSERS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except YamlFileError as exc:   # a bad topology, scenario...: FILE:LINE: error: ...
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
