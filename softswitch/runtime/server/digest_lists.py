"""DigestList generation (P4Runtime spec, "DigestEntry"): buffering, dedup, acks.

Per digest id, learned messages go into a buffer until it holds ``max_list_size`` distinct
messages (0 = no limit) or ``max_timeout_ns`` has passed since the first one went in (0 =
send every message at once); the buffer then goes out as one DigestList with the next
``list_id`` (1, 2, ... per digest, as PI numbers them). When ``ack_timeout_ns`` is non-zero,
messages that went out stay in a cache until their list is acked or the timeout passes, and
a message already in the cache is dropped instead of being learned again. A list never holds
the same message twice. Timing is exact (PI sweeps at twice the timeout, 100 ms at least).
The configs themselves live in the entity store (digests.py); this module only reads them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from finsy.proto import p4r
from finsy.proto.p4.v1 import p4data_pb2

Config = p4r.DigestEntry.Config
SendList = Callable[[p4r.DigestList], None]


@dataclass
class _Sent:
    keys: list[Hashable]
    sent_ns: int


@dataclass
class _Digest:
    next_list_id: int = 1
    buffer: list[p4data_pb2.P4Data] = field(default_factory=list)
    buffer_keys: set[Hashable] = field(default_factory=set)
    first_ns: int = 0
    cache: set[Hashable] = field(default_factory=set)
    unacked: dict[int, _Sent] = field(default_factory=dict)


class DigestLists:
    """Buffers of every digest of one pipeline; thread-safe.

    `config_of(digest_id)` gives the digest's current DigestEntry config (None = learning
    off); `send` delivers a finished list (to the primary clients). `tick` enforces the
    timeouts; `next_deadline` says when it is next due.
    """

    def __init__(self, config_of: Callable[[int], Config | None], send: SendList,
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._config_of = config_of
        self._send = send
        self._clock = clock
        self._lock = threading.Lock()
        self._digests: dict[int, _Digest] = {}

    def learn(self, digest_id: int, key: Hashable, data: p4data_pb2.P4Data) -> None:
        """One digest message from the data plane (`key` identifies equal messages)."""
        config = self._config_of(digest_id)
        if config is None:
            return
        out: list[p4r.DigestList] = []
        with self._lock:
            d = self._digests.setdefault(digest_id, _Digest())
            if key in d.cache or key in d.buffer_keys:
                return
            now = self._clock()
            if not d.buffer:
                d.first_ns = now
            d.buffer.append(data)
            d.buffer_keys.add(key)
            full = config.max_list_size > 0 and len(d.buffer) >= config.max_list_size
            if full or config.max_timeout_ns <= 0:
                out.append(self._flush(digest_id, d, config, now))
        for message in out:
            self._send(message)

    def ack(self, digest_id: int, list_id: int) -> None:
        """A DigestListAck: forget the list's messages (unknown lists are ignored)."""
        with self._lock:
            d = self._digests.get(digest_id)
            if d is None:
                return
            sent = d.unacked.pop(list_id, None)
            if sent is not None:
                d.cache.difference_update(sent.keys)

    def tick(self) -> None:
        """Send buffers whose max_timeout passed; expire cache entries past ack_timeout."""
        out: list[p4r.DigestList] = []
        with self._lock:
            now = self._clock()
            for digest_id, d in self._digests.items():
                config = self._config_of(digest_id)
                if config is None:
                    self._reset(d)
                    continue
                if d.buffer and now - d.first_ns >= config.max_timeout_ns:
                    out.append(self._flush(digest_id, d, config, now))
                for list_id, sent in list(d.unacked.items()):
                    if now - sent.sent_ns >= config.ack_timeout_ns:
                        del d.unacked[list_id]
                        d.cache.difference_update(sent.keys)
        for message in out:
            self._send(message)

    def next_deadline(self) -> int | None:
        """The clock value at which `tick` has work, or None when nothing is pending."""
        deadlines: list[int] = []
        with self._lock:
            for digest_id, d in self._digests.items():
                config = self._config_of(digest_id)
                if config is None:
                    continue
                if d.buffer:
                    deadlines.append(d.first_ns + config.max_timeout_ns)
                deadlines.extend(s.sent_ns + config.ack_timeout_ns for s in d.unacked.values())
        return min(deadlines, default=None)

    def _flush(self, digest_id: int, d: _Digest, config: Config, now: int) -> p4r.DigestList:
        message = p4r.DigestList(digest_id=digest_id, list_id=d.next_list_id,
                                 data=d.buffer, timestamp=time.time_ns())
        if config.ack_timeout_ns > 0:
            keys = list(d.buffer_keys)
            d.cache.update(keys)
            d.unacked[d.next_list_id] = _Sent(keys, now)
        d.next_list_id += 1
        d.buffer = []
        d.buffer_keys = set()
        return message

    @staticmethod
    def _reset(d: _Digest) -> None:
        # Learning was turned off (DigestEntry DELETE): drop what was pending, as PI does.
        d.buffer, d.buffer_keys = [], set()
        d.cache.clear()
        d.unacked.clear()
