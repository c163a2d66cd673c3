"""Ingress: deduplicate by the platform's event id and enqueue a job, in one atomic step.

Platforms deliver at least once (Slack retries after 3 s, Feishu for hours), so
the dedupe marker and the stream entry must be written together: a crash
between them would either lose the question or answer it twice.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from typing import Callable

from redis.asyncio import Redis

from core.access import AccessPolicy
from core.keys import Keys
from core.messages import InboundMessage

# KEYS: one or more dedupe keys, then the stream, then the conversation's order list.
# ARGV: ttl, payload. Any dedupe key already present means a duplicate; otherwise set them
# all, XADD the job and append its id to the conversation's order list (answers go in order).
_DEDUPE_AND_ENQUEUE = """
local n = #KEYS - 2
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then return false end
end
for i = 1, n do
  redis.call('SET', KEYS[i], '1', 'EX', tonumber(ARGV[1]))
end
local id = redis.call('XADD', KEYS[n + 1], '*', 'message', ARGV[2])
redis.call('RPUSH', KEYS[n + 2], id)
redis.call('EXPIRE', KEYS[n + 2], tonumber(ARGV[1]))
return id
"""


class SubmitOutcome(str, Enum):
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    NOT_ALLOWED = "not_allowed"  # outside the allowlists: acknowledged, never queued


@dataclass(frozen=True)
class SubmitResult:
    outcome: SubmitOutcome
    job_id: str = ""


class Ingress:
    def __init__(
        self, redis: Redis, keys: Keys, dedupe_ttl_seconds: int, access: AccessPolicy = AccessPolicy(),
        on_submit: Callable[[str, SubmitOutcome], None] | None = None,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = dedupe_ttl_seconds
        self._access = access
        self._on_submit = on_submit
        self._script = redis.register_script(_DEDUPE_AND_ENQUEUE)

    @property
    def access(self) -> AccessPolicy:
        """The allowlists, for events that are not queued (feedback clicks obey them too)."""
        return self._access

    async def submit(self, message: InboundMessage, *extra_dedupe_ids: str) -> SubmitResult:
        """Enqueue `message` unless its event id (or any extra id, e.g. Feishu's message_id) was seen.

        Raises redis errors unchanged: webhooks turn them into 503 so the platform retries.
        """
        if not self._access.allows(message):
            return self._report(message, SubmitResult(SubmitOutcome.NOT_ALLOWED))
        ids = [message.event_id, *[i for i in extra_dedupe_ids if i]]
        dedupe_keys = [self._keys.dedupe(message.platform, i) for i in ids]
        order = self._keys.order(message.conversation_key)
        job_id = await self._script(keys=[*dedupe_keys, self._keys.jobs, order], args=[self._ttl, message.to_json()])
        if not job_id:
            return self._report(message, SubmitResult(SubmitOutcome.DUPLICATE))
        job = job_id.decode() if isinstance(job_id, bytes) else job_id
        return self._report(message, SubmitResult(SubmitOutcome.ENQUEUED, job))

    def _report(self, message: InboundMessage, result: SubmitResult) -> SubmitResult:
        if self._on_submit is not None:
            self._on_submit(message.platform, result.outcome)
        return result
