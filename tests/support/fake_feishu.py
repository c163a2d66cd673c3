"""A local fake of the Feishu/Lark Open API, plus builders for signed and encrypted callbacks.

The fake is strict where the real service is: Bearer tenant tokens, `content` as
a JSON string, the 30 KB card / 150 KB text body limits, `update_multi` on
patched cards, strictly increasing CardKit `sequence`, uuid idempotency. Every
violation answers with an error code *and* is recorded in `violations`, so tests
can assert the adapter never broke a rule even where it recovered.
"""
from __future__ import annotations

import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import asyncio
import base64

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from adapters.feishu import crypto
from tests.support.fake_http import FakeServer, free_port

CARD_LIMIT = 30 * 1024
TEXT_LIMIT = 150 * 1024
INVALID_TOKEN = 99991663
RATE_LIMITED = 99991400
NO_PERMISSION = 99991672
CARD_CONTENT_ERROR = 230099
TOO_LONG = 230025


@dataclass
class FakeMessage:
    message_id: str
    msg_type: str
    content: dict[str, Any]
    reply_to: str
    in_thread: bool
    uuid: str
    edits: list[dict[str, Any]] = field(default_factory=list)  # every PATCHed card, in order
    chat_id: str = ""  # a message created in a chat (not a reply): its receive_id


@dataclass
class FakeCard:
    card_id: str
    card: dict[str, Any]
    sequence: int = 0
    streamed: list[tuple[str, str]] = field(default_factory=list)  # (element_id, full content) per update


class FakeFeishu:
    def __init__(
        self,
        *,
        app_id: str = "cli_test",
        app_secret: str = "app-secret",
        bot_open_id: str = "ou_bot",
        token_expire: int = 7200,
    ) -> None:
        self.app_id = app_id
        self.app_secret = app_secret
        self.bot_open_id = bot_open_id
        self.token_expire = token_expire
        self.valid_tokens: set[str] = set()
        self.tokens_issued = 0
        self.messages: dict[str, FakeMessage] = {}
        self.cards: dict[str, FakeCard] = {}
        self.violations: list[str] = []
        self.token_errors = 0
        # failure injection
        self.cardkit_enabled = True  # False: CardKit answers "no permission"
        self.refuse_cards = False  # True: every interactive message/patch fails (card content error)
        self.rate_limit_next = 0  # the next N API calls answer HTTP 429
        self._ids = itertools.count(1)
        self._by_uuid: dict[str, str] = {}
        self.gateway: "FakeWsGateway | None" = None  # set to serve /callback/ws/endpoint (long connection)
        self.server = FakeServer(self.routes())

    # --- lifecycle ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.server.url

    async def __aenter__(self) -> "FakeFeishu":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    def revoke_tokens(self) -> None:
        """Simulate expiry/rotation on Feishu's side: every issued token stops working."""
        self.valid_tokens.clear()

    # --- what users see ----------------------------------------------------------------------
    def replies_to(self, message_id: str) -> list[FakeMessage]:
        return [m for m in self.messages.values() if m.reply_to == message_id]

    def visible_text(self, message: FakeMessage) -> str:
        """The text a user sees now: text content, or the markdown of the (possibly streamed) card."""
        if message.msg_type == "text":
            return str(message.content.get("text", ""))
        content = message.content
        if content.get("type") == "card":
            card = self.cards[content["data"]["card_id"]]
            return _card_markdown(card.card)
        return _card_markdown(content)

    def buttons(self, message: FakeMessage) -> list[dict[str, Any]]:
        content = message.content
        card = self.cards[content["data"]["card_id"]].card if content.get("type") == "card" else content
        return [e for e in card.get("body", {}).get("elements", []) if e.get("tag") == "button"]

    # --- plumbing ----------------------------------------------------------------------------
    def _violation(self, what: str, code: int, status: int = 400) -> JSONResponse:
        self.violations.append(what)
        return JSONResponse({"code": code, "msg": what}, status_code=status)

    def _authorized(self, request: Request) -> JSONResponse | None:
        if self.rate_limit_next > 0:
            self.rate_limit_next -= 1
            return JSONResponse(
                {"code": RATE_LIMITED, "msg": "too many requests"}, status_code=429, headers={"x-ogw-ratelimit-reset": "0"}
            )
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in self.valid_tokens:
            self.token_errors += 1
            return JSONResponse({"code": INVALID_TOKEN, "msg": "Invalid access token for authorization"}, status_code=400)
        return None

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}"

    def routes(self) -> list[Route]:
        return [
            Route("/open-apis/auth/v3/tenant_access_token/internal", self._token, methods=["POST"]),
            Route("/open-apis/bot/v3/info", self._bot_info, methods=["GET"]),
            Route("/open-apis/im/v1/messages/{message_id}/reply", self._reply, methods=["POST"]),
            Route("/open-apis/im/v1/messages", self._create, methods=["POST"]),
            Route("/open-apis/im/v1/messages/{message_id}", self._patch, methods=["PATCH"]),
            Route("/open-apis/cardkit/v1/cards", self._create_card, methods=["POST"]),
            Route("/open-apis/cardkit/v1/cards/{card_id}", self._update_card, methods=["PUT"]),
            Route("/open-apis/cardkit/v1/cards/{card_id}/settings", self._card_settings, methods=["PATCH"]),
            Route("/open-apis/cardkit/v1/cards/{card_id}/elements/{element_id}/content", self._stream, methods=["PUT"]),
            Route("/callback/ws/endpoint", self._ws_endpoint, methods=["POST"]),
        ]

    async def _ws_endpoint(self, request: Request) -> JSONResponse:
        body = await request.json()
        if self.gateway is None:
            return JSONResponse({"code": 1000040343, "msg": "long connection not enabled"})
        if body.get("AppID") != self.app_id or body.get("AppSecret") != self.app_secret:
            return JSONResponse({"code": 514, "msg": "auth failed"})
        config = {"ReconnectCount": 3, "ReconnectInterval": 1, "ReconnectNonce": 0, "PingInterval": 120}
        return JSONResponse({"code": 0, "msg": "ok", "data": {"URL": self.gateway.url, "ClientConfig": config}})

    async def _token(self, request: Request) -> JSONResponse:
        body = await request.json()
        if body.get("app_id") != self.app_id or body.get("app_secret") != self.app_secret:
            return JSONResponse({"code": 10014, "msg": "app secret invalid"})
        self.tokens_issued += 1
        token = f"t-{self.tokens_issued}-{uuid.uuid4().hex[:8]}"
        self.valid_tokens.add(token)
        return JSONResponse({"code": 0, "msg": "ok", "tenant_access_token": token, "expire": self.token_expire})

    async def _bot_info(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        return JSONResponse({"code": 0, "msg": "ok", "bot": {"open_id": self.bot_open_id, "app_name": "Copilot"}})

    async def _reply(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        raw = await request.body()
        body = json.loads(raw)
        msg_type, content_raw = body.get("msg_type"), body.get("content")
        if not isinstance(content_raw, str):
            return self._violation("content is not a JSON string", 9499)
        if msg_type not in ("text", "post", "interactive"):
            return self._violation(f"unsupported msg_type {msg_type!r}", 9499)
        limit = TEXT_LIMIT if msg_type == "text" else CARD_LIMIT
        if len(raw) > limit:
            return self._violation(f"{msg_type} body of {len(raw)} bytes over {limit}", TOO_LONG)
        request_uuid = body.get("uuid") or ""
        if request_uuid and request_uuid in self._by_uuid:  # idempotent: the same uuid is the same message
            return JSONResponse({"code": 0, "msg": "ok", "data": {"message_id": self._by_uuid[request_uuid]}})
        content = json.loads(content_raw)
        if msg_type == "interactive":
            if self.refuse_cards:
                return JSONResponse({"code": CARD_CONTENT_ERROR, "msg": "card content failed"}, status_code=400)
            if content.get("type") == "card":
                if content.get("data", {}).get("card_id") not in self.cards:
                    return self._violation("reply references an unknown card_id", CARD_CONTENT_ERROR)
            elif problem := _card_problem(content):
                return self._violation(problem, CARD_CONTENT_ERROR)
        elif msg_type == "text" and not isinstance(content.get("text"), str):
            return self._violation("text content without text", 9499)
        message_id = self._new_id("om_bot")
        self.messages[message_id] = FakeMessage(
            message_id, msg_type, content, request.path_params["message_id"], bool(body.get("reply_in_thread")), request_uuid
        )
        if request_uuid:
            self._by_uuid[request_uuid] = message_id
        return JSONResponse({"code": 0, "msg": "ok", "data": {"message_id": message_id, "msg_type": msg_type}})

    async def _create(self, request: Request) -> JSONResponse:
        """Send a message to a chat (im/v1/messages?receive_id_type=chat_id): text only here."""
        if (denied := self._authorized(request)) is not None:
            return denied
        if request.query_params.get("receive_id_type") != "chat_id":
            return self._violation("receive_id_type is not chat_id", 9499)
        raw = await request.body()
        body = json.loads(raw)
        content_raw = body.get("content")
        if not isinstance(content_raw, str):
            return self._violation("content is not a JSON string", 9499)
        if body.get("msg_type") != "text" or not isinstance(json.loads(content_raw).get("text"), str):
            return self._violation("this fake creates text messages only", 9499)
        if len(raw) > TEXT_LIMIT:
            return self._violation(f"text body of {len(raw)} bytes over {TEXT_LIMIT}", TOO_LONG)
        if not isinstance(body.get("receive_id"), str) or not body["receive_id"]:
            return self._violation("no receive_id", 9499)
        request_uuid = body.get("uuid") or ""
        if request_uuid and request_uuid in self._by_uuid:
            return JSONResponse({"code": 0, "msg": "ok", "data": {"message_id": self._by_uuid[request_uuid]}})
        message_id = self._new_id("om_bot")
        self.messages[message_id] = FakeMessage(message_id, "text", json.loads(content_raw), "", False, request_uuid,
                                                chat_id=body["receive_id"])
        if request_uuid:
            self._by_uuid[request_uuid] = message_id
        return JSONResponse({"code": 0, "msg": "ok", "data": {"message_id": message_id, "msg_type": "text"}})

    async def _patch(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        raw = await request.body()
        if len(raw) > CARD_LIMIT:
            return self._violation(f"patch body of {len(raw)} bytes over {CARD_LIMIT}", TOO_LONG)
        message = self.messages.get(request.path_params["message_id"])
        if message is None:
            return self._violation("patch of an unknown message", 230001)
        content_raw = json.loads(raw).get("content")
        if not isinstance(content_raw, str):
            return self._violation("patch content is not a JSON string", 9499)
        if message.msg_type != "interactive" or message.content.get("type") == "card":
            return self._violation("patch of a message that is not a plain interactive card", 230001)
        if self.refuse_cards:
            return JSONResponse({"code": CARD_CONTENT_ERROR, "msg": "card content failed"}, status_code=400)
        card = json.loads(content_raw)
        if problem := _card_problem(card):
            return self._violation(problem, CARD_CONTENT_ERROR)
        if not message.content.get("config", {}).get("update_multi") or not card.get("config", {}).get("update_multi"):
            return self._violation("patch without update_multi before and after", 230001)
        message.content = card
        message.edits.append(card)
        return JSONResponse({"code": 0, "msg": "ok"})

    async def _create_card(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        if not self.cardkit_enabled:
            return JSONResponse({"code": NO_PERMISSION, "msg": "no permission: cardkit:card:write"}, status_code=400)
        raw = await request.body()
        if len(raw) > CARD_LIMIT:
            return self._violation("card entity over 30 KB", TOO_LONG)
        body = json.loads(raw)
        if body.get("type") != "card_json" or not isinstance(body.get("data"), str):
            return self._violation("create card needs type=card_json and data as a string", 9499)
        card = json.loads(body["data"])
        if problem := _card_problem(card):
            return self._violation(problem, CARD_CONTENT_ERROR)
        card_id = self._new_id("card_")
        self.cards[card_id] = FakeCard(card_id, card)
        return JSONResponse({"code": 0, "msg": "ok", "data": {"card_id": card_id}})

    def _sequence_ok(self, card: FakeCard, sequence: Any) -> JSONResponse | None:
        if not isinstance(sequence, int) or sequence <= card.sequence:
            return self._violation(f"sequence {sequence!r} not above {card.sequence}", 300317)
        card.sequence = sequence
        return None

    async def _stream(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        card = self.cards.get(request.path_params["card_id"])
        if card is None:
            return self._violation("stream into an unknown card", 300301)
        body = await request.json()
        if (bad := self._sequence_ok(card, body.get("sequence"))) is not None:
            return bad
        if not card.card.get("config", {}).get("streaming_mode"):
            return self._violation("content update while streaming_mode is off", 300309)
        element_id = request.path_params["element_id"]
        element = next((e for e in card.card["body"]["elements"] if e.get("element_id") == element_id), None)
        if element is None or not isinstance(body.get("content"), str):
            return self._violation("content update of an unknown element or without content", 300302)
        element["content"] = body["content"]
        card.streamed.append((element_id, body["content"]))
        return JSONResponse({"code": 0, "msg": "ok"})

    async def _card_settings(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        card = self.cards.get(request.path_params["card_id"])
        if card is None:
            return self._violation("settings of an unknown card", 300301)
        body = await request.json()
        if (bad := self._sequence_ok(card, body.get("sequence"))) is not None:
            return bad
        if not isinstance(body.get("settings"), str):
            return self._violation("settings must be a JSON string", 9499)
        config = json.loads(body["settings"]).get("config", {})
        card.card.setdefault("config", {}).update(config)
        return JSONResponse({"code": 0, "msg": "ok"})

    async def _update_card(self, request: Request) -> JSONResponse:
        if (denied := self._authorized(request)) is not None:
            return denied
        card = self.cards.get(request.path_params["card_id"])
        if card is None:
            return self._violation("update of an unknown card", 300301)
        raw = await request.body()
        if len(raw) > CARD_LIMIT:
            return self._violation("card update over 30 KB", TOO_LONG)
        body = json.loads(raw)
        if (bad := self._sequence_ok(card, body.get("sequence"))) is not None:
            return bad
        new = body.get("card") or {}
        if new.get("type") != "card_json" or not isinstance(new.get("data"), str):
            return self._violation("update card needs card.type=card_json and data as a string", 9499)
        parsed = json.loads(new["data"])
        if problem := _card_problem(parsed):
            return self._violation(problem, CARD_CONTENT_ERROR)
        card.card = parsed
        return JSONResponse({"code": 0, "msg": "ok"})


def _card_problem(card: Any) -> str:
    if not isinstance(card, dict) or card.get("schema") != "2.0":
        return "card is not JSON 2.0"
    elements = card.get("body", {}).get("elements")
    if not isinstance(elements, list) or not elements:
        return "card without body.elements"
    for e in elements:
        if e.get("tag") == "markdown" and not isinstance(e.get("content"), str):
            return "markdown element without content"
        if e.get("tag") == "button":
            for b in e.get("behaviors", []):
                if b.get("type") == "callback" and not isinstance(b.get("value"), dict):
                    return "button callback value must be an object"
    return ""


def _card_markdown(card: dict[str, Any]) -> str:
    return "\n".join(e["content"] for e in card.get("body", {}).get("elements", []) if e.get("tag") == "markdown")


# --- inbound callbacks (what Feishu POSTs to the bot) ---------------------------------------------

_counter = itertools.count(1)


def message_event(
    text: str,
    *,
    chat_type: str = "group",
    mention_bot: bool = True,
    bot_open_id: str = "ou_bot",
    chat_id: str = "oc_chat",
    message_id: str | None = None,
    root_id: str = "",
    thread_id: str = "",
    event_id: str | None = None,
    sender_open_id: str = "ou_user",
    sender_type: str = "user",
    token: str = "v-token",
    tenant_key: str = "tenant1",
    message_type: str = "text",
    content: dict[str, Any] | None = None,
    extra_mentions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An `im.message.receive_v1` payload (schema 2.0). With `mention_bot`, `@_user_1` is the bot."""
    n = next(_counter)
    mentions: list[dict[str, Any]] = []
    if mention_bot:
        mentions.append({"key": "@_user_1", "id": {"open_id": bot_open_id, "union_id": "on_bot", "user_id": ""}, "name": "Copilot", "tenant_key": tenant_key})
        text = "@_user_1 " + text
    mentions += extra_mentions or []
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"ev_{n}_{uuid.uuid4().hex[:6]}",
            "token": token,
            "create_time": str(int(time.time() * 1000)),
            "event_type": "im.message.receive_v1",
            "tenant_key": tenant_key,
            "app_id": "cli_test",
        },
        "event": {
            "sender": {"sender_id": {"open_id": sender_open_id, "union_id": "on_u", "user_id": "u1"}, "sender_type": sender_type, "tenant_key": tenant_key},
            "message": {
                "message_id": message_id or f"om_user{n}",
                "root_id": root_id,
                "parent_id": root_id,
                "create_time": str(int(time.time() * 1000)),
                "chat_id": chat_id,
                "thread_id": thread_id,
                "chat_type": chat_type,
                "message_type": message_type,
                "content": json.dumps(content if content is not None else {"text": text}, ensure_ascii=False),
                "mentions": mentions,
            },
        },
    }


def card_action_event(
    value: dict[str, Any],
    *,
    open_message_id: str,
    chat_id: str = "oc_chat",
    operator_open_id: str = "ou_user",
    token: str = "v-token",
    event_id: str | None = None,
) -> dict[str, Any]:
    """A `card.action.trigger` callback (schema 2.0) for a button whose `value` is given."""
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"evc_{next(_counter)}_{uuid.uuid4().hex[:6]}",
            "token": token,
            "create_time": str(int(time.time() * 1000)),
            "event_type": "card.action.trigger",
            "tenant_key": "tenant1",
            "app_id": "cli_test",
        },
        "event": {
            "operator": {"tenant_key": "tenant1", "open_id": operator_open_id, "union_id": "on_u"},
            "token": "c-delayed-update-token",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": open_message_id, "open_chat_id": chat_id},
        },
    }


def url_verification(challenge: str, token: str = "v-token") -> dict[str, Any]:
    return {"challenge": challenge, "token": token, "type": "url_verification"}


def seal(
    payload: dict[str, Any] | bytes,
    encrypt_key: str,
    *,
    timestamp: str | None = None,
    nonce: str = "nonce-1",
    sign: bool = True,
) -> tuple[bytes, dict[str, str]]:
    """Encrypt like Feishu (`{"encrypt": …}`) and sign the raw body; returns (body, headers)."""
    plain = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode("utf-8")
    body = json.dumps({"encrypt": crypto.encrypt(encrypt_key, plain)}).encode("utf-8")
    headers = {"content-type": "application/json"}
    if sign:
        ts = timestamp or str(int(time.time()))
        headers.update(
            {
                "x-lark-request-timestamp": ts,
                "x-lark-request-nonce": nonce,
                "x-lark-signature": crypto.signature(ts, nonce, encrypt_key, body),
            }
        )
    return body, headers


async def post_callback(base_url: str, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        return await client.post(path, content=body, headers=headers)


# --- long connection (what Feishu's WS gateway does) ------------------------------------------------


class FakeWsGateway:
    """The server side of lark-oapi's long connection: protobuf `pbbp2.Frame`s over a websocket.

    `push(kind, payload)` sends an EVENT or CARD data frame (optionally in several parts, as
    Feishu does for large payloads) and returns the client's acknowledgement: its status code
    and the decoded callback response, if any.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.connected = asyncio.Event()
        self._conn: Any = None
        self._acks: dict[str, asyncio.Future] = {}
        self._server: Any = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws?device_id=dev1&service_id=7"

    async def __aenter__(self) -> "FakeWsGateway":
        from websockets.asyncio.server import serve

        self._server = await serve(self._handle, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _handle(self, conn: Any) -> None:
        from lark_oapi.ws.pb.pbbp2_pb2 import Frame

        self._conn = conn
        self.connected.set()
        async for raw in conn:
            frame = Frame()
            frame.ParseFromString(raw)
            if frame.method != 1:  # control frames (ping)
                continue
            headers = {h.key: h.value for h in frame.headers}
            future = self._acks.get(headers.get("message_id", ""))
            if future is not None and not future.done():
                future.set_result(json.loads(frame.payload))

    async def push(self, kind: str, payload: dict[str, Any], *, parts: int = 1, timeout: float = 10.0) -> tuple[int, Any]:
        from lark_oapi.ws.pb.pbbp2_pb2 import Frame

        await asyncio.wait_for(self.connected.wait(), timeout)
        message_id = f"msg-{uuid.uuid4().hex[:8]}"
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        size = -(-len(data) // parts)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._acks[message_id] = future
        for seq in range(parts):
            frame = Frame()
            frame.SeqID, frame.LogID, frame.service, frame.method = seq, 0, 7, 1
            for key, value in (("type", kind), ("message_id", message_id), ("sum", str(parts)), ("seq", str(seq)), ("trace_id", "tr")):
                header = frame.headers.add()
                header.key, header.value = key, value
            frame.payload = data[seq * size:(seq + 1) * size]
            await self._conn.send(frame.SerializeToString())
        ack = await asyncio.wait_for(future, timeout)
        body = json.loads(base64.b64decode(ack["data"])) if ack.get("data") else None
        return int(ack.get("code", 0)), body
