"""A small async Feishu/Lark Open API client on httpx, pointed at FEISHU_API_URL.

Why not lark-oapi's client: it is synchronous underneath for most calls and
hides response codes we need to act on (token errors, rate limits, card
failures). Every call: Bearer tenant token; one refresh and retry on a token
error; backoff and retry on rate limits and 5xx (our writes carry a uuid or are
idempotent updates, so a retry never posts twice).
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx

from adapters.feishu.token import TenantToken

log = logging.getLogger(__name__)

# 99991661 missing token, 99991663 invalid tenant token, 99991664/99991665/99991668 other invalid-token codes
TOKEN_ERROR_CODES = frozenset({99991661, 99991663, 99991664, 99991665, 99991668})
RATE_LIMIT_CODES = frozenset({99991400})
MAX_RATE_LIMIT_RETRIES = 3
MAX_BACKOFF_SECONDS = 5.0


class FeishuApiError(RuntimeError):
    def __init__(self, path: str, status: int, code: int, msg: str) -> None:
        super().__init__(f"{path}: HTTP {status} code={code} msg={msg}")
        self.status = status
        self.code = code


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class FeishuApi:
    def __init__(self, http: httpx.AsyncClient, token: TenantToken) -> None:
        self._http = http
        self._token = token

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, str] | None = None) -> dict[str, Any]:
        content = _dumps(body).encode("utf-8") if body is not None else None
        token_retried = False
        attempt = 0
        while True:
            attempt += 1
            token = await self._token.get()
            headers = {"Authorization": f"Bearer {token}"}
            if content is not None:
                headers["Content-Type"] = "application/json; charset=utf-8"
            try:
                response = await self._http.request(method, path, content=content, params=params, headers=headers)
            except httpx.TransportError as exc:
                if attempt <= 2:
                    await asyncio.sleep(0.2 * attempt)
                    continue
                raise FeishuApiError(path, 0, -1, type(exc).__name__) from None
            try:
                data = response.json()
            except ValueError:
                data = {}
            if not isinstance(data, dict):
                data = {}
            code = data.get("code", -1 if response.status_code >= 400 else 0)
            code = code if isinstance(code, int) else -1
            if response.status_code < 400 and code == 0:
                return data
            if (code in TOKEN_ERROR_CODES or response.status_code == 401) and not token_retried:
                token_retried = True
                self._token.invalidate(token)
                continue
            if (response.status_code == 429 or code in RATE_LIMIT_CODES) and attempt <= MAX_RATE_LIMIT_RETRIES:
                await asyncio.sleep(self._backoff(response, attempt))
                continue
            if response.status_code >= 500 and attempt <= 2:
                await asyncio.sleep(0.2 * attempt)
                continue
            msg = str(data.get("msg", ""))[:200]
            log.warning("feishu api %s %s failed: HTTP %s code=%s msg=%s", method, path, response.status_code, code, msg)
            raise FeishuApiError(path, response.status_code, code, msg)

    @staticmethod
    def _backoff(response: httpx.Response, attempt: int) -> float:
        # Feishu tells how long until the window resets; otherwise back off linearly
        reset = response.headers.get("x-ogw-ratelimit-reset")
        try:
            wait = float(reset) if reset is not None else 0.5 * attempt
        except ValueError:
            wait = 0.5 * attempt
        return max(0.0, min(wait, MAX_BACKOFF_SECONDS))

    # --- messages -------------------------------------------------------------------------
    async def reply(self, message_id: str, msg_type: str, content: dict[str, Any], *, uuid: str, in_thread: bool = False) -> str:
        """Reply to `message_id`; `uuid` makes a repeated call (retry, redelivered job) a no-op."""
        body: dict[str, Any] = {"msg_type": msg_type, "content": _dumps(content), "uuid": uuid}
        if in_thread:
            body["reply_in_thread"] = True
        data = await self.call("POST", f"/open-apis/im/v1/messages/{message_id}/reply", body)
        return str((data.get("data") or {}).get("message_id", ""))

    async def patch_card(self, message_id: str, card: dict[str, Any]) -> None:
        await self.call("PATCH", f"/open-apis/im/v1/messages/{message_id}", {"content": _dumps(card)})

    # --- CardKit (streaming card entities) ------------------------------------------------
    async def create_card(self, card: dict[str, Any]) -> str:
        data = await self.call("POST", "/open-apis/cardkit/v1/cards", {"type": "card_json", "data": _dumps(card)})
        card_id = str((data.get("data") or {}).get("card_id", ""))
        if not card_id:
            raise FeishuApiError("/open-apis/cardkit/v1/cards", 200, -1, "no card_id")
        return card_id

    async def stream_text(self, card_id: str, element_id: str, content: str, sequence: int) -> None:
        await self.call(
            "PUT",
            f"/open-apis/cardkit/v1/cards/{card_id}/elements/{element_id}/content",
            {"content": content, "sequence": sequence},
        )

    async def card_settings(self, card_id: str, settings: dict[str, Any], sequence: int) -> None:
        await self.call("PATCH", f"/open-apis/cardkit/v1/cards/{card_id}/settings", {"settings": _dumps(settings), "sequence": sequence})

    async def update_card(self, card_id: str, card: dict[str, Any], sequence: int) -> None:
        await self.call(
            "PUT", f"/open-apis/cardkit/v1/cards/{card_id}", {"card": {"type": "card_json", "data": _dumps(card)}, "sequence": sequence}
        )

    # --- bot ------------------------------------------------------------------------------
    async def bot_open_id(self) -> str:
        data = await self.call("GET", "/open-apis/bot/v3/info")
        bot = data.get("bot") or (data.get("data") or {}).get("bot") or {}
        return str(bot.get("open_id", ""))
