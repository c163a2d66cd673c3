"""Our own short tool-use loop.

Each step is one model turn; when the model asks for tools, they run
concurrently (each with its own timeout) and their results go back in the
next turn. The loop stops on a final answer, the step budget, or the overall
deadline; in the last two cases it keeps the best answer so far.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from core.messages import Language, Progress
from core.research.citations import Evidence
from core.research.drafts import DraftReporter
from core.research.model import (
    Message,
    ModelClient,
    ModelReply,
    ModelUnavailable,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from core.research.prompts import BUDGET_NUDGE, progress_text
from core.research.tools.registry import ToolRegistry, ToolRun
from core.research.tools.turn import Planned, TurnGuard
from core.research.types import TraceStep

log = logging.getLogger(__name__)

ProgressCallback = Callable[[Progress], Awaitable[None]]
StopReason = Literal["answered", "budget", "deadline", "model_unavailable"]
PROGRESS_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class LoopLimits:
    max_steps: int = 8
    deadline_seconds: float = 120.0  # tools have their own timeouts, capped by what is left of this


@dataclass(frozen=True)
class AnswerContext:
    """What one answer works with, whether the tool loop or the bot's own retrieval writes it: the
    model, the tools, the prompt and conversation, where evidence is recorded, and whom to tell of
    progress in which language. The agent builds it once and hands it to either path."""

    client: ModelClient
    registry: ToolRegistry
    system: str
    messages: Sequence[Message]
    evidence: Evidence
    language: Language
    progress: ProgressCallback
    clock: Callable[[], float] = time.monotonic


@dataclass
class LoopResult:
    stop: StopReason
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    trace: list[TraceStep] = field(default_factory=list)
    error: str = ""


async def run_loop(context: AnswerContext, limits: LoopLimits) -> LoopResult:
    result = LoopResult(stop="answered")
    deadline = context.clock() + limits.deadline_seconds
    best_text = ""
    messages = list(context.messages)
    guard = TurnGuard()  # per answer: caps each turn's calls and refuses repeats
    drafts = DraftReporter(context.progress, context.language)  # the streamed text of a turn that may be the final answer
    for step in range(1, max(1, limits.max_steps) + 1):
        remaining = deadline - context.clock()
        if remaining <= 0:
            result.stop = "deadline"
            break
        reply = await model_turn(
            context.client, drafts, result, step=step, remaining=remaining, clock=context.clock,
            system=context.system, tools=context.registry.specs, messages=messages,
        )
        if reply is None:
            if result.stop == "deadline":
                break  # the best answer so far is kept
            return result
        if reply.text:
            best_text = reply.text
        if not reply.tool_uses:
            result.text = reply.text or best_text
            result.stop = "answered"
            return result
        if step == limits.max_steps:
            # The model still wants tools after the nudge: the budget is spent, keep what we have.
            result.stop = "budget"
            break
        runs = await _run_tools(
            reply, context.registry, context.evidence, deadline - context.clock(), context.language, context.progress, step, guard
        )
        result.trace += tool_steps(runs, step)
        results: list[TextBlock | ToolResultBlock] = [ToolResultBlock(r.tool_use_id, r.content, r.is_error) for r in runs]
        if step + 1 == limits.max_steps:
            results.append(TextBlock(BUDGET_NUDGE))
            writing = progress_text("writing", context.language)
            await _report(context.progress, Progress(writing, step=step + 1, stage="writing", language=context.language))
        messages += [Message("assistant", reply.blocks), Message("user", tuple(results))]
    result.text = best_text
    return result


async def model_turn(
    client: ModelClient,
    drafts: DraftReporter,
    result: LoopResult,
    *,
    step: int,
    remaining: float,
    clock: Callable[[], float],
    system: str,
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    note: str = "",  # the trace note of an answered turn; "": the model's stop reason
) -> ModelReply | None:
    """One model turn within `remaining` seconds, its text streamed as a draft, its usage and trace
    step added to `result`. None when it timed out or the model was unavailable: `result.stop` (and
    `error`) say which, and the turn's draft is cleared, since an unfinished turn is no answer."""
    started = clock()
    try:
        async with asyncio.timeout(remaining):
            reply = await client.complete(system=system, tools=tools, messages=messages, on_text=drafts.update)
    except TimeoutError:
        failed, result.stop = "deadline", "deadline"
    except ModelUnavailable as exc:
        failed, result.stop, result.error = str(exc), "model_unavailable", str(exc)
    else:
        result.usage += reply.usage
        # A turn that ends in tool calls was not the answer: its streamed text must not stay visible.
        await (drafts.clear() if tools and reply.tool_uses else drafts.settle())
        result.trace.append(TraceStep(
            "model", client.model, {}, (clock() - started) * 1000, True, step, usage=reply.usage, note=note or reply.stop_reason
        ))
        return reply
    await drafts.clear()
    result.trace.append(TraceStep("model", client.model, {}, (clock() - started) * 1000, False, step, note=failed))
    return None


def tool_steps(runs: Sequence[ToolRun], step: int) -> list[TraceStep]:
    """The trace steps of the tool calls a step ran."""
    return [
        TraceStep("tool", r.tool, r.arguments, r.duration_ms, not r.is_error, step, cached=r.cached, note=r.summary)
        for r in runs
    ]


async def _run_tools(
    reply: ModelReply,
    registry: ToolRegistry,
    evidence: Evidence,
    remaining: float,
    language: Language,
    progress: ProgressCallback,
    step: int,
    guard: TurnGuard,
) -> list[ToolRun]:
    timeout = max(0.1, remaining)
    planned = guard.plan(reply.tool_uses)
    for item in planned:
        if not item.refusal:
            await _report(progress, Progress(registry.describe(item.call, language), step=step, stage="tool", language=language))

    async def one(item: Planned) -> ToolRun:
        if item.refusal:
            return registry.refuse(item.call, item.refusal)
        return await registry.run(item.call, evidence, timeout)

    # Every call gets a result, in the model's order: the API requires one per tool_use.
    return list(await asyncio.gather(*(one(item) for item in planned)))


async def _report(progress: ProgressCallback, update: Progress) -> None:
    # Progress is cosmetic: a failing or stuck platform edit must not end or stall the research.
    try:
        async with asyncio.timeout(PROGRESS_TIMEOUT_SECONDS):
            await progress(update)
    except Exception as exc:
        log.warning("progress callback failed: %s", type(exc).__name__)


report_progress = _report  # for the retrieval path, which reports the same way
