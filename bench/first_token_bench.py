"""Time from question to first answer text, with streamed drafts, against a model at a fixed token rate.

A fake OpenAI-compatible server (the real `openai` SDK, SSE streaming) and a
fake Messages API (the real `anthropic` SDK) each play the model: `--first-token` seconds before its first byte (prefill),
then `--rate` tokens a second (a token ~ 4 characters). Each question is one
research turn as the agent runs it: a search_code call on a local git clone,
then a streamed final answer of `--answer-chars` characters. Measured per
question, from `agent.answer()` to:

- first draft: the first `Progress(stage="draft")` with answer text, what a
  user sees first on a platform that shows streams;
- full answer: the verified answer, what a user waited for before streaming.

    .venv/bin/python bench/first_token_bench.py [--questions 20] [--rate 40] [--first-token 0.3] [--provider openai|anthropic|both]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench._common import percentile  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.keys import Keys  # noqa: E402
from core.messages import DRAFT_STAGE, Progress  # noqa: E402
from core.research import ResearchRequest, build_research_agent  # noqa: E402
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, make_repo  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, Turn, text, tool, tool_results  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, Reply, call, tool_messages  # noqa: E402

REPO = "vllm-project/vllm-ascend"
CHARS_PER_TOKEN = 4


def answer_text(args: argparse.Namespace) -> str:
    sentence = "In vllm-ascend, check that CANN and torch_npu match the release's matrix row. "
    return (sentence * (args.answer_chars // len(sentence) + 1))[: args.answer_chars]


def openai_model(args: argparse.Namespace):
    def model(body: dict[str, Any]) -> Reply:
        if not tool_messages(body):
            return Reply(tool_calls=[call("search_code", repo=REPO, query="507015")], delay=args.first_token)
        return Reply(content=answer_text(args), piece_chars=CHARS_PER_TOKEN, piece_interval=1.0 / args.rate, delay=args.first_token)

    return model


def anthropic_model(args: argparse.Namespace):
    def model(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return Turn([tool("search_code", repo=REPO, query="507015")], delay=args.first_token)
        return Turn([text(answer_text(args))], delay=args.first_token, piece_chars=CHARS_PER_TOKEN, piece_interval=1.0 / args.rate)

    return model


async def one_question(agent: Any) -> tuple[float, float]:
    started = time.perf_counter()
    first: list[float] = []

    async def progress(update: Progress) -> None:
        if update.stage == DRAFT_STAGE and update.text and not first:
            first.append(time.perf_counter() - started)

    request = ResearchRequest(question="vllm-ascend ACL error 507015, why?", language="en", repos=(REPO,), today="2026-12-02")
    outcome = await agent.answer(request, progress)
    total = time.perf_counter() - started
    assert outcome.ok, outcome.error
    return (first[0] if first else float("nan")), total


async def measure(args: argparse.Namespace, provider: str) -> tuple[list[float], list[float]]:
    workdir = Path(tempfile.mkdtemp())
    make_repo(workdir / "repos" / REPO, VLLM_ASCEND_FILES)
    fake: Any = FakeOpenAI(openai_model(args)) if provider == "openai" else FakeAnthropic(anthropic_model(args))
    async with fake as server:
        model_settings: dict[str, Any] = (
            {"model_provider": "openai", "openai_base_url": server.url, "anthropic_api_key": None}
            if provider == "openai"
            else {"model_provider": "anthropic", "anthropic_api_key": "bench-key", "anthropic_base_url": server.url}
        )
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            repos_dir=workdir / "repos",
            data_dir=workdir / "data",
            github_api_url="http://127.0.0.1:9",
            gitcode_api_url="http://127.0.0.1:9",
            deepwiki_mcp_url="http://127.0.0.1:9/mcp",
            redis_url=None,
            **model_settings,
        )
        agent = build_research_agent(settings, None, Keys("bench-first-token"))
        assert agent is not None
        results: list[tuple[float, float]] = []
        try:
            for start in range(0, args.questions, args.concurrency):
                batch = range(start, min(args.questions, start + args.concurrency))
                results += await asyncio.gather(*(one_question(agent) for _ in batch))
        finally:
            await agent.aclose()
    return [r[0] for r in results], [r[1] for r in results]


async def main(args: argparse.Namespace) -> None:
    print(
        f"first_token_bench: {args.questions} questions per provider, fake model {args.rate:g} tokens/s, "
        f"{args.first_token:g} s to first byte per turn, answer {args.answer_chars} chars, one tool call"
    )
    for provider in ("openai", "anthropic") if args.provider == "both" else (args.provider,):
        firsts, totals = await measure(args, provider)
        print(
            f"  {provider:9}  first draft text p50 {percentile(firsts, 50):.2f} s  p95 {percentile(firsts, 95):.2f} s"
            f"   full answer p50 {percentile(totals, 50):.2f} s  p95 {percentile(totals, 95):.2f} s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--rate", type=float, default=40.0, help="tokens per second the fake model streams")
    parser.add_argument("--first-token", type=float, default=0.3, help="seconds before each turn's first byte")
    parser.add_argument("--answer-chars", type=int, default=800)
    parser.add_argument("--provider", choices=("openai", "anthropic", "both"), default="both")
    asyncio.run(main(parser.parse_args()))
