"""Reading a workspace's day counters (written with each record by bot/report/log.py).

A report covers whole UTC days with their counters and reads records only where it must: the
partial days at the ends of its window, and any day whose counters are not the whole day. A day's
counters are trusted when they hold the day's first record still in the stream (`first` equals
the day's first entry: nothing of that day was trimmed, and nothing was written before the
counters existed) and no cluster key was turned away (`capped` unset). Everything else about the
day, including which records it holds, is then in its counters, so the two paths give one report
(tests/bot/test_report_counters.py compares them).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.report.log import AnswerLog, AnswerRecord, parse_identified
from bot.report.tally import COMBO, EXAMPLES, GAPS, REPLIES, TOKENS, parse_combo

DAY_MS = 86_400_000

# One call per workspace and report: for each candidate day, whether its counters cover it whole,
# and if so the counters (as one JSON text: decoding a few thousand protocol replies per day in
# Python was most of a report's time) and the latency percentiles, computed here from the day's
# histogram so it never leaves Redis (nearest rank, the rule of bot/report/data.py's `percentile`,
# on the same doubles).
# KEYS[1] the stream, then per day its counters and its latency histogram. ARGV[1], ARGV[2] the
# percentile fractions, ARGV[3] "1" to leave the topic words out (a reader who may not see them
# reads less), then per day its first and last millisecond. Read-only.
_READ_DAYS = """
local out = {}
for d = 1, (#KEYS - 1) / 2 do
  local counters, latencies = KEYS[2 * d], KEYS[2 * d + 1]
  local first = redis.call('HGET', counters, 'first')
  local head = redis.call('XRANGE', KEYS[1], ARGV[2 + 2 * d] .. '-0', ARGV[3 + 2 * d], 'COUNT', 1)
  if first and head[1] and head[1][1] == first and redis.call('HEXISTS', counters, 'capped') == 0 then
    local flat = redis.call('HGETALL', latencies)
    local values, total = {}, 0
    for j = 1, #flat, 2 do
      local count = tonumber(flat[j + 1])
      values[#values + 1] = {tonumber(flat[j]), count, flat[j]}
      total = total + count
    end
    table.sort(values, function(a, b) return a[1] < b[1] end)
    local fields = redis.call('HGETALL', counters)
    if ARGV[3] == '1' then
      local kept = {}
      for j = 1, #fields, 2 do
        local name = fields[j]
        if string.sub(name, 1, 3) ~= 'gt|' and string.sub(name, 1, 5) ~= 'x|gt|' then
          kept[#kept + 1] = name
          kept[#kept + 1] = fields[j + 1]
        end
      end
      fields = kept
    end
    local row = {cjson.encode(fields)}
    for f = 1, 2 do
      local rank = math.ceil(tonumber(ARGV[f]) * total)
      if rank < 1 then rank = 1 end
      if rank > total then rank = total end
      local seen, pick = 0, ''
      for _, v in ipairs(values) do
        seen = seen + v[2]
        if seen >= rank then pick = v[3] break end
      end
      row[#row + 1] = pick
    end
    out[d] = row
  else
    out[d] = 0
  end
end
return out
"""

# KEYS[1] the traces (id -> ms) of a workspace, KEYS[2] its stream. ARGV[1] N, then N spans (first
# and last ms), then trace ids. The records of the traces answered inside a span, in READ_IDS' form
# (bot/report/log.py); the caller checks each record's trace id. Read-only.
_VOTED = """
local n, out = tonumber(ARGV[1]), {}
for i = 2 + 2 * n, #ARGV do
  local ms = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]))
  local inside = false
  if ms then
    for s = 0, n - 1 do
      if ms >= tonumber(ARGV[2 + 2 * s]) and ms <= tonumber(ARGV[3 + 2 * s]) then inside = true break end
    end
  end
  if inside then
    local at = string.format('%.0f', ms)
    for _, entry in ipairs(redis.call('XRANGE', KEYS[2], at .. '-0', at)) do
      local fields = entry[2]
      for k = 1, #fields, 2 do
        if fields[k] == 'j' and string.find(fields[k + 1], ARGV[i], 1, true) then
          out[#out + 1] = '["' .. entry[1] .. '",' .. fields[k + 1] .. ']'
        end
      end
    end
  end
end
return table.concat(out, ',\\n')
"""
VOTED_BATCH = 5_000  # trace ids per call


def day_key(stream: str, day: int) -> str:
    return f"{stream}:d:{day}"


def latency_key_of(stream: str, day: int) -> str:
    return f"{stream}:l:{day}"


def traces_key(stream: str) -> str:
    return f"{stream}:traces"


@dataclass(frozen=True)
class Segment:
    """A piece of a report's window: a day read from its counters, or milliseconds read record by record."""

    kind: Literal["day", "records"]
    first_ms: int
    last_ms: int

    @property
    def day(self) -> int:
        return self.first_ms // DAY_MS


@dataclass
class DayCounters:
    replies: int = 0
    tokens: int = 0
    gaps: int = 0
    combos: list[tuple[tuple[str, str, tuple[str, ...], str], int]] = field(default_factory=list)
    clusters: dict[str, int] = field(default_factory=dict)  # s| gs| gt| keys -> count
    examples: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # cluster key -> [(identity, id)]
    latency_p50: float = 0.0
    latency_p95: float = 0.0


async def plan(log: AnswerLog, scope: str, first_ms: int, last_ms: int, *, counters: bool = True,
               topics: bool = True) -> tuple[list[Segment], dict[int, DayCounters]]:
    """The window from `first_ms` to `last_ms` as counted days and record ranges, oldest first, and
    the counted days' counters (without the topic words unless `topics`)."""
    if last_ms < first_ms:
        return [], {}
    candidates = list(range(-(-first_ms // DAY_MS), (last_ms + 1) // DAY_MS)) if counters else []
    usable: dict[int, DayCounters] = {}
    if candidates:
        stream = log.key(scope)
        keys, args = [stream], ["0.5", "0.95", "0" if topics else "1"]
        for day in candidates:
            keys += [day_key(stream, day), latency_key_of(stream, day)]
            args += [day * DAY_MS, (day + 1) * DAY_MS - 1]
        rows = await log.redis.register_script(_READ_DAYS)(keys=keys, args=args)
        usable = {day: _day(row) for day, row in zip(candidates, rows) if isinstance(row, list)}
    segments: list[Segment] = []
    cursor = first_ms
    for day in sorted(usable):
        if cursor < day * DAY_MS:
            segments.append(Segment("records", cursor, day * DAY_MS - 1))
        segments.append(Segment("day", day * DAY_MS, (day + 1) * DAY_MS - 1))
        cursor = (day + 1) * DAY_MS
    if cursor <= last_ms:
        segments.append(Segment("records", cursor, last_ms))
    return segments, usable


def _day(row: list) -> DayCounters:
    counted = DayCounters()
    flat, p50, p95 = (list(row) + ["", ""])[:3]
    values = json.loads(_s(flat))
    for name, value in zip(values[0::2], values[1::2]):
        if name == REPLIES:
            counted.replies = int(value)
        elif name == TOKENS:
            counted.tokens = int(value)
        elif name == GAPS:
            counted.gaps = int(value)
        elif name.startswith(COMBO):
            combo = parse_combo(name)
            if combo is not None:
                counted.combos.append((combo, int(value)))
        elif name.startswith(EXAMPLES):
            counted.examples[name[len(EXAMPLES):]] = [
                (ident, entry_id) for ident, _, entry_id in (item.partition("=") for item in value.split(",") if item)]
        elif name not in ("first", "capped"):
            counted.clusters[name] = int(value)
    counted.latency_p50 = float(_s(p50)) if p50 else 0.0
    counted.latency_p95 = float(_s(p95)) if p95 else 0.0
    return counted


async def voted_in_days(log: AnswerLog, scope: str, voted: Sequence[str], days: Sequence[Segment]
                        ) -> list[AnswerRecord]:
    """The records of the `voted` trace ids answered in `days` of `scope`."""
    if not voted or not days:
        return []
    spans = [bound for d in days for bound in (d.first_ms, d.last_ms)]
    stream = log.key(scope)
    script = log.redis.register_script(_VOTED)
    wanted, found = set(voted), []
    for start in range(0, len(voted), VOTED_BATCH):
        body = await script(keys=[traces_key(stream), stream],
                            args=[len(days), *spans, *voted[start:start + VOTED_BATCH]])
        found += [r for r in parse_identified(body).values() if r.trace_id in wanted]
    return found


def _s(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
