"""`mrc-ctl run TOPO`: the controller as a long-running process.

    mrc-ctl run topology.yaml [--nics nics.yaml] [--state DIR] [--election-id H,L]
                              [--takeover-s S] [--seconds S] [program options as for push]
                              [--tofino-out DIR] [--tofino-nic-out DIR] [--nic-program P4]

It programs every switch of the topology (and every NIC of `--nics`), each with the program of
its target as `push` chooses it (bmv2: --program or --p4info/--config, --nic-program for NICs;
tofino-stratum and tofino-pi: --tofino-out for switches, --tofino-nic-out for NICs), keeps them
programmed across restarts, repairs NIC path tables on EV events, probes failed links, and
writes its status and event log to the state directory, until SIGINT/SIGTERM (or `--seconds`).
A second one with a lower `--election-id` and `--takeover-s` is a hot standby.

The NIC inventory (`--nics`) is read by inventory.py (its docstring has the format).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path
from typing import Any


def build_controller(args: argparse.Namespace) -> Any:
    """The Controller `mrc-ctl run` runs, every program loaded and every device given one, or the
    exit status after printing what went wrong (before anything is pushed)."""
    from controller.cli import (
        _ev_profile,
        _push_setup,
        error_line,
        parse_election_id,
        tofino_programs,
    )
    from controller.daemon.controller import Controller, DaemonConfig, nic_specs
    from controller.daemon.inventory import load_nics
    from controller.devices.session import Program
    from controller.devices.tofino_config import TofinoConfigError
    from controller.plan.usid import PlanError
    from controller.repair.operator import OperatorError, state_dir
    from softswitch.errors import ControlPlaneError, P4Error

    setup = _push_setup(args)
    if isinstance(setup, int):
        return setup
    topo, _, switch_program = setup
    nics: dict[str, Any] = {}
    nic_program = None
    try:
        targets = tofino_programs(args, {s.target for s in topo.switches})
        if args.nics is not None:
            endpoints, connections, nic_targets = load_nics(args.nics, topo)
            nics = nic_specs(endpoints, connections, nic_targets)
            nic_tofino = tofino_programs(args, set(nic_targets.values()), "nic")
            if "bmv2" in nic_targets.values():   # only a BMv2 NIC runs the v1model program
                nic_program = Program.compile(args.nic_program)
        else:
            nic_tofino = {}
    except (TofinoConfigError, ControlPlaneError, P4Error) as error:
        print(error_line(error), file=sys.stderr)   # a bad output folder, P4Info or program
        return 2
    election = None if args.election_id is None else parse_election_id(args.election_id)
    config = DaemonConfig(connect_timeout_s=args.connect_timeout, takeover_s=args.takeover_s,
                          hold_s=args.hold_s, probe_interval_s=args.probe_interval,
                          confirm_probes=args.confirm_probes,
                          probe_timeout_s=args.probe_timeout,
                          idle_probe_interval_s=args.idle_probe_interval)
    try:
        return Controller(topo, switch_program, nic_program, nics, profile=_ev_profile(args),
                          state=state_dir(args.topology, args.state), config=config,
                          election_id=election, targets=targets, nic_targets=nic_tofino)
    except (PlanError, ValueError) as error:   # a device with no program, a NIC the plan
        print(f"error: {error}", file=sys.stderr)   # cannot serve, a bad profile
        return 2
    except OperatorError as error:   # a bad health.json or denied.json: refused, kept as is
        print(f"error: {error} (fix or remove it; nothing was started)", file=sys.stderr)
        return 2


def cmd_run(args: argparse.Namespace) -> int:
    from controller.daemon.controller import run_forever

    controller = build_controller(args)
    if isinstance(controller, int):
        return controller
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.seconds is not None:
        threading.Timer(args.seconds, stop.set).start()
    topo = controller.topology
    nics = len(controller.nic_plans)
    print(f"mrc-ctl: running {topo.name}: {len(topo.switches)} switches, {nics} NICs; "
          f"state in {controller.state}", file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt), controller:
        run_forever(controller, stop, args.period)
    return 0


def add_run_parser(sub: Any) -> None:
    from controller.cli import _add_program_args, add_profile_options, add_tofino_options

    run = sub.add_parser("run", help="the long-running controller: keep every switch and NIC "
                         "programmed, repair NIC paths on EV events, probe failed links")
    _add_program_args(run)
    add_profile_options(run)
    run.add_argument("--nics", default=None,
                     help="NIC inventory YAML (P4Runtime endpoints, connections)")
    run.add_argument("--nic-program", default=str(Path(__file__).resolve().parents[2]
                                                 / "p4src" / "nic" / "mrc_nic.p4"),
                     help="the NIC program of bmv2 NICs (default p4src/nic/mrc_nic.p4)")
    add_tofino_options(run)
    add_tofino_options(run, "nic")
    run.add_argument("--state", default=None,
                     help="state directory (default .mrc-ctl beside TOPO)")
    run.add_argument("--takeover-s", type=float, default=None,
                     help="as a backup, take over after the devices had no primary this long")
    run.add_argument("--hold-s", type=float, default=1.0,
                     help="first hold-down before a restored link is used again, s (1; doubles "
                          "per flap up to 60)")
    run.add_argument("--probe-interval", type=float, default=0.1,
                     help="seconds between link probes of a link taken out (0.1)")
    run.add_argument("--confirm-probes", type=int, default=3,
                     help="lost probes in a row that confirm a suspected link or T1 before "
                          "any NIC is rewritten (3; 0: EV events alone decide)")
    run.add_argument("--probe-timeout", type=float, default=0.05,
                     help="a confirmation probe not back after this many s is lost (0.05)")
    run.add_argument("--idle-probe-interval", type=float, default=0.1,
                     help="probe every T0-T1 cable this often, s, traffic or not: a failure no "
                          "traffic crosses is found too (0.1; 0: off)")
    run.add_argument("--period", type=float, default=0.01, help="loop period, s (0.01)")
    run.add_argument("--seconds", type=float, default=None, help="stop after this long")
    run.set_defaults(func=cmd_run)
