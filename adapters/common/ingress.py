"""The one ingress path: what every platform's receiving code ends in, whatever the transport.

A platform supplies two things: verification (its webhook route or long connection) and a pure
parse, payload → `Candidate` (a message to enqueue, with its dedupe ids and thread markers) or
`Skip` (a reason to acknowledge and do nothing). `IngressPath.take` does the rest in one place:
allowlists, dedupe + enqueue in one Redis round trip (core/ingress.py), the log line and the
metric. `unavailable` is the one answer to a Redis outage: 503 with Retry-After, so the platform
delivers again and nothing acknowledged is lost.

The dedupe ids a platform uses beside its event id ("one message, two event ids", "one pick per
clarification") are built in its own folder (adapters/<platform>/dedupe.py), named by its entry in
adapters/registry.py; this path only checks them.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Union

from redis.exceptions import RedisError
from starlette.responses import PlainTextResponse, Response

from core.ingress import NO_MARKERS, Ingress, Markers, SubmitOutcome, SubmitResult
from core.messages import InboundMessage

log = logging.getLogger(__name__)

# What a Redis outage looks like from the ack path: redis-py's errors, or the socket's own.
REDIS_DOWN: tuple[type[BaseException], ...] = (RedisError, OSError)
RETRY_AFTER_SECONDS = 5


@dataclass(frozen=True)
class Candidate:
    """A message for the bot. `dedupe_ids` are checked beside `message.event_id`."""

    message: InboundMessage
    dedupe_ids: tuple[str, ...] = ()
    markers: Markers = NO_MARKERS


@dataclass(frozen=True)
class Skip:
    """Not for the bot (its own message, no mention, an edit…): acknowledged, never queued.
    `reason` is for the debug log only."""

    reason: str


Parsed = Union[Candidate, Skip]


class IngressPath:
    """Allowlists, dedupe, enqueue, log, metrics: the same for every platform and transport."""

    def __init__(self, ingress: Ingress, platform: str) -> None:
        self._ingress = ingress
        self._platform = platform

    @property
    def ingress(self) -> Ingress:
        return self._ingress

    def allows_actor(self, workspace: str, channel: str, user: str, user_org: str = "") -> bool:
        """Whether the allowlists let this actor in, for events that are not queued (feedback clicks):
        the same rule, on this platform, as for the messages `take` submits."""
        return self._ingress.access.allows_actor(self._platform, workspace, channel, user, user_org)

    async def take(self, parsed: Parsed, *, retry: str = "") -> SubmitResult | None:
        """None for a `Skip`; otherwise what happened. Raises `REDIS_DOWN` errors unchanged: the
        caller answers with `unavailable()` (HTTP) or leaves the delivery un-acked (sockets)."""
        if isinstance(parsed, Skip):
            log.debug("%s event skipped: %s", self._platform, parsed.reason)
            return None
        message = parsed.message
        result = await self._ingress.submit(message, *parsed.dedupe_ids, markers=parsed.markers)
        if result.outcome is not SubmitOutcome.UNMET:
            # ids only: message text never goes to the log
            log.info(
                "%s %s %s in %s -> %s%s", self._platform, "pick" if message.choice else "message",
                message.event_id, message.channel, result.outcome.value, f" (retry {retry})" if retry else "",
            )
        return result


def unavailable(platform: str, exc: BaseException) -> Response:
    """The answer to a Redis outage on any webhook: 503 with Retry-After, so the platform retries."""
    log.warning("%s request not taken: redis unavailable (%s); the platform will retry", platform, type(exc).__name__)
    return PlainTextResponse(
        "temporarily unavailable", status_code=503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
    )
