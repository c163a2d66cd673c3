"""Answering one job in its Slack thread: progress while the core works, then the reply.

Progress: an 👀 reaction on the question and the assistant status line
(`assistant.threads.setStatus`), refreshed as the core reports what it does. Where the
status is refused (older workspaces, missing scope), one placeholder message in the thread
is updated in place instead.

The reply: answers are streamed (chat.startStream/appendStream/stopStream through
slack_sdk's `chat_stream`) with feedback buttons at the bottom; long answers,
clarifications (with option buttons), notices and errors are posted as mrkdwn messages,
split inside Slack's limits. A failed stream falls back to posting. The reaction and the
status are always cleared, so nothing "thinking" lingers after a failure.

Failure policy: Slack errors never escape `progress()`. `finish()` raises
`SlackDeliveryError` only when nothing of the reply reached Slack; the worker then
retries the job, and the per-job record makes the retry skip what was already posted.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import Delivered
from adapters.slack.blocks import (
    STREAM_LIMIT,
    progress_message,
    render_messages,
    reply_markdown,
    section,
    stream_pieces,
    trailing_blocks,
    ui_text,
)
from adapters.slack.mrkdwn import plain
from adapters.slack.pacing import ChannelPacer
from adapters.slack.state import EngagedThreads, JobDeliveries, JobRecord
from core.language import detect_language
from core.messages import InboundMessage, Progress, Reply, ReplyKind

log = logging.getLogger(__name__)

REACTION = "eyes"
STATUS_MAX_CHARS = 120
STATUS_MIN_INTERVAL = 1.0  # seconds between two status updates
STATUS_KEEPALIVE = 60.0  # Slack clears a status after 2 minutes without a message
STREAM_PIECE = 1_000  # characters per appendStream call
# errors meaning "this workspace/token cannot stream": stop trying for the life of the process
STREAMING_UNSUPPORTED = {"unknown_method", "not_allowed_token_type", "missing_scope", "feature_not_enabled",
                         "method_not_supported_for_channel_type", "not_implemented"}
DELIVERY_ERRORS = (SlackClientError, aiohttp.ClientError, OSError, asyncio.TimeoutError)


class SlackDeliveryError(RuntimeError):
    """Nothing of a reply could be posted to Slack (the worker retries, then dead-letters)."""


def _error_code(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError):
        try:
            return str(exc.response.get("error") or exc.response.status_code)
        except Exception:  # noqa: BLE001 - a malformed error response still needs a name
            return "slack_api_error"
    return type(exc).__name__


class StreamingSwitch:
    """Shared by an adapter's responders: off for good once Slack says streaming is unsupported."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def disable(self, reason: str) -> None:
        if self.enabled:
            log.warning("slack streaming disabled (%s); answers are posted as messages", reason)
        self.enabled = False


class SlackResponder:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        message: InboundMessage,
        job_id: str,
        pacer: ChannelPacer,
        deliveries: JobDeliveries,
        threads: EngagedThreads,
        streaming: StreamingSwitch,
        edit_interval: float = 1.0,
        status_interval: float = STATUS_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._m = message
        self._job_id = job_id
        self._pacer = pacer
        self._deliveries = deliveries
        self._threads = threads
        self._streaming = streaming
        self._edit_interval = edit_interval
        self._clock = clock
        self._record: JobRecord | None = None
        self._status_interval = status_interval
        self._reacted = False
        self._status_set = False  # an assistant status is showing and must be cleared
        self._status_refused = False
        self._pending = ""  # the newest progress line
        self._shown = ""
        self._shown_at = float("-inf")
        self._next_show = float("-inf")
        self._flush_task: asyncio.Future[None] | None = None

    # --- helpers ----------------------------------------------------------------------------

    @property
    def _recipient_team(self) -> str:
        return str(self._m.reply_context.get("recipient_team") or self._m.workspace)

    async def _load_record(self) -> JobRecord:
        if self._record is None:
            try:
                self._record = await self._deliveries.load(self._job_id)
            except Exception:  # noqa: BLE001 - without the record we may repost, but we still answer
                log.warning("slack job record unavailable for %s", self._job_id)
                self._record = JobRecord()
        return self._record

    async def _remember(self, name: str, ts: str) -> None:
        record = await self._load_record()
        if name == "placeholder":
            record.placeholder = ts
        elif name == "streamed":
            record.streamed = ts
        else:
            record.parts[int(name.split(":", 1)[1])] = ts
        try:
            await self._deliveries.save(self._job_id, name, ts)
        except Exception:  # noqa: BLE001 - best effort: the message itself is out
            log.warning("could not record slack delivery %s of job %s", name, self._job_id)

    async def _best_effort(self, what: str, call: Any) -> bool:
        try:
            await call
            return True
        except Exception as exc:  # noqa: BLE001 - progress and cleanup must never fail the job
            log.info("slack %s failed in %s: %s", what, self._m.channel, _error_code(exc))
            return False

    async def _post(self, payload: dict[str, Any]) -> str:
        await self._pacer.wait(self._m.channel)
        response = await self._client.chat_postMessage(
            channel=self._m.channel,
            thread_ts=self._m.thread,
            unfurl_links=False,
            unfurl_media=False,
            **payload,
        )
        return str(response["ts"])

    # --- progress ---------------------------------------------------------------------------

    async def progress(self, update: Progress) -> None:
        try:
            await self._progress(update)
        except Exception:  # noqa: BLE001 - progress is decoration; the answer matters
            log.warning("slack progress failed for job %s", self._job_id, exc_info=True)

    async def _progress(self, update: Progress) -> None:
        if not self._reacted:
            self._reacted = True
            await self._best_effort(
                "reaction", self._client.reactions_add(channel=self._m.channel, timestamp=self._m.message_id, name=REACTION)
            )
        self._pending = plain(update.text, STATUS_MAX_CHARS) or ui_text("thinking", detect_language(update.text))
        if self._flush_task is not None and not self._flush_task.done():
            return  # a delayed flush is coming and will show the newest line
        wait = self._next_show - self._clock()
        if wait <= 0:
            await self._flush()
        else:
            # Coalesce bursts: the latest line is shown once the interval has passed
            self._flush_task = asyncio.ensure_future(self._flush_later(wait))

    async def _flush_later(self, wait: float) -> None:
        await asyncio.sleep(wait)
        try:
            await self._flush()
        except Exception:  # noqa: BLE001 - progress is decoration
            log.warning("slack progress failed for job %s", self._job_id, exc_info=True)

    async def _flush(self) -> None:
        status = self._pending
        now = self._clock()
        if not status or (status == self._shown and now - self._shown_at < STATUS_KEEPALIVE):
            return
        record = await self._load_record()
        if self._status_refused or record.placeholder:
            shown = await self._show_placeholder(status, record)
            interval = self._edit_interval
        else:
            try:
                await self._client.assistant_threads_setStatus(
                    channel_id=self._m.channel, thread_ts=self._m.thread, status=status, loading_messages=[status]
                )
                self._status_set = shown = True
            except DELIVERY_ERRORS as exc:
                log.info("slack status refused in %s (%s); using a placeholder message", self._m.channel, _error_code(exc))
                self._status_refused = True
                shown = await self._show_placeholder(status, record)
            interval = self._status_interval
        if shown:
            self._shown, self._shown_at = status, now
            self._next_show = now + interval

    async def _show_placeholder(self, status: str, record: JobRecord) -> bool:
        payload = progress_message(status, detect_language(status)).kwargs()
        if record.placeholder:
            return await self._best_effort(
                "placeholder update", self._client.chat_update(channel=self._m.channel, ts=record.placeholder, **payload)
            )
        try:
            await self._remember("placeholder", await self._post(payload))
            return True
        except DELIVERY_ERRORS as exc:
            log.info("slack placeholder failed in %s: %s", self._m.channel, _error_code(exc))
            return False

    # --- the reply --------------------------------------------------------------------------

    async def finish(self, reply: Reply) -> Delivered:
        if self._flush_task is not None and not self._flush_task.done():
            self._flush_task.cancel()  # no progress line may land after the reply
            with contextlib.suppress(asyncio.CancelledError):
                await self._flush_task
        record = await self._load_record()
        delivered: list[str] = []
        try:
            if record.streamed:
                delivered = [record.streamed]  # an earlier run of this job streamed it in full
            elif self._may_stream(reply, record):
                streamed = await self._stream(reply)
                delivered = [streamed] if streamed else []
            if not delivered:
                delivered = await self._post_messages(reply, await self._load_record())
        finally:
            await self._clear_progress()
        if not delivered:
            raise SlackDeliveryError(f"no part of the reply reached Slack channel {self._m.channel} (job {self._job_id})")
        if not self._m.is_direct:
            await self._best_effort("thread mark", self._threads.mark(self._m.workspace, self._m.channel, self._m.thread))
        return Delivered(tuple(delivered), {"channel": self._m.channel, "thread_ts": self._m.thread})

    def _may_stream(self, reply: Reply, record: JobRecord) -> bool:
        return (
            self._streaming.enabled
            and reply.kind is ReplyKind.ANSWER
            and not record.placeholder
            and not record.parts
            and len(reply_markdown(reply)) <= STREAM_LIMIT
        )

    async def _stream(self, reply: Reply) -> str | None:
        """Stream the answer; None when streaming failed before anything was shown."""
        markdown = reply_markdown(reply)
        await self._pacer.wait(self._m.channel)
        stream = await self._client.chat_stream(
            channel=self._m.channel,
            thread_ts=self._m.thread,
            recipient_team_id=self._recipient_team or None,
            recipient_user_id=self._m.sender or None,
            buffer_size=STREAM_PIECE,
        )
        try:
            for piece in stream_pieces(markdown, STREAM_PIECE):
                await stream.append(markdown_text=piece)
            await stream.stop(blocks=trailing_blocks(reply) or None)
        except DELIVERY_ERRORS as exc:
            code = _error_code(exc)
            if code in STREAMING_UNSUPPORTED:
                self._streaming.disable(code)
            if stream.ts:
                # Something is visible: the streamed message becomes the placeholder that the
                # posted reply replaces in place (the fallback chat_stream's docs suggest).
                log.info("slack stream broke in %s (%s); finishing with chat.update", self._m.channel, code)
                await self._remember("placeholder", stream.ts)
            else:
                log.info("slack stream refused in %s (%s); posting instead", self._m.channel, code)
            return None
        ts = str(stream.ts)
        await self._remember("streamed", ts)
        return ts

    async def _post_messages(self, reply: Reply, record: JobRecord) -> list[str]:
        messages = render_messages(reply)
        delivered: list[str] = []
        for i, message in enumerate(messages):
            if i in record.parts:
                delivered.append(record.parts[i])  # posted by an earlier run of this job
                continue
            try:
                ts = await self._deliver_part(i, message.kwargs(), record)
            except DELIVERY_ERRORS as exc:
                log.warning(
                    "slack refused part %d/%d of job %s in %s: %s",
                    i + 1, len(messages), self._job_id, self._m.channel, _error_code(exc),
                )
                if delivered:
                    note = ui_text("rest_lost", reply.language)
                    await self._best_effort("truncation note", self._post({"text": note, "blocks": [section(note)]}))
                break
            await self._remember(f"part:{i}", ts)
            delivered.append(ts)
        return delivered

    async def _deliver_part(self, index: int, payload: dict[str, Any], record: JobRecord) -> str:
        if index == 0 and record.placeholder:
            try:
                await self._client.chat_update(channel=self._m.channel, ts=record.placeholder, **payload)
                return record.placeholder
            except DELIVERY_ERRORS as exc:
                # e.g. the placeholder was deleted: post the answer as a new message instead
                log.info("slack placeholder update failed in %s (%s)", self._m.channel, _error_code(exc))
        return await self._post(payload)

    async def _clear_progress(self) -> None:
        if self._status_set:
            await self._best_effort(
                "status clear",
                self._client.assistant_threads_setStatus(channel_id=self._m.channel, thread_ts=self._m.thread, status=""),
            )
        if self._reacted:
            await self._best_effort(
                "reaction removal",
                self._client.reactions_remove(channel=self._m.channel, timestamp=self._m.message_id, name=REACTION),
            )
