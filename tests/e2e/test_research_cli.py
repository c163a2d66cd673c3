"""The research path through the real command line: `ask --json` with a model key, the real
anthropic SDK talking to a scripted fake Messages API on loopback. The first test spawns
`python -m bot` (a fresh interpreter: imports, stdout holding only the JSON); the others run the
same command in this process (tests/support/cli.py), which saves the 5-10 s start-up each."""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.support.cli import run_bot_here_async
from tests.support.fake_anthropic import FakeAnthropic, Turn, text, tool

ROOT = Path(__file__).resolve().parents[2]
FAQ = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md"
INVENTED = "https://github.com/vllm-project/vllm-ascend/issues/999999"
CANARY = "sk-ant-canary-1234567890abcdef"


async def ask(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", *args, cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def ask_here(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """`ask` as above, run in this process with exactly `env`."""
    done = await run_bot_here_async(["ask", *args], env)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def bot_env(model_url: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REDIS_URL", "GITHUB_", "GITCODE_"))}
    env.update(
        ANTHROPIC_API_KEY=CANARY,
        ANTHROPIC_BASE_URL=model_url,
        DEEPWIKI_MCP_URL="http://127.0.0.1:9/mcp",  # nothing listens: a tool error, never the internet
        GITHUB_API_URL="http://127.0.0.1:9",
        GITCODE_API_URL="http://127.0.0.1:9",
        REPOS_DIR=str(tmp_path / "repos"),
    )
    return env


async def test_ask_researches_with_tools_and_reports_only_verified_sources(tmp_path):
    script = [
        Turn([tool("lookup_diagnostics", text="ACL error 507015 with vllm-ascend on Atlas 800I A2")]),
        Turn([text(
            "In vllm-ascend, 507015 is an AI Core fault reported at stream sync; reproduce with "
            f"ASCEND_LAUNCH_BLOCKING=1 ([FAQ]({FAQ})). A fix landed in [#999999]({INVENTED})."
        )]),
    ]
    async with FakeAnthropic(script) as model:
        code, out, err = await ask("--json", "vllm-ascend ACL error 507015 on Atlas 800I A2", env=bot_env(model.url, tmp_path))
    assert code == 0, err
    answer = json.loads(out)
    assert answer["kind"] == "answer" and answer["repos"] == ["vllm-project/vllm-ascend"]
    urls = [s["url"] for s in answer["sources"]]
    assert FAQ in urls  # returned by the tool in this turn
    assert INVENTED not in urls and INVENTED not in answer["text"]  # no tool returned it
    assert answer["text"].startswith("In vllm-ascend, 507015")
    assert model.calls == 2
    assert CANARY not in json.dumps(model.bodies) and CANARY not in out + err
    assert model.bodies[0]["tools"] and model.bodies[0]["system"][0]["cache_control"] == {"type": "ephemeral"}


async def test_ask_falls_back_to_the_offline_diagnostic_when_the_model_is_down(tmp_path):
    from tests.support.fake_anthropic import Fail

    async with FakeAnthropic(lambda body: Fail(529, "overloaded_error", "Overloaded")) as model:
        env = bot_env(model.url, tmp_path) | {"ANTHROPIC_MAX_RETRIES": "1"}
        code, out, err = await ask_here("--json", "vllm-ascend ACL error 507015", env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["kind"] == "answer"
    assert "unavailable" in answer["text"] and "507015" in answer["text"]
    assert model.calls == 2  # the SDK's one retry, then the fallback
