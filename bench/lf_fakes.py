"""The fake platforms for bench/load_fault.py, in their own process so they do not share a CPU
core (or a GIL) with the load sender.

- a fake Slack Web API (tests/support/fake_slack.FakeSlack): every call recorded;
- a fake Anthropic Messages API (tests/support/fake_anthropic.FakeAnthropic) that answers each
  request after MODEL_DELAY seconds with a final text answer and no tool calls. The answer
  quotes the question's tag (`ANS<tag>`), so the bench can tell which question an answer is for;
- GET /answers?channel_prefix=X on a third port: the answers seen so far, per thread.

    python bench/lf_fakes.py --ready-file PATH [--model-delay 1.0]

It writes {"slack": url, "anthropic": url, "stats": url} to PATH once all three listen, and runs
until SIGTERM/SIGINT (or its parent dies).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from tests.support.fake_anthropic import FakeAnthropic, Turn, text  # noqa: E402
from tests.support.fake_http import UvicornRunner  # noqa: E402
from tests.support.fake_slack import FakeSlack, Posted  # noqa: E402

QUESTION_TAG = re.compile(r"question (q[A-Z]\d+x\d+) about")
ANSWER_TAG = re.compile(r"ANS(q[A-Z]\d+x\d+)\b")


def answer_text(tag: str) -> str:
    return (f"For {tag} (ref ANS{tag}): graph mode on 910B first needs a matching CANN; "
            "run once with `--enforce-eager` to rule out graph capture.")


def model_script(delay: float) -> Any:
    def step(body: dict[str, Any]) -> Turn:
        found = QUESTION_TAG.findall(json.dumps(body.get("messages") or [], ensure_ascii=False))
        tag = found[-1] if found else "qZ0x0"
        return Turn([text(answer_text(tag))], delay=delay)

    return step


def is_final_answer(message: Posted) -> bool:
    """A message a user reads as the answer: a posted message, or a stream that was stopped."""
    return message.thread_ts is not None and (message.kind == "post" or message.stopped)


def answers_by_thread(slack: FakeSlack, channel_prefix: str) -> dict[str, list[dict[str, Any]]]:
    threads: dict[str, list[dict[str, Any]]] = {}
    for message in slack.messages:
        if not message.channel.startswith(channel_prefix) or not is_final_answer(message):
            continue
        shown = message.text + "\n" + message.section_text()
        threads.setdefault(f"{message.channel}|{message.thread_ts}", []).append(
            {"ts": message.ts, "kind": message.kind, "tags": sorted(set(ANSWER_TAG.findall(shown))),
             "snippet": message.section_text()[:100]}
        )
    return threads


async def serve(ready_file: Path, model_delay: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with FakeSlack() as slack, FakeAnthropic(model_script(model_delay), min_cache_tokens=10**9) as model:

        async def answers(request: Request) -> JSONResponse:
            prefix = request.query_params.get("channel_prefix", "")
            calls = Counter(c.method for c in slack.calls if str(c.params.get("channel") or c.params.get("channel_id") or "").startswith(prefix))
            return JSONResponse({"threads": answers_by_thread(slack, prefix), "calls": dict(calls),
                                 "model_calls": model.calls})

        stats = UvicornRunner(Starlette(routes=[Route("/answers", answers)]))
        await stats.start()
        try:
            ready_file.write_text(json.dumps({"slack": slack.api_url, "anthropic": model.url, "stats": stats.url}))
            await stop.wait()
        finally:
            await stats.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument("--model-delay", type=float, default=1.0)
    args = parser.parse_args()
    asyncio.run(serve(args.ready_file, args.model_delay))


if __name__ == "__main__":
    main()
