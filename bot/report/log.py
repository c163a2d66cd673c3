"""The answer log: one compact record per delivered reply, in one Redis stream per workspace.

The worker writes a record where it counts `copilot_answers_total` and observes
`copilot_job_seconds`, with the same latency, so the report and /metrics agree. A record holds
what the report needs and no more: the question clipped and redacted like a log line, its error
signature, the reply's kind, language, products and confidence, the latency and model tokens,
and where the thread is (to link to it). Stream ids are the write time, so a report reads a
time window with XRANGE, in chunks; MAXLEN and MINID keep each workspace within its limits.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import operator
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from bot.report.limits import LogLimits
from core.keys import Keys
from core.messages import InboundMessage, Reply
from core.resolution.signatures import decisive, error_lines

log = logging.getLogger(__name__)

QUESTION_CHARS = 300  # enough to recognise a question; a pasted log keeps its signature instead
SIGNATURE_SCAN_CHARS = 32_000  # the analysis window the conversation reads a paste in
READ_CHUNK = 2_000  # records per XRANGE: a few hundred KB per round trip, whatever the log holds
CONFIDENCE_LEVELS = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    at: float  # seconds since the epoch, from the stream id
    platform: str
    workspace: str
    channel: str
    thread: str
    kind: str  # ReplyKind value
    language: str
    repos: tuple[str, ...]
    confidence: str  # high | medium | low, or "" when the reply carried none
    question: str  # clipped and redacted
    signature: str  # the decisive error line, normalised; "" when the question has none
    latency: float  # seconds from enqueue to delivered (copilot_job_seconds)
    tokens: int  # model tokens of all kinds
    trace_id: str
    sources: int

    @property
    def scope(self) -> str:
        return f"{self.platform}:{self.workspace}"


def split_scope(scope: str) -> tuple[str, str]:
    platform, _, workspace = scope.partition(":")
    return platform, workspace


def confidence_of(reply: Reply) -> str:
    """The reply's confidence level when it has one (core/confidence.py's `Confidence.level`), else ""."""
    value = getattr(reply, "confidence", None)
    value = getattr(value, "level", value)
    return value if isinstance(value, str) and value in CONFIDENCE_LEVELS else ""


def question_signature(text: str) -> str:
    found = decisive(error_lines(text[:SIGNATURE_SCAN_CHARS]), limit=1)
    return found[0].signature if found else ""


def _clip(text: str) -> str:
    return " ".join(text[: QUESTION_CHARS * 4].split())[:QUESTION_CHARS]


# KEYS[1] the log. ARGV: start id, end id, count. One chunk as ONE string, a line
# "[<ms>,<record>]," per entry, plus the number of entries and the last id: the client decodes the
# chunk with one json.loads instead of parsing five protocol replies and one JSON text per entry,
# which is most of the cost of reading 100k records. A record is JSON, so it never holds a raw
# newline: a chunk that does not decode as a whole is read line by line. Read-only.
_READ_CHUNK = """
local entries = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2], 'COUNT', tonumber(ARGV[3]))
local out = {}
for i, entry in ipairs(entries) do
  local fields, record = entry[2], 'null'
  for k = 1, #fields, 2 do
    if fields[k] == 'j' then record = fields[k + 1] end
  end
  out[i] = '[' .. string.match(entry[1], '^%d+') .. ',' .. record .. ']'
end
local last = ''
if #entries > 0 then last = entries[#entries][1] end
return {#entries, last, table.concat(out, ',\\n')}
"""


async def append_bounded(
    redis: Redis, key: str, index: str, limits: LogLimits, scope: str, record: str, at: float, stream_id: str = "*"
) -> None:
    """Add `record` (field "j") to the workspace's stream `key` within the workspace's limits, and
    note the workspace in the sorted set `index` (the answer log and the escalation log both keep
    one stream per workspace this way)."""
    limit = limits.for_scope(scope)
    oldest_ms = int((at - limit.seconds) * 1000)
    async with redis.pipeline(transaction=False) as pipe:
        # Exact trims: "no more than N entries, none older than D days" must hold to the entry.
        pipe.xadd(key, {"j": record}, id=stream_id, maxlen=limit.entries, approximate=False)
        pipe.xtrim(key, minid=f"{max(oldest_ms, 0)}-0", approximate=False)
        pipe.expire(key, limit.seconds)  # a workspace that goes quiet is forgotten after its days
        pipe.zadd(index, {scope: at})
        pipe.zremrangebyscore(index, "-inf", at - limits.longest_days * 86_400)
        await pipe.execute()


async def scopes_in(redis: Redis, index: str) -> list[str]:
    """Every workspace (`platform:workspace`) noted in `index`."""
    members = await redis.zrange(index, 0, -1)
    return sorted(m.decode() if isinstance(m, bytes) else m for m in members)


class AnswerLog:
    def __init__(self, redis: Redis, keys: Keys, limits: LogLimits, redact: Callable[[str], str]) -> None:
        self._redis = redis
        self._keys = keys
        self._limits = limits
        self._redact = redact
        self._read_chunk = redis.register_script(_READ_CHUNK)

    @property
    def limits(self) -> LogLimits:
        return self._limits

    def redact(self, text: str) -> str:
        """Today's secrets out of a stored text (one configured after the record was written, too)."""
        return self._redact(text)

    async def record(self, message: InboundMessage, reply: Reply, *, latency: float, tokens: int) -> None:
        record = record_json(message, reply, latency=latency, tokens=tokens, redact=self._redact)
        await self.append(f"{message.platform}:{message.workspace}", record, time.time())

    async def append(self, scope: str, record: str, at: float, stream_id: str = "*") -> None:
        """Store one record (`record_json`) and apply the workspace's limits. `stream_id`: "*" (now),
        or an explicit `ms-seq` id above the stream's last (tests and the bench write the past)."""
        key = self._keys.answer_log(*split_scope(scope))
        await append_bounded(self._redis, key, self._keys.answer_log_index, self._limits, scope, record, at, stream_id)

    async def scopes(self) -> list[str]:
        """Every workspace with an answer log (`platform:workspace`)."""
        return await scopes_in(self._redis, self._keys.answer_log_index)

    async def read(
        self, scope: str, since: float, until: float, *, now: float | None = None, chunk: int = READ_CHUNK
    ) -> AsyncIterator[list[AnswerRecord]]:
        """The scope's records from `since` to `until`, oldest first, `chunk` at a time; never one
        older than the scope's retention, even when Redis has not trimmed it yet."""
        oldest = (time.time() if now is None else now) - self._limits.for_scope(scope).seconds
        start = f"{int(max(since, oldest, 0) * 1000)}-0"
        end = f"{int(until * 1000)}"  # an id without a sequence is the whole millisecond
        key = self._keys.answer_log(*split_scope(scope))

        def fetch(first: str) -> asyncio.Future[list]:
            return asyncio.ensure_future(self._read_chunk(keys=[key], args=[first, end, chunk]))

        # The next chunk is asked for before this one is decoded, so Redis works while Python does.
        pending: asyncio.Future[list] | None = fetch(start)
        try:
            while pending is not None:
                count, last, body = await pending
                pending = None
                if count == chunk:
                    pending = fetch("(" + (last.decode() if isinstance(last, bytes) else last))
                if count:
                    yield parse_chunk(body.decode("utf-8", "replace") if isinstance(body, bytes) else body)
        finally:
            if pending is not None:  # the caller stopped early (a capped report): drop the read ahead
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending


# A record is a JSON array in this order (an array: decoding 100k of them is what a report costs).
RECORD_VERSION = 1
_TEXTS = operator.itemgetter(1, 2, 3, 4, 5, 6, 8, 9, 10, 13)  # the positions that hold strings
_NUMBERS = operator.itemgetter(11, 12, 14)
_STR, _NUMBER_TYPES = {str}, {int, float}


def record_json(
    message: InboundMessage, reply: Reply, *, latency: float, tokens: int, redact: Callable[[str], str]
) -> str:
    """The stored form of one delivered reply."""
    # Redacted before clipping, so a token cut in half by the clip is still recognised.
    question = _clip(redact(message.text))
    body = [
        RECORD_VERSION, message.platform, message.workspace, message.channel, message.thread,
        reply.kind.value, reply.language, list(reply.repos), confidence_of(reply), question,
        redact(question_signature(message.text)), round(max(latency, 0.0), 3), int(tokens), reply.trace_id,
        len(reply.sources),
    ]
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def parse_chunk(body: str) -> list[AnswerRecord]:
    """The records of one chunk ("[ms,record]" lines joined by commas); unreadable ones are skipped."""
    try:
        entries = json.loads("[" + body + "]")
    except ValueError:  # one bad record: read the others one by one
        entries = []
        for line in body.split("\n"):
            try:
                entries.append(json.loads(line.rstrip(",")))
            except ValueError:
                log.warning("answer log: skipped an unreadable record")
    records = [_record(entry) for entry in entries]
    return [r for r in records if r is not None]


def _record(entry: Any) -> AnswerRecord | None:
    """A stored record as the reader sees it, or None when it is not one (written by hand, or by
    another version)."""
    try:
        ms, v = entry
        if (type(v) is not list or len(v) != 15 or v[0] != RECORD_VERSION or type(v[7]) is not list
                or set(map(type, _TEXTS(v))) != _STR or not set(map(type, _NUMBERS(v))) <= _NUMBER_TYPES):
            raise ValueError("not a record")
        return AnswerRecord(ms / 1000, v[1], v[2], v[3], v[4], v[5], v[6], tuple(map(str, v[7])),
                            v[8], v[9], v[10], v[11], v[12], v[13], v[14])
    except (TypeError, ValueError):
        log.warning("answer log: skipped an unreadable record")
        return None
