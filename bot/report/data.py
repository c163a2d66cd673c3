"""The report's numbers, computed once from the answer log and the votes; the CLI and /admin show them.

Bounded whatever the log holds: records stream in chunks (bot/report/log.py) and are folded into
counters as they arrive; latencies keep a capped sample per day and workspace, signature and topic
counters keep a capped number of keys, clusters a few examples each, and a report reads at most
MAX_RECORDS records (it says so when it stops there). A question's text enters the report only for
a scope that may see it (bot/report/access.py); everything shown was redacted when it was stored.
"""
from __future__ import annotations

import functools
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from redis.asyncio import Redis

from bot.report.access import AdminScope
from bot.report.escalations import EscalationLog, EscalationRecord
from bot.report.feedback import votes_of, voted_traces
from bot.report.limits import MAX_DAYS
from bot.report.links import thread_link, thread_reference
from bot.report.log import AnswerLog, AnswerRecord
from bot.report.topics import topic_terms
from core.keys import Keys

MAX_RECORDS = 1_000_000  # read per report; with the default limits a workspace holds 50,000
LATENCY_SAMPLES = 2_000  # per day and workspace: percentiles of a uniform sample
MAX_KEYS = 20_000  # distinct signatures or topic words counted; later new ones go uncounted
EXAMPLES = 3  # questions shown per cluster
TOP = 15  # clusters and signatures listed
FEEDBACK_LINKS = 30  # voted threads listed per direction
MAX_VOTED = 200_000  # voted traces looked up per report
QUESTION_KINDS = ("answer", "clarify", "out_of_scope", "error")  # a notice (help, rate limit) is no question
NO_CONFIDENCE = "-"
ESCALATIONS_LISTED = 100  # newest first; the counts cover them all


class ReportRangeError(ValueError):
    """A report window the bot refuses, with the reason to show."""


def check_days(days: int) -> int:
    if not 1 <= days <= MAX_DAYS:
        raise ReportRangeError(f"a report covers 1 to {MAX_DAYS} days (a year); {days} asked")
    return days


def is_gap(record: AnswerRecord) -> bool:
    """A question the bot could not answer well: refused as out of scope, failed, labelled low
    confidence, or (before confidence labels) answered with no source at all."""
    if record.kind in ("out_of_scope", "error"):
        return True
    if record.kind != "answer":
        return False
    return record.confidence == "low" or (not record.confidence and record.sources == 0)


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

    def add(self, key: str) -> bool:
        if key in self.counts or len(self.counts) < self.cap:
            self.counts[key] += 1
            return True
        self.dropped += 1
        return False


@dataclass
class _Cell:
    """One workspace on one day: answers, tokens and a uniform sample of latencies."""

    answers: int = 0
    tokens: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, record: AnswerRecord, rng: random.Random) -> None:
        self.answers += 1
        self.tokens += record.tokens
        if len(self.latencies) < LATENCY_SAMPLES:
            self.latencies.append(record.latency)
        else:  # reservoir sampling: every latency of the day is equally likely to be kept
            slot = rng.randrange(self.answers)
            if slot < LATENCY_SAMPLES:
                self.latencies[slot] = record.latency

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        return {"answers": self.answers, "tokens": self.tokens,
                "latency_p50": round(percentile(ordered, 0.5), 3), "latency_p95": round(percentile(ordered, 0.95), 3)}


class _Clusters:
    """Counts per key with the first few examples of each."""

    def __init__(self) -> None:
        self.counter = CappedCounter()
        self.examples: dict[str, list[dict[str, str]]] = defaultdict(list)

    def add(self, key: str, make_example: Callable[[], dict[str, str]]) -> None:
        """Count `key`; build its example only when one more will be kept (most are not)."""
        if not self.counter.add(key) or len(self.examples[key]) >= EXAMPLES:
            return
        example = make_example()
        same = example.get("question") or example["thread"]  # one example per distinct question
        if all((shown.get("question") or shown["thread"]) != same for shown in self.examples[key]):
            self.examples[key].append(example)

    def top(self, minimum: int = 1) -> list[dict[str, Any]]:
        return [{"key": key, "count": n, "examples": self.examples.get(key, [])}
                for key, n in self.counter.counts.most_common(TOP) if n >= minimum]


class _Fold:
    """Everything the report counts, folded one record at a time (the hot loop of a report: the
    categorical counts go into one counter of combinations, split per view at the end)."""

    def __init__(self, shows_text: bool, voted: set[str], redact: Callable[[str], str]) -> None:
        self.shows_text = shows_text
        self.redact = redact
        self.voted = voted
        self.rng = random.Random(0)  # reproducible samples: two reads of one log give one report
        self.records = 0
        # (day, platform, kind, language, repos, confidence) -> replies
        self.combos: Counter[tuple[str, str, str, str, tuple[str, ...], str]] = Counter()
        self.cells: dict[tuple[str, str, str], _Cell] = {}  # (day, platform, workspace)
        self.signatures = CappedCounter()
        self.gap_signatures = _Clusters()
        self.gap_topics = _Clusters()
        self.gaps = 0
        self.voted_records: dict[str, AnswerRecord] = {}

    def example(self, record: AnswerRecord) -> dict[str, str]:
        shown = {"workspace": record.scope, "link": thread_link(record), "thread": thread_reference(record),
                 "day": day_of(record.at)}
        if self.shows_text:
            shown["question"] = self.redact(record.question)
        return shown

    def add(self, record: AnswerRecord) -> None:
        self.records += 1
        day = day_of(record.at)
        self.combos[(day, record.platform, record.kind, record.language, record.repos, record.confidence)] += 1
        where = (day, record.platform, record.workspace)
        cell = self.cells.get(where)
        if cell is None:
            cell = self.cells[where] = _Cell()
        cell.add(record, self.rng)
        if record.trace_id in self.voted:
            self.voted_records[record.trace_id] = record
        if record.kind not in _QUESTION_KINDS:
            return
        if record.signature:
            self.signatures.add(record.signature)
        if is_gap(record):
            self.gaps += 1
            example = lambda: self.example(record)  # noqa: E731 - built only when kept
            if record.signature:  # a pasted error groups by what failed
                self.gap_signatures.add(record.signature, example)
            elif self.shows_text:  # the rest by topic; the users' own words: only their workspace's admins see them
                for term in topic_terms(record.question):
                    self.gap_topics.add(term, example)

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
    answer_log: AnswerLog, redis: Redis, keys: Keys, scope: AdminScope, days: int, *, now: float | None = None
) -> dict[str, Any]:
    """The report of the last `days` days (UTC) for the workspaces `scope` admits, as plain data."""
    check_days(days)
    started = time.perf_counter()
    until = time.time() if now is None else now
    since = until - days * 86_400
    scopes = [s for s in await answer_log.scopes() if scope.admits(s)]
    voted = await voted_traces(redis, keys, since, MAX_VOTED)
    fold = _Fold(scope.shows_text, voted, answer_log.redact)
    truncated = False
    for workspace in scopes:
        async for chunk in answer_log.read(workspace, since, until, now=until):
            for record in chunk:
                fold.add(record)
            if fold.records >= MAX_RECORDS:
                truncated = True
                break
        if truncated:
            break
    feedback = await _feedback(fold, redis, keys)
    daily = fold.daily()
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
        "gaps": {"by_signature": [{**c, "key": fold.redact(c["key"])} for c in fold.gap_signatures.top()],
                 "by_topic": fold.gap_topics.top(minimum=2)},
        "top_signatures": [{"signature": fold.redact(s), "count": n} for s, n in fold.signatures.counts.most_common(TOP)],
        "per_workspace_day": [{"day": day, "workspace": f"{platform}:{workspace}", **cell.summary()}
                              for (day, platform, workspace), cell in sorted(fold.cells.items())],
        "escalations": await escalations_section(
            EscalationLog(redis, keys, answer_log.limits, answer_log.redact), scope, since, until),
        "build_seconds": round(time.perf_counter() - started, 3),
    }


async def _feedback(fold: _Fold, redis: Redis, keys: Keys) -> dict[str, Any]:
    """Votes on the answers in the report (a vote on an answer outside the scope is not counted)."""
    votes = await votes_of(redis, keys, fold.voted_records)
    up = sum(u for u, _ in votes.values())
    down = sum(d for _, d in votes.values())
    threads: dict[str, list[dict[str, Any]]] = {"up": [], "down": []}
    for trace_id, (u, d) in sorted(votes.items(), key=lambda item: -fold.voted_records[item[0]].at):
        shown = {**fold.example(fold.voted_records[trace_id]), "up": u, "down": d}
        for direction, n in (("up", u), ("down", d)):
            if n and len(threads[direction]) < FEEDBACK_LINKS:
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
    issue = record.url if record.state == "filed" or shows_text else record.issues_page
    shown = {"day": day_of(record.at), "workspace": record.scope, "product": record.product, "repo": record.repo,
             "state": record.state, "issue": issue, "link": thread_link(record), "thread": thread_reference(record)}
    if shows_text:
        shown["question"] = redact(record.question)
    return shown
