"""tenant_access_token: fetched once, shared by all calls, refreshed before it expires.

Feishu tokens live up to 2 h and asking again with less than 30 min left yields a
new one, so we refresh 10 min before expiry (as lark-oapi does). Concurrent callers
wait on one refresh instead of stampeding the auth endpoint.
"""
from __future__ import annotations

import asyncio
import time
from typing import Callable

import httpx

TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
REFRESH_MARGIN_SECONDS = 600.0


class FeishuAuthError(RuntimeError):
    """The app credentials were refused (wrong app id/secret, app disabled…)."""

    def __init__(self, code: int, msg: str) -> None:
        super().__init__(f"tenant_access_token refused: code={code} msg={msg}")
        self.code = code


class TenantToken:
    def __init__(
        self,
        http: httpx.AsyncClient,
        app_id: str,
        app_secret: str,
        *,
        margin: float = REFRESH_MARGIN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http = http
        self._app_id = app_id
        self._app_secret = app_secret
        self._margin = margin
        self._clock = clock
        self._token = ""
        self._fresh_until = 0.0
        self._lock = asyncio.Lock()
        self.fetches = 0  # for `doctor` and tests: how often we went to the auth endpoint

    def _valid(self) -> bool:
        return bool(self._token) and self._clock() < self._fresh_until

    async def get(self) -> str:
        if self._valid():
            return self._token
        async with self._lock:
            if not self._valid():
                await self._fetch()
            return self._token

    def invalidate(self, token: str) -> None:
        """Forget `token` after Feishu rejected it (only if no one refreshed it meanwhile)."""
        if token == self._token:
            self._fresh_until = 0.0

    async def _fetch(self) -> None:
        response = await self._http.post(TOKEN_PATH, json={"app_id": self._app_id, "app_secret": self._app_secret})
        try:
            data = response.json()
        except ValueError:
            raise FeishuAuthError(-1, f"HTTP {response.status_code}, not JSON") from None
        if not isinstance(data, dict) or data.get("code") != 0 or not data.get("tenant_access_token"):
            code = data.get("code", -1) if isinstance(data, dict) else -1
            msg = str(data.get("msg", "")) if isinstance(data, dict) else ""
            raise FeishuAuthError(int(code) if isinstance(code, int) else -1, msg[:200])
        self.fetches += 1
        self._token = str(data["tenant_access_token"])
        expire = float(data.get("expire") or 0)
        # a token that expires within the margin is used for this call and fetched again next time
        self._fresh_until = self._clock() + max(0.0, expire - self._margin)
