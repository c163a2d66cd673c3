"""Optional request features a partial server may refuse, and the process-wide memory of refusals.

vLLM/vllm-ascend and SGLang implement a subset of Anthropic's Messages API,
and Chinese providers' Anthropic endpoints and OpenAI gateways each drop a
different part. A feature the answer does not depend on (prompt-cache
markers, thinking blocks, tool_choice, `is_error` on tool results, system as
a block list, `stream_options`) is removed and the request retried once when
the server answers 400 about it; the endpoint then never gets it again in
this process, so only the first request pays the extra round trip.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

# feature -> the word a server's 400 message names it by (None: only dropped by a generic 400)
OPTIONAL_FEATURES: dict[str, str | None] = {
    "cache_control": "cache_control",
    "thinking": "thinking",
    "tool_choice": "tool_choice",
    "is_error": "is_error",
    "stream_options": "stream_options",
    "system_blocks": None,
}
# Words of a 400 that refuses a request's shape rather than its content.
_GENERIC_REFUSALS = ("extra", "not permitted", "unsupported", "not supported", "unknown", "unrecognized", "invalid")

# Phrases of a 400 that refuses tool calling itself (vLLM: '"auto" tool choice requires
# --enable-auto-tool-choice'; gateways: "does not support tools", "function calling is not supported").
# Deliberately not "tool_calls": a 400 about one malformed message must not switch tools off.
_TOOL_REFUSALS = ("tool choice", "tool_choice", "tools", "tool call", "tool-call", "function call", "function_call", "tool use")

_DROPPED: dict[str, set[str]] = {}


def refuses_tools(error_text: str) -> bool:
    """Whether a 400's (lower-cased) text refuses the request's tools."""
    return any(phrase in error_text for phrase in _TOOL_REFUSALS)


def dropped_features(endpoint: str) -> frozenset[str]:
    return frozenset(_DROPPED.get(endpoint, ()))


def remember_dropped(endpoint: str, features: Iterable[str]) -> None:
    new = set(features) - _DROPPED.get(endpoint, set())
    if new:
        _DROPPED.setdefault(endpoint, set()).update(new)
        # One line per feature and process; names only, never the server's text or the request.
        log.warning("model server refused %s; sending requests without it from now on", ", ".join(sorted(new)))


def forget_all() -> None:
    """For tests: a fresh process."""
    _DROPPED.clear()


def present_features(params: dict[str, Any]) -> set[str]:
    """The optional features this request uses."""
    present: set[str] = set()
    messages = json.dumps(params.get("messages", []), ensure_ascii=False)
    if '"cache_control"' in messages or '"cache_control"' in json.dumps(
        [params.get("system"), params.get("tools")], ensure_ascii=False
    ):
        present.add("cache_control")
    if "thinking" in params or '"type": "thinking"' in messages or '"type": "redacted_thinking"' in messages:
        present.add("thinking")
    if "tool_choice" in params:
        present.add("tool_choice")
    if '"is_error"' in messages:
        present.add("is_error")
    if "stream_options" in params:
        present.add("stream_options")
    if isinstance(params.get("system"), list):
        present.add("system_blocks")
    return present


def features_to_drop(error_text: str, params: dict[str, Any]) -> set[str]:
    """What to remove after a 400 whose (lower-cased) text is `error_text`.

    The features the error names; if it names none but refuses the request's shape and is not
    about tools, every optional feature the request used (one retry decides)."""
    present = present_features(params)
    named = {f for f in present if OPTIONAL_FEATURES[f] and OPTIONAL_FEATURES[f] in error_text}
    if named:
        return named
    if refuses_tools(error_text):
        return set()  # a refusal of the tools themselves: the caller falls back to retrieval
    if any(word in error_text for word in _GENERIC_REFUSALS):
        return present
    return set()
