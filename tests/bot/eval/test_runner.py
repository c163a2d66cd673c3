"""The runner in process: research cost per question under concurrency, recall@k through a
retriever, and a question that fails inside the bot."""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from bot.cli import terminal_message
from bot.eval.dataset import parse_lines
from bot.eval.links import RepoBases
from bot.eval.runner import RunOptions, observe_research, run_questions
from core.conversation import Conversation
from core.index.passage import Passage
from core.messages import Source
from core.research.model import Usage
from core.research.types import ResearchOutcome, TraceStep
from core.session import MemorySessionStore

ASCEND = "vllm-project/vllm-ascend"


class SlowResearcher:
    """Usage and tool calls depend on the question, and answers finish out of order, so a mix-up
    between concurrent questions shows in the counts."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.max_in_flight = 0

    async def answer(self, request: Any, progress: Any) -> ResearchOutcome:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        size = int(request.question.split("#")[1].split()[0])
        await asyncio.sleep(0.05 * (4 - size))
        self.in_flight -= 1
        tools = tuple(TraceStep("tool", "search_code", {}, 1.0, True) for _ in range(size))
        model = TraceStep("model", "m", {}, 1.0, True)
        url = f"https://github.com/{ASCEND}/blob/main/docs/f{size}.md"
        return ResearchOutcome(True, f"answer {size}", sources=(Source("f", url),), trace=(model, *tools),
                               usage=Usage(input=100 * size, output=10 * size, cache_write=1, cache_read=1000 * size))


class FakeRetriever:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[str, ...], int]] = []

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: Any = None) -> list[Passage]:
        self.calls.append((query, tuple(repos), k))
        paths = [f"docs/other{i}.md" for i in range(10)]
        if "#2" in query:
            paths.insert(k - 1, "docs/f2.md")  # exactly at rank k: a hit
        if "#3" in query:
            paths.insert(k, "docs/f3.md")  # just past k: a miss
        return [Passage(ASCEND, p, p, f"https://github.com/{ASCEND}/blob/abc1234/{p}", "doc", 1, 2, 1.0, "t") for p in paths[:k]]


def items(n: int) -> list[Any]:
    lines = [
        f'{{"id": "q{i}", "question": "vllm-ascend question #{i} about install", "expected_repos": ["{ASCEND}"], '
        f'"evidence": ["{ASCEND}:docs/f{i}.md"], "category": "c"}}'
        for i in range(1, n + 1)
    ]
    return parse_lines(lines)[0]


async def test_concurrent_questions_keep_their_own_tokens_and_tool_calls():
    researcher = SlowResearcher()
    conversation = Conversation(MemorySessionStore(), researcher=researcher, on_research=observe_research)
    retriever = FakeRetriever()
    outcome = await run_questions(conversation, items(3), terminal_message, options=RunOptions(k=3, concurrency=3),
                                  bases=RepoBases(), retriever=retriever)
    assert researcher.max_in_flight == 3
    assert [r.id for r in outcome.results] == ["q1", "q2", "q3"]  # dataset order, whatever finished first
    for size, r in enumerate(outcome.results, start=1):
        assert (r.tokens_in, r.tokens_out, r.tokens_cached, r.tool_calls) == (100 * size + 1, 10 * size, 1000 * size, size)
        assert r.action == "answered" and r.evidence_in_sources is True
    assert [r.evidence_hit_at_k for r in outcome.results] == [False, True, False]
    assert all(repos == (ASCEND,) and k == 3 for _, repos, k in retriever.calls)  # routed repos, k from options
    assert outcome.tokens_spent == sum(100 * s + 1 + 10 * s + 1000 * s for s in (1, 2, 3))


async def test_a_question_that_raises_is_recorded_and_the_run_goes_on():
    class Broken:
        async def handle(self, message: Any, progress: Any) -> Any:
            if "#2" in message.text:
                raise RuntimeError("boom")
            return await real.handle(message, progress)

    real = Conversation(MemorySessionStore())
    outcome = await run_questions(Broken(), items(3), terminal_message, options=RunOptions(), bases=RepoBases())
    assert [r.error for r in outcome.results] == ["", "RuntimeError: boom", ""]
    assert outcome.results[1].action == "other" and outcome.results[1].routing_ok is False
    assert outcome.results[0].action == "answered"
