"""The research agent: one question in, one verified answer (or a clean failure) out."""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

from core.messages import Progress
from core.research.citations import Evidence, verify_answer
from core.research.drafts import DraftReporter
from core.research.loop import AnswerContext, LoopLimits, LoopResult, run_loop
from core.research.model import Message, ModelClient, TextBlock
from core.research.prompts import SYSTEM_PROMPT, user_turn
from core.research.redact import Redactor, defang_mentions
from core.research.retrieval import retrieval_answer
from core.research.tools.registry import ToolRegistry
from core.research.types import ResearchOutcome, ResearchRequest

log = logging.getLogger(__name__)

HISTORY_TURNS = 12
HISTORY_CHARS = 6000

_EARLY_STOP = {
    "budget": {
        "en": "_I stopped researching at the step budget, so this answer may be incomplete._",
        "zh": "_检索已达到步数上限，本回答可能不完整。_",
    },
    "deadline": {
        "en": "_I stopped researching at the time limit, so this answer may be incomplete._",
        "zh": "_检索已达到时间上限，本回答可能不完整。_",
    },
}
# A Sources section the bot appended to an earlier answer: history keeps the prose only.


class ResearchAgent:
    def __init__(
        self,
        *,
        client: ModelClient,
        registry: ToolRegistry,
        redactor: Redactor,
        limits: LoopLimits,
        allowed_urls: Iterable[str] = (),
        closers: Iterable[Callable[[], Awaitable[None]]] = (),
        tools_mode: Literal["auto", "on", "off"] = "on",
        fallback_when_no_tool_call: bool = False,
    ) -> None:
        self._client = client
        self._registry = registry
        self._redact = redactor
        self._limits = limits
        self._allowed_urls = tuple(allowed_urls)
        self._closers = tuple(closers)
        self._tools_mode = tools_mode
        # Only for providers whose models may ignore tools (small self-hosted ones): Claude skipping
        # tools on a thread follow-up is deliberate, and a second model call would just cost more.
        self._fallback_when_no_tool_call = fallback_when_no_tool_call

    @property
    def registry(self) -> ToolRegistry:
        return self._registry

    async def answer(self, request: ResearchRequest, progress: Callable[[Progress], Awaitable[None]]) -> ResearchOutcome:
        try:
            return await self._answer(request, progress)
        except Exception as exc:  # never silence: the caller falls back to the triage answer
            log.exception("research failed: %s", type(exc).__name__)
            return ResearchOutcome(ok=False, text="", error=f"internal error ({type(exc).__name__})")

    async def _answer(self, request: ResearchRequest, progress: Callable[[Progress], Awaitable[None]]) -> ResearchOutcome:
        # The allow-list is the knowledge base's own Source URLs (build.py passes canonical_urls()), never
        # URLs found in text: the offline diagnostic quotes issue passages, and anyone can write an issue.
        evidence = Evidence(self._allowed_urls)
        messages = self.messages_for(request)
        result = await self._research(request, messages, evidence, progress)
        trace = tuple(result.trace)
        tools_used = sum(1 for s in trace if s.kind == "tool")
        log.info("research ended: %s after %d step(s), %d tool call(s)", result.stop, len(trace) - tools_used, tools_used)
        if result.stop == "model_unavailable" or not result.text:
            error = result.error or f"no answer ({result.stop})"
            return ResearchOutcome(ok=False, text="", trace=trace, usage=result.usage, error=error)
        text = defang_mentions(self._redact(result.text))
        if result.stop in _EARLY_STOP:
            text += "\n\n" + _EARLY_STOP[result.stop][request.language]
        verified = verify_answer(text, evidence, request.language)
        return ResearchOutcome(ok=True, text=verified.text, sources=verified.sources, trace=trace, usage=result.usage)

    async def _research(
        self,
        request: ResearchRequest,
        messages: list[Message],
        evidence: Evidence,
        progress: Callable[[Progress], Awaitable[None]],
    ) -> LoopResult:
        """The tool loop, or the bot's own retrieval when tools are off or the model cannot use them."""
        deadline = time.monotonic() + self._limits.deadline_seconds  # one budget for both paths together

        context = AnswerContext(
            client=self._client,
            registry=self._registry,
            system=SYSTEM_PROMPT,
            messages=messages,
            evidence=evidence,
            language=request.language,
            progress=progress,
        )

        async def by_retrieval() -> LoopResult:
            return await retrieval_answer(
                context,
                question=request.question,
                repos=request.repos,
                deadline_seconds=max(1.0, deadline - time.monotonic()),
            )

        rejected = bool(getattr(self._client, "tools_rejected", False))
        if self._tools_mode == "off" or (self._tools_mode == "auto" and rejected):
            return await by_retrieval()
        result = await run_loop(context, self._limits)
        if self._tools_mode != "auto":
            return result
        if result.stop == "model_unavailable" and getattr(self._client, "tools_rejected", False):
            log.warning("the model server refused tools; answering from the bot's own retrieval")
            fallback = await by_retrieval()
        elif self._needs_evidence(request, result):
            log.warning("the model answered without calling a tool; answering from the bot's own retrieval")
            await DraftReporter(progress, request.language).clear_any()  # the tool-less answer's draft gives way
            fallback = await by_retrieval()
            if fallback.stop != "answered" or not fallback.text:
                return result  # the first answer is still better than none
        else:
            return result
        fallback.trace[:0] = result.trace
        fallback.usage += result.usage
        return fallback

    def _needs_evidence(self, request: ResearchRequest, result: LoopResult) -> bool:
        """An answer about a product written without looking anything up."""
        return (
            self._fallback_when_no_tool_call
            and result.stop == "answered"
            and bool(request.repos)
            and not any(step.kind == "tool" for step in result.trace)
        )

    def messages_for(self, request: ResearchRequest) -> list[Message]:
        """Earlier turns as plain messages (a stable, cacheable prefix), then this turn with its context."""
        messages: list[Message] = []
        for role, text in request.history[-HISTORY_TURNS:]:
            if role not in ("user", "assistant") or not text.strip():
                continue
            text = text[:HISTORY_CHARS]  # replies are stored without their sources list
            block = TextBlock(self._redact(text))
            if messages and messages[-1].role == role:
                messages[-1] = Message(role, messages[-1].blocks + (block,))  # type: ignore[arg-type]
            else:
                messages.append(Message(role, (block,)))  # type: ignore[arg-type]
        if messages and messages[0].role == "assistant":
            messages.insert(0, Message("user", (TextBlock("(earlier in this thread)"),)))
        if messages:
            messages[-1] = Message(messages[-1].role, messages[-1].blocks, cache_point=True)
        current = TextBlock(
            self._redact(
                user_turn(
                    question=request.question,
                    language=request.language,
                    repos=request.repos,
                    known_env=request.known_env,
                    triage_markdown=request.triage_markdown,
                    user=request.user,
                    channel=request.channel,
                    today=request.today,
                )
            )
        )
        if messages and messages[-1].role == "user":
            last = messages[-1]
            messages[-1] = Message("user", last.blocks + (current,), cache_point=False)
            if len(messages) > 1:
                messages[-2] = Message(messages[-2].role, messages[-2].blocks, cache_point=True)
        else:
            messages.append(Message("user", (current,)))
        return messages

    async def aclose(self) -> None:
        for close in (self._client.aclose, *self._closers):
            try:
                await close()
            except Exception as exc:
                log.warning("closing the research agent: %s", type(exc).__name__)
