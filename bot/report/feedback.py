"""Reading the 👍/👎 votes the platforms store under `Keys.feedback(trace_id)`.

Two shapes exist, written by the adapters:
- Slack (adapters/slack/state.py): field `slack:<team>:<user>` -> JSON with `value`
  "helpful" or "not_helpful";
- WeCom (adapters/wecom/store.py): field `user:<id>` -> JSON with `type` 1 (useful),
  2 (not useful) or 3 (withdrawn), beside bookkeeping fields (answer, platform, feedback_id).
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from redis.asyncio import Redis

from core.keys import Keys

BATCH = 1_000  # feedback hashes per call

# KEYS: feedback hashes. Their fields and values as ONE JSON text (an array of flat arrays; an
# empty hash encodes as {}): decoding thousands of small protocol replies in Python cost more than
# the rest of a report. Read-only.
_READ_HASHES = """
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end
return cjson.encode(out)
"""

_SLACK_VALUES = {"helpful": "up", "not_helpful": "down"}
_WECOM_TYPES = {1: "up", 2: "down"}


def vote_of(field: str, value: str) -> str | None:
    """"up", "down", or None for a bookkeeping field, a withdrawn vote or an unknown shape."""
    if not (field.startswith("slack:") or field.startswith("user:")):
        return None
    try:
        entry = json.loads(value)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    if field.startswith("slack:"):
        return _SLACK_VALUES.get(str(entry.get("value")))
    kind = entry.get("type")
    return _WECOM_TYPES.get(kind) if isinstance(kind, int) else None


async def voted_traces(redis: Redis, keys: Keys, since: float, limit: int) -> set[str]:
    """Trace ids with a vote since `since`, newest first, at most `limit`."""
    members = await redis.zrevrangebyscore(keys.feedback_index, "+inf", since, start=0, num=limit)
    return {m.decode() if isinstance(m, bytes) else m for m in members}


async def votes_of(redis: Redis, keys: Keys, trace_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """(up, down) per trace id; traces whose votes expired are left out."""
    out: dict[str, tuple[int, int]] = {}
    ids = list(trace_ids)
    read = redis.register_script(_READ_HASHES)
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        hashes = json.loads(_s(await read(keys=[keys.feedback(trace_id) for trace_id in batch])))
        for trace_id, flat in zip(batch, hashes if isinstance(hashes, list) else []):
            up = down = 0
            pairs = zip(flat[0::2], flat[1::2]) if isinstance(flat, list) else ()
            for field, value in pairs:
                vote = vote_of(str(field), str(value))
                up += vote == "up"
                down += vote == "down"
            if up or down:
                out[trace_id] = (up, down)
    return out


def _s(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
