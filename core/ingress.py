"""Ingress: deduplicate by the platform's event id and enqueue a job, in one atomic step.

Platforms deliver at least once (Slack retries after 3 s, Feishu for hours), so
the dedupe marker and the stream entry must be written together: a crash
between them would either lose the question or answer it twice. Everything the
ack needs from Redis happens in that one script, so an event costs one round
trip: an optional precondition (a marker that must exist, e.g. "the bot talks in
this thread"), the dedupe markers, the job, and markers to set (e.g. "the bot
now talks in this thread").
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from core.access import AccessPolicy
from core.keys import Keys
from core.messages import InboundMessage

# KEYS: n dedupe keys, the stream, the conversation's order list, then r required markers
# (r is 0 or 1), then markers to set. ARGV: ttl, payload, n, r, marker ttl.
# A missing required marker: 0 (nothing written). Any dedupe key already present: the markers are
# refreshed and nil is returned (a duplicate). Otherwise: set the dedupe keys, XADD the job, append
# its id to the conversation's order list (answers go in order), set the markers, return the id.
_DEDUPE_AND_ENQUEUE = """
local n = tonumber(ARGV[3])
local r = tonumber(ARGV[4])
for i = n + 3, n + 2 + r do
  if redis.call('EXISTS', KEYS[i]) == 0 then return 0 end
end
local marker_ttl = tonumber(ARGV[5])
local duplicate = false
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 1 then duplicate = true break end
end
for i = n + 3 + r, #KEYS do
  redis.call('SET', KEYS[i], '1', 'EX', marker_ttl)
end
if duplicate then return false end
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
    UNMET = "unmet"  # the required marker is absent (e.g. a thread the bot is not part of): ignored


@dataclass(frozen=True)
class SubmitResult:
    outcome: SubmitOutcome
    job_id: str = ""


@dataclass(frozen=True)
class Markers:
    """Markers checked and set in the same round trip as the dedupe + enqueue.

    `required`: enqueue only if this marker exists. `set`: set these markers (for `ttl` seconds)
    whether the message is new or a duplicate, never when it is refused or the requirement fails.
    Build the keys with `Keys.marker`, so they share the script's hash tag."""

    required: str = ""
    set: tuple[str, ...] = ()
    ttl: int = 0


NO_MARKERS = Markers()


@dataclass(frozen=True, eq=False)
class Ingress:
    """The front door every platform's events pass: allowlists, then dedupe + enqueue in one script."""

    redis: Redis
    keys: Keys
    dedupe_ttl_seconds: int
    access: AccessPolicy = AccessPolicy()  # the allowlists; feedback clicks, never queued, obey them too
    on_submit: Callable[[str, SubmitOutcome], None] | None = None  # told each outcome (metrics)

    @cached_property
    def _script(self) -> AsyncScript:
        return self.redis.register_script(_DEDUPE_AND_ENQUEUE)  # local: hashes the script, no round trip

    async def submit(
        self, message: InboundMessage, *extra_dedupe_ids: str, markers: Markers = NO_MARKERS,
    ) -> SubmitResult:
        """Enqueue `message` unless its event id (or any extra id, e.g. Feishu's message_id) was seen.

        One Redis round trip. Raises redis errors unchanged: webhooks answer 503 so the platform retries.
        """
        if not self.access.allows(message):
            return self._report(message, SubmitResult(SubmitOutcome.NOT_ALLOWED))
        platform = message.platform
        dedupe_keys = [self.keys.dedupe(platform, message.event_id)]
        dedupe_keys += [self.keys.dedupe(platform, i) for i in extra_dedupe_ids if i]
        required = [markers.required] if markers.required else []
        keys = [*dedupe_keys, self.keys.jobs, self.keys.order(message.conversation_key), *required, *markers.set]
        ttl = self.dedupe_ttl_seconds
        args = [ttl, message.to_json(), len(dedupe_keys), len(required), markers.ttl or ttl]
        job_id = await self._script(keys=keys, args=args)
        if job_id == 0:
            return self._report(message, SubmitResult(SubmitOutcome.UNMET))
        if not job_id:
            return self._report(message, SubmitResult(SubmitOutcome.DUPLICATE))
        job = job_id.decode() if isinstance(job_id, bytes) else str(job_id)
        return self._report(message, SubmitResult(SubmitOutcome.ENQUEUED, job))

    def _report(self, message: InboundMessage, result: SubmitResult) -> SubmitResult:
        if self.on_submit is not None:
            self.on_submit(message.platform, result.outcome)
        return result
