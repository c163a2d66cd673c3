"""Which of a model turn's tool calls run: at most a few per turn, and never the same call twice.

A model can ask for any number of tool calls in one turn, and can ask again for a call whose result
it already has. Both are refused with a short error result the model reads (so it carries on), never
by raising: the answer keeps going with what already ran.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from core.research.model import ToolUse

# Why 6: every call costs seconds, a share of the trackers' rate limits (GitHub allows 10 unauthenticated
# searches a minute) and up to the output byte budget of prompt tokens in every later turn. The widest
# useful fan-out is about issues + code + wiki for two repositories; beyond that a turn is spraying.
MAX_CALLS_PER_TURN = 6

TOO_MANY = (
    "Not run: too many tool calls in one turn (at most {limit} run per turn); "
    "ask again for the most important ones."
)
REPEATED = (
    "Not run: this exact call ({tool} with the same arguments) already ran in this answer, and its result "
    "is above. Use that result, or call with different arguments."
)


@dataclass(frozen=True)
class Planned:
    call: ToolUse
    refusal: str = ""  # empty: run the call


def call_key(call: ToolUse) -> str:
    """Tool name plus its arguments as canonical JSON (sorted keys), so key order does not matter."""
    try:
        arguments = json.dumps(call.input, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a structure json cannot sort (mixed key types): fall back to its text
        arguments = repr(call.input)
    return f"{call.name}\0{arguments}"


class TurnGuard:
    """One per answer: remembers every call that ran, and caps each turn."""

    def __init__(self, max_calls: int = MAX_CALLS_PER_TURN) -> None:
        self._max = max(1, max_calls)
        self._seen: set[str] = set()

    def plan(self, calls: Sequence[ToolUse]) -> list[Planned]:
        planned: list[Planned] = []
        running = 0
        for call in calls:
            key = call_key(call)
            if key in self._seen:
                planned.append(Planned(call, REPEATED.format(tool=call.name[:40])))
            elif running >= self._max:
                planned.append(Planned(call, TOO_MANY.format(limit=self._max)))
            else:
                self._seen.add(key)
                running += 1
                planned.append(Planned(call))
        return planned
