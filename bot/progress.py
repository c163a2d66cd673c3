"""The progress lines a long command prints as it goes (`sync`, `sync --issues`).

The callback is the caller's: the CLI prints, tests collect, and either may be async.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

ProgressFn = Callable[[str], Any]


async def say(progress: ProgressFn | None, line: str) -> None:
    """Pass one line on (nothing without a callback), awaiting the callback if it returns an awaitable."""
    if progress is None:
        return
    outcome = progress(line)
    if inspect.isawaitable(outcome):
        await outcome
