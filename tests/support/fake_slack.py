"""A local fake of Slack for tests: the Web API the real slack_sdk talks to, a Socket Mode
WebSocket, and builders for the signed requests Slack would send to the bot.

Modelled on bolt-python's own mock Web API server (platforms.md §1.9): canned `{"ok": true}`
answers, a Bearer token check, JSON and form bodies both accepted, every call recorded, and
injectable failures (HTTP 429 with Retry-After, or `{"ok": false, "error": ...}`).
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from tests.support.fake_http import FakeServer

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
BOT_USER = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM = "T0TEAM01"

_JSON_FIELDS = {"blocks", "chunks", "loading_messages", "attachments", "metadata"}


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    token: str


@dataclass
class Failure:
    status: int = 200
    error: str = "internal_error"
    retry_after: int | None = None


@dataclass
class Posted:
    """A message the bot put in Slack, however it got there (post, stream, update)."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "post"  # post | stream
    stopped: bool = True
    updates: int = 0

    def section_text(self) -> str:
        """What a user reads: the section blocks when there are any, else `text`."""
        parts = [
            b["text"]["text"] for b in self.blocks
            if b.get("type") == "section" and isinstance(b.get("text"), dict)
        ]
        if self.kind == "stream":
            return self.text
        return "\n\n".join(parts) if parts else self.text

    def buttons(self) -> list[dict[str, Any]]:
        return [e for b in self.blocks if b.get("type") == "actions" for e in b.get("elements", [])]


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.messages: list[Posted] = []
        self.reactions: dict[tuple[str, str], set[str]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.ephemeral: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        self._failures: dict[str, list[Failure]] = {}
        self._seq = itertools.count(1)
        self._sockets: list[WebSocket] = []
        self._socket_ready = asyncio.Event()
        self.server = FakeServer(
            [
                Route("/api/{method}", self._handle, methods=["POST", "GET"]),
                WebSocketRoute("/link/", self._socket_mode),
                WebSocketRoute("/link", self._socket_mode),
            ]
        )

    # --- lifecycle and test helpers ----------------------------------------------------------

    @property
    def api_url(self) -> str:
        return self.server.url + "/api/"

    async def __aenter__(self) -> "FakeSlack":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for ws in list(self._sockets):
            try:
                await ws.close()
            except Exception:  # noqa: BLE001 - already gone
                pass
        await self.server.__aexit__(*exc)

    def fail(self, method: str, *, status: int = 200, error: str = "internal_error",
             retry_after: int | None = None, times: int = 1) -> None:
        """The next `times` calls of `method` fail (HTTP 429 + Retry-After, or ok:false)."""
        self._failures.setdefault(method, []).extend(Failure(status, error, retry_after) for _ in range(times))

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        return [c.params for c in self.calls if c.method == method]

    def count(self, method: str) -> int:
        return len(self.calls_to(method))

    def in_thread(self, channel: str, thread_ts: str) -> list[Posted]:
        return [m for m in self.messages if m.channel == channel and m.thread_ts == thread_ts]

    def find(self, channel: str, ts: str) -> Posted | None:
        return next((m for m in self.messages if m.channel == channel and m.ts == ts), None)

    def _next_ts(self) -> str:
        n = next(self._seq)
        return f"{1800000000 + n}.{n:06d}"

    # --- the Web API -------------------------------------------------------------------------

    async def _handle(self, request: Request) -> JSONResponse:
        method = request.path_params["method"]
        params = await _params(request)
        token = (request.headers.get("authorization") or "").removeprefix("Bearer ").strip() or str(params.get("token", ""))
        self.calls.append(Call(method, params, token))
        failures = self._failures.get(method)
        if failures:
            failure = failures.pop(0)
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            return JSONResponse({"ok": False, "error": failure.error}, status_code=failure.status, headers=headers)
        expected = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != expected:
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return JSONResponse({"ok": False, "error": "unknown_method"})
        return JSONResponse(handler(params))

    def _m_auth_test(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://fake.slack.test/", "team": "Fake", "user": "copilot",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False}

    def _m_chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        if not p.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not (p.get("text") or p.get("blocks") or p.get("markdown_text")):
            return {"ok": False, "error": "no_text"}
        ts = self._next_ts()
        posted = Posted(p["channel"], ts, p.get("thread_ts"), str(p.get("text") or p.get("markdown_text") or ""),
                        list(p.get("blocks") or []))
        self.messages.append(posted)
        return {"ok": True, "channel": p["channel"], "ts": ts,
                "message": {"text": posted.text, "ts": ts, "thread_ts": posted.thread_ts, "bot_id": BOT_ID}}

    def _m_chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        posted = self.find(str(p.get("channel")), str(p.get("ts")))
        if posted is None:
            return {"ok": False, "error": "message_not_found"}
        if "text" in p:
            posted.text = str(p.get("text") or "")
        if "blocks" in p:
            posted.blocks = list(p.get("blocks") or [])
        posted.kind = "post"
        posted.updates += 1
        return {"ok": True, "channel": posted.channel, "ts": posted.ts, "text": posted.text}

    def _m_chat_startStream(self, p: dict[str, Any]) -> dict[str, Any]:
        if not p.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        ts = self._next_ts()
        posted = Posted(p["channel"], ts, p.get("thread_ts"), _chunk_text(p), kind="stream", stopped=False)
        self.messages.append(posted)
        return {"ok": True, "channel": posted.channel, "ts": ts}

    def _m_chat_appendStream(self, p: dict[str, Any]) -> dict[str, Any]:
        posted = self.find(str(p.get("channel")), str(p.get("ts")))
        if posted is None or posted.stopped:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        posted.text += _chunk_text(p)
        return {"ok": True, "channel": posted.channel, "ts": posted.ts}

    def _m_chat_stopStream(self, p: dict[str, Any]) -> dict[str, Any]:
        posted = self.find(str(p.get("channel")), str(p.get("ts")))
        if posted is None or posted.stopped:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        posted.text += _chunk_text(p)
        posted.blocks = list(p.get("blocks") or [])
        posted.stopped = True
        return {"ok": True, "channel": posted.channel, "ts": posted.ts, "message": {"text": posted.text}}

    def _m_chat_postEphemeral(self, p: dict[str, Any]) -> dict[str, Any]:
        self.ephemeral.append(p)
        return {"ok": True, "message_ts": self._next_ts()}

    def _m_reactions_add(self, p: dict[str, Any]) -> dict[str, Any]:
        names = self.reactions.setdefault((str(p.get("channel")), str(p.get("timestamp"))), set())
        if p.get("name") in names:
            return {"ok": False, "error": "already_reacted"}
        names.add(str(p.get("name")))
        return {"ok": True}

    def _m_reactions_remove(self, p: dict[str, Any]) -> dict[str, Any]:
        names = self.reactions.setdefault((str(p.get("channel")), str(p.get("timestamp"))), set())
        if p.get("name") not in names:
            return {"ok": False, "error": "no_reaction"}
        names.discard(str(p.get("name")))
        return {"ok": True}

    def _m_assistant_threads_setStatus(self, p: dict[str, Any]) -> dict[str, Any]:
        self.statuses.append(p)
        return {"ok": True}

    def _m_assistant_threads_setTitle(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _m_assistant_threads_setSuggestedPrompts(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _m_conversations_replies(self, p: dict[str, Any]) -> dict[str, Any]:
        thread = [m for m in self.messages if m.channel == p.get("channel") and m.thread_ts == p.get("ts")]
        return {"ok": True, "messages": [{"ts": m.ts, "text": m.text, "bot_id": BOT_ID} for m in thread],
                "has_more": False}

    def _m_conversations_history(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "messages": [], "has_more": False}

    def _m_apps_connections_open(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": self.server.url.replace("http://", "ws://") + "/link/?ticket=fake"}

    def status_texts(self) -> list[str]:
        return [str(s.get("status", "")) for s in self.statuses]

    # --- Socket Mode -------------------------------------------------------------------------

    async def _socket_mode(self, ws: WebSocket) -> None:
        await ws.accept()
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}})
        self._socket_ready.set()
        try:
            while True:
                message = await ws.receive_text()
                try:
                    self.acks.append(json.loads(message))
                except ValueError:
                    continue
        except WebSocketDisconnect:
            pass
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)

    async def wait_for_socket(self, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self._socket_ready.wait(), timeout)

    async def push(self, payload: dict[str, Any], *, kind: str = "events_api", retry_attempt: int = 0,
                   envelope_id: str | None = None) -> str:
        """Send an envelope over the Socket Mode connection; returns its envelope_id."""
        envelope_id = envelope_id or uuid.uuid4().hex
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": False, "retry_attempt": retry_attempt,
                    "retry_reason": "timeout" if retry_attempt else ""}
        await self._sockets[-1].send_json(envelope)
        return envelope_id

    async def wait_for_ack(self, envelope_id: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ack in self.acks:
                if ack.get("envelope_id") == envelope_id:
                    return ack
            await asyncio.sleep(0.02)
        raise TimeoutError(f"no ack for envelope {envelope_id}")


async def _params(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        params: dict[str, Any] = dict(request.query_params)
    elif request.headers.get("content-type", "").startswith("application/json"):
        params = json.loads(raw)
    else:
        params = dict(parse_qsl(raw.decode(), keep_blank_values=True))
    for name in _JSON_FIELDS & params.keys():
        if isinstance(params[name], str):
            try:
                params[name] = json.loads(params[name])
            except ValueError:
                pass
    return params


def _chunk_text(p: dict[str, Any]) -> str:
    text = str(p.get("markdown_text") or "")
    for chunk in p.get("chunks") or []:
        if isinstance(chunk, dict) and chunk.get("type") == "markdown_text":
            text += str(chunk.get("text", ""))
    return text


# --- what Slack sends to the bot ----------------------------------------------------------------


def sign(body: bytes, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"x-slack-request-timestamp": ts, "x-slack-signature": f"v0={digest}"}


def event_callback(event: dict[str, Any], *, event_id: str | None = None, team: str = TEAM) -> dict[str, Any]:
    return {
        "token": "legacy-verification-token",
        "team_id": team,
        "api_app_id": "A0APP001",
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": team, "user_id": BOT_USER, "is_bot": True, "is_enterprise_install": False}],
    }


def mention(text: str, *, ts: str, channel: str = "C0CHAN01", user: str = "U0USER01",
            thread_ts: str | None = None) -> dict[str, Any]:
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts,
             "channel": channel, "team": TEAM, "event_ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def message(text: str, *, ts: str, channel: str = "C0CHAN01", user: str = "U0USER01", thread_ts: str | None = None,
            channel_type: str = "channel", **extra: Any) -> dict[str, Any]:
    event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel,
             "channel_type": channel_type, "team": TEAM, "event_ts": ts, **extra}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def block_action(*, action_id: str, value: str, label: str, channel: str, message_ts: str, thread_ts: str,
                 user: str = "U0USER01", blocks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "fake"},
        "user": {"id": user, "username": "alice", "team_id": TEAM},
        "api_app_id": "A0APP001",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False,
                      "thread_ts": thread_ts},
        "trigger_id": "1.2.3",
        "channel": {"id": channel, "name": "general"},
        "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts, "bot_id": BOT_ID,
                    "text": "question", "blocks": blocks or []},
        "response_url": "https://hooks.slack.invalid/actions/T/1/x",
        "actions": [{"action_id": action_id, "block_id": "aic_x", "value": value, "type": "button",
                     "text": {"type": "plain_text", "text": label}, "action_ts": f"{time.time():.6f}"}],
    }


async def post_event(base_url: str, payload: dict[str, Any], *, secret: str = SIGNING_SECRET,
                     timestamp: int | None = None, retry_num: int | None = None) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {"content-type": "application/json", **sign(body, secret=secret, timestamp=timestamp)}
    if retry_num:
        headers.update({"x-slack-retry-num": str(retry_num), "x-slack-retry-reason": "http_timeout"})
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(base_url + "/slack/events", content=body, headers=headers)


async def post_action(base_url: str, payload: dict[str, Any], *, secret: str = SIGNING_SECRET) -> httpx.Response:
    body = f"payload={quote(json.dumps(payload))}".encode()
    headers = {"content-type": "application/x-www-form-urlencoded", **sign(body, secret=secret)}
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(base_url + "/slack/events", content=body, headers=headers)
