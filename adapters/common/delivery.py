"""One delivery engine for the push platforms (Slack, Feishu, Telegram).

A platform supplies small primitives (`PushPlatform`, adapters/common/primitives.py): render a
chunk, post, edit, show a native status or draft, clear it. This engine owns what used to be written four times:

- progress throttled on `Capabilities.min_edit_interval`: the first line shows at once, a
  burst is coalesced into one delayed update of the newest line, a native status (Slack's
  assistant status, Telegram's DM draft) is refreshed before the platform expires it;
- streamed drafts (`Progress(stage=DRAFT_STAGE)`, the whole partial answer so far) shown
  natively or in the placeholder; an empty draft text clears it; the final reply always
  replaces it in place, so a draft never stays behind as an extra message;
- the placeholder that becomes the first part of the answer; when editing it fails, the
  part is posted as a new message instead and the stale placeholder is deleted;
- splitting the reply under `Capabilities.max_length`, measured by the platform's own cost
  function (characters, UTF-16 units, bytes of a doubly JSON-encoded card);
- buttons (clarification options) on the last part only;
- one delivery record per job in Redis (`DeliveryRecords`), so a job re-run after a crash
  edits the placeholder and skips the parts that already arrived instead of posting again.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from adapters.base import Delivered
from adapters.common.offload import render_off_loop
from adapters.common.primitives import Payload, PushPlatform
from adapters.common.records import DeliveryRecord, DeliveryRecords
from adapters.common.split import split_markdown
from core.messages import DRAFT_STAGE, Progress, Reply

log = logging.getLogger(__name__)

PLACEHOLDER_GRACE = 10.0  # how long finish() waits for a placeholder that is being posted


class _Unreachable(Exception):
    pass


class Delivery:
    """Answers one job through one platform's primitives (the `Responder` protocol)."""

    def __init__(
        self,
        platform: PushPlatform,
        records: DeliveryRecords,
        job_id: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        keepalive_for: float = 900.0,  # typing and refreshes stop by then even if finish() never comes
        placeholder_grace: float = PLACEHOLDER_GRACE,
    ) -> None:
        self.platform = platform
        self._records = records
        self._job_id = job_id
        self._clock = clock
        self._keepalive_for = keepalive_for
        self._grace = placeholder_grace
        self._record: DeliveryRecord | None = None
        self._lock = asyncio.Lock()
        self._began = False
        self._closed = False
        self._unreachable = False
        self._view = ""  # the newest status line
        self._draft = ""  # the newest draft ("" when none)
        self._shown: tuple[str, str] = ("", "")
        self._shown_native = False
        self._shown_at = float("-inf")
        self._next_show = float("-inf")
        self._delayed: asyncio.Task[None] | None = None
        self._sleeping = False
        self._posting = False
        self._keepalive: asyncio.Task[None] | None = None
        self._stream_open = False  # a native draft stream shows the draft in the placeholder message

    @property
    def interval(self) -> float:
        return max(0.0, self.platform.capabilities.min_edit_interval)

    # --- the record ---------------------------------------------------------------------------
    async def record(self) -> DeliveryRecord:
        if self._record is None:
            try:
                self._record = await self._records.load(self._job_id)
            except Exception:  # noqa: BLE001 - without the record a re-run may repost, but we still answer
                log.warning("%s delivery record unavailable for job %s", self.platform.name, self._job_id)
                self._record = DeliveryRecord()
            self.platform.restore(self._record)
        return self._record

    async def _save(self, call: Awaitable[None]) -> None:
        try:
            await call
        except Exception:  # noqa: BLE001 - the message itself is out; only a re-run could repeat it
            log.warning("%s could not record a delivery of job %s", self.platform.name, self._job_id)

    async def _remember_placeholder(self, message_id: str) -> None:
        (await self.record()).placeholder = message_id
        await self._save(self._records.save_placeholder(self._job_id, message_id))

    # --- progress -----------------------------------------------------------------------------
    async def progress(self, update: Progress) -> None:
        """Record the newest line (or draft) and show it when the interval allows. Never raises."""
        if self._closed or self._unreachable:
            return
        try:
            if update.stage == DRAFT_STAGE:
                self._draft = update.text if update.text.strip() else ""
            else:
                self._view = self.platform.status_view(update) or self._view
            if not self._began:
                self._began = True
                await self.platform.begin()
                self._start_keepalive()
            await self._schedule()
        except Exception as exc:  # noqa: BLE001 - progress is decoration; the answer matters
            self._note_failure(exc)

    def _note_failure(self, exc: BaseException) -> None:
        if self.platform.unreachable(exc):
            self._unreachable = True
            log.info("%s conversation unreachable; progress stopped (job %s)", self.platform.name, self._job_id)
        else:
            log.warning("%s progress failed for job %s: %s", self.platform.name, self._job_id, type(exc).__name__)

    async def _schedule(self) -> None:
        wait = self._next_show - self._clock()
        if wait <= 0:
            if self._delayed is not None and self._sleeping:
                self._delayed.cancel()  # due now: show the newest line at once instead
                self._delayed = None
            await self._flush_locked()
        elif self._delayed is None or self._delayed.done():
            # Coalesce a burst: the newest line is shown once the interval has passed
            self._delayed = asyncio.ensure_future(self._flush_later(wait))

    async def _flush_later(self, wait: float) -> None:
        self._sleeping = True
        try:
            await asyncio.sleep(wait)
        finally:
            self._sleeping = False
        try:
            await self._flush_locked()
        except Exception as exc:  # noqa: BLE001 - progress is decoration
            self._note_failure(exc)

    async def _flush_locked(self, force: bool = False) -> None:
        async with self._lock:
            if not self._closed:
                await self._flush(force)

    def _cut_draft(self, draft: str) -> str:
        """The draft cut to what one message holds (its start: the rest arrives with the answer)."""
        budget = max(1, self.platform.capabilities.max_length - self.platform.draft_reserve())
        chunks = split_markdown(draft, budget, self.platform.cost)
        return chunks[0] if chunks else draft

    async def _flush(self, force: bool) -> None:
        draft = await render_off_loop(self._cut_draft, self._draft) if self._draft else ""
        want = ("draft", draft) if draft else ("status", self._view)
        if not want[1] or (want == self._shown and not force):
            return
        now = self._clock()
        self._next_show = now + self.interval
        if not await self.platform.may_show_progress():
            return
        record = await self.record()
        native = False
        if draft and (not record.placeholder or self._stream_open):
            native = await self._show_draft_natively(record, want[1])
        elif not draft and not record.placeholder:  # once a message shows progress, it keeps showing it
            native = await self.platform.show_status(want[1])
        if not native:
            await self._end_stream()  # the stream's message is edited from now on
            if record.parts:
                return  # a re-run: the placeholder already holds part of the answer; never overwrite it
            payload = self.platform.draft_payload(want[1]) if draft else self.platform.status_payload(want[1])
            if not await self._show_in_placeholder(payload):
                return
        self._shown, self._shown_native, self._shown_at = want, native, now

    async def _show_draft_natively(self, record: DeliveryRecord, draft: str) -> bool:
        shown = await self.platform.show_draft(draft)
        if isinstance(shown, str) and shown:
            self._stream_open = True
            if record.placeholder != shown:
                await self._remember_placeholder(shown)  # the final reply replaces the streamed draft here
            return True
        return shown is True and not record.placeholder

    async def _end_stream(self) -> None:
        if self._stream_open:
            self._stream_open = False
            try:
                await self.platform.end_draft()
            except Exception as exc:  # noqa: BLE001 - the message is edited anyway
                log.info("%s draft stream did not close cleanly: %s", self.platform.name, type(exc).__name__)

    async def _show_in_placeholder(self, payload: Payload) -> bool:
        record = await self.record()
        if record.placeholder:
            try:
                if await self.platform.edit(record.placeholder, payload):
                    return True
            except Exception as exc:  # noqa: BLE001 - e.g. rate limited: the next update tries again
                if self.platform.unreachable(exc):
                    raise
                log.info("%s placeholder edit failed: %s", self.platform.name, type(exc).__name__)
                return False
        self._posting = True  # finish() waits for this rather than leave a stray message
        try:
            posted = await self.platform.post(payload, index=-1, first=True)
        finally:
            self._posting = False
        await self._remember_placeholder(posted[0])
        return True

    def _start_keepalive(self) -> None:
        if self.platform.keepalive_every > 0 or self.platform.refresh_every > 0:
            self._keepalive = asyncio.ensure_future(self._keep_alive())

    async def _keep_alive(self) -> None:
        """Typing actions, and natively shown status lines refreshed before they expire."""
        every, refresh = self.platform.keepalive_every, self.platform.refresh_every
        stop_at = self._clock() + self._keepalive_for
        next_keep = self._clock()
        try:
            while not self._closed and not self._unreachable and self._clock() < stop_at:
                now = self._clock()
                if every > 0 and now >= next_keep:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await self._best_effort(self.platform.keepalive())
                    next_keep = now + every
                if refresh > 0 and self._shown_native and now - self._shown_at >= refresh:
                    await self._flush_locked(force=True)
                wake = [next_keep] if every > 0 else []
                if refresh > 0:
                    wake.append(self._shown_at + refresh if self._shown_native else now + refresh)
                await asyncio.sleep(max(0.01, min(wake) - self._clock()))
        except Exception as exc:  # noqa: BLE001 - progress is best effort
            self._note_failure(exc)

    async def _best_effort(self, call: Awaitable[Any]) -> None:
        try:
            await call
        except Exception as exc:  # noqa: BLE001 - decoration; an unreachable chat stops progress
            if self.platform.unreachable(exc):
                raise
            log.info("%s progress request failed: %s", self.platform.name, type(exc).__name__)

    async def stop_progress(self) -> None:
        """Stop keepalives and throttled updates (a placeholder being posted is waited for)."""
        self._closed = True
        if self._keepalive is not None:
            self._keepalive.cancel()  # typing and refreshes are superseded by the answer
        delayed = self._delayed
        if delayed is not None and not delayed.done():
            if self._posting:
                # a placeholder being posted: cancelled, it could stay behind as a stray message
                await asyncio.wait({delayed}, timeout=self._grace)
            if not delayed.done():
                delayed.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await delayed
        if self._stream_open:
            async with self._lock:
                await self._end_stream()  # the reply edits the streamed draft's message in place

    # --- the reply ----------------------------------------------------------------------------
    async def finish(self, reply: Reply) -> Delivered:
        await self.stop_progress()
        if self._unreachable:
            return Delivered(extra={"undeliverable": True})
        record = await self.record()
        delivered: list[str] = []
        try:
            if record.streamed:
                delivered = [record.streamed]  # an earlier run streamed it in full
            elif not record.placeholder and not record.parts:
                native = await self.platform.native_reply(reply)
                if native is not None and native.delivered:
                    record.streamed = native.delivered
                    await self._save(self._records.save_streamed(self._job_id, native.delivered))
                    delivered = [native.delivered]
                elif native is not None and native.placeholder:
                    await self._remember_placeholder(native.placeholder)
            if not delivered:
                delivered = await self._deliver_parts(reply, record)
        except _Unreachable:
            log.info("%s conversation unreachable; reply dropped (job %s)", self.platform.name, self._job_id)
            return Delivered(tuple(record.delivered()), extra={"undeliverable": True})
        finally:
            with contextlib.suppress(Exception):
                await self.platform.clear()
        ids = tuple(delivered)
        return Delivered(ids, await self.platform.delivered(ids))

    def payloads(self, reply: Reply) -> list[Payload]:
        """The reply split under `max_length` by the platform's cost, rendered, in order."""
        platform = self.platform
        budget = max(1, platform.capabilities.max_length - platform.reserve(reply))
        chunks = split_markdown(platform.document(reply), budget, platform.cost) or [""]
        return [p for i, c in enumerate(chunks) for p in platform.render(c, reply, i, len(chunks))]

    async def _deliver_parts(self, reply: Reply, record: DeliveryRecord) -> list[str]:
        payloads = await render_off_loop(self.payloads, reply)  # a big render runs in a thread, off the loop
        buttons = await self.platform.buttons(reply)
        if buttons is not None and payloads:
            payloads[-1] = self.platform.attach(payloads[-1], buttons)
        delivered: list[str] = []
        for i, payload in enumerate(payloads):
            if i in record.parts:
                delivered.extend(record.parts[i])  # arrived in an earlier run of this job
                continue
            try:
                ids = await self._deliver_part(i, payload, record)
            except Exception as exc:
                if self.platform.unreachable(exc):
                    raise _Unreachable from exc
                note = self.platform.rest_lost(reply) if delivered else None
                if note is None:
                    failure = self.platform.failed(exc)
                    if failure is exc:
                        raise
                    raise failure from exc
                log.warning("%s refused part %d/%d of job %s: %s", self.platform.name, i + 1, len(payloads),
                            self._job_id, type(exc).__name__)
                with contextlib.suppress(Exception):
                    await self.platform.post(note, index=len(payloads), first=False)
                break
            record.parts[i] = ids
            await self._save(self._records.save_part(self._job_id, i, ids))
            delivered.extend(ids)
        return delivered

    async def _deliver_part(self, index: int, payload: Payload, record: DeliveryRecord) -> tuple[str, ...]:
        if index == 0 and record.placeholder:
            try:
                if await self.platform.edit(record.placeholder, payload):
                    return (record.placeholder,)
            except Exception as exc:  # noqa: BLE001 - e.g. the placeholder was deleted: post anew
                if self.platform.unreachable(exc):
                    raise
                log.info("%s placeholder could not become the answer: %s", self.platform.name, type(exc).__name__)
            posted = await self.platform.post(payload, index=index, first=True)
            try:
                await self.platform.discard(record.placeholder)  # a draft or status must not stay as an extra message
            except Exception as exc:  # noqa: BLE001 - best effort: the answer is out
                log.info("%s stale placeholder not removed: %s", self.platform.name, type(exc).__name__)
            return posted
        return await self.platform.post(payload, index=index, first=index == 0)


class EngineResponder:
    """The `Responder` of a push platform: the engine, driving that platform's primitives.

    A platform's responder builds its primitives and its `Delivery` and passes it here; it
    overrides `finish` only to say more about a failed delivery (Slack)."""

    def __init__(self, engine: Delivery) -> None:
        self._engine = engine

    @property
    def engine(self) -> Delivery:
        """`finish` lays a reply out with the engine's `payloads`, and so do the hostile-input tests
        and bench/render_bench.py (the production path, not a copy)."""
        return self._engine

    async def progress(self, update: Progress) -> None:
        await self._engine.progress(update)

    async def finish(self, reply: Reply) -> Delivered:
        return await self._engine.finish(reply)
