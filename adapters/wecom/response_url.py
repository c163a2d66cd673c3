"""Active replies through a message's `response_url` (usable once, valid for one hour).

The URL comes from a verified callback, but it is still only ever sent to the
configured WeCom API origin (WECOM_API_URL): its path and query are kept and
the scheme/host replaced, which is also how tests and proxies redirect it.
A Redis marker makes the single use explicit, so a re-run job never posts twice.
"""
from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from redis.asyncio import Redis

from core.keys import Keys

from .store import PLATFORM, _digest

log = logging.getLogger(__name__)
_USED_TTL = 2 * 3600  # longer than the URL's one-hour validity


class ResponseUrlError(Exception):
    pass


def rebase(response_url: str, api_url: str) -> str:
    src, base = urlsplit(response_url), urlsplit(api_url)
    if not src.path.startswith("/cgi-bin/"):
        raise ResponseUrlError("response_url does not look like a WeCom API URL")
    prefix = base.path.rstrip("/")
    return urlunsplit((base.scheme, base.netloc, prefix + src.path, src.query, ""))


class ResponseUrlClient:
    def __init__(self, http: httpx.AsyncClient, redis: Redis, keys: Keys, api_url: str) -> None:
        self._http = http
        self._redis = redis
        self._keys = keys
        self._api_url = api_url

    async def send(self, response_url: str, body: dict[str, Any]) -> bool:
        """POST once; False when it was already used (or is missing). Raises ResponseUrlError on failure."""
        if not response_url:
            return False
        marker = self._keys.adapter_state(PLATFORM, f"response-url-used:{_digest(response_url)}")
        if not await self._redis.set(marker, "1", nx=True, ex=_USED_TTL):
            return False
        url = rebase(response_url, self._api_url)
        try:
            resp = await self._http.post(url, json=body)
            data = resp.json() if resp.content else {}
        except httpx.ConnectError as exc:
            await self._redis.delete(marker)  # never reached WeCom: the single use is still ours
            raise ResponseUrlError("response_url unreachable") from exc
        except (httpx.HTTPError, ValueError) as exc:
            raise ResponseUrlError(f"response_url POST failed: {type(exc).__name__}") from exc
        if resp.status_code != 200 or data.get("errcode", 0) != 0:
            # The URL's query holds a one-time code: log neither it nor the body.
            raise ResponseUrlError(f"response_url rejected: http {resp.status_code} errcode {data.get('errcode')}")
        return True

    async def send_markdown(self, response_url: str, content: str) -> bool:
        return await self.send(response_url, {"msgtype": "markdown", "markdown": {"content": content}})
