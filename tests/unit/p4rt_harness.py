"""Helpers for the P4Runtime server tests: the test program's config and a stream client."""

from __future__ import annotations

import queue
import threading
from functools import cache
from pathlib import Path

import grpc
from finsy.proto import p4i, p4r

from softswitch.compiler import compile_file
from softswitch.ir.serialize import dumps_ir
from softswitch.p4info import build_p4info

PROGRAM = Path(__file__).parents[1] / "p4" / "runtime" / "p4rt_server.p4"
DEVICE_ID = 1
CPU_PORT = 64


@cache
def program_config() -> tuple[p4i.P4Info, bytes]:
    """(P4Info, IR JSON bytes) of the test program, compiled once."""
    checked = compile_file(PROGRAM)
    return build_p4info(checked), dumps_ir(checked).encode()


def pipeline_request(action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     *, cookie: int | None = None, election_id: tuple[int, int] | None = None,
                     device_id: int = DEVICE_ID, device_config: bytes | None = None,
                     ) -> p4r.SetForwardingPipelineConfigRequest:
    p4info, ir = program_config()
    request = p4r.SetForwardingPipelineConfigRequest(device_id=device_id, action=action)
    request.config.p4info.CopyFrom(p4info)
    request.config.p4_device_config = ir if device_config is None else device_config
    if cookie is not None:
        request.config.cookie.cookie = cookie
    if election_id is not None:
        request.election_id.high, request.election_id.low = election_id
    return request


def ids() -> dict[str, int]:
    """P4Info ids by name (tables, actions, digests, controller headers)."""
    p4info, _ = program_config()
    out = {}
    for group in (p4info.tables, p4info.actions, p4info.digests, p4info.controller_packet_metadata):
        for obj in group:
            out[obj.preamble.name] = obj.preamble.id
    return out


class StreamClient:
    """A StreamChannel driven from a test: `send` requests, `get` responses with a timeout."""

    def __init__(self, stub: object) -> None:
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self.responses: queue.Queue[p4r.StreamMessageResponse] = queue.Queue()
        self.error: grpc.RpcError | None = None
        self.done = threading.Event()
        self.call = stub.StreamChannel(iter(self._requests.get, None))  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            for response in self.call:
                self.responses.put(response)
        except grpc.RpcError as error:
            self.error = error
        self.done.set()

    def send(self, message: p4r.StreamMessageRequest) -> None:
        self._requests.put(message)

    def arbitrate(self, election_id: tuple[int, int] | None, *, device_id: int = DEVICE_ID,
                  role: str | None = None) -> None:
        update = p4r.MasterArbitrationUpdate(device_id=device_id)
        if election_id is not None:
            update.election_id.high, update.election_id.low = election_id
        if role is not None:
            update.role.name = role
        self.send(p4r.StreamMessageRequest(arbitration=update))

    def get(self, kind: str | None = None, timeout: float = 3.0) -> p4r.StreamMessageResponse:
        """The next response (of `kind`, skipping others)."""
        while True:
            message = self.responses.get(timeout=timeout)
            if kind is None or message.WhichOneof("update") == kind:
                return message

    def nothing(self, kind: str, wait: float = 0.2) -> bool:
        """True when no response of `kind` arrives within `wait` seconds."""
        try:
            self.get(kind, timeout=wait)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        self._requests.put(None)
        self.call.cancel()
        self.done.wait(3)


def write_request(*updates: p4r.Update, election_id: tuple[int, int] | None = (0, 1),
                  role: str = "") -> p4r.WriteRequest:
    request = p4r.WriteRequest(device_id=DEVICE_ID, updates=updates, role=role)
    if election_id is not None:
        request.election_id.high, request.election_id.low = election_id
    return request


def fwd_entry(dst: bytes, action: str, **params: bytes) -> p4r.Entity:
    """An I.fwd table entry (param ids follow the action's declaration order)."""
    p4info, _ = program_config()
    names = ids()
    entry = p4r.TableEntry(table_id=names["I.fwd"])
    entry.match.add(field_id=1).exact.value = dst
    entry.action.action.action_id = names[action]
    action_info = next(a for a in p4info.actions if a.preamble.name == action)
    for param in action_info.params:
        if param.name in params:
            entry.action.action.params.add(param_id=param.id, value=params[param.name])
    return p4r.Entity(table_entry=entry)


def insert(entity: p4r.Entity) -> p4r.Update:
    return p4r.Update(type=p4r.Update.INSERT, entity=entity)
