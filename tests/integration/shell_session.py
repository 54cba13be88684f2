"""A scripted p4runtime-shell session against shell_demo.p4, for test_p4runtime_shell.py.

Runs with `.venv-shell/bin/python` (p4runtime-shell pins an old protobuf), so it imports only
p4runtime_sh and the standard library, and uses p4runtime-shell unmodified, as a library.

The session reports each step as one JSON object per line on stdout (``{"step": ...}``); where the
test has packets to send or receive on the switch's ports, the step carries ``"wait": true`` and
the script reads one line (``go``) from stdin before going on. Any failure is reported as
``{"step": "error", ...}`` and exit status 1. Steps, in order:

    setup        pipeline pushed (SetForwardingPipelineConfig) and P4Info read back
    inserted     a set_port entry and a to_cpu entry written
    read         the fwd table as read back                               (wait: data packets)
    packet_out   a PacketOut sent                                         (wait: send to_cpu packet)
    packet_in    the PacketIns received, with their metadata by name
    deleted      both entries deleted, and the fwd table read back        (wait: packet dropped)
    done         teardown complete
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from typing import Any

import p4runtime_sh.shell as sh

TABLE = "DemoIngress.fwd"
PACKET_IN_TIMEOUT = 5.0  # seconds for the first PacketIn
PACKET_IN_QUIET = 0.5  # seconds without another PacketIn that end the sniffing


def emit(step: str, wait: bool = False, **fields: Any) -> None:
    """Report a step; with `wait`, block until the test answers `go`."""
    print(json.dumps({"step": step, "wait": wait, **fields}), flush=True)
    if wait:
        line = sys.stdin.readline()
        if line.strip() != "go":
            raise RuntimeError(f"expected 'go' from the test after {step}, got {line!r}")


def entry_as_dict(te: Any) -> dict[str, Any]:
    """A table entry read back, as names and hex values (via the shell's own P4Info context)."""
    msg = te.msg()
    table = sh.context.get_name_from_id(msg.table_id)
    action = sh.context.get_name_from_id(msg.action.action.action_id)
    return {
        "table": table,
        "match": {sh.context.get_mf_name(table, m.field_id): m.exact.value.hex()
                  for m in msg.match},
        "action": action,
        "params": {sh.context.get_param_name(action, p.param_id): p.value.hex()
                   for p in msg.action.action.params},
        "text": str(te),
    }


def read_fwd() -> list[dict[str, Any]]:
    return [entry_as_dict(te) for te in sh.TableEntry(TABLE).read()]


def fwd_entry(mac: str, action: str, **params: str) -> Any:
    te = sh.TableEntry(TABLE)(action=action)
    te.match["hdr.ethernet.dst_addr"] = mac
    for name, value in params.items():
        te.action[name] = value
    return te


def sniff(packet_in: Any) -> list[Any]:
    """PacketIns until none came for PACKET_IN_QUIET (sniff(timeout) always waits it out)."""
    deadline = time.monotonic() + PACKET_IN_TIMEOUT
    msgs: list[Any] = []
    while not msgs and time.monotonic() < deadline:
        msgs.extend(packet_in.sniff(timeout=0.05))
    more = msgs
    while more:
        more = list(packet_in.sniff(timeout=PACKET_IN_QUIET))
        msgs.extend(more)
    return msgs


def session(args: argparse.Namespace) -> None:
    sh.setup(device_id=args.device_id, grpc_addr=args.grpc_addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(args.p4info, args.config), verbose=False)
    emit("setup", tables=[name for name, _ in sh.context.get_objs(sh.P4Type.table)])

    packet_in = sh.PacketIn()  # listening from now on, so no PacketIn can be missed
    try:
        entries = [fwd_entry(args.fwd_mac, "set_port", port=str(args.fwd_port)),
                   fwd_entry(args.cpu_mac, "to_cpu")]
        for te in entries:
            te.insert()
        emit("inserted")
        emit("read", wait=True, entries=read_fwd())

        out = sh.PacketOut(bytes.fromhex(args.packet_out), egress_port=str(args.out_port))
        out.send()
        emit("packet_out", wait=True)

        received = [{"payload": msg.packet.payload.hex(),
                     "metadata": {sh.context.get_packet_metadata_name_from_id(
                         "packet_in", md.metadata_id): int.from_bytes(md.value, "big")
                         for md in msg.packet.metadata}}
                    for msg in sniff(packet_in)]
        emit("packet_in", packets=received)

        for te in entries:
            te.delete()
        emit("deleted", wait=True, entries=read_fwd())
    finally:
        sh.teardown()  # also ends packet_in's receive thread
    emit("done")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grpc-addr", required=True)
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--p4info", required=True, help="P4Info text file")
    parser.add_argument("--config", required=True, help="device config (IR JSON) file")
    parser.add_argument("--fwd-mac", required=True, help="dst MAC forwarded by set_port")
    parser.add_argument("--fwd-port", type=int, required=True, help="set_port's port")
    parser.add_argument("--cpu-mac", required=True, help="dst MAC sent to the CPU")
    parser.add_argument("--out-port", type=int, required=True, help="PacketOut egress_port")
    parser.add_argument("--packet-out", required=True, help="PacketOut payload, hex")
    args = parser.parse_args()
    try:
        session(args)
    except BaseException as exc:  # SystemExit too: sh.setup exits on a failed pipeline push
        emit("error", type=type(exc).__name__, message=str(exc),
             traceback=traceback.format_exc())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
