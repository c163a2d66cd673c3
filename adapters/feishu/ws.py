"""Long-connection mode (FEISHU_MODE=ws) through lark-oapi's WebSocket client.

For self-built apps without a public URL. Events arrive as plain JSON over an
authenticated connection and go through the same `FeishuInbound` path as webhooks.

Two facts about lark-oapi 1.7.5 (checked in its `ws/client.py`) shape this module:
- The client binds a module-level event loop at import and `start()` blocks on it
  (`loop.run_until_complete`); there is no `start_async`. So it runs in its own
  thread with its own loop, and hands each payload to the bot's loop.
- `_handle_data_frame` drops CARD frames without answering
  (`elif message_type == MessageType.CARD: return`), so card callbacks over the
  long connection never reach a handler and users see error 200340. We override
  that one method to dispatch both EVENT and CARD frames ourselves and write the
  response frame back exactly as the SDK does for events.
"""
from __future__ import annotations

import asyncio
import base64
import http
import json
import logging
import threading
import time
from concurrent.futures import Future
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)

HANDLE_TIMEOUT_SECONDS = 2.5  # Feishu re-pushes what is not acknowledged within 3 s

# kind ("event" | "card"), plaintext JSON payload → callback response (card) or None (event)
Dispatch = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


def make_client_class() -> type:
    """Build the Client subclass lazily: importing lark_oapi is slow and grabs an event loop."""
    from lark_oapi.core.json import JSON
    from lark_oapi.ws import client as ws_client
    from lark_oapi.ws.const import HEADER_BIZ_RT, HEADER_MESSAGE_ID, HEADER_SEQ, HEADER_SUM, HEADER_TYPE
    from lark_oapi.ws.model import Response

    class CopilotWsClient(ws_client.Client):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, bridge: Callable[[str, bytes], Awaitable[dict[str, Any] | None]], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._bridge = bridge

        async def _handle_data_frame(self, frame: Any) -> None:
            headers = frame.headers
            type_ = ws_client._get_by_key(headers, HEADER_TYPE)
            if type_ not in ("event", "card"):
                await super()._handle_data_frame(frame)
                return
            payload = frame.payload
            total = int(ws_client._get_by_key(headers, HEADER_SUM))
            if total > 1:
                payload = self._combine(
                    ws_client._get_by_key(headers, HEADER_MESSAGE_ID), total, int(ws_client._get_by_key(headers, HEADER_SEQ)), payload
                )
                if payload is None:
                    return
            response = Response(code=http.HTTPStatus.OK)
            started = time.monotonic()
            try:
                result = await self._bridge(type_, payload)
                biz = headers.add()
                biz.key = HEADER_BIZ_RT
                biz.value = str(int((time.monotonic() - started) * 1000))
                if result is not None:
                    response.data = base64.b64encode(JSON.marshal(result).encode("utf-8"))
            except Exception as exc:  # a 500 ack makes Feishu re-push the frame later
                log.error("feishu ws: %s frame failed: %s", type_, type(exc).__name__)
                response = Response(code=http.HTTPStatus.INTERNAL_SERVER_ERROR)
            frame.payload = JSON.marshal(response).encode("utf-8")
            await self._write_message(frame.SerializeToString())

    return CopilotWsClient


def make_bridge(dispatch: Dispatch, bot_loop: asyncio.AbstractEventLoop) -> Callable[[str, bytes], Awaitable[dict[str, Any] | None]]:
    """Run `dispatch` on the bot's loop (where Redis lives) and await it from the SDK's loop."""

    async def bridge(kind: str, payload: bytes) -> dict[str, Any] | None:
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise ValueError("payload is not a JSON object")
        future: Future = asyncio.run_coroutine_threadsafe(dispatch(kind, data), bot_loop)
        return await asyncio.wait_for(asyncio.wrap_future(future), HANDLE_TIMEOUT_SECONDS)

    return bridge


class LongConnection:
    def __init__(self, app_id: str, app_secret: str, domain: str, dispatch: Dispatch) -> None:
        self._app_id = app_id
        self._app_secret = app_secret
        self._domain = domain.rstrip("/")
        self._dispatch = dispatch
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._stopping = threading.Event()

    async def start(self) -> None:
        bot_loop = asyncio.get_running_loop()
        # Import once, fully, before the SDK thread runs: two threads importing lark_oapi at the
        # same time can trip Python's module-lock deadlock detection. A worker thread keeps the
        # slow import off the bot's loop.
        await asyncio.to_thread(make_client_class)
        self._thread = threading.Thread(target=self._run, args=(bot_loop,), name="feishu-ws", daemon=True)
        self._thread.start()

    def _run(self, bot_loop: asyncio.AbstractEventLoop) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            from lark_oapi.ws import client as ws_client

            from lark_oapi.core.enum import LogLevel

            ws_client.loop = loop  # the SDK runs everything on this module global (1.7.5)
            cls = make_client_class()
            # WARNING: at INFO the SDK logs the connection URL, which carries access_key and ticket
            self._client = cls(
                self._app_id, self._app_secret, log_level=LogLevel.WARNING, domain=self._domain,
                bridge=make_bridge(self._dispatch, bot_loop),
            )
            if self._stopping.is_set():
                return
            self._client.start()  # blocks until stop() stops the loop
        except RuntimeError as exc:
            if "stopped" not in str(exc):  # "Event loop stopped before Future completed" is our stop()
                log.error("feishu ws: long connection ended: %s", exc)
        except Exception as exc:
            log.error("feishu ws: long connection failed: %s", type(exc).__name__)
        finally:
            _close_loop(loop)

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        loop, client = self._loop, self._client
        if loop is None or not loop.is_running():
            return
        if client is not None:
            client._auto_reconnect = False
            try:
                asyncio.run_coroutine_threadsafe(client._disconnect(), loop).result(timeout)
            except Exception:
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the SDK's ping, receive and cache tasks so nothing is left pending on a closed loop."""
    try:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.close()
    except Exception as exc:  # shutting down: never raise from the thread
        log.debug("feishu ws: loop close: %s", type(exc).__name__)
