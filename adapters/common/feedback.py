"""The index of answers that received a 👍/👎, shared by every platform that stores votes.

Each platform keeps its votes in its own shape under `Keys.feedback(trace_id)`; this index only
lists which trace ids have votes and when the last one came, so the admin report (bot/report)
reads the few voted answers instead of probing every answer's feedback key.
"""
from __future__ import annotations

import time
from typing import Any

from core.keys import Keys

# The longest a platform keeps a vote (Slack: 180 days); older index entries point at nothing.
FEEDBACK_INDEX_DAYS = 180
FEEDBACK_INDEX_MAX_ENTRIES = 200_000  # bounded whatever the traffic: the oldest go first


def note_feedback(pipe: Any, keys: Keys, trace_id: str, *, now: float | None = None) -> None:
    """Queue on `pipe` (a Redis pipeline) the index update for a vote on `trace_id`."""
    at = time.time() if now is None else now
    pipe.zadd(keys.feedback_index, {trace_id: at})
    pipe.zremrangebyscore(keys.feedback_index, "-inf", at - FEEDBACK_INDEX_DAYS * 86400)
    pipe.zremrangebyrank(keys.feedback_index, 0, -(FEEDBACK_INDEX_MAX_ENTRIES + 1))
