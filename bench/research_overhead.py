"""The research agent's own overhead per turn, and what a follow-up turn sends uncached.

A fake Messages API answers at once (real `anthropic` SDK, streaming), and the
tools hit a local git clone and a fake GitHub. Each research turn is two model
steps: search_code + search_issues in parallel, then a final answer citing
what they returned. Overhead = turn wall time - tool phases - time inside the
fake model; it covers the SDK, the loop, the registry, the citation checks.

Prompt caching is measured with the fake's cache emulation (prefixes ending at
a cache_control breakpoint are remembered; tokens ~ bytes/4; minimum 1024
tokens): a first question, then a follow-up in the same thread.

    .venv/bin/python bench/research_overhead.py [--turns 200]
"""
from __future__ import annotations

import argparse
import asyncio
import re
import statistics
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
from core.messages import Progress  # noqa: E402
from core.research import ResearchRequest, build_research_agent  # noqa: E402
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, make_repo  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic, Turn, text, tool, tool_results  # noqa: E402
from tests.support.fake_issue_apis import FakeGitHub, FakeIssue  # noqa: E402

REPO = "vllm-project/vllm-ascend"
_LINK = re.compile(r"https://github\.com/\S+?(?=[\s)]|$)")


def model(body: dict[str, Any]) -> Turn:
    results = tool_results(body)
    last = body["messages"][-1]["content"]
    if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return Turn([text("Checking code and issues."), tool("search_code", repo=REPO, query="507015"), tool("search_issues", repo=REPO, query="507015")])
    links = [m.group(0) for r in results[-2:] for m in _LINK.finditer(r)][:3]
    return Turn([text("In vllm-ascend, 507015 means the stream sync failed; upgrade CANN. " + " ".join(f"[{i}]({u})" for i, u in enumerate(links, 1)) + "\n\n" + "Details. " * 60)])


async def _quiet(_: Progress) -> None:
    return None


def request(question: str, history: tuple[tuple[str, str], ...] = ()) -> ResearchRequest:
    return ResearchRequest(
        question=question, language="en", repos=(REPO,), history=history,
        triage_markdown="Quick diagnostic: version alignment first.", user="bench", channel="C1", today="2026-09-30",
    )


def tool_wall_ms(trace: tuple) -> float:
    by_step: dict[int, float] = {}
    for step in trace:
        if step.kind == "tool":
            by_step[step.step] = max(by_step.get(step.step, 0.0), step.duration_ms)
    return sum(by_step.values())


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repos_dir = Path(tmp) / "repos"
        make_repo(repos_dir / REPO, VLLM_ASCEND_FILES)
        issues = {REPO: [FakeIssue(1234, "ACL error 507015", "aclrtSynchronizeStream failed 507015")]}
        async with FakeGitHub(issues) as github, FakeAnthropic(model) as fake:
            settings = Settings(
                _env_file=None, anthropic_api_key="sk-ant-bench-000000000000", anthropic_base_url=fake.url,
                github_api_url=github.url, repos_dir=repos_dir, deepwiki_mcp_url="http://127.0.0.1:9/mcp",
            )
            agent = build_research_agent(settings, None, Keys("bench"))
            assert agent is not None
            overheads, walls = [], []
            for i in range(turns + 5):
                before = fake.handler_seconds
                started = time.perf_counter()
                outcome = await agent.answer(request(f"Why does vllm-ascend fail with 507015? ({i})"), _quiet)
                wall = (time.perf_counter() - started) * 1000
                assert outcome.ok and outcome.sources, outcome.error
                if i >= 5:  # warm-up turns excluded
                    walls.append(wall)
                    overheads.append(wall - tool_wall_ms(outcome.trace) - (fake.handler_seconds - before) * 1000)
            await agent.aclose()
        print(f"research turns: {turns} (2 model steps, 2 parallel tools each; fake model answers at once)")
        print(f"  turn wall time     p50 {percentile(walls, 50):6.1f} ms   p99 {percentile(walls, 99):6.1f} ms")
        print(f"  bot overhead       p50 {percentile(overheads, 50):6.1f} ms   p99 {percentile(overheads, 99):6.1f} ms   mean {statistics.mean(overheads):.1f} ms")
        await caching(repos_dir)


async def caching(repos_dir: Path) -> None:
    issues = {REPO: [FakeIssue(1234, "ACL error 507015", "aclrtSynchronizeStream failed 507015")]}
    async with FakeGitHub(issues) as github, FakeAnthropic(model) as fake:
        settings = Settings(
            _env_file=None, anthropic_api_key="sk-ant-bench-000000000000", anthropic_base_url=fake.url,
            github_api_url=github.url, repos_dir=repos_dir, deepwiki_mcp_url="http://127.0.0.1:9/mcp",
        )
        agent = build_research_agent(settings, None, Keys("bench"))
        assert agent is not None
        first_q = "Why does vllm-ascend fail with ACL error 507015 in graph mode?"
        first = await agent.answer(request(first_q), _quiet)
        split = len(fake.usages)
        history = ((("user", first_q), ("assistant", first.text)))
        await agent.answer(request("Does --enforce-eager avoid it?", history), _quiet)
        third_history = history + (("user", "Does --enforce-eager avoid it?"), ("assistant", "Yes, as a workaround."))
        split2 = len(fake.usages)
        await agent.answer(request("And on 310P?", third_history), _quiet)
        await agent.aclose()
    for label, usages in (("first question", fake.usages[:split]), ("follow-up (2nd turn)", fake.usages[split:split2]), ("follow-up (3rd turn)", fake.usages[split2:])):
        fresh = sum(u["input_tokens"] for u in usages)
        written = sum(u["cache_creation_input_tokens"] for u in usages)
        read = sum(u["cache_read_input_tokens"] for u in usages)
        total = fresh + written + read
        step1 = usages[0]
        step1_total = step1["input_tokens"] + step1["cache_creation_input_tokens"] + step1["cache_read_input_tokens"]
        print(f"{label}: {len(usages)} requests, {total} input tokens: read from cache {read / total:.0%}, "
              f"written to cache {written / total:.0%}, uncached {fresh / total:.0%}; "
              f"not served from cache (uncached + written) {(fresh + written) / total:.0%}; "
              f"first request of the turn: {(step1['input_tokens'] + step1['cache_creation_input_tokens']) / step1_total:.0%} "
              f"of {step1_total} not served from cache")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    asyncio.run(main(parser.parse_args().turns))
