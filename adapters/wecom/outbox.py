"""Frames waiting to go out on the long connection (WECOM_MODE=ws).

Workers may run in another process than the one holding the WebSocket, and
the socket can drop mid-answer, so every outbound frame goes through a Redis
Stream. The connection owner reads it with a consumer group and acknowledges
an entry only after WeCom acknowledged the frame; entries read but not
acknowledged when the socket dropped are sent again after the reconnect.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from core.keys import Keys

from .store import PLATFORM, _s

GROUP = "sender"
CONSUMER = "leader"  # one active connection per bot, so one consumer; a new leader inherits its pending


@dataclass(frozen=True)
class OutboxEntry:
    entry_id: str
    frame: dict[str, Any]
    kind: str  # "open" | "progress" | "final" | "send" | "reply"
    stream_id: str = ""
    fallback: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Outbox:
    def __init__(self, redis: Redis, keys: Keys, maxlen: int = 10_000) -> None:
        self._redis = redis
        self.key = keys.adapter_state(PLATFORM, "ws-outbox")
        self._maxlen = maxlen

    async def put(
        self, frame: dict[str, Any], *, kind: str, stream_id: str = "", fallback: dict[str, Any] | None = None
    ) -> str:
        fields = {"frame": json.dumps(frame, ensure_ascii=False), "kind": kind, "stream_id": stream_id}
        if fallback:
            fields["fallback"] = json.dumps(fallback, ensure_ascii=False)
        entry_id = await self._redis.xadd(self.key, fields, maxlen=self._maxlen, approximate=True)
        return _s(entry_id)

    async def ensure_group(self) -> None:
        try:
            await self._redis.xgroup_create(self.key, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, *, pending: bool, block_ms: int = 1000, count: int = 20) -> list[OutboxEntry]:
        """Pending entries (read before, never acknowledged) or new ones."""
        response = await self._redis.xreadgroup(
            GROUP, CONSUMER, {self.key: "0" if pending else ">"}, count=count, block=None if pending else block_ms
        )
        entries: list[OutboxEntry] = []
        for _stream, items in response or []:
            for entry_id, data in items:
                if not data:  # deleted while pending
                    await self.ack(_s(entry_id))
                    continue
                d = {_s(k): _s(v) for k, v in data.items()}
                entries.append(
                    OutboxEntry(
                        entry_id=_s(entry_id),
                        frame=json.loads(d["frame"]),
                        kind=d.get("kind", "reply"),
                        stream_id=d.get("stream_id", ""),
                        fallback=json.loads(d["fallback"]) if d.get("fallback") else None,
                    )
                )
        return entries

    async def ack(self, entry_id: str) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.xack(self.key, GROUP, entry_id)
            pipe.xdel(self.key, entry_id)
            await pipe.execute()


def coalesce(entries: list[OutboxEntry]) -> tuple[list[OutboxEntry], list[OutboxEntry]]:
    """Drop progress frames made stale by a later frame of the same stream (each carries the full text).

    Returns (to_send, to_skip).
    """
    latest: dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.stream_id and e.kind in ("progress", "final"):
            latest[e.stream_id] = i
    send, skip = [], []
    for i, e in enumerate(entries):
        stale = e.kind == "progress" and latest.get(e.stream_id, i) > i
        (skip if stale else send).append(e)
    return send, skip
