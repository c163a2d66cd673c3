"""What happens to a verified Slack payload: decide, deduplicate, enqueue. Nothing slower.

Runs inside Slack's 3-second window, so only Redis calls happen here; the answer is the
worker's job. Redis errors propagate: the HTTP layer answers 503 (Socket Mode leaves the
envelope un-acked) and Slack delivers again.
"""
from __future__ import annotations

import logging
from typing import Any

from redis.asyncio import Redis

from adapters.slack.parse import Candidate, Feedback, parse_choice, parse_event, parse_feedback
from adapters.slack.state import EngagedThreads, record_feedback
from core.ingress import Ingress, SubmitOutcome
from core.keys import Keys

log = logging.getLogger(__name__)


class SlackInbox:
    def __init__(
        self, ingress: Ingress, threads: EngagedThreads, redis: Redis, keys: Keys, *, require_mention_in_threads: bool
    ) -> None:
        self._ingress = ingress
        self._threads = threads
        self._redis = redis
        self._keys = keys
        self._require_mention = require_mention_in_threads

    async def _submit(self, candidate: Candidate, retry: str = "") -> SubmitOutcome:
        message = candidate.message
        result = await self._ingress.submit(message, *candidate.dedupe_ids)
        if result.outcome is not SubmitOutcome.NOT_ALLOWED and not message.is_direct:
            # the bot now talks in this thread: follow-ups there need no new mention
            await self._threads.mark(message.workspace, message.channel, message.thread)
        # ids only: message text never goes to the log
        log.info(
            "slack %s %s in %s -> %s%s",
            "pick" if message.choice else "message", message.event_id, message.channel, result.outcome.value,
            f" (retry {retry})" if retry else "",
        )
        return result.outcome

    async def on_event(self, body: dict[str, Any], bot_user_id: str, bot_id: str = "", retry: str = "") -> SubmitOutcome | None:
        candidate = parse_event(body, bot_user_id, bot_id)
        if candidate is None:
            return None
        message = candidate.message
        if candidate.needs_engaged_thread:
            if self._require_mention:
                return None  # mentions in threads arrive as app_mention
            if not await self._threads.is_engaged(message.workspace, message.channel, message.thread):
                return None
        return await self._submit(candidate, retry)

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
        if not self._ingress.access.allows_actor("slack", feedback.workspace, feedback.channel, feedback.user):
            log.info("slack feedback from outside the allowlists ignored")  # acked, not stored, no thanks
            return None
        await record_feedback(
            self._redis, self._keys, trace_id=feedback.trace_id, workspace=feedback.workspace, user=feedback.user,
            value=feedback.value, channel=feedback.channel, message_ts=feedback.message_ts,
        )
        log.info("slack feedback %s on trace %s", feedback.value, feedback.trace_id)
        return feedback
