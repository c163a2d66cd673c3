"""Run CPU-heavy rendering off the event loop when the input is large.

Rendering is linear (issue 16) but a 200 KB answer still costs tens to hundreds of milliseconds,
and under `serve` the same loop answers webhooks and /healthz. A large render therefore runs in
a worker thread: the GIL is handed back to the loop every switch interval, so other requests keep
being served while it runs. Small inputs (almost every answer) run inline: a thread hop costs more
than rendering a few kilobytes.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

OFFLOAD_THRESHOLD = 20_000  # characters of text in the arguments


def text_size(value: Any, depth: int = 0) -> int:
    """Characters of text in `value`: strings, a Reply-like object's `text`, or containers of them."""
    if isinstance(value, str):
        return len(value)
    if depth > 2:  # arguments are a Reply, a string, a list of units: nothing deeper matters
        return 0
    if isinstance(value, (list, tuple)):
        return sum(text_size(item, depth + 1) for item in value)
    text = getattr(value, "text", None)
    return len(text) if isinstance(text, str) else 0


async def render_off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)`, in a worker thread when its text arguments exceed OFFLOAD_THRESHOLD."""
    size = sum(text_size(a) for a in args) + sum(text_size(v) for v in kwargs.values())
    if size <= OFFLOAD_THRESHOLD:
        return fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)
