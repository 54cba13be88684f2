"""Set/GetForwardingPipelineConfig: the committed and saved pipelines and what hangs off them.

Actions (spec "SetForwardingPipelineConfig RPC"; PI's ``pipeline_config_set``):

- VERIFY: build the pipeline (IR JSON → program → Switch) and its entity store, keep nothing.
- VERIFY_AND_SAVE: build and keep it as the saved pipeline; Read/Write then address the saved
  pipeline while packets still go through the committed one, so a later COMMIT swaps in the
  saved pipeline together with everything written to it (the spec's "replay").
- VERIFY_AND_COMMIT: build and swap in; the forwarding state starts empty.
- COMMIT: swap in the saved pipeline (NOT_FOUND without one; INVALID_ARGUMENT with a config).
- RECONCILE_AND_COMMIT: as PI does, read the current forwarding state (action profile
  members and groups, table entries, multicast groups, clone sessions, digest configs) and
  insert it into the new pipeline before swapping it in. Unlike PI, a state that does not fit
  the new pipeline fails the call with INVALID_ARGUMENT and leaves everything unchanged.

A config that does not build is INVALID_ARGUMENT with the compile error's text; the device is
untouched then. So is a P4Info that contradicts the program: every action that builds a pipeline
first checks the P4Info alone (unique ids, no dangling references: ``_check_p4info``), then
compares it with the P4Info generated for the program (p4info_match.py: tables, match fields,
actions and their parameters, externs, digests, value sets, packet metadata, all by name) and
refuses the first difference, named in the message. The pipeline is built outside
``device.lock`` (compiling can take a while) and swapped in under it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from finsy.proto import p4i, p4r

from softswitch.limits import LimitError
from softswitch.runtime.program_cache import ProgramCache
from softswitch.runtime.server.device_config import DeviceConfigError, unwrap_device_config
from softswitch.runtime.server.digest_lists import DigestLists, SendList
from softswitch.runtime.server.p4info_match import check_p4info_matches
from softswitch.runtime.server.packet_io import PacketIO
from softswitch.runtime.server.status import RpcError

Action = p4r.SetForwardingPipelineConfigRequest.Action
ResponseType = p4r.GetForwardingPipelineConfigRequest.ResponseType

NO_PIPELINE = "No forwarding pipeline config set for this device"


class Store(Protocol):
    """What the server needs of entities.EntityStore."""

    def write(self, update: p4r.Update) -> None: ...
    def read(self, entity: p4r.Entity) -> Iterator[p4r.Entity]: ...
    def digest_config(self, digest_id: int) -> p4r.DigestEntry.Config | None: ...


MakeStore = Callable[[Any], Store]     # ForwardingPipeline → EntityStore


@dataclass
class Bound:
    """A pipeline with its entity store, packet-I/O codec and digest buffers."""

    pipeline: Any                      # runtime.device.ForwardingPipeline
    store: Store
    packet_io: PacketIO
    digests: DigestLists

    @property
    def p4info(self) -> p4i.P4Info:
        return self.pipeline.p4info


class PipelineManager:
    """The device's pipelines as P4Runtime sees them; thread-safe."""

    def __init__(self, device: Any, make_store: MakeStore, send_digest_list: SendList,
                 programs: ProgramCache | None = None) -> None:
        self.device = device
        self.programs = programs if programs is not None else ProgramCache()
        self._make_store = make_store
        self._send_digest_list = send_digest_list
        self._active: Bound | None = None
        self._saved: Bound | None = None
        self._lock = threading.RLock()   # held with device.lock, always taken after it

    # -- the pipelines ----------------------------------------------------------------------

    def active(self) -> Bound | None:
        """The committed pipeline (bound lazily if it was loaded another way, e.g. the CLI)."""
        with self.device.lock, self._lock:
            pipeline = self.device.pipeline
            if pipeline is None:
                return None
            if self._active is None or self._active.pipeline is not pipeline:
                self._active = self._bind(pipeline)
            return self._active

    def peek(self) -> Bound | None:
        """The last bound committed pipeline, without locking (the digest sweeper)."""
        return self._active

    def target(self) -> Bound | None:
        """Where Read/Write go: the saved pipeline if there is one, else the committed one."""
        with self._lock:
            saved = self._saved
        return saved if saved is not None else self.active()

    # -- SetForwardingPipelineConfig --------------------------------------------------------

    def set(self, request: p4r.SetForwardingPipelineConfigRequest) -> None:
        action = request.action
        if action == Action.COMMIT:
            if request.HasField("config"):
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               "COMMIT takes no config: it commits the saved one")
            with self.device.lock, self._lock:
                if self._saved is None:
                    raise RpcError(grpc.StatusCode.NOT_FOUND,
                                   "No saved config to commit (use VERIFY_AND_SAVE first)")
                self._commit(self._saved)
            return
        if action not in (Action.VERIFY, Action.VERIFY_AND_SAVE, Action.VERIFY_AND_COMMIT,
                          Action.RECONCILE_AND_COMMIT):
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           f"Invalid SetForwardingPipelineConfig action {action}")
        bound = self._build(request)
        if action == Action.VERIFY:
            return
        with self.device.lock, self._lock:
            if action == Action.VERIFY_AND_SAVE:
                self._saved = bound
                return
            if action == Action.RECONCILE_AND_COMMIT:
                current = self.target()
                if current is not None:
                    _replay(current, bound)
            self._commit(bound)

    def _build(self, request: p4r.SetForwardingPipelineConfigRequest) -> Bound:
        if not request.HasField("config"):
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, "Missing forwarding pipeline config")
        config = request.config
        if not config.HasField("p4info"):
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, "Missing p4info in config")
        if not config.p4_device_config:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           "Missing p4_device_config (the IR JSON) in config")
        _check_p4info(config.p4info)
        device_config = self._device_config(config.p4_device_config)
        try:
            # the same bytes pushed before (to this device or another): their checked program
            program, generated = self.programs.load(device_config, self.device.limits)
            # Built for the device's drop port and tracing, so commit keeps this very Switch.
            pipeline = self.device.build_pipeline(
                config.p4info, device_config, config.cookie.cookie,
                drop_port=self.device.drop_port, trace=self.device.trace,
                limits=self.device.limits, program=program)
        except Exception as exc:   # a compile/format error of the client's config
            raise _invalid_config(exc) from exc
        # outside the try: a bug in the comparison must not pass for the client's error
        check_p4info_matches(config.p4info, generated, pipeline.program)
        try:
            return self._bind(pipeline)
        except RpcError:
            raise
        except Exception as exc:
            raise _invalid_config(exc) from exc

    def _device_config(self, data: bytes) -> bytes:
        """The IR JSON of `data`, raw or wrapped as PI takes it (device_config.py); PI's legacy
        empty wrapper keeps the program the switch runs, as `simple_switch_grpc prog.json`
        then pairs it with the P4Info."""
        try:
            program = unwrap_device_config(data)
        except DeviceConfigError as exc:
            raise _invalid_config(exc) from exc
        if program is not None:
            return program
        running = self.device.pipeline
        if running is None:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           "p4_device_config is a p4.tmp.P4DeviceConfig without device_data, "
                           "and the switch runs no program to keep")
        return running.device_config

    def _bind(self, pipeline: Any) -> Bound:
        store = self._make_store(pipeline)
        return Bound(pipeline, store, PacketIO(pipeline.p4info),
                     DigestLists(store.digest_config, self._send_digest_list))

    def _commit(self, bound: Bound) -> None:
        self.device.commit(bound.pipeline)
        if self.device.pipeline is not bound.pipeline:
            # The device rebuilt the engine: carry what was written to the one we built.
            rebuilt = self._bind(self.device.pipeline)
            _replay(bound, rebuilt)
            bound = rebuilt
        self._active = bound
        self._saved = None

    # -- GetForwardingPipelineConfig --------------------------------------------------------

    def get(self, request: p4r.GetForwardingPipelineConfigRequest,
            ) -> p4r.GetForwardingPipelineConfigResponse:
        bound = self.target()
        if bound is None:
            raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
        pipeline = bound.pipeline
        config = p4r.ForwardingPipelineConfig()
        kind = request.response_type
        if kind not in (ResponseType.ALL, ResponseType.COOKIE_ONLY,
                        ResponseType.P4INFO_AND_COOKIE, ResponseType.DEVICE_CONFIG_AND_COOKIE):
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid response_type {kind}")
        if kind in (ResponseType.ALL, ResponseType.P4INFO_AND_COOKIE):
            config.p4info.CopyFrom(pipeline.p4info)
        if kind in (ResponseType.ALL, ResponseType.DEVICE_CONFIG_AND_COOKIE):
            config.p4_device_config = bytes(pipeline.device_config)
        cookie = int(getattr(pipeline, "cookie", 0) or 0)
        if cookie:
            config.cookie.cookie = cookie
        return p4r.GetForwardingPipelineConfigResponse(config=config)


def _invalid_config(exc: Exception) -> RpcError:
    # a program over softswitch's resource limits is valid, only too big for this switch
    code = (grpc.StatusCode.RESOURCE_EXHAUSTED if isinstance(exc, LimitError)
            else grpc.StatusCode.INVALID_ARGUMENT)
    return RpcError(code, f"Invalid forwarding pipeline config: {exc}")


def _check_p4info(p4info: p4i.P4Info) -> None:
    """Refuse a P4Info whose ids are not unique, whose references dangle, or with a negative
    bitwidth.

    p4c never writes one; a hand-edited one would otherwise be committed and fail later, on
    writes, in ways the id lookups (p4info_index.py) do not expect.
    """
    def fail(problem: str) -> None:
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid P4Info: {problem}")

    def widths(what: str, items: Any) -> None:
        for item in items:
            if item.bitwidth < 0:
                fail(f"{what} '{item.name or item.id}' has a negative bitwidth {item.bitwidth}")

    def unique(what: str, ids: list[int]) -> set[int]:
        seen: set[int] = set()
        for i in ids:
            if i in seen:
                fail(f"{what} id {i} is used twice")
            seen.add(i)
        return seen

    objects: dict[str, list[Any]] = {}
    for field in p4info.DESCRIPTOR.fields:
        if field.message_type is not None and "preamble" in field.message_type.fields_by_name:
            objects[field.name] = list(getattr(p4info, field.name))
    all_ids = unique("object", [o.preamble.id for kind in objects.values() for o in kind])
    if 0 in all_ids:
        fail("object id 0")
    actions = {a.preamble.id for a in p4info.actions}
    profiles = {a.preamble.id for a in p4info.action_profiles}
    tables = {t.preamble.id for t in p4info.tables}
    for a in p4info.actions:
        unique(f"action '{a.preamble.name}' parameter", [p.id for p in a.params])
        widths(f"action '{a.preamble.name}' parameter", a.params)
    for h in p4info.controller_packet_metadata:
        unique(f"controller header '{h.preamble.name}' metadata", [m.id for m in h.metadata])
        widths(f"controller header '{h.preamble.name}' metadata", h.metadata)
    for vs in p4info.value_sets:
        unique(f"value set '{vs.preamble.name}' match field", [m.id for m in vs.match])
        widths(f"value set '{vs.preamble.name}' match field", vs.match)
    for t in p4info.tables:
        where = f"table '{t.preamble.name}'"
        unique(f"{where} match field", [f.id for f in t.match_fields])
        widths(f"{where} match field", t.match_fields)
        for ref in unique(f"{where} action", [r.id for r in t.action_refs]):
            if ref not in actions:
                fail(f"{where} refers to unknown action id {ref}")
        if t.implementation_id and t.implementation_id not in profiles:
            fail(f"{where} refers to unknown action profile id {t.implementation_id}")
        for rid in t.direct_resource_ids:
            if rid not in all_ids:
                fail(f"{where} refers to unknown direct resource id {rid}")
    for ap in p4info.action_profiles:
        for tid in ap.table_ids:
            if tid not in tables:
                fail(f"action profile '{ap.preamble.name}' refers to unknown table id {tid}")


# Entities carried over by RECONCILE_AND_COMMIT, in an order where references resolve.
_RECONCILED = (
    p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
    p4r.Entity(action_profile_group=p4r.ActionProfileGroup()),
    p4r.Entity(table_entry=p4r.TableEntry()),
    p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry())),
    p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry())),
)


def _replay(old: Bound, new: Bound) -> None:
    """Insert `old`'s forwarding state into `new` (not yet committed)."""
    const_tables = {t.preamble.id for t in new.p4info.tables if t.is_const_table}
    updates: list[p4r.Update] = []
    for query in _RECONCILED:
        try:
            entities = list(old.store.read(query))
        except Exception:   # an entity kind the old store cannot list: nothing to carry
            continue
        for entity in entities:
            if entity.HasField("table_entry") and (
                    entity.table_entry.table_id in const_tables
                    or entity.table_entry.is_default_action):
                continue
            updates.append(p4r.Update(type=p4r.Update.INSERT, entity=entity))
    for digest in old.p4info.digests:
        config = old.store.digest_config(digest.preamble.id)
        if config is not None:
            entry = p4r.DigestEntry(digest_id=digest.preamble.id, config=config)
            updates.append(p4r.Update(type=p4r.Update.INSERT,
                                      entity=p4r.Entity(digest_entry=entry)))
    for update in updates:
        try:
            new.store.write(update)
        except Exception as exc:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                           "The forwarding state cannot be preserved in the new pipeline: "
                           f"{getattr(exc, 'message', exc)}") from exc
