"""p4rt: a P4Runtime client library for PTF tests and controllers.

    from p4rt import SwitchConnection, TableEntry
    with SwitchConnection("127.0.0.1:9559", device_id=0) as sw:
        sw.set_pipeline("build/prog.p4info.txtpb", Path("build/prog.json").read_bytes())
        sw.insert([TableEntry(sw.schema, "route_v6").match(dst_addr=("2001:db8::", 32))
                   .action("set_next_hop", dmac="aa:bb:cc:dd:ee:ff")])

Why a small synchronous client on grpcio + finsy's stubs rather than finsy's own `fy.Switch`:
finsy's client is asyncio-only and owns the session's lifecycle (a `Controller` runs an event loop,
pushes the pipeline, re-runs a ready handler on reconnect). PTF tests, our first user, are
synchronous unittest methods run from threads; driving `fy.Switch` from them means an event loop
in a side thread and a blocking bridge around every call, and its implicit pipeline/reconnect
behaviour is the opposite of what a test wants (explicit, fail loudly). We still use finsy's
vendored protobuf stubs (the `p4runtime` wheel does not import under protobuf 6).

The package is layered so the controller can choose asyncio later without a rewrite:
`schema` (P4Info names ⇄ ids), `values`/`matches`/`p4data` (Python values ⇄ canonical
bytestrings), the entity builders (`tables`, `resources`, `actions`, gathered with updates and
read-back decoding in `entities`) and `packetio` (stream messages) do no I/O and hold no
connection state; `client` only moves the messages they build.
An asyncio connection on `grpc.aio` can reuse all of them, and the request builders in `client`,
adding only its transport. Each connection is a separate object (no module globals), so one process can talk to
many switches, from threads today.
"""

from p4rt.client import CONTINUE_ON_ERROR, VERIFY_AND_COMMIT, SwitchConnection
from p4rt.entities import (
    DELETE,
    INSERT,
    MODIFY,
    ActionCall,
    ActionProfileGroup,
    ActionProfileMember,
    CloneSessionEntry,
    CounterData,
    CounterEntry,
    DigestEntry,
    DirectCounterEntry,
    DirectMeterEntry,
    MeterConfig,
    MeterEntry,
    MulticastGroupEntry,
    RegisterEntry,
    Replica,
    TableEntry,
    delete,
    insert,
    modify,
)
from p4rt.errors import (
    EncodeError,
    P4RuntimeClientError,
    P4RuntimeConnectionError,
    P4RuntimeRpcError,
    P4RuntimeWriteError,
    SchemaError,
    UpdateError,
)
from p4rt.matches import ExactMatch, LpmMatch, OptionalMatch, RangeMatch, TernaryMatch
from p4rt.packetio import DigestList, PacketIn
from p4rt.schema import Schema

__all__ = [
    "CONTINUE_ON_ERROR",
    "DELETE",
    "INSERT",
    "MODIFY",
    "VERIFY_AND_COMMIT",
    "ActionCall",
    "ActionProfileGroup",
    "ActionProfileMember",
    "CloneSessionEntry",
    "CounterData",
    "CounterEntry",
    "DigestEntry",
    "DigestList",
    "DirectCounterEntry",
    "DirectMeterEntry",
    "EncodeError",
    "ExactMatch",
    "LpmMatch",
    "MeterConfig",
    "MeterEntry",
    "MulticastGroupEntry",
    "OptionalMatch",
    "P4RuntimeClientError",
    "P4RuntimeConnectionError",
    "P4RuntimeRpcError",
    "P4RuntimeWriteError",
    "PacketIn",
    "RangeMatch",
    "RegisterEntry",
    "Replica",
    "Schema",
    "SchemaError",
    "SwitchConnection",
    "TableEntry",
    "TernaryMatch",
    "UpdateError",
    "delete",
    "insert",
    "modify",
]
