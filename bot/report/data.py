"""The report's numbers, computed once from the answer log and the votes; the CLI and /admin show them.

Whole UTC days come from the day counters the writer keeps (bot/report/counters.py, one small
read per workspace); the rest of the window (its partial first and last days, and any day the
counters do not cover whole) is read record by record in chunks (bot/report/log.py) and folded as
it arrives, with the same definitions (bot/report/tally.py), so both give one report. Bounded
whatever the log holds: latencies are a histogram to three significant digits per day and
workspace, signature and topic counters keep a capped number of keys, clusters a few examples each,
and a report reads at most MAX_RECORDS records one by one (it says so when it stops there). A question's text enters the report only for
a scope that may see it (bot/report/access.py); everything shown was redacted when it was stored.
"""
from __future__ import annotations

import functools
import heapq
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from redis.asyncio import Redis

from bot.report.access import AdminScope
from bot.report.escalations import ISSUE_STATES, EscalationLog, EscalationRecord
from bot.report.feedback import votes_of, voted_traces
from bot.report.limits import MAX_DAYS
from bot.report.links import thread_link, thread_reference
from bot.report.counters import DayCounters, Segment, plan, voted_in_days
from bot.report.log import AnswerLog, AnswerRecord, split_scope
from bot.report.tally import (
    GAP_SIGNATURE,
    GAP_TOPIC,
    QUESTION_KINDS,
    SIGNATURE,
    identity,
    is_gap,
    latency_key,
)
from bot.report.topics import topic_terms
from core.keys import Keys

MAX_RECORDS = 1_000_000  # read per report; with the default limits a workspace holds 50,000
MAX_KEYS = 20_000  # distinct signatures or topic words counted; later new ones go uncounted
EXAMPLES = 3  # questions shown per cluster
TOP = 15  # clusters and signatures listed
FEEDBACK_LINKS = 30  # voted threads listed per direction
MAX_VOTED = 200_000  # voted traces looked up per report
NO_CONFIDENCE = "-"
ESCALATIONS_LISTED = 100  # newest first; the counts cover them all


class ReportRangeError(ValueError):
    """A report window the bot refuses, with the reason to show."""


def check_days(days: int) -> int:
    if not 1 <= days <= MAX_DAYS:
        raise ReportRangeError(f"a report covers 1 to {MAX_DAYS} days (a year); {days} asked")
    return days


@functools.lru_cache(maxsize=1024)
def _day_name(day_number: int) -> str:
    return datetime.fromtimestamp(day_number * 86_400, timezone.utc).strftime("%Y-%m-%d")


def day_of(at: float) -> str:
    """The UTC date of a time (formatted once per day, not once per record)."""
    return _day_name(int(at // 86_400))


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of a sorted list (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = min(max(math.ceil(fraction * len(sorted_values)), 1), len(sorted_values))
    return sorted_values[rank - 1]


class CappedCounter:
    """A Counter that stops admitting new keys at `cap` (existing keys keep counting)."""

    def __init__(self, cap: int | None = None) -> None:
        self.counts: Counter[str] = Counter()
        self.cap = MAX_KEYS if cap is None else cap
        self.dropped = 0

    def add(self, key: str, n: int = 1) -> bool:
        if key in self.counts or len(self.counts) < self.cap:
            self.counts[key] += n
            return True
        self.dropped += n
        return False

    def top(self, n: int = TOP) -> list[tuple[str, int]]:
        """The `n` largest, ties by key: the same order however the counts arrived (record by record
        or a day at a time)."""
        return heapq.nsmallest(n, self.counts.items(), key=lambda kv: (-kv[1], kv[0]))


def histogram_percentile(histogram: Mapping[str, int], fraction: float) -> float:
    """Nearest-rank percentile of the values a histogram counts (its keys are the values, as text)."""
    total = sum(histogram.values())
    if not total:
        return 0.0
    rank = min(max(math.ceil(fraction * total), 1), total)
    seen = 0
    for value, count in sorted(((float(k), n) for k, n in histogram.items())):
        seen += count
        if seen >= rank:
            return value
    return 0.0  # unreachable: the counts add up to the total


@dataclass
class _Cell:
    """One workspace on one day: replies, tokens and the latency histogram (or, for a day read from
    its counters, the percentiles Redis computed from the same histogram)."""

    answers: int = 0
    tokens: int = 0
    latencies: Counter[str] = field(default_factory=Counter)
    counted: tuple[float, float] | None = None

    def add(self, record: AnswerRecord) -> None:
        self.answers += 1
        self.tokens += record.tokens
        self.latencies[latency_key(record.latency)] += 1

    def summary(self) -> dict[str, Any]:
        p50, p95 = self.counted or (histogram_percentile(self.latencies, 0.5), histogram_percentile(self.latencies, 0.95))
        return {"answers": self.answers, "tokens": self.tokens, "latency_p50": round(p50, 3), "latency_p95": round(p95, 3)}


Example = dict[str, str]
Ref = tuple[str, str]  # (scope, stream id) of a record to show, read once the cluster makes the top


class _Clusters:
    """Counts per key with the first few distinct questions of each as examples."""

    def __init__(self) -> None:
        self.counter = CappedCounter()
        self.examples: dict[str, list[tuple[str, Example | Ref]]] = defaultdict(list)

    def add(self, key: str, n: int, candidates: Iterable[tuple[str, Callable[[], Example | Ref]]]) -> None:
        """Count `key` `n` times; `candidates` (identity, example maker), oldest first, become
        examples while fewer than EXAMPLES distinct questions are kept (built only then)."""
        if not self.counter.add(key, n):
            return
        kept = self.examples[key]
        for ident, make in candidates:
            if len(kept) >= EXAMPLES:
                return
            if all(ident != seen for seen, _ in kept):
                kept.append((ident, make()))

    def top(self, minimum: int = 1) -> list[dict[str, Any]]:
        return [{"key": key, "count": n, "examples": [shown for _, shown in self.examples.get(key, [])]}
                for key, n in self.counter.top() if n >= minimum]


class _Fold:
    """Everything the report counts: records folded one at a time (the hot loop of a report: the
    categorical counts go into one counter of combinations, split per view at the end), and whole
    days added from their counters (bot/report/counters.py) with the same keys."""

    def __init__(self, shows_text: bool, voted: set[str], redact: Callable[[str], str]) -> None:
        self.shows_text = shows_text
        self.redact = redact
        self.voted = voted
        self.records = 0  # in the report, counted or read
        self.scanned = 0  # read record by record
        # (day, platform, kind, language, repos, confidence) -> replies
        self.combos: Counter[tuple[str, str, str, str, tuple[str, ...], str]] = Counter()
        self.cells: dict[tuple[str, str, str], _Cell] = {}  # (day, platform, workspace)
        self.signatures = CappedCounter()
        self.gap_signatures = _Clusters()
        self.gap_topics = _Clusters()
        self.gaps = 0
        self.voted_records: dict[str, AnswerRecord] = {}

    def example(self, record: AnswerRecord) -> Example:
        shown = {"workspace": record.scope, "link": thread_link(record), "thread": thread_reference(record),
                 "day": day_of(record.at)}
        if self.shows_text:
            shown["question"] = self.redact(record.question)
        return shown

    def add(self, record: AnswerRecord) -> None:
        self.records += 1
        self.scanned += 1
        day = day_of(record.at)
        self.combos[(day, record.platform, record.kind, record.language, record.repos, record.confidence)] += 1
        where = (day, record.platform, record.workspace)
        cell = self.cells.get(where)
        if cell is None:
            cell = self.cells[where] = _Cell()
        cell.add(record)
        if record.trace_id in self.voted:
            self.voted_records[record.trace_id] = record
        if record.kind not in _QUESTION_KINDS:
            return
        if record.signature:
            self.signatures.add(record.signature)
        if is_gap(record):
            self.gaps += 1
            candidate = ((identity(record), lambda: self.example(record)),)
            if record.signature:  # a pasted error groups by what failed
                self.gap_signatures.add(record.signature, 1, candidate)
            elif self.shows_text:  # the rest by topic; the users' own words: only their workspace's admins see them
                for term in topic_terms(record.question):
                    self.gap_topics.add(term, 1, candidate)

    def add_day(self, scope: str, day_number: int, counted: DayCounters) -> None:
        """One whole day of `scope` from its counters."""
        platform, workspace = split_scope(scope)
        day = _day_name(day_number)
        self.records += counted.replies
        for (kind, language, repos, confidence), n in counted.combos:
            self.combos[(day, platform, kind, language, repos, confidence)] += n
        self.cells[(day, platform, workspace)] = _Cell(counted.replies, counted.tokens,
                                                       counted=(counted.latency_p50, counted.latency_p95))
        self.gaps += counted.gaps
        for key, n in counted.clusters.items():
            refs = [(ident, lambda entry_id=entry_id: (scope, entry_id)) for ident, entry_id in counted.examples.get(key, [])]
            if key.startswith(SIGNATURE):
                self.signatures.add(key[len(SIGNATURE):], n)
            elif key.startswith(GAP_SIGNATURE):
                self.gap_signatures.add(key[len(GAP_SIGNATURE):], n, refs)
            elif key.startswith(GAP_TOPIC) and self.shows_text:
                self.gap_topics.add(key[len(GAP_TOPIC):], n, refs)

    def daily(self) -> list[dict[str, Any]]:
        days: dict[str, dict[str, Counter[str]]] = defaultdict(
            lambda: {"platform": Counter(), "language": Counter(), "product": Counter()})
        questions: Counter[str] = Counter()
        for (day, platform, kind, language, repos, _), n in self.combos.items():
            if kind not in _QUESTION_KINDS:
                continue
            questions[day] += n
            counts = days[day]
            counts["platform"][platform] += n
            counts["language"][language or "?"] += n
            for repo in repos or ("(none)",):
                counts["product"][repo.rsplit("/", 1)[-1]] += n
        return [{"day": day, "questions": questions[day], **{name: dict(c) for name, c in days[day].items()}}
                for day in sorted(days)]

    def count_by(self, *, kinds: tuple[str, ...] | None = None, key: Callable[[tuple], Any]) -> dict[Any, int]:
        out: Counter[Any] = Counter()
        for combo, n in self.combos.items():
            if kinds is None or combo[2] in kinds:
                out[key(combo)] += n
        return dict(out)


_QUESTION_KINDS = frozenset(QUESTION_KINDS)


async def build_report(
    answer_log: AnswerLog, redis: Redis, keys: Keys, scope: AdminScope, days: int, *, now: float | None = None,
    counters: bool = True,
) -> dict[str, Any]:
    """The report of the last `days` days (UTC) for the workspaces `scope` admits, as plain data.
    `counters=False` reads every record instead of the days' counters (the same report, slower:
    for tests and the bench)."""
    check_days(days)
    started = time.perf_counter()
    until = time.time() if now is None else now
    since = until - days * 86_400
    scopes = [s for s in await answer_log.scopes() if scope.admits(s)]
    voted = await voted_traces(redis, keys, since, MAX_VOTED)
    fold = _Fold(scope.shows_text, voted, answer_log.redact)
    truncated = False
    for workspace in scopes:
        segments, by_day = await plan(answer_log, workspace, *answer_log.window(workspace, since, until, until),
                                      counters=counters, topics=scope.shows_text)
        counted = [s for s in segments if s.kind == "day"]
        for segment in segments:
            if segment.kind == "day":
                fold.add_day(workspace, segment.day, by_day[segment.day])
                continue
            async for chunk in answer_log.read_range(workspace, segment.first_ms, segment.last_ms):
                for record in chunk:
                    fold.add(record)
                if fold.scanned >= MAX_RECORDS:
                    truncated = True
                    break
            if truncated:
                break
        if truncated:
            break
        await _voted_on_counted_days(fold, answer_log, workspace, counted)
    feedback = await _feedback(fold, redis, keys)
    daily = fold.daily()
    by_signature = await _with_examples(fold, answer_log, fold.gap_signatures.top())
    by_topic = await _with_examples(fold, answer_log, fold.gap_topics.top(minimum=2))
    return {
        "generated_at": datetime.fromtimestamp(until, timezone.utc).isoformat(timespec="seconds"),
        "days": days,
        "since": datetime.fromtimestamp(since, timezone.utc).isoformat(timespec="seconds"),
        "scope": scope.label,
        "shows_question_text": scope.shows_text,
        "workspaces": scopes,
        "limits": {s: vars(answer_log.limits.for_scope(s)) for s in scopes},
        "records_read": fold.records,
        "truncated": truncated,
        "totals": {"questions": sum(d["questions"] for d in daily),
                   "gaps": fold.gaps, "votes_up": feedback["up"], "votes_down": feedback["down"]},
        "daily": daily,
        "kinds": fold.count_by(key=lambda c: c[2]),
        # copilot_answers_total{platform, kind}: the same replies, counted where the worker counts them
        "answers_by_platform_kind": dict(sorted(fold.count_by(key=lambda c: f"{c[1]}/{c[2]}").items())),
        "confidence": fold.count_by(kinds=("answer",), key=lambda c: c[5] or NO_CONFIDENCE),
        "feedback": feedback,
        "gaps": {"by_signature": [{**c, "key": fold.redact(c["key"])} for c in by_signature], "by_topic": by_topic},
        "top_signatures": [{"signature": fold.redact(s), "count": n} for s, n in fold.signatures.top()],
        "per_workspace_day": [{"day": day, "workspace": f"{platform}:{workspace}", **cell.summary()}
                              for (day, platform, workspace), cell in sorted(fold.cells.items())],
        "escalations": await escalations_section(
            EscalationLog(redis, keys, answer_log.limits, answer_log.redact), scope, since, until),
        "build_seconds": round(time.perf_counter() - started, 3),
    }


async def _voted_on_counted_days(fold: _Fold, answer_log: AnswerLog, scope: str, counted: list[Segment]) -> None:
    """The voted answers of the days read from counters (the records read one by one were seen by the fold)."""
    for record in await voted_in_days(answer_log, scope, sorted(fold.voted - fold.voted_records.keys()), counted):
        fold.voted_records[record.trace_id] = record


async def _with_examples(fold: _Fold, answer_log: AnswerLog, clusters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clusters with their examples: the ones kept as a record's place are read now (few: only
    the top clusters', three each), and one no longer stored is left out."""
    refs: dict[str, set[str]] = defaultdict(set)
    for cluster in clusters:
        for shown in cluster["examples"]:
            if isinstance(shown, tuple):
                refs[shown[0]].add(shown[1])
    read = {(scope, entry_id): record for scope, ids in refs.items()
            for entry_id, record in (await answer_log.records_at(scope, sorted(ids))).items()}
    return [{**c, "examples": [e if isinstance(e, dict) else fold.example(read[e]) for e in c["examples"]
                               if isinstance(e, dict) or e in read]} for c in clusters]


async def _feedback(fold: _Fold, redis: Redis, keys: Keys) -> dict[str, Any]:
    """Votes on the answers in the report (a vote on an answer outside the scope is not counted)."""
    votes = await votes_of(redis, keys, fold.voted_records)
    up = sum(u for u, _ in votes.values())
    down = sum(d for _, d in votes.values())
    threads: dict[str, list[dict[str, Any]]] = {"up": [], "down": []}
    # newest first, ties by trace id: one order however the records were read
    for trace_id, (u, d) in sorted(votes.items(), key=lambda item: (-fold.voted_records[item[0]].at, item[0])):
        wanted = [direction for direction, n in (("up", u), ("down", d)) if n and len(threads[direction]) < FEEDBACK_LINKS]
        if wanted:  # built only for the threads listed
            shown = {**fold.example(fold.voted_records[trace_id]), "up": u, "down": d}
            for direction in wanted:
                threads[direction].append(shown)
    rate = round(up / (up + down), 3) if up + down else None
    return {"up": up, "down": down, "helpful_rate": rate, "threads": threads}


async def escalations_section(
    escalation_log: EscalationLog, scope: AdminScope, since: float, until: float
) -> dict[str, Any]:
    """Questions taken upstream in the window: how many per product and state, and each one's issue
    and thread (newest first). One question in one thread is one escalation, in its latest state."""
    latest: dict[tuple[str, str, str, str, str], EscalationRecord] = {}
    for workspace in [s for s in await escalation_log.scopes() if scope.admits(s)]:
        for record in await escalation_log.read(workspace, since, until, now=until):
            latest[(record.scope, record.channel, record.thread, record.repo, record.question_id)] = record
    ordered = sorted(latest.values(), key=lambda r: -r.at)
    by_product: dict[str, Counter[str]] = defaultdict(Counter)
    for record in ordered:
        by_product[record.product][record.state] += 1
    return {
        "total": len(ordered),
        "by_product": {product: dict(states) for product, states in sorted(by_product.items())},
        "items": [_escalation_shown(record, scope.shows_text, escalation_log.redact) for record in ordered[:ESCALATIONS_LISTED]],
    }


def _escalation_shown(record: EscalationRecord, shows_text: bool, redact: Callable[[str], str]) -> dict[str, str]:
    # A pre-filled link carries the question in its body: only the workspace's admins get it.
    issue = record.url if record.state in ISSUE_STATES or shows_text else record.issues_page
    shown = {"day": day_of(record.at), "workspace": record.scope, "product": record.product, "repo": record.repo,
             "state": record.state, "issue": issue, "link": thread_link(record), "thread": thread_reference(record)}
    if shows_text:
        shown["question"] = redact(record.question)
    return shown
