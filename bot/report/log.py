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
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from bot.report.limits import LogLimits
from bot.report.tally import tally_of
from core.keys import Keys
from core.messages import InboundMessage, Reply
from core.resolution.signatures import decisive, error_lines

log = logging.getLogger(__name__)

QUESTION_CHARS = 300  # enough to recognise a question; a pasted log keeps its signature instead
SIGNATURE_SCAN_CHARS = 32_000  # the analysis window the conversation reads a paste in
READ_CHUNK = 2_000  # records per XRANGE: a few hundred KB per round trip, whatever the log holds
CONFIDENCE_LEVELS = ("high", "medium", "low")


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    """What every record of a report log says first: when, and in which thread (the escalation log's too)."""

    at: float  # seconds since the epoch, from the stream id
    platform: str
    workspace: str
    channel: str
    thread: str

    @property
    def scope(self) -> str:
        return f"{self.platform}:{self.workspace}"


@dataclass(frozen=True, slots=True)
class AnswerRecord(ThreadRecord):
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


class WorkspaceLog(ABC):
    """What the answer log and the escalation log share: one bounded stream per workspace, the
    workspaces noted in an index, each within its retention limits; stored text is read back
    through today's redaction."""

    def __init__(self, redis: Redis, keys: Keys, limits: LogLimits, redact: Callable[[str], str]) -> None:
        self._redis = redis
        self._keys = keys
        self._limits = limits
        self._redact = redact

    @property
    @abstractmethod
    def index(self) -> str:
        """The sorted set of the workspaces that have a stream."""

    def redact(self, text: str) -> str:
        """Today's secrets out of a stored text (one configured after the record was written, too)."""
        return self._redact(text)

    async def scopes(self) -> list[str]:
        """Every workspace with a stream (`platform:workspace`)."""
        members = await self._redis.zrange(self.index, 0, -1)
        return sorted(m.decode() if isinstance(m, bytes) else m for m in members)

    def window(self, scope: str, since: float, until: float, now: float | None = None) -> tuple[int, int]:
        """The first and last millisecond a report from `since` to `until` reads of `scope`: never
        one older than the scope's retention, even when Redis has not trimmed it yet."""
        oldest = (time.time() if now is None else now) - self._limits.for_scope(scope).seconds
        return int(max(since, oldest, 0) * 1000), int(until * 1000)


# Appends one record and adds its tally (bot/report/tally.py) to the workspace's counters of the
# record's day, atomically, so a report can read a day's counters instead of its records.
# KEYS[1] the stream, KEYS[2] the index of workspaces. ARGV: 1 stream id, 2 record, 3 max entries,
# 4 oldest id kept (ms), 5 retention ms, 6 scope, 7 index score, 8 index floor, 9 trace id,
# 10 latency key, 11 identity, 12 field cap, 13 stream ttl seconds, 14 P (plain pairs), then P
# (field, increment) pairs, then the capped cluster keys. The day's keys are named from the id
# Redis assigns (`<stream>:d:<day>` counters, `<stream>:l:<day>` latency histogram,
# `<stream>:traces` trace id -> ms): one Redis, as the bot uses, not a cluster.
# `first` is the day's first record counted: a report trusts the day's counters only while it is
# still the day's first record in the stream (not trimmed, not written before the counters), and
# `capped` marks a day whose cluster keys hit the cap; such days are read record by record.
# KEYS[1] the log; ARGV: stream ids. The entries still stored, as one string of '["<id>",<record>]'
# lines joined by commas (like _READ_CHUNK, with the whole id: the caller asked for those ids).
READ_IDS = """
local out = {}
for i = 1, #ARGV do
  for _, entry in ipairs(redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])) do
    local fields, record = entry[2], 'null'
    for k = 1, #fields, 2 do
      if fields[k] == 'j' then record = fields[k + 1] end
    end
    out[#out + 1] = '["' .. entry[1] .. '",' .. record .. ']'
  end
end
return table.concat(out, ',\\n')
"""

_APPEND = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[3], ARGV[1], 'j', ARGV[2])
redis.call('XTRIM', KEYS[1], 'MINID', '=', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[13])
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[8])
local ms = tonumber(string.match(id, '^(%d+)'))
local day = string.format('%d', math.floor(ms / 86400000))
local h = KEYS[1] .. ':d:' .. day
local lat = KEYS[1] .. ':l:' .. day
redis.call('HSETNX', h, 'first', id)
local p = tonumber(ARGV[14])
for i = 15, 14 + 2 * p, 2 do redis.call('HINCRBY', h, ARGV[i], ARGV[i + 1]) end
if ARGV[10] ~= '' then redis.call('HINCRBY', lat, ARGV[10], 1) end
local cap = tonumber(ARGV[12])
for i = 15 + 2 * p, #ARGV do
  local k = ARGV[i]
  if redis.call('HEXISTS', h, k) == 1 or redis.call('HLEN', h) < cap then
    redis.call('HINCRBY', h, k, 1)
    if string.sub(k, 1, 1) == 'g' then
      -- a gap cluster keeps the day's first three distinct questions as examples: "<identity>=<id>,"
      local x = 'x|' .. k
      local kept = redis.call('HGET', h, x) or ''
      if not string.find(kept, ARGV[11], 1, true) then
        local n = 0
        for _ in string.gmatch(kept, ',') do n = n + 1 end
        if n < 3 then redis.call('HSET', h, x, kept .. ARGV[11] .. '=' .. id .. ',') end
      end
    end
  else
    redis.call('HSET', h, 'capped', '1')
  end
end
-- kept the workspace's days after the day's last write (a day longer than its records: a day's
-- writes end with the day), relative like the stream's, so a record written into the past counts too
local keep = string.format('%.0f', tonumber(ARGV[5]) + 86400000)
redis.call('PEXPIRE', h, keep)
if ARGV[10] ~= '' then redis.call('PEXPIRE', lat, keep) end
if ARGV[9] ~= '' then
  local traces = KEYS[1] .. ':traces'
  redis.call('ZADD', traces, ms, ARGV[9])
  redis.call('ZREMRANGEBYSCORE', traces, '-inf', '(' .. ARGV[4])
  redis.call('ZREMRANGEBYRANK', traces, 0, -(tonumber(ARGV[3]) + 1))
  redis.call('EXPIRE', traces, ARGV[13])
end
return id
"""
DAY_FIELD_CAP = 20_000  # fields of one workspace's day counters (cluster keys and their examples)


class AnswerLog(WorkspaceLog):
    def __init__(self, redis: Redis, keys: Keys, limits: LogLimits, redact: Callable[[str], str]) -> None:
        super().__init__(redis, keys, limits, redact)
        self._read_chunk = redis.register_script(_READ_CHUNK)
        self._append = redis.register_script(_APPEND)
        self._read_ids = redis.register_script(READ_IDS)

    @property
    def limits(self) -> LogLimits:
        return self._limits

    @property
    def redis(self) -> Redis:
        return self._redis

    def key(self, scope: str) -> str:
        """The workspace's stream (its day counters are named after it: bot/report/counters.py)."""
        return self._keys.answer_log(*split_scope(scope))

    @property
    def index(self) -> str:
        return self._keys.answer_log_index

    async def record(self, message: InboundMessage, reply: Reply, *, latency: float, tokens: int) -> None:
        record = record_json(message, reply, latency=latency, tokens=tokens, redact=self._redact)
        await self.append(f"{message.platform}:{message.workspace}", record, time.time())

    async def append(self, scope: str, record: str, at: float, stream_id: str = "*") -> None:
        """Store one record (`record_json`), add it to its day's counters and apply the workspace's
        limits. `stream_id`: "*" (now), or an explicit `ms-seq` id above the stream's last (tests and
        the bench write the past)."""
        limit = self._limits.for_scope(scope)
        parsed = _parse_one(record)
        tally = tally_of(parsed) if parsed is not None else None
        plain = list(tally.plain.items()) if tally else []
        args: list[Any] = [
            stream_id, record, limit.entries, max(int((at - limit.seconds) * 1000), 0), limit.seconds * 1000, scope, at,
            at - self._limits.longest_days * 86_400, parsed.trace_id if parsed else "", tally.latency if tally else "",
            tally.identity if tally else "", DAY_FIELD_CAP, limit.seconds, len(plain),
        ]
        for name, increment in plain:
            args += [name, increment]
        args += list(tally.capped) if tally else []
        await self._append(keys=[self.key(scope), self.index], args=args)

    async def read(
        self, scope: str, since: float, until: float, *, now: float | None = None, chunk: int = READ_CHUNK
    ) -> AsyncIterator[list[AnswerRecord]]:
        """The scope's records from `since` to `until`, oldest first, `chunk` at a time, within its retention."""
        first, last = self.window(scope, since, until, now)
        async for records in self.read_range(scope, first, last, chunk=chunk):
            yield records

    async def read_range(self, scope: str, first_ms: int, last_ms: int, *, chunk: int = READ_CHUNK
                         ) -> AsyncIterator[list[AnswerRecord]]:
        """The scope's records stored from millisecond `first_ms` to `last_ms` (both included), oldest first."""
        start, end = f"{first_ms}-0", f"{last_ms}"  # an id without a sequence is the whole millisecond
        key = self.key(scope)

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

    async def records_at(self, scope: str, ids: list[str]) -> dict[str, AnswerRecord]:
        """The records of `scope` with these stream ids (those still stored), in one call."""
        if not ids:
            return {}
        body = await self._read_ids(keys=[self.key(scope)], args=ids)
        return parse_identified(body)


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
    records = [_record(entry) for entry in _entries(body)]
    return [r for r in records if r is not None]


def parse_identified(body: bytes | str) -> dict[str, AnswerRecord]:
    """Records in READ_IDS' form ('["<id>",<record>]' lines joined by commas), by stream id."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if not text:
        return {}
    out: dict[str, AnswerRecord] = {}
    for entry in _entries(text):
        try:
            entry_id, value = entry
            record = _record([int(str(entry_id).split("-", 1)[0]), value])
        except (TypeError, ValueError):
            record = None
        if record is not None:
            out[str(entry_id)] = record
    return out


def _entries(body: str) -> list[Any]:
    """The JSON values of lines joined by commas; an unreadable line is skipped (and logged), not the chunk."""
    try:
        return json.loads("[" + body + "]")
    except ValueError:  # one bad record: read the others one by one
        entries = []
        for line in body.split("\n"):
            try:
                entries.append(json.loads(line.rstrip(",")))
            except ValueError:
                log.warning("answer log: skipped an unreadable record")
        return entries


def _parse_one(record: str) -> AnswerRecord | None:
    """A record as `record_json` wrote it (its time unknown: 0), or None when it is not one."""
    try:
        return _record([0, json.loads(record)])
    except ValueError:
        return None


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
