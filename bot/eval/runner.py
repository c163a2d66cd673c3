"""Each question through `Conversation.handle`, exactly as a chat message, in a fresh thread.

The conversation's `on_research` hook reports the research outcome (usage, trace) of whichever
question is running; a context variable set per task says which one, so concurrent questions do
not mix their token counts.
"""
from __future__ import annotations

import asyncio
import contextvars
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.eval.dataset import EvalItem
from bot.eval.links import RepoBases, evidence_keys, extract_links, url_keys
from bot.eval.metrics import Action, QuestionResult
from bot.eval.progress import ProgressDisplay
from bot.eval.retrieval import search_evidence
from core.index.passage import Retriever
from core.messages import InboundMessage, Progress, Reply, ReplyKind

_ACTIONS: dict[ReplyKind, Action] = {
    ReplyKind.ANSWER: "answered",
    ReplyKind.CLARIFY: "clarified",
    ReplyKind.OUT_OF_SCOPE: "oos",
}


@dataclass
class _Spend:
    usage_in: int = 0
    usage_out: int = 0
    usage_cached: int = 0
    tool_calls: int = 0


_current: contextvars.ContextVar[_Spend | None] = contextvars.ContextVar("eval_spend", default=None)


def observe_research(outcome: Any) -> None:
    """The `on_research` hook: adds the outcome's usage and tool calls to the running question."""
    spend = _current.get()
    if spend is None:
        return
    usage = getattr(outcome, "usage", None)
    spend.usage_in += int(getattr(usage, "input", 0) or 0) + int(getattr(usage, "cache_write", 0) or 0)
    spend.usage_out += int(getattr(usage, "output", 0) or 0)
    spend.usage_cached += int(getattr(usage, "cache_read", 0) or 0)
    spend.tool_calls += sum(1 for step in getattr(outcome, "trace", ()) if getattr(step, "kind", "") == "tool")


@dataclass
class RunOptions:
    k: int = 5
    concurrency: int = 1
    max_tokens_total: int | None = None


@dataclass
class RunOutcome:
    results: list[QuestionResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # ids not started: token budget spent
    tokens_spent: int = 0


async def _quiet(_: Progress) -> None:
    return None


def new_result(item: EvalItem) -> QuestionResult:
    return QuestionResult(
        id=item.id,
        category=item.category,
        question=item.question,
        lang=item.lang,
        expected_repos=item.expected_repos,
        needs_clarification=item.needs_clarification,
        out_of_scope=item.out_of_scope,
        evidence=item.evidence,
        answer_facts=item.answer_facts,
    )


def record_reply(result: QuestionResult, reply: Reply, bases: RepoBases) -> None:
    result.action = _ACTIONS.get(reply.kind, "other")
    result.reply_kind = reply.kind.value
    result.reply_language = reply.language
    if reply.confidence is not None:
        result.confidence, result.confidence_reason = reply.confidence.level, reply.confidence.reason
    result.repos = tuple(reply.repos)
    result.text = reply.text
    result.sources = tuple(s.url for s in reply.sources)
    if result.evidence and result.action == "answered":
        wanted = evidence_keys(result.evidence, bases)
        result.evidence_in_sources = any(url_keys(url, bases) & wanted for url in result.sources)


def answer_links(result: QuestionResult) -> list[str]:
    return list(dict.fromkeys([*extract_links(result.text), *result.sources]))


GradeFn = Callable[[QuestionResult], Awaitable[int]]  # grades one result in place, returns tokens spent


async def run_questions(
    conversation: Any,
    items: Sequence[EvalItem],
    message_for: Callable[[str, str], InboundMessage],
    *,
    options: RunOptions,
    bases: RepoBases,
    retriever: Retriever | None = None,
    grade: GradeFn | None = None,
    display: ProgressDisplay | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> RunOutcome:
    outcome = RunOutcome()
    queue: asyncio.Queue[tuple[int, EvalItem]] = asyncio.Queue()
    for pair in enumerate(items):
        queue.put_nowait(pair)
    slots: list[QuestionResult | None] = [None] * len(items)
    budget_noted = False

    async def one(item: EvalItem) -> QuestionResult:
        result = new_result(item)
        spend = _Spend()
        _current.set(spend)  # each worker task has its own context copy
        started = clock()
        try:
            reply = await conversation.handle(message_for(item.question, f"eval-{uuid.uuid4().hex}"), _quiet)
        except Exception as exc:  # noqa: BLE001 - one failing question must not end the run
            result.error = f"{type(exc).__name__}: {exc}"[:300]
        else:
            record_reply(result, reply, bases)
        result.latency_ms = (clock() - started) * 1000
        result.tokens_in, result.tokens_out, result.tokens_cached = spend.usage_in, spend.usage_out, spend.usage_cached
        result.tool_calls = spend.tool_calls
        outcome.tokens_spent += spend.usage_in + spend.usage_out + spend.usage_cached
        if retriever is not None and item.evidence:
            searched = result.repos if result.action == "answered" else ()
            try:
                result.evidence_hit_at_k = search_evidence(retriever, item.question, searched, item.evidence, options.k, bases)
            except Exception as exc:  # noqa: BLE001 - the index failing one query is a miss, noted
                result.evidence_hit_at_k = False
                result.error = result.error or f"index search failed: {type(exc).__name__}"
        if grade is not None and item.answer_facts:
            outcome.tokens_spent += await grade(result)
        return result

    async def worker() -> None:
        nonlocal budget_noted
        while True:
            try:
                index, item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if options.max_tokens_total is not None and outcome.tokens_spent >= options.max_tokens_total:
                outcome.skipped.append(item.id)
                if display is not None and not budget_noted:
                    budget_noted = True
                    display.message(
                        f"token budget spent ({outcome.tokens_spent} >= {options.max_tokens_total}); not starting the rest"
                    )
                if display is not None:
                    display.advance(f"{item.id} skipped")
                continue
            slots[index] = await one(item)
            if display is not None:
                display.advance(item.id)

    await asyncio.gather(*(worker() for _ in range(max(1, options.concurrency))))
    outcome.results = [r for r in slots if r is not None]
    order = {item.id: i for i, item in enumerate(items)}
    outcome.skipped.sort(key=order.__getitem__)
    return outcome
