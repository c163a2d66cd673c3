"""Conversation memory: one JSON document per thread, in Redis or (for the CLI) in process.

Writes are optimistic: a turn loads the session, works (possibly for a minute of
research), then applies its changes to the *latest* stored version through
`update(mutate)`. A Lua compare-and-set on the version retries the mutation if
another message in the same thread saved in between, so concurrent messages
never overwrite each other's writes.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Protocol

from redis.asyncio import Redis

from core.keys import Keys
from core.messages import Language, Option

MAX_TURN_CHARS = 4_000  # one turn's text kept in memory; the rest is not needed for follow-ups


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str
    at: float


@dataclass(frozen=True)
class PendingClarification:
    question: str
    options: tuple[Option, ...]
    language: Language
    expires_at: float
    settled_repos: tuple[str, ...] = ()

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


@dataclass(frozen=True)
class Session:
    version: int = 0
    turns: tuple[Turn, ...] = ()
    repos: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    pending: PendingClarification | None = None
    expired_pending: bool = False  # a clarification lapsed unanswered; a bare "2" then gets a clear reply
    last_trace: tuple[dict[str, Any], ...] = ()
    last_sources: tuple[dict[str, str], ...] = ()  # the last answer's sources ({title, url}): what an escalation says was checked
    escalations: tuple[dict[str, str], ...] = ()  # issues this thread took upstream (core/escalate.py `record`)

    def history(self) -> tuple[tuple[str, str], ...]:
        return tuple((t.role, t.text) for t in self.turns)

    def with_turn(self, role: str, text: str, *, max_turns: int, max_bytes: int) -> "Session":
        turns = (*self.turns, Turn(role, text[:MAX_TURN_CHARS], time.time()))
        turns = turns[-max_turns:]
        while len(turns) > 1 and sum(len(t.text.encode("utf-8", "replace")) for t in turns) > max_bytes:
            turns = turns[1:]
        return replace(self, turns=turns)


def session_to_json(session: Session) -> str:
    return json.dumps(asdict(session), ensure_ascii=False, separators=(",", ":"))


def session_from_json(raw: str | bytes | None) -> Session:
    if not raw:
        return Session()
    data = json.loads(raw)
    pending = data.get("pending")
    return Session(
        version=int(data.get("version", 0)),
        turns=tuple(Turn(**t) for t in data.get("turns", ())),
        repos=tuple(data.get("repos", ())),
        env=dict(data.get("env", {})),
        pending=None
        if not pending
        else PendingClarification(
            question=pending["question"],
            options=tuple(Option(**o) for o in pending["options"]),
            language=pending["language"],
            expires_at=float(pending["expires_at"]),
            settled_repos=tuple(pending.get("settled_repos", ())),
        ),
        expired_pending=bool(data.get("expired_pending", False)),
        last_trace=tuple(data.get("last_trace", ())),
        last_sources=_string_dicts(data.get("last_sources")),
        escalations=_string_dicts(data.get("escalations")),
    )


def _string_dicts(raw: object) -> tuple[dict[str, str], ...]:
    """A list of flat string maps from stored JSON; anything else (an older or odd session) is dropped."""
    if not isinstance(raw, list):
        return ()
    return tuple({str(k): str(v) for k, v in item.items()} for item in raw if isinstance(item, dict))


Mutation = Callable[[Session], Session]


class SessionStore(Protocol):
    async def load(self, conversation_key: str) -> Session: ...

    async def update(self, conversation_key: str, mutate: Mutation) -> Session: ...

    async def delete(self, conversation_key: str) -> None: ...


class ConcurrentUpdateError(RuntimeError):
    """The session kept changing under us; should not happen outside pathological contention."""


# KEYS[1] session key. ARGV: expected version, new json, ttl. Returns 1 when saved.
_COMPARE_AND_SET = """
local cur = redis.call('GET', KEYS[1])
local v = 0
if cur then v = tonumber(cjson.decode(cur)['version']) or 0 end
if v ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return 1
"""


class RedisSessionStore:
    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int, max_attempts: int = 20) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds
        self._max_attempts = max_attempts
        self._cas = redis.register_script(_COMPARE_AND_SET)

    async def load(self, conversation_key: str) -> Session:
        return session_from_json(await self._redis.get(self._keys.session(conversation_key)))

    async def update(self, conversation_key: str, mutate: Mutation) -> Session:
        key = self._keys.session(conversation_key)
        for _ in range(self._max_attempts):
            current = session_from_json(await self._redis.get(key))
            new = replace(mutate(current), version=current.version + 1)
            if await self._cas(keys=[key], args=[current.version, session_to_json(new), self._ttl]):
                return new
        raise ConcurrentUpdateError(conversation_key)

    async def delete(self, conversation_key: str) -> None:
        await self._redis.delete(self._keys.session(conversation_key))


class MemorySessionStore:
    """For `ask` and `chat` without Redis: one process, one user."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    async def load(self, conversation_key: str) -> Session:
        return self._sessions.get(conversation_key, Session())

    async def update(self, conversation_key: str, mutate: Mutation) -> Session:
        current = self._sessions.get(conversation_key, Session())
        new = replace(mutate(current), version=current.version + 1)
        self._sessions[conversation_key] = new
        return new

    async def delete(self, conversation_key: str) -> None:
        self._sessions.pop(conversation_key, None)
