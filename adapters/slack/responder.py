"""Slack's primitives for the shared delivery engine (adapters/common/delivery.py).

Progress: an 👀 reaction on the question and the assistant status line
(`assistant.threads.setStatus`), refreshed before Slack clears it. Where the status is
refused (older workspaces, missing scope), or a streamed draft needs room, one placeholder
message in the thread shows it instead and later becomes the answer.

The reply: answers are streamed (chat.startStream/appendStream/stopStream through
slack_sdk's `chat_stream`) with feedback buttons at the bottom; long answers,
clarifications (with option buttons), notices and errors are posted as mrkdwn messages,
split by the engine. A failed stream falls back to posting; a stream that broke after
something showed becomes the placeholder the posted reply replaces. The reaction and the
status are always cleared, so nothing "thinking" lingers after a failure.

Failure policy: Slack errors never escape `progress()`. `finish()` raises
`SlackDeliveryError` only when nothing of the reply reached Slack; the worker then
retries the job, and the per-job record makes the retry skip what was already posted.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import Capabilities, Delivered
from adapters.common.delivery import Delivery, EngineResponder
from adapters.common.primitives import NativeResult, PushPlatform
from adapters.slack.blocks import (
    SECTION_LIMIT,
    SECTIONS_PER_MESSAGE,
    STREAM_LIMIT,
    SlackMessage,
    progress_message,
    reply_markdown,
    reply_mrkdwn,
    section,
    split_text,
    stream_pieces,
    trailing_blocks,
    ui_text,
)
from adapters.slack.render import defang_markdown, escape, plain, to_mrkdwn
from adapters.slack.pacing import ChannelPacer
from adapters.slack.state import EngagedThreads, JobDeliveries
from core.messages import InboundMessage, Progress, Reply, ReplyKind

log = logging.getLogger(__name__)

REACTION = "eyes"
STATUS_MAX_CHARS = 120
STATUS_KEEPALIVE = 60.0  # Slack clears a status after 2 minutes without a message
STREAM_PIECE = 1_000  # characters per appendStream call
TEXT_LIMIT = 40_000  # Slack truncates `text` beyond this; each part is split into sections far below it
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


def _messages(sections: list[str]) -> list[SlackMessage]:
    groups = [sections[i : i + SECTIONS_PER_MESSAGE] for i in range(0, len(sections), SECTIONS_PER_MESSAGE)]
    return [SlackMessage(text="\n\n".join(g), blocks=tuple(section(s) for s in g)) for g in groups]


class SlackPlatform(PushPlatform):
    name = "slack"
    refresh_every = STATUS_KEEPALIVE

    def __init__(
        self,
        capabilities: Capabilities,
        *,
        client: AsyncWebClient,
        message: InboundMessage,
        job_id: str,
        pacer: ChannelPacer,
        threads: EngagedThreads,
        streaming: StreamingSwitch,
    ) -> None:
        super().__init__(capabilities)
        self._client = client
        self._m = message
        self._job_id = job_id
        self._pacer = pacer
        self._threads = threads
        self._streaming = streaming
        self._reacted = False
        self._status_set = False  # an assistant status is showing and must be cleared
        self._status_refused = False
        self._draft_stream: Any = None  # slack_sdk's AsyncChatStream showing the answer's draft
        self._draft_sent = ""  # the draft text appended to it so far
        self._draft_ended = False  # one draft stream per job; later drafts edit its message

    async def _best_effort(self, what: str, call: Any) -> bool:
        try:
            await call
            return True
        except Exception as exc:  # noqa: BLE001 - progress and cleanup must never fail the job
            log.info("slack %s failed in %s: %s", what, self._m.channel, _error_code(exc))
            return False

    # --- rendering ------------------------------------------------------------------------------
    def document(self, reply: Reply) -> str:
        return reply_mrkdwn(reply)

    def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[SlackMessage]:
        return _messages(split_text(chunk, SECTION_LIMIT) or [escape(ui_text("thinking", reply.language))])

    async def buttons(self, reply: Reply) -> list[dict[str, Any]] | None:
        return trailing_blocks(reply) or None

    def attach(self, payload: SlackMessage, buttons: list[dict[str, Any]]) -> SlackMessage:
        return SlackMessage(text=payload.text, blocks=(*payload.blocks, *buttons))

    def status_view(self, update: Progress) -> str:
        return plain(update.text, STATUS_MAX_CHARS) or ui_text("thinking", update.language)

    def status_payload(self, view: str) -> SlackMessage:
        return progress_message(view, self._m.language)

    def draft_payload(self, markdown: str) -> SlackMessage:
        return _messages(split_text(to_mrkdwn(markdown), SECTION_LIMIT))[0]

    # --- effects --------------------------------------------------------------------------------
    async def begin(self) -> None:
        self._reacted = True
        await self._best_effort(
            "reaction", self._client.reactions_add(channel=self._m.channel, timestamp=self._m.message_id, name=REACTION)
        )

    async def show_status(self, view: str) -> bool:
        if self._status_refused:
            return False
        try:
            await self._client.assistant_threads_setStatus(
                channel_id=self._m.channel, thread_ts=self._m.thread, status=view, loading_messages=[view]
            )
        except DELIVERY_ERRORS as exc:
            log.info("slack status refused in %s (%s); using a placeholder message", self._m.channel, _error_code(exc))
            self._status_refused = True
            return False
        self._status_set = True
        return True

    async def show_draft(self, markdown: str) -> bool | str:
        """Stream the draft with chat streaming while it only grows; the engine edits it otherwise."""
        text = defang_markdown(markdown)
        if not self._streaming.enabled or self._draft_ended or len(text) > STREAM_LIMIT:
            return False
        if not text.startswith(self._draft_sent):
            return False  # the draft was rewritten: a stream can only append
        try:
            if self._draft_stream is None:
                await self._pacer.wait(self._m.channel)
                team = str(self._m.reply_context.get("recipient_team") or self._m.workspace)
                self._draft_stream = await self._client.chat_stream(
                    channel=self._m.channel, thread_ts=self._m.thread, recipient_team_id=team or None,
                    recipient_user_id=self._m.sender or None, buffer_size=1,
                )
            delta = text[len(self._draft_sent):]
            if delta:
                for piece in stream_pieces(delta, STREAM_PIECE) if len(delta) > STREAM_PIECE else [delta]:
                    await self._draft_stream.append(markdown_text=piece)
                self._draft_sent = text
        except DELIVERY_ERRORS as exc:
            code = _error_code(exc)
            if code in STREAMING_UNSUPPORTED:
                self._streaming.disable(code)
            log.info("slack draft stream failed in %s (%s)", self._m.channel, code)
            self._draft_ended = True
            ts = self._draft_stream.ts if self._draft_stream is not None else None
            return str(ts) if ts else False  # a visible stream message still becomes the placeholder
        return str(self._draft_stream.ts) if self._draft_stream.ts else False

    async def end_draft(self) -> None:
        stream, self._draft_stream, self._draft_ended = self._draft_stream, None, True
        if stream is not None and stream.ts:
            await self._best_effort("draft stream stop", stream.stop())

    async def post(self, payload: SlackMessage, *, index: int, first: bool) -> tuple[str, ...]:
        return (await self._post(payload.kwargs()),)

    async def _post(self, payload: dict[str, Any]) -> str:
        await self._pacer.wait(self._m.channel)
        response = await self._client.chat_postMessage(
            channel=self._m.channel, thread_ts=self._m.thread, unfurl_links=False, unfurl_media=False, **payload
        )
        return str(response["ts"])

    async def edit(self, message_id: str, payload: SlackMessage) -> bool:
        await self._client.chat_update(channel=self._m.channel, ts=message_id, **payload.kwargs())
        return True

    async def discard(self, message_id: str) -> None:
        await self._client.chat_delete(channel=self._m.channel, ts=message_id)

    async def native_reply(self, reply: Reply) -> NativeResult | None:
        if not self._streaming.enabled or reply.kind is not ReplyKind.ANSWER or len(reply_markdown(reply)) > STREAM_LIMIT:
            return None
        markdown = reply_markdown(reply)
        await self._pacer.wait(self._m.channel)
        team = str(self._m.reply_context.get("recipient_team") or self._m.workspace)
        stream = await self._client.chat_stream(
            channel=self._m.channel, thread_ts=self._m.thread, recipient_team_id=team or None,
            recipient_user_id=self._m.sender or None, buffer_size=STREAM_PIECE,
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
                return NativeResult(placeholder=str(stream.ts))
            log.info("slack stream refused in %s (%s); posting instead", self._m.channel, code)
            return None
        return NativeResult(delivered=str(stream.ts))

    async def clear(self) -> None:
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

    def rest_lost(self, reply: Reply) -> SlackMessage:
        note = ui_text("rest_lost", reply.language)
        return SlackMessage(text=note, blocks=(section(note),))

    def failed(self, exc: BaseException) -> BaseException:
        if isinstance(exc, DELIVERY_ERRORS):
            log.warning("slack refused the reply of job %s in %s: %s", self._job_id, self._m.channel, _error_code(exc))
            return SlackDeliveryError(f"no part of the reply reached Slack channel {self._m.channel} (job {self._job_id})")
        return exc

    async def delivered(self, message_ids: tuple[str, ...]) -> dict[str, Any]:
        if message_ids and not self._m.is_direct:
            await self._best_effort("thread mark", self._threads.mark(self._m.workspace, self._m.channel, self._m.thread))
        return {"channel": self._m.channel, "thread_ts": self._m.thread}


class SlackResponder(EngineResponder):
    """The adapter's responder: Slack's primitives driven by the shared engine."""

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
        capabilities: Capabilities | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        caps = capabilities or Capabilities(
            edit_messages=True, buttons=True, streaming=streaming.enabled, max_length=TEXT_LIMIT, min_edit_interval=edit_interval
        )
        platform = SlackPlatform(
            caps, client=client, message=message, job_id=job_id, pacer=pacer, threads=threads, streaming=streaming
        )
        super().__init__(Delivery(platform, deliveries, job_id, clock=clock))

    async def finish(self, reply: Reply) -> Delivered:
        delivered = await super().finish(reply)
        if not delivered.message_ids:
            raise SlackDeliveryError(f"no part of the reply reached Slack (job {delivered.extra.get('channel', '')})")
        return delivered
