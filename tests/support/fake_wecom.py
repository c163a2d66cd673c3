"""Local stand-ins for WeCom: the `response_url` receiver, the AI-bot WebSocket server,
and a callback client that encrypts and signs like WeCom does.

- `FakeQyapi`: POST /cgi-bin/aibot/response?response_code=RC — each code works once
  (a second use fails, as WeCom documents), markdown over 20,480 bytes is refused.
- `FakeAibotWs`: expects `aibot_subscribe`, acks it, answers `ping`, pushes callbacks,
  acks and records replies; a newer subscription for the same bot replaces the older
  connection with a `disconnected_event`, and tests can drop a connection mid-answer.
- `WeComCallbackClient`: posts encrypted JSON callbacks and decrypts the passive replies.
"""
from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from adapters.wecom.crypto import WeComCrypto, signature
from core.messages import InboundMessage, Progress, Reply
from tests.support.fake_http import FakeServer

STREAM_LIMIT = 20_480
RESPONSE_PATH = "/cgi-bin/aibot/response"
WAIT = 15.0  # a hang guard for waits, not a speed assertion


def response_url(code: str) -> str:
    """What WeCom puts in a callback; the adapter rebases it onto WECOM_API_URL."""
    return f"https://qyapi.weixin.qq.com{RESPONSE_PATH}?response_code={code}"


class FakeQyapi:
    def __init__(self) -> None:
        self.used: dict[str, int] = {}
        self.accepted: list[dict[str, Any]] = []  # bodies that WeCom would have shown
        self.server = FakeServer([Route(RESPONSE_PATH, self._respond, methods=["POST"])])

    @property
    def url(self) -> str:
        return self.server.url

    async def _respond(self, request: Request) -> JSONResponse:
        code = request.query_params.get("response_code", "")
        self.used[code] = self.used.get(code, 0) + 1
        if not code or self.used[code] > 1:
            return JSONResponse({"errcode": 600030, "errmsg": "response_code used or invalid"})
        body = await request.json()
        if body.get("msgtype") == "markdown":
            if len(body["markdown"]["content"].encode("utf-8")) > STREAM_LIMIT:
                return JSONResponse({"errcode": 40058, "errmsg": "markdown.content exceed max length"})
        self.accepted.append({"code": code, **body})
        return JSONResponse({"errcode": 0, "errmsg": "ok"})

    async def __aenter__(self) -> "FakeQyapi":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)


# --- WebSocket ---------------------------------------------------------------------------------


@dataclass
class Received:
    connection: int
    frame: dict[str, Any]
    acked: bool


@dataclass
class _Conn:
    number: int
    ws: ServerConnection
    bot_id: str = ""


class FakeAibotWs:
    def __init__(self, bot_id: str = "BOT1", secret: str = "S3cret-bot") -> None:
        self.bot_id = bot_id
        self.secret = secret
        self.frames: list[Received] = []  # everything clients sent
        self.subscriptions = 0
        self.connections = 0
        self.pings = 0
        self.answer_pings = True
        self.active: _Conn | None = None
        self.drop_when: Callable[[dict[str, Any]], bool] | None = None  # drop instead of acking
        self.reject_when: Callable[[dict[str, Any]], bool] | None = None  # ack with an error code
        self._changed = asyncio.Event()
        self._server: Any = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def __aenter__(self) -> "FakeAibotWs":
        self._server = await serve(self._handler, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _notify(self) -> None:
        self._changed.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> None:
        """Until `predicate()` holds; re-checked whenever the fake saw something happen."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                try:  # also re-check now and then: the client side can change what predicates read
                    async with asyncio.timeout(0.05):
                        await self._changed.wait()
                except TimeoutError:
                    pass

    async def _handler(self, ws: ServerConnection) -> None:
        self.connections += 1
        conn = _Conn(self.connections, ws)
        try:
            async for raw in ws:
                frame = json.loads(raw)
                rid = (frame.get("headers") or {}).get("req_id", "")
                cmd = frame.get("cmd")
                if cmd == "aibot_subscribe":
                    body = frame.get("body") or {}
                    ok = body.get("bot_id") == self.bot_id and body.get("secret") == self.secret
                    await ws.send(json.dumps({"headers": {"req_id": rid}, "errcode": 0 if ok else 40001,
                                              "errmsg": "ok" if ok else "invalid secret"}))
                    if ok:
                        await self._replace(conn)
                    self.frames.append(Received(conn.number, {**frame, "body": {"bot_id": body.get("bot_id")}}, ok))
                elif cmd == "ping":
                    self.pings += 1
                    if self.answer_pings:
                        await ws.send(json.dumps({"headers": {"req_id": rid}, "errcode": 0, "errmsg": "ok"}))
                elif self.drop_when is not None and self.drop_when(frame):
                    self.drop_when = None  # once
                    self.frames.append(Received(conn.number, frame, False))
                    await ws.close(code=1011, reason="network trouble")
                    break
                else:
                    errcode = 0
                    if self.reject_when is not None and self.reject_when(frame):
                        errcode = 846605
                    self.frames.append(Received(conn.number, frame, errcode == 0))
                    await ws.send(json.dumps({"headers": {"req_id": rid}, "errcode": errcode, "errmsg": "ok"}))
                await self._notify()
        except ConnectionClosed:
            pass
        finally:
            if self.active is conn:
                self.active = None
            await self._notify()

    async def _replace(self, conn: _Conn) -> None:
        old = self.active
        self.active = conn
        self.subscriptions += 1
        if old is not None and old is not conn:
            event = {"msgid": secrets.token_hex(8), "aibotid": self.bot_id, "msgtype": "event",
                     "event": {"eventtype": "disconnected_event"}}
            try:
                await old.ws.send(json.dumps({"cmd": "aibot_event_callback",
                                              "headers": {"req_id": secrets.token_hex(6)}, "body": event}))
                await old.ws.close()
            except ConnectionClosed:
                pass

    async def wait_subscribed(self, count: int = 1) -> None:
        await self.wait_for(lambda: self.subscriptions >= count and self.active is not None)

    async def push(self, cmd: str, body: dict[str, Any]) -> str:
        await self.wait_subscribed()
        assert self.active is not None
        rid = secrets.token_hex(8)
        await self.active.ws.send(json.dumps({"cmd": cmd, "headers": {"req_id": rid}, "body": body}))
        return rid

    async def push_message(self, body: dict[str, Any]) -> str:
        return await self.push("aibot_msg_callback", body)

    async def push_event(self, body: dict[str, Any]) -> str:
        return await self.push("aibot_event_callback", body)

    async def drop_active(self) -> None:
        if self.active is not None:
            await self.active.ws.close(code=1011, reason="dropped by test")

    # views over what arrived
    def replies(self, req_id: str, *, acked_only: bool = True) -> list[dict[str, Any]]:
        return [r.frame for r in self.frames
                if (r.frame.get("headers") or {}).get("req_id") == req_id and (r.acked or not acked_only)]

    def sent_messages(self) -> list[dict[str, Any]]:
        return [r.frame for r in self.frames if r.frame.get("cmd") == "aibot_send_msg" and r.acked]


# --- inbound callbacks -------------------------------------------------------------------------


def message_body(
    text: str,
    *,
    msgid: str | None = None,
    chat_id: str | None = None,
    user: str = "zhangsan",
    bot_id: str = "BOT1",
    code: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "msgid": msgid or secrets.token_hex(12),
        "aibotid": bot_id,
        "chattype": "group" if chat_id else "single",
        "from": {"userid": user},
        "response_url": response_url(code or secrets.token_hex(6)),
        "msgtype": "text",
        "text": {"content": text},
    }
    if chat_id:
        body["chatid"] = chat_id
    return body


def event_body(
    eventtype: str, data: dict[str, Any] | None = None, *, chat_id: str | None = None, user: str = "zhangsan",
    bot_id: str = "BOT1", code: str | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {"eventtype": eventtype}
    if data is not None:
        event[eventtype] = data
    body: dict[str, Any] = {
        "msgid": secrets.token_hex(12),
        "create_time": int(time.time()),
        "aibotid": bot_id,
        "chattype": "group" if chat_id else "single",
        "from": {"userid": user},
        "msgtype": "event",
        "event": event,
    }
    if chat_id:
        body["chatid"] = chat_id
    if code:
        body["response_url"] = response_url(code)
    return body


@dataclass
class CallbackResult:
    status: int
    raw: bytes
    reply: dict[str, Any] | None = None  # decrypted passive reply
    envelope: dict[str, Any] = field(default_factory=dict)


class WeComCallbackClient:
    """Plays WeCom's side of API mode: encrypt, sign, POST; verify and decrypt the reply."""

    def __init__(self, base_url: str, token: str, aes_key: str, receive_id: str = "") -> None:
        self.base_url = base_url
        self.token = token
        self.crypto = WeComCrypto(token, aes_key, receive_id)

    def seal(self, payload: dict[str, Any], *, timestamp: str | None = None, nonce: str | None = None,
             crypto: WeComCrypto | None = None) -> tuple[dict[str, str], bytes]:
        ts = timestamp or str(int(time.time()))
        nonce = nonce or secrets.token_hex(5)
        enc = (crypto or self.crypto).encrypt(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        params = {"msg_signature": signature(self.token, ts, nonce, enc), "timestamp": ts, "nonce": nonce}
        return params, json.dumps({"encrypt": enc}).encode()

    async def post(self, payload: dict[str, Any], **kwargs: Any) -> CallbackResult:
        params, body = self.seal(payload, **kwargs)
        return await self.post_raw(params, body)

    async def post_raw(self, params: dict[str, str], body: bytes) -> CallbackResult:
        async with httpx.AsyncClient() as http:
            resp = await http.post(f"{self.base_url}/wecom/callback", params=params, content=body,
                                   headers={"content-type": "application/json"})
        result = CallbackResult(resp.status_code, resp.content)
        if resp.status_code == 200 and resp.content:
            env = resp.json()
            result.envelope = env
            self.crypto.verify(env["msgsignature"], str(env["timestamp"]), env["nonce"], env["encrypt"])
            result.reply = json.loads(self.crypto.decrypt(env["encrypt"]))
        return result

    async def refresh(self, stream_id: str) -> CallbackResult:
        return await self.post({"msgid": secrets.token_hex(12), "aibotid": "BOT1", "msgtype": "stream",
                                "stream": {"id": stream_id}})

    async def refresh_until_finished(self, stream_id: str, wait_idle: Callable[[], Any],
                                     max_refreshes: int = 50) -> list[dict[str, Any]]:
        """Refresh like WeCom does until finish:true; returns every decrypted stream reply."""
        seen: list[dict[str, Any]] = []
        for _ in range(max_refreshes):
            result = await self.refresh(stream_id)
            assert result.status == 200 and result.reply is not None
            seen.append(result.reply)
            if result.reply["stream"]["finish"]:
                return seen
            await wait_idle()
        raise AssertionError("stream never finished")


class Scripted:
    """Stands in for the conversation core in end-to-end tests: progress lines, then a reply
    built from the message. `gate`, when given, holds the answer until the test opens it."""

    def __init__(self, reply: Callable[[InboundMessage], Reply], progress: tuple[str, ...] = (),
                 gate: asyncio.Event | None = None) -> None:
        self._reply, self._progress, self._gate = reply, progress, gate
        self.messages: list[InboundMessage] = []
        self.progressed = asyncio.Event()

    async def handle(self, message: InboundMessage, progress: Callable[[Progress], Any]) -> Reply:
        self.messages.append(message)
        for line in self._progress:
            await progress(Progress(line))
        self.progressed.set()
        if self._gate is not None:
            await self._gate.wait()
        return self._reply(message)
