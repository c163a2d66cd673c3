"""What the Anthropic and OpenAI clients share: one model turn, with the same retries and the
same answers to a partial server.

The provider SDKs retry 429/5xx and connection errors before a response starts. Around that,
every provider gets the same policy here:
- a stream that fails after it started (`MidStreamFailure`) is retried once as a whole turn;
  a second failure makes the model unavailable;
- a 400/422 that refuses an optional request feature (compat.py) is retried once without it,
  and the feature stays off for that endpoint once a request without it succeeds;
- a 400/422 that refuses the tools raises `ToolsUnsupported` (remembered for the process), so
  the agent answers from its own retrieval;
- anything else is `ModelUnavailable`, with a message that holds no key and no server text.

A subclass says how to make its SDK's client, build a request, run one turn, read a server's error text and strip
features from a request; the SDK's error classes are class attributes.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from core.research.compat import dropped_features, features_to_drop, refuses_tools, remember_dropped
from core.research.model import (
    Message,
    ModelReply,
    ModelUnavailable,
    TextCallback,
    ToolSpec,
    ToolsUnsupported,
)

log = logging.getLogger(__name__)


class MidStreamFailure(Exception):
    """A stream broke after the response started (the SDK no longer retries it)."""


class SdkClient(ABC):
    provider: ClassVar[str]  # the endpoint key's prefix ("anthropic", "openai")
    default_max_tokens: ClassVar[int]
    status_error: ClassVar[type[Exception]]  # the SDK's APIStatusError (has .status_code)
    connection_error: ClassVar[type[Exception]]  # the SDK's APIConnectionError

    def __init__(
        self,
        *,
        api_key: str,
        model: str | None,
        base_url: str | None = None,
        max_tokens: int | None = None,  # None: the provider's default_max_tokens
        max_retries: int = 2,
        stream: bool = True,
        timeout: float = 120.0,
    ) -> None:
        # base_url None lets the SDK read its own variable (ANTHROPIC_BASE_URL, OPENAI_BASE_URL).
        self._client = self._sdk(api_key=api_key, base_url=base_url or None, max_retries=max_retries, timeout=timeout)
        self._model = model or ""  # "": the OpenAI client asks the server (resolve_model)
        self._max_tokens = max_tokens or self.default_max_tokens
        self._stream = stream

    @property
    def endpoint(self) -> str:
        """What process-wide compatibility memory is keyed by (never holds the key)."""
        return f"{self.provider}:{self._client.base_url}"

    @property
    def tools_rejected(self) -> bool:
        return "tools" in dropped_features(self.endpoint)

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        *,
        system: str,
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        on_text: TextCallback | None = None,
    ) -> ModelReply:
        if tools and self.tools_rejected:
            raise ToolsUnsupported("the model server refused tools earlier")
        params = await self._request(system=system, tools=tools, messages=messages)
        retried_mid_stream = False
        dropped: set[str] = set()  # remembered once a request without them succeeds
        while True:
            try:
                reply = await self._turn(params, on_text)
            except MidStreamFailure as failure:
                if not retried_mid_stream:
                    retried_mid_stream = True
                    log.warning("model stream failed mid-way (%s); retrying the turn once", failure)
                    continue
                raise ModelUnavailable(f"stream failed twice: {failure}") from None
            except self.status_error as exc:
                status: int = exc.status_code  # type: ignore[attr-defined]
                error = self._error_text(exc)
                if status in (400, 422) and not dropped:
                    drop = self._features_to_drop(error, params)
                    if drop:
                        dropped = drop
                        params = self._without(params, drop)
                        continue
                if status in (400, 422) and tools and refuses_tools(error):
                    remember_dropped(self.endpoint, {"tools"})
                    raise ToolsUnsupported(f"model API error {status}: tools refused") from None
                raise ModelUnavailable(self._status_problem(status, exc)) from None
            except self.connection_error as exc:
                raise ModelUnavailable(f"model API unreachable ({type(exc).__name__})") from None
            remember_dropped(self.endpoint, dropped)
            return reply

    @abstractmethod
    def _sdk(self, *, api_key: str, base_url: str | None, max_retries: int, timeout: float) -> Any:
        """The provider SDK's async client (it retries before a response starts)."""

    @abstractmethod
    async def _request(self, *, system: str, tools: Sequence[ToolSpec], messages: Sequence[Message]) -> dict[str, Any]:
        """The request's parameters, without the features this endpoint refused before."""

    @abstractmethod
    async def _turn(self, params: dict[str, Any], on_text: TextCallback | None) -> ModelReply:
        """One request; raises MidStreamFailure when a started stream breaks."""

    @abstractmethod
    def _error_text(self, exc: Exception) -> str:
        """The server's error text, lower-cased, for matching only: it is never logged or shown."""

    @abstractmethod
    def _without(self, params: dict[str, Any], features: set[str] | frozenset[str]) -> dict[str, Any]:
        """A copy of the request without the optional features a server refused."""

    def _features_to_drop(self, error: str, params: dict[str, Any]) -> set[str]:
        return features_to_drop(error, params)

    def _status_problem(self, status: int, exc: Exception) -> str:
        return f"model API error {status} ({type(exc).__name__})"
