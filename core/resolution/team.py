"""Team resolutions: an expert's answer in a thread, saved so the next asker in that workspace gets it.

An expert (EXPERTS, platform-qualified like the allowlists: `slack:U0123`, `feishu:ou_…`) sends
`save as answer: <their answer>` (`保存答案：…`) in a thread where the bot answered; the thread's
question and that answer become a team resolution, kept in Redis per platform and workspace (or
tenant) and never read outside it. A later question that meets the saved one on an error
signature or on specific words gets it first, cited as "answered by <name> in <channel>, <date>".
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from core.keys import Keys
from core.messages import Language
from core.resolution.answer import MIN_SHARED
from core.resolution.words import specific_words
from core.resolution.focus import LogFocus, focus
from core.resolution.untrusted import plain_sentence

MAX_SAVED = 2000  # per workspace: the oldest go first
ANSWER_CHARS = 1500
QUESTION_CHARS = 4000

# "save as answer: …", "save answer …", "保存答案：…", "记为答案 …"; the rest of the message is the answer.
SAVE_COMMAND = re.compile(r"^\s{0,8}(?:save(?: as)? answer|保存答案|记为答案|存为答案)\s{0,4}[:：]?\s{0,4}", re.IGNORECASE)


@dataclass(frozen=True)
class TeamAnswer:
    platform: str
    workspace: str  # the tenant/team it was said in: the only place it is ever shown
    channel: str
    author: str  # display name (or id) of the expert
    question: str
    answer: str
    saved_on: str  # YYYY-MM-DD
    repos: tuple[str, ...] = ()  # the products the thread was about: a later match answers for them
    # What a later question is matched on, derived once when saved (not per saved answer per message).
    signatures: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @classmethod
    def saved(cls, platform: str, workspace: str, channel: str, author: str, question: str, answer: str, saved_on: str,
              repos: tuple[str, ...]) -> TeamAnswer:
        asked = focus(question)
        return cls(platform, workspace, channel, author, question, answer, saved_on, repos, asked.signatures,
                   tuple(sorted(specific_words(asked.query()))))

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> TeamAnswer | None:
        """None for anything that is not a saved answer (a hand edit, another version's entry)."""
        try:
            data: Any = json.loads(raw)
            text = {k: data[k] for k in ("platform", "workspace", "channel", "author", "question", "answer", "saved_on")}
            lists = {k: data.get(k, []) for k in ("repos", "signatures", "words")}
            if not all(isinstance(v, str) for v in text.values()) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists.values()
            ):
                return None
            return cls(**text, **{k: tuple(v) for k, v in lists.items()})
        except (ValueError, TypeError, KeyError):
            return None


class TeamStore(Protocol):
    async def add(self, item: TeamAnswer) -> None: ...

    async def of_workspace(self, platform: str, workspace: str) -> list[TeamAnswer]: ...


class RedisTeamStore:
    def __init__(self, redis: Any, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def add(self, item: TeamAnswer) -> None:
        key = self._keys.team_answers(item.platform, item.workspace)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, item.to_json())
            pipe.ltrim(key, 0, MAX_SAVED - 1)
            await pipe.execute()

    async def of_workspace(self, platform: str, workspace: str) -> list[TeamAnswer]:
        raw = await self._redis.lrange(self._keys.team_answers(platform, workspace), 0, MAX_SAVED - 1)
        return [item for item in (TeamAnswer.from_json(r) for r in raw) if item is not None]


class MemoryTeamStore:
    """For the terminal and tests: the same behaviour, in process."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], list[TeamAnswer]] = {}

    async def add(self, item: TeamAnswer) -> None:
        saved = self._items.setdefault((item.platform, item.workspace), [])
        saved.insert(0, item)
        del saved[MAX_SAVED:]

    async def of_workspace(self, platform: str, workspace: str) -> list[TeamAnswer]:
        return list(self._items.get((platform, workspace), []))


def saved_answer_text(body: str) -> str | None:
    """The answer of a `save as answer: …` message ("" when the command has no text), else None."""
    match = SAVE_COMMAND.match(body)
    return body[match.end():].strip()[:ANSWER_CHARS] if match else None


def best_match(saved: Sequence[TeamAnswer], asked: LogFocus) -> TeamAnswer | None:
    """The newest saved answer whose question has the asked error signature or shares specific words."""
    wanted = set(asked.signatures)
    words = specific_words(asked.query())
    for item in saved:  # newest first
        if wanted.intersection(item.signatures) or len(words.intersection(item.words)) >= MIN_SHARED:
            return item
    return None


_LEAD = {
    "en": "**Answered by {author} in {channel}, {date}:** {answer}",
    "zh": "**{author} 于 {date} 在 {channel} 中的回答：** {answer}",
}


LEAD_PREFIXES = ("**Answered by ",)  # the Chinese lead starts with the (untrusted) name: matched by its tail
LEAD_MARKERS = ("中的回答：**",)


def lead(item: TeamAnswer, language: Language) -> str:
    # Colleagues' text is still untrusted for rendering: no links, markup or mentions from it.
    return _LEAD[language].format(author=plain_sentence(item.author, 80), channel=plain_sentence(item.channel, 80),
                                  date=item.saved_on, answer=plain_sentence(item.answer, ANSWER_CHARS))
