"""A local fake Telegram Bot API, reached by the real python-telegram-bot through its base_url.

Routes are `/bot<TOKEN>/<method>`; requests arrive form-encoded with JSON-encoded values, answers
are `{"ok": true, "result": …}` or `{"ok": false, "error_code": …, "description": …}` like the
real API. It is strict where Telegram is strict, so the adapter's output is checked on the wire:
HTML must use supported tags, be balanced and escape `<`, `>`, `&`; text is at most 4,096
characters after entity parsing; callback_data at most 64 bytes; drafts only in private chats;
editing to identical content gives "message is not modified".

Tests script failures with `fail_next(method, ...)` (429 with retry_after, a refused parse,
"bot was blocked", a chat migration) and read what the bot did from `calls`.
"""
from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.fake_http import FakeServer

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijkl"
BOT_ID = 123456789
BOT_USERNAME = "ascend_copilot_bot"

_JSON_FIELDS = {
    "chat_id", "message_id", "draft_id", "reply_markup", "reply_parameters", "message_thread_id", "offset",
    "timeout", "limit", "allowed_updates", "link_preview_options", "show_alert", "drop_pending_updates",
    "entities", "max_connections", "cache_time",
}
_ALLOWED_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "code", "pre",
    "blockquote", "tg-emoji", "tg-time",
}
_HTML_TOKEN = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^<>]*)?)>|&(#\d+|#x[0-9a-fA-F]+|lt|gt|amp|quot);|[<>&]")


class EntityError(ValueError):
    pass


def parse_html(text: str) -> str:
    """Telegram-style HTML validation; returns the visible text or raises EntityError."""
    visible: list[str] = []
    stack: list[str] = []
    pos = 0
    for m in _HTML_TOKEN.finditer(text):
        visible.append(text[pos : m.start()])
        pos = m.end()
        token = m.group(0)
        if m.group(2):
            name = m.group(2).lower()
            if name not in _ALLOWED_TAGS:
                raise EntityError(f"Can't parse entities: unsupported start tag \"{name}\" at byte offset {m.start()}")
            if m.group(1):
                if not stack or stack[-1] != name:
                    raise EntityError(f"Can't parse entities: can't find end tag corresponding to start tag \"{name}\"")
                stack.pop()
            else:
                stack.append(name)
        elif m.group(4):
            visible.append(html.unescape(token))
        else:
            raise EntityError(f"Can't parse entities: unexpected character {token!r} at byte offset {m.start()}")
    visible.append(text[pos:])
    if stack:
        raise EntityError(f"Can't parse entities: can't find end tag corresponding to start tag \"{stack[-1]}\"")
    return "".join(visible)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


@dataclass
class Failure:
    method: str
    status: int
    description: str
    parameters: dict[str, Any] | None
    when: Callable[[dict[str, Any]], bool] | None
    times: int


@dataclass
class StoredMessage:
    message_id: int
    chat_id: int
    text: str
    parse_mode: str | None
    reply_markup: Any = None
    reply_to: int | None = None
    thread_id: int | None = None
    edits: int = 0


class FakeTelegram:
    def __init__(self, token: str = TOKEN, bot_id: int = BOT_ID, username: str = BOT_USERNAME) -> None:
        self.token = token
        self.bot_id = bot_id
        self.username = username
        self.calls: list[Call] = []
        self.messages: dict[tuple[int, int], StoredMessage] = {}
        self.webhook: dict[str, Any] | None = None
        self._failures: list[Failure] = []
        self._ids = itertools.count(1000)
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(500_000)
        self._new_updates = asyncio.Event()
        self._gates: dict[str, asyncio.Event] = {}
        self.server = FakeServer([Route("/bot{token}/{method}", self._endpoint, methods=["POST", "GET"])])

    # --- running --------------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        """What TELEGRAM_API_URL should be: PTB appends the token."""
        return f"{self.server.url}/bot"

    async def __aenter__(self) -> "FakeTelegram":
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._new_updates.set()
        await self.server.__aexit__(*exc)

    # --- scripting ------------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int,
        description: str,
        parameters: dict[str, Any] | None = None,
        *,
        when: Callable[[dict[str, Any]], bool] | None = None,
        times: int = 1,
    ) -> None:
        self._failures.append(Failure(method, status, description, parameters, when, times))

    def hold(self, method: str) -> asyncio.Event:
        """Hold every call to `method` until the returned event is set (a request in flight)."""
        gate = self._gates[method] = asyncio.Event()
        return gate

    def push_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update for getUpdates (long polling)."""
        update = {"update_id": next(self._update_ids), **update}
        self._updates.append(update)
        self._new_updates.set()
        return update

    # --- reading --------------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def texts_sent(self, chat_id: int | None = None) -> list[str]:
        return [c.params["text"] for c in self.calls_to("sendMessage") if chat_id is None or c.params["chat_id"] == chat_id]

    def chat_messages(self, chat_id: int) -> list[StoredMessage]:
        return sorted((m for (c, _), m in self.messages.items() if c == chat_id), key=lambda m: m.message_id)

    def visible(self, message: StoredMessage) -> str:
        return parse_html(message.text) if message.parse_mode == "HTML" else message.text

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait until the bot has done something (not a speed assertion: the timeout only stops a hang)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"fake Telegram: condition not met; calls: {[c.method for c in self.calls]}")
            await asyncio.sleep(0.02)

    # --- the API ---------------------------------------------------------------------------------

    async def _endpoint(self, request: Request) -> JSONResponse:
        if request.path_params["token"] != self.token:
            return _error(401, "Unauthorized")
        method = request.path_params["method"]
        form = await request.form()
        params = {k: (json.loads(v) if k in _JSON_FIELDS and isinstance(v, str) else v) for k, v in form.items()}
        self.calls.append(Call(method, params))
        if method in self._gates:
            await self._gates[method].wait()
        failure = self._take_failure(method, params)
        if failure is not None:
            return _error(failure.status, failure.description, failure.parameters)
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return _error(404, "Not Found: method not found")
        try:
            result = await handler(params)
        except EntityError as exc:
            return _error(400, f"Bad Request: {exc}")
        except _ApiError as exc:
            return _error(exc.status, exc.description, exc.parameters)
        return JSONResponse({"ok": True, "result": result})

    def _take_failure(self, method: str, params: dict[str, Any]) -> Failure | None:
        for failure in self._failures:
            if failure.method == method and (failure.when is None or failure.when(params)):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                return failure
        return None

    def _user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": "Ascend Copilot", "username": self.username}

    async def _m_getMe(self, _: dict[str, Any]) -> Any:
        return {**self._user(), "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": False}

    async def _m_setWebhook(self, params: dict[str, Any]) -> Any:
        self.webhook = {"url": params.get("url"), "secret_token": params.get("secret_token"), "allowed_updates": params.get("allowed_updates")}
        return True

    async def _m_deleteWebhook(self, _: dict[str, Any]) -> Any:
        self.webhook = None
        return True

    async def _m_getUpdates(self, params: dict[str, Any]) -> Any:
        if self.webhook is not None:
            raise _ApiError(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
        offset = int(params.get("offset") or 0)
        if offset:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        if not self._updates:
            self._new_updates.clear()
            # Hold the long poll briefly (never the full timeout, so tests stop quickly).
            try:
                await asyncio.wait_for(self._new_updates.wait(), timeout=min(float(params.get("timeout") or 0), 0.3))
            except TimeoutError:
                pass
        return list(self._updates)

    def _chat(self, chat_id: int) -> dict[str, Any]:
        if chat_id > 0:
            return {"id": chat_id, "type": "private", "first_name": "User"}
        return {"id": chat_id, "type": "supergroup" if chat_id < -1_000_000_000_000 else "group", "title": "Group"}

    def _check_text(self, text: str, parse_mode: str | None) -> None:
        visible = parse_html(text) if parse_mode == "HTML" else text
        if not visible.strip():
            raise _ApiError(400, "Bad Request: message text is empty")
        if utf16_len(visible) > 4096:
            raise _ApiError(400, "Bad Request: message is too long")

    def _check_markup(self, markup: Any) -> None:
        if not markup:
            return
        for row in markup.get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode("utf-8")) <= 64:
                    raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")

    def _message_json(self, m: StoredMessage) -> dict[str, Any]:
        out: dict[str, Any] = {
            "message_id": m.message_id,
            "date": int(time.time()),
            "chat": self._chat(m.chat_id),
            "from": self._user(),
            "text": parse_html(m.text) if m.parse_mode == "HTML" else m.text,
        }
        if m.reply_markup:
            out["reply_markup"] = m.reply_markup
        if m.thread_id:
            out["message_thread_id"] = m.thread_id
            out["is_topic_message"] = True
        return out

    async def _m_sendMessage(self, params: dict[str, Any]) -> Any:
        text, parse_mode = params.get("text", ""), params.get("parse_mode")
        self._check_text(text, parse_mode)
        self._check_markup(params.get("reply_markup"))
        chat_id = int(params["chat_id"])
        reply = params.get("reply_parameters") or {}
        m = StoredMessage(
            next(self._ids), chat_id, text, parse_mode, params.get("reply_markup"), reply.get("message_id"), params.get("message_thread_id")
        )
        self.messages[(chat_id, m.message_id)] = m
        return self._message_json(m)

    async def _m_editMessageText(self, params: dict[str, Any]) -> Any:
        chat_id, message_id = int(params["chat_id"]), int(params["message_id"])
        m = self.messages.get((chat_id, message_id))
        if m is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        text, parse_mode = params.get("text", ""), params.get("parse_mode")
        self._check_text(text, parse_mode)
        self._check_markup(params.get("reply_markup"))
        if text == m.text and params.get("reply_markup") == m.reply_markup:
            raise _ApiError(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same")
        m.text, m.parse_mode, m.reply_markup = text, parse_mode, params.get("reply_markup")
        m.edits += 1
        return self._message_json(m)

    async def _m_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        m = self.messages.get((int(params["chat_id"]), int(params["message_id"])))
        if m is None:
            raise _ApiError(400, "Bad Request: message to edit not found")
        m.reply_markup = params.get("reply_markup")
        return self._message_json(m)

    async def _m_sendChatAction(self, params: dict[str, Any]) -> Any:
        return True

    async def _m_sendMessageDraft(self, params: dict[str, Any]) -> Any:
        if int(params["chat_id"]) <= 0:
            raise _ApiError(400, "Bad Request: drafts can be sent only to private chats")
        if int(params.get("draft_id") or 0) == 0:
            raise _ApiError(400, "Bad Request: draft_id must be non-zero")
        if params.get("text"):
            self._check_text(params["text"], params.get("parse_mode"))
        return True

    async def _m_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        return True

    async def _m_deleteMessage(self, params: dict[str, Any]) -> Any:
        self.messages.pop((int(params["chat_id"]), int(params["message_id"])), None)
        return True


class _ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


def _error(status: int, description: str, parameters: dict[str, Any] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return JSONResponse(body, status_code=status)


# --- update builders (what Telegram would POST) ---------------------------------------------------

_counter = itertools.count(1)


def user(user_id: int = 42, first_name: str = "Ada", username: str = "ada") -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": first_name, "username": username}


def private_chat(user_id: int = 42) -> dict[str, Any]:
    return {"id": user_id, "type": "private", "first_name": "Ada"}


def group_chat(chat_id: int = -100_200_300, kind: str = "supergroup", forum: bool = False) -> dict[str, Any]:
    chat: dict[str, Any] = {"id": chat_id, "type": kind, "title": "NPU users"}
    if forum:
        chat["is_forum"] = True
    return chat


def utf16_offset(text: str, part: str) -> tuple[int, int]:
    index = text.index(part)
    return utf16_len(text[:index]), utf16_len(part)


def message_update(
    text: str,
    *,
    chat: dict[str, Any] | None = None,
    sender: dict[str, Any] | None = None,
    update_id: int | None = None,
    message_id: int | None = None,
    entities: list[dict[str, Any]] | None = None,
    reply_to: dict[str, Any] | None = None,
    thread_id: int | None = None,
    mention: str | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """An Update with a new text message. `mention`/`command` add the entity Telegram would add."""
    found = list(entities or [])
    if mention:
        offset, length = utf16_offset(text, mention)
        found.append({"type": "mention", "offset": offset, "length": length})
    if command:
        offset, length = utf16_offset(text, command)
        found.append({"type": "bot_command", "offset": offset, "length": length})
    message: dict[str, Any] = {
        "message_id": message_id or next(_counter),
        "date": int(time.time()),
        "chat": chat or private_chat(),
        "from": sender or user(),
        "text": text,
    }
    if found:
        message["entities"] = found
    if reply_to is not None:
        message["reply_to_message"] = reply_to
    if thread_id is not None:
        message["message_thread_id"] = thread_id
        message["is_topic_message"] = True
    return {"update_id": update_id or 700_000 + next(_counter), "message": message}


def callback_update(
    data: str, *, message: dict[str, Any], sender: dict[str, Any] | None = None, update_id: int | None = None
) -> dict[str, Any]:
    return {
        "update_id": update_id or 700_000 + next(_counter),
        "callback_query": {
            "id": f"cbq-{next(_counter)}",
            "from": sender or user(),
            "chat_instance": "ci-1",
            "data": data,
            "message": message,
        },
    }
