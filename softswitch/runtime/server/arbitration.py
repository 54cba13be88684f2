"""Primary/backup arbitration per role (P4Runtime spec, "Client Arbitration").

Each StreamChannel that sent a valid MasterArbitrationUpdate is a live client of one role.
The primary of a role is the client whose election id equals the highest one the server has
ever seen for that role; when the primary leaves, the role has no primary until a client
arbitrates with an id at least as high (spec 1.3+; PI's older server promoted the next
highest live client instead). An unset election id is lower than every id: such a client is
always a backup. Every primary change is announced to all clients of the role.

A role exists while it has live clients: when the last one's stream ends, the role and its
config are forgotten. What the spec needs beyond that, the highest election id seen per role
(a returning controller with a lower id must not become primary), is kept for the most
recently used MAX_REMEMBERED_ROLES roles, so that clients inventing role names cannot grow the
server's memory. Role configs are enforced (roles.py): the primary's config scopes what the
role writes, reads and receives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

import grpc
from finsy.proto import p4r
from finsy.proto.google.rpc import code_pb2

from softswitch.runtime.server.roles import RoleScope, WritePolicy, parse_role_config
from softswitch.runtime.server.status import RpcError

ElectionId = tuple[int, int] | None      # (high, low); None = unset, lower than any id

MAX_CLIENTS_PER_ROLE = 16                # PI's limit per device
MAX_REMEMBERED_ROLES = 1024              # roles whose highest election id outlives their streams


class Client(Protocol):
    """A stream the arbitrator can notify (stream.StreamSession)."""

    def send(self, message: p4r.StreamMessageResponse) -> None: ...

    def is_gone(self) -> bool:
        """True once the client ended its side of the stream (it can take no new messages)."""
        ...


def election_id_of(message: p4r.MasterArbitrationUpdate | p4r.WriteRequest
                   | p4r.SetForwardingPipelineConfigRequest) -> ElectionId:
    """The election id a request carries (None when the field is unset)."""
    if not message.HasField("election_id"):
        return None
    return (message.election_id.high, message.election_id.low)


def _higher_or_equal(a: ElectionId, b: ElectionId) -> bool:
    if a is None:
        return b is None
    return b is None or a >= b


@dataclass
class _Role:
    name: str
    clients: dict[Client, ElectionId] = field(default_factory=dict)
    highest: ElectionId = None          # highest election id ever seen (election_id_past)
    primary: Client | None = None
    config: p4r.Role | None = None      # role message of the last primary
    scope: RoleScope | None = None      # what that config allows (None: full access)


class Arbitrator:
    """Live clients per role of one device; thread-safe."""

    def __init__(self, device_id: int, max_clients_per_role: int = MAX_CLIENTS_PER_ROLE,
                 max_remembered_roles: int = MAX_REMEMBERED_ROLES) -> None:
        self.device_id = device_id
        self.max_clients_per_role = max_clients_per_role
        self.max_remembered_roles = max_remembered_roles
        self._lock = threading.Lock()
        self._roles: dict[str, _Role] = {}
        self._role_of: dict[Client, str] = {}
        self._past: OrderedDict[str, ElectionId] = OrderedDict()  # forgotten roles' highest id

    # -- stream side ------------------------------------------------------------------------

    def arbitrate(self, client: Client, update: p4r.MasterArbitrationUpdate) -> None:
        """Apply a client's MasterArbitrationUpdate; raises RpcError (the stream then ends)."""
        role_name = update.role.name if update.HasField("role") else ""
        election_id = election_id_of(update)
        with self._lock:
            known = self._role_of.get(client)
            if known is None:
                if update.device_id != self.device_id:
                    raise RpcError(grpc.StatusCode.NOT_FOUND,
                                   f"Unknown device id {update.device_id}")
                role = self._roles.get(role_name)
                if role is None:
                    role = _Role(role_name, highest=self._past.pop(role_name, None))
                self._check_unique(role, client, election_id)
                if len(role.clients) >= self.max_clients_per_role:
                    raise RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                   f"Too many connections for role '{role_name}'")
                scope = self._new_scope(role, election_id, update)
                self._roles[role_name] = role   # (again, if _check_unique forgot its last client)
                self._past.pop(role_name, None)
                self._role_of[client] = role_name
            else:
                if update.device_id != self.device_id:
                    raise RpcError(grpc.StatusCode.FAILED_PRECONDITION, "Invalid device id")
                if role_name != known:
                    raise RpcError(grpc.StatusCode.FAILED_PRECONDITION,
                                   f"Role '{role_name}' differs from the stream's role '{known}'; "
                                   "open a new stream to change roles")
                role = self._roles[known]
                self._check_unique(role, client, election_id)
                scope = self._new_scope(role, election_id, update)
            role.clients[client] = election_id
            self._elect(role, client, election_id, update, scope)

    def leave(self, client: Client) -> None:
        """Forget a client whose stream ended; announce when it was the primary."""
        with self._lock:
            self._forget(client)

    def _forget(self, client: Client) -> None:
        role_name = self._role_of.pop(client, None)
        if role_name is None:
            return
        role = self._roles[role_name]
        role.clients.pop(client, None)
        if not role.clients:   # the last stream of the role: forget it but its highest id
            del self._roles[role_name]
            self._past[role_name] = role.highest
            self._past.move_to_end(role_name)
            while len(self._past) > self.max_remembered_roles:
                self._past.popitem(last=False)
            return
        if role.primary is client:
            role.primary = None
            self._notify(role, list(role.clients))

    # -- RPC side ---------------------------------------------------------------------------

    def check_writer(self, role_name: str, election_id: ElectionId) -> None:
        """Raise RpcError unless a Write/SetForwardingPipelineConfig with these values comes
        from the role's primary.

        As PI does, a request for the default role without election id is accepted while no
        client of it is connected (handy for grpc_cli and one-shot scripts). A named role
        exists only while a client that arbitrated for it is connected.
        """
        with self._lock:
            role = self._roles.get(role_name)
            if role is None:
                if role_name == "" and election_id is None:
                    return
                if role_name:
                    raise RpcError(grpc.StatusCode.NOT_FOUND,
                                   f"Unknown role '{role_name}': no client of it has "
                                   "arbitrated on a live stream")
            elif (role.primary is not None and election_id is not None
                    and role.clients[role.primary] == election_id):
                return
            raise RpcError(grpc.StatusCode.PERMISSION_DENIED,
                           "Not primary: election id is not the primary's for this role")

    def write_policy(self, role_name: str) -> WritePolicy:
        """What the role may write now: its primary's scope and the ids other roles hold
        exclusively."""
        with self._lock:
            role = self._roles.get(role_name)
            taken = frozenset().union(*(r.scope.exclusive for r in self._roles.values()
                                        if r.name != role_name and r.scope is not None))
            return WritePolicy(role_name, role.scope if role is not None else None, taken)

    def scope(self, role_name: str) -> RoleScope | None:
        """The role's scope (None: full access, or no such role)."""
        with self._lock:
            role = self._roles.get(role_name)
            return role.scope if role is not None else None

    def role_count(self) -> tuple[int, int]:
        """(live roles, forgotten roles whose highest election id is kept)."""
        with self._lock:
            return len(self._roles), len(self._past)

    def is_primary(self, client: Client) -> bool:
        with self._lock:
            role_name = self._role_of.get(client)
            return role_name is not None and self._roles[role_name].primary is client

    def primaries(self) -> list[tuple[Client, RoleScope | None]]:
        """The primary client of every role that has one, with its role's scope (packet-in
        and digest receivers)."""
        with self._lock:
            return [(r.primary, r.scope) for r in self._roles.values() if r.primary is not None]

    def client_count(self) -> int:
        with self._lock:
            return len(self._role_of)

    # -- internals --------------------------------------------------------------------------

    def _check_unique(self, role: _Role, client: Client, election_id: ElectionId) -> None:
        """Refuse an election id another live stream of the role holds. A stream whose client
        already ended its side (a controller reconnecting right after closing) is forgotten
        first: the server may not have seen the call end yet."""
        if election_id is None:
            return
        for other, other_id in list(role.clients.items()):
            if other is not client and other_id == election_id:
                if other.is_gone():
                    self._forget(other)
                    continue
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT,
                               "Election id already exists for this role")

    def _new_scope(self, role: _Role, election_id: ElectionId,
                   update: p4r.MasterArbitrationUpdate) -> RoleScope | None:
        """The scope of the config a client that becomes primary brings (raises RpcError for
        one softswitch cannot read, before anything changes); the role's current scope if the
        client does not become primary."""
        if election_id is None or not _higher_or_equal(election_id, role.highest):
            return role.scope
        return parse_role_config(update.role) if update.HasField("role") else None

    def _elect(self, role: _Role, client: Client, election_id: ElectionId,
               update: p4r.MasterArbitrationUpdate, scope: RoleScope | None) -> None:
        was_primary = role.primary is client
        if election_id is not None and _higher_or_equal(election_id, role.highest):
            role.highest = election_id
            role.primary = client
            role.config = update.role if update.HasField("role") else None
            role.scope = scope
            # Everyone else first, then the new primary (spec: steps 2 and 5).
            others = [c for c in role.clients if c is not client]
            self._notify(role, [*others, client])
            return
        if was_primary:
            role.primary = None
            self._notify(role, list(role.clients))
        else:
            self._notify(role, [client])

    def _notify(self, role: _Role, clients: list[Client]) -> None:
        for c in clients:
            c.send(self._advisory(role, c))

    def _advisory(self, role: _Role, client: Client) -> p4r.StreamMessageResponse:
        update = p4r.MasterArbitrationUpdate(device_id=self.device_id)
        if role.name or role.config is not None:
            update.role.CopyFrom(role.config if role.config is not None
                                 else p4r.Role(name=role.name))
        if role.highest is not None:
            update.election_id.high, update.election_id.low = role.highest
        if role.primary is client:
            update.status.code, update.status.message = code_pb2.OK, "Is primary"
        elif role.primary is not None:
            update.status.code = code_pb2.ALREADY_EXISTS
            update.status.message = "Is backup; another client is primary"
        else:
            update.status.code = code_pb2.NOT_FOUND
            update.status.message = "Is backup; there is no primary"
        return p4r.StreamMessageResponse(arbitration=update)
