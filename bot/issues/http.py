"""One API host (GitHub or GitCode) behind rate limits, retries and pacing.

- GitHub announces its budget on every response (X-RateLimit-Remaining / X-RateLimit-Reset, an
  epoch second). When the budget reaches 0 the next request waits until the reset; a 403/429 that
  says so (or carries Retry-After, GitHub's secondary limit) is retried after the wait.
- GitCode answers 429 when limited (Retry-After when given, else an exponential backoff) and is
  paced to a minimum interval between requests, because its documented default is per minute.
- 5xx and network errors are retried with exponential backoff, then the request fails.
- A wait longer than `max_wait` fails the request instead of blocking the command for an hour:
  the cursor is saved after every page, so a later run resumes where this one stopped.

The token travels only in the Authorization header; error messages never carry it (they hold
a status, a host name and a path), and they are passed through the redactor anyway.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

import httpx

from core.research.tools.issues import api_error_message

Host = Literal["github", "gitcode"]
_HOST_NAMES = {"github": "GitHub", "gitcode": "GitCode"}
_MAX_RATE_WAITS = 20  # distinct rate-limit waits for one request before giving up
_BACKOFF_CAP = 60.0


class Clock(Protocol):
    """Wall time (rate-limit resets are epoch seconds), a monotonic timer and sleep; tests inject one."""

    def time(self) -> float: ...

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ApiError(Exception):
    """A request that failed for good; the message is one line, fit for the user.

    `status` is set for a definite client error (4xx other than a rate limit), which a retry
    would not change; None for exhausted retries and rate limits.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Policy:
    retries: int = 5
    backoff_base: float = 1.0
    max_wait: float = 900.0
    min_interval: float = 0.0


@dataclass(frozen=True)
class ApiResponse:
    data: Any
    headers: httpx.Headers
    links: dict[str, str]  # rel -> URL, from the Link header


class HostClient:
    def __init__(
        self,
        http: httpx.AsyncClient,
        host: Host,
        base_url: str,
        token: str,
        policy: Policy,
        clock: Clock,
        redact: Callable[[str], str] = lambda s: s,
    ) -> None:
        self.host = host
        self.name = _HOST_NAMES[host]
        self._http = http
        self._base = base_url.rstrip("/")
        self._policy = policy
        self._clock = clock
        self._redact = redact
        self._headers = {"Accept": "application/json", "User-Agent": "ascend-inference-copilot-issue-sync"}
        if host == "github":
            self._headers.update({"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._blocked_until = 0.0  # epoch seconds; shared by every repository of this host
        self._last_request: float | None = None
        self.requests = 0

    async def get(self, path: str, params: dict[str, Any] | None = None) -> ApiResponse:
        failures = rate_waits = 0
        while True:
            await self._wait_turn(path)
            try:
                self.requests += 1
                response = await self._http.get(self._base + path, params=params, headers=self._headers)
            except httpx.HTTPError as exc:
                failures += 1
                if failures > self._policy.retries:
                    raise ApiError(self._clean(f"{self.name} unreachable ({type(exc).__name__}) on {path} after {failures} attempts")) from None
                await self._clock.sleep(self._backoff(failures))
                continue
            self._note_budget(response)
            wait = self._rate_limit_wait(response)
            if wait is not None:
                rate_waits += 1
                if rate_waits > _MAX_RATE_WAITS:
                    raise ApiError(f"{self.name} kept answering rate-limited on {path}; rerun later to resume")
                self._blocked_until = max(self._blocked_until, self._clock.time() + wait)
                continue
            if response.status_code >= 500:
                failures += 1
                if failures > self._policy.retries:
                    raise ApiError(f"{self.name} answered HTTP {response.status_code} on {path} {failures} times")
                await self._clock.sleep(self._backoff(failures))
                continue
            if response.status_code >= 400:
                raise ApiError(
                    self._clean(f"{self.name} answered HTTP {response.status_code} on {path}: {api_error_message(response)}"),
                    response.status_code,
                )
            try:
                data = response.json()
            except ValueError:
                raise ApiError(f"{self.name} answered with something that is not JSON on {path}") from None
            links = {rel: str(link.get("url", "")) for rel, link in response.links.items()}
            return ApiResponse(data, response.headers, links)

    def relative(self, url: str) -> str:
        """A link the API sent (Link: next), as a path under the base URL. A link to anywhere
        else is refused: the token must only ever travel to the configured host."""
        if url.startswith(self._base + "/"):
            return url[len(self._base) :]
        raise ApiError(f"{self.name} sent a next-page link outside its configured base URL; not following it")

    def _clean(self, text: str) -> str:
        return self._redact(" ".join(text.split()))[:300]

    async def _wait_turn(self, path: str) -> None:
        wait = self._blocked_until - self._clock.time()
        if wait > 0:
            if wait > self._policy.max_wait:
                until = datetime.fromtimestamp(self._blocked_until, timezone.utc).strftime("%H:%M UTC")
                hint = "" if "Authorization" in self._headers else f"; {self.name.upper()}_TOKEN raises the limit"
                raise ApiError(
                    f"{self.name} rate limit: next request allowed at {until} ({wait:.0f} s, more than "
                    f"ISSUES_MAX_WAIT_SECONDS={self._policy.max_wait:.0f}){hint}; rerun then to resume"
                )
            await self._clock.sleep(wait)
        if self._policy.min_interval > 0 and self._last_request is not None:
            gap = self._clock.monotonic() - self._last_request
            if gap < self._policy.min_interval:
                await self._clock.sleep(self._policy.min_interval - gap)
        self._last_request = self._clock.monotonic()

    def _note_budget(self, response: httpx.Response) -> None:
        """An exhausted budget blocks the next request until the announced reset."""
        if response.headers.get("x-ratelimit-remaining", "").strip() == "0":
            reset = _epoch(response.headers.get("x-ratelimit-reset"))
            if reset is not None:
                self._blocked_until = max(self._blocked_until, reset + 1)

    def _rate_limit_wait(self, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying a rate-limited answer; None when not rate-limited."""
        status = response.status_code
        retry_after = _seconds(response.headers.get("retry-after"))
        exhausted = response.headers.get("x-ratelimit-remaining", "").strip() == "0"
        if status == 429 or (status == 403 and (exhausted or retry_after is not None)):
            if retry_after is not None:
                return retry_after
            reset = _epoch(response.headers.get("x-ratelimit-reset"))
            if reset is not None:
                return max(1.0, reset + 1 - self._clock.time())
            return 60.0  # GitHub's advice for a secondary limit without headers; GitCode's per-minute window
        return None

    def _backoff(self, failures: int) -> float:
        return min(_BACKOFF_CAP, self._policy.backoff_base * 2 ** (failures - 1))


def _seconds(value: str | None) -> float | None:
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


def _epoch(value: str | None) -> float | None:
    return _seconds(value)


