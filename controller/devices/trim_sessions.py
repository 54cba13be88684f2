"""Clone sessions brought to the plan the way push brings table entries: read back, then only
the difference written. A Tofino switch's trim sessions (controller.plan.switch_plan
.trim_sessions) through `push` (async, `sync_trim_sessions`) and every session `mrc-ctl run`
keeps (controller/daemon/keeper.py, through `session_changes`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from finsy.proto import p4r

from controller.devices.session import Session
from controller.plan.switch_plan import TrimSession
from p4rt import CloneSessionEntry


@dataclass
class SessionSync:
    inserted: int = 0
    modified: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)


def clone_session(trim: TrimSession) -> CloneSessionEntry:
    return CloneSessionEntry(
        trim.session_id, [trim.port], trim.class_of_service, trim.packet_length_bytes
    )


def _same(have: CloneSessionEntry, want: CloneSessionEntry) -> bool:
    return (have.replicas, have.class_of_service, have.packet_length_bytes) == (
        want.replicas,
        want.class_of_service,
        want.packet_length_bytes,
    )


def held_sessions(entities: Iterable[p4r.Entity]) -> dict[int, CloneSessionEntry]:
    """The clone sessions a device returned for a wildcard read, by id."""
    have: dict[int, CloneSessionEntry] = {}
    for entity in entities:
        clone = CloneSessionEntry.from_proto(
            entity.packet_replication_engine_entry.clone_session_entry
        )
        have[clone.session_id] = clone
    return have


def session_changes(
    have: Mapping[int, CloneSessionEntry], wanted: Sequence[TrimSession]
) -> tuple[list[tuple[int, CloneSessionEntry]], int]:
    """(INSERT the missing sessions, MODIFY those that differ; how many are already right)."""
    changes: list[tuple[int, CloneSessionEntry]] = []
    unchanged = 0
    for trim in wanted:
        want = clone_session(trim)
        current = have.get(trim.session_id)
        if current is not None and _same(current, want):
            unchanged += 1
            continue
        changes.append((p4r.Update.INSERT if current is None else p4r.Update.MODIFY, want))
    return changes, unchanged


async def sync_trim_sessions(session: Session, wanted: Sequence[TrimSession]) -> SessionSync:
    """INSERT the missing sessions, MODIFY those that differ; others stay as they are."""
    result = SessionSync()
    have = held_sessions(await session.read([CloneSessionEntry().to_entity()]))
    changes, result.unchanged = session_changes(have, wanted)
    updates = [p4r.Update(type=kind, entity=want.to_entity()) for kind, want in changes]
    failed = await session.write(updates)
    for error in failed:
        result.errors.append(str(error))
    bad = {error.index for error in failed}
    for index, update in enumerate(updates):
        if index not in bad:
            if update.type == p4r.Update.INSERT:
                result.inserted += 1
            else:
                result.modified += 1
    return result
