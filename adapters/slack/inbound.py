"""What happens to a verified Slack payload: parse, then the shared ingress path. Nothing slower.

Runs inside Slack's 3-second window, so one Redis round trip happens here (the engaged-thread
check and mark ride in the dedupe + enqueue script); the answer is the worker's job. Redis errors
propagate: the HTTP layer answers 503 (Socket Mode leaves the envelope un-acked) and Slack
delivers again.
"""
from __future__ import annotations

import logging
from typing import Any

from redis.asyncio import Redis

from adapters.common.ingress import Candidate as Accepted, IngressPath
from adapters.slack.parse import PLATFORM, Candidate, Feedback, parse_choice, parse_event, parse_feedback
from adapters.slack.state import EngagedThreads, record_feedback
from core.ingress import NO_MARKERS, Ingress, Markers, SubmitOutcome
from core.keys import Keys

log = logging.getLogger(__name__)


class SlackInbox:
    def __init__(
        self, ingress: Ingress, threads: EngagedThreads, redis: Redis, keys: Keys, *, require_mention_in_threads: bool
    ) -> None:
        self._path = IngressPath(ingress, PLATFORM)
        self._threads = threads
        self._redis = redis
        self._keys = keys
        self._require_mention = require_mention_in_threads

    def _markers(self, candidate: Candidate) -> Markers:
        """The engaged-thread marker, checked (follow-ups) and set (the bot now talks in this thread)
        in the same round trip as the dedupe + enqueue."""
        m = candidate.message
        if m.is_direct:
            return NO_MARKERS
        thread = self._threads.key(m.workspace, m.channel, m.thread)
        return Markers(required=thread if candidate.needs_engaged_thread else "", set=(thread,), ttl=self._threads.ttl)

    async def _submit(self, candidate: Candidate, retry: str = "") -> SubmitOutcome:
        parsed = Accepted(candidate.message, candidate.dedupe_ids, self._markers(candidate))
        result = await self._path.take(parsed, retry=retry)
        assert result is not None
        return result.outcome

    async def on_event(self, body: dict[str, Any], bot_user_id: str, bot_id: str = "", retry: str = "") -> SubmitOutcome | None:
        candidate = parse_event(body, bot_user_id, bot_id)
        if candidate is None:
            return None
        if candidate.needs_engaged_thread and self._require_mention:
            return None  # mentions in threads arrive as app_mention
        outcome = await self._submit(candidate, retry)
        return None if outcome is SubmitOutcome.UNMET else outcome

    async def on_choice(self, payload: dict[str, Any]) -> Candidate | None:
        candidate = parse_choice(payload)
        if candidate is None:
            return None
        outcome = await self._submit(candidate)
        return candidate if outcome is SubmitOutcome.ENQUEUED else None

    async def on_feedback(self, payload: dict[str, Any]) -> Feedback | None:
        feedback = parse_feedback(payload)
        if feedback is None:
            return None
        if not self._path.allows_actor(feedback.workspace, feedback.channel, feedback.user, feedback.user_team):
            log.info("slack feedback from outside the allowlists ignored")  # acked, not stored, no thanks
            return None
        await record_feedback(
            self._redis, self._keys, trace_id=feedback.trace_id, workspace=feedback.workspace, user=feedback.user,
            value=feedback.value, channel=feedback.channel, message_ts=feedback.message_ts,
        )
        log.info("slack feedback %s on trace %s", feedback.value, feedback.trace_id)
        return feedback
