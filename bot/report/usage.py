"""Model tokens of the job being answered, for its answer record.

The conversation reports each research outcome through one hook (bot/wiring.py), which knows
nothing of jobs; the worker opens a tally per job in a context variable, and the hook adds to the
tally of whichever job's task it runs in (asyncio copies the context into the tasks a job starts,
and the tally is shared by reference).
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from bot.metrics import TOKEN_KINDS


@dataclass
class TokenTally:
    tokens: int = 0  # all four kinds, like copilot_model_tokens_total summed over `kind`


_current: ContextVar[TokenTally | None] = ContextVar("job_tokens", default=None)


def open_tally() -> TokenTally:
    """A fresh tally for the job running in this task (and the tasks it starts)."""
    tally = TokenTally()
    _current.set(tally)
    return tally


def add_research_usage(outcome: Any) -> None:
    """The research hook: count the outcome's tokens on the current job's tally (none outside a job)."""
    tally = _current.get()
    if tally is None:
        return
    usage = getattr(outcome, "usage", None)
    tally.tokens += sum(int(getattr(usage, kind, 0) or 0) for kind in TOKEN_KINDS)
