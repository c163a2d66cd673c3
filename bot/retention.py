"""How long the jobs stream and the dead letters keep what users wrote.

A finished job is deleted from the stream with its ack (see Worker._complete), so the
stream normally holds only jobs waiting or in progress. This module adds the two
bounds that do not depend on a job finishing cleanly:

- `trim_settled_jobs`: a safety sweep for entries that are done but still stored
  (written by an older version that only acked, or left by any path that acked
  without deleting). It trims by age and never past a job that is pending (read,
  not acked: a worker has it or it waits to be reclaimed) or not yet read.
- `dead_letter_bounds`: the MAXLEN and MINID that keep dead letters few and recent.
"""
from __future__ import annotations

import time

from redis.asyncio import Redis
from redis.exceptions import ResponseError


def stream_id_before(ms: int) -> str:
    """The smallest stream id at or after `ms` milliseconds: XTRIM MINID keeps ids >= it."""
    return f"{max(ms, 0)}-0"


def _id_tuple(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


def _s(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else value


def _next_id(stream_id: str) -> str:
    ms, seq = _id_tuple(stream_id)
    return f"{ms}-{seq + 1}"


async def trim_settled_jobs(redis: Redis, stream: str, group: str, min_age_seconds: float) -> int:
    """Delete jobs older than `min_age_seconds` that the group has read and acked; return how many.

    The boundary is the smallest of: the age cutoff, the oldest pending id, and the first id the
    group has not read yet. Both group reads happen in one MULTI so no job can move from "unread"
    to "pending" between them and slip under the boundary.
    """
    cutoff = stream_id_before(int((time.time() - min_age_seconds) * 1000))
    async with redis.pipeline(transaction=True) as pipe:
        pipe.xinfo_groups(stream)
        pipe.xpending(stream, group)
        try:
            groups, summary = await pipe.execute()
        except ResponseError:
            return 0  # no stream or no group yet: nothing was ever read, nothing to trim
    ours = next((g for g in groups if _s(g.get("name")) == group), None)
    if ours is None:
        return 0
    boundary = min(cutoff, _next_id(_s(ours.get("last-delivered-id")) or "0-0"), key=_id_tuple)
    if int(summary.get("pending") or 0) and summary.get("min"):
        boundary = min(boundary, _s(summary["min"]), key=_id_tuple)
    return int(await redis.xtrim(stream, minid=boundary, approximate=False))


def dead_letter_bounds(max_entries: int, max_age_seconds: int) -> tuple[int, str]:
    """MAXLEN and MINID for the dead-letter stream: the newest `max_entries`, none older than the age."""
    return max(max_entries, 1), stream_id_before(int((time.time() - max_age_seconds) * 1000))
