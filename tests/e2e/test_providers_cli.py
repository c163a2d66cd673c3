"""Other providers through the real command line: `python -m bot ask --json` with MODEL_PROVIDER=openai
(the real openai SDK against a fake vLLM-like server) and with ANTHROPIC_BASE_URL at a partial
Messages server; and the terminal's streamed drafts. The commands run in this process
(tests/support/cli.py); tests/e2e/test_research_cli.py spawns the real process once."""
from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

from bot.terminal_stream import TerminalProgress
from core.messages import DRAFT_STAGE, Progress
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, make_repo
from tests.support.fake_anthropic import FakeAnthropic, Turn, text
from tests.support.fake_openai import FakeOpenAI, Reply, call, tool_messages, user_text
from tests.e2e.test_research_cli import ask_here as ask

REPO = "vllm-project/vllm-ascend"
PERMALINK = re.compile(r"https://github\.com/vllm-project/vllm-ascend/blob/[0-9a-f]{40}/vllm_ascend/platform\.py#L\d+")
INVENTED = "https://github.com/vllm-project/vllm-ascend/issues/999999"
KEY = "sk-openai-canary-1234567890abcdef"
QUESTION = "vllm-ascend ACL error 507015 on Atlas 800I A2"


def openai_env(url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "MODEL_", "REDIS_URL", "GITHUB_", "GITCODE_"))
    }
    make_repo(tmp_path / "repos" / REPO, VLLM_ASCEND_FILES)
    env.update(
        MODEL_PROVIDER="openai",
        OPENAI_BASE_URL=url,
        OPENAI_API_KEY=KEY,
        DEEPWIKI_MCP_URL="http://127.0.0.1:9/mcp",
        GITHUB_API_URL="http://127.0.0.1:9",
        GITCODE_API_URL="http://127.0.0.1:9",
        REPOS_DIR=str(tmp_path / "repos"),
        DATA_DIR=str(tmp_path / "data"),
        **extra,
    )
    return env


def cite(body: dict[str, Any]) -> Reply:
    found = PERMALINK.search("\n".join(tool_messages(body)) + user_text(body))
    return Reply(
        content=f"<think>I could invent {INVENTED}</think>In vllm-ascend, 507015 is raised at "
        f"{found.group(0) if found else '(nothing found)'}; fixed in [#999999]({INVENTED})."
    )


async def test_ask_json_on_an_openai_compatible_server_with_a_scripted_search_code_call(tmp_path) -> None:
    script = [Reply(tool_calls=[call("search_code", repo=REPO, query="507015")]), cite]
    async with FakeOpenAI(script, api_key=KEY) as server:
        code, out, err = await ask("--json", QUESTION, env=openai_env(server.url, tmp_path))
    assert code == 0, err
    answer = json.loads(out)
    urls = [s["url"] for s in answer["sources"]]
    assert any(PERMALINK.fullmatch(u) for u in urls), answer
    assert INVENTED not in answer["text"] and INVENTED not in urls
    assert "<think>" not in answer["text"] and "invent" not in answer["text"]
    assert answer["text"].startswith("In vllm-ascend, 507015 is raised at https://github.com/")
    assert server.calls == 2 and server.bodies[0]["tools"]
    assert KEY not in json.dumps(server.bodies) and KEY not in out + err


async def test_ask_json_on_a_server_that_refuses_tools_still_cites_the_bots_retrieval(tmp_path) -> None:
    async with FakeOpenAI(cite, reject_tools=True, api_key=KEY) as server:
        code, out, err = await ask("--json", QUESTION, env=openai_env(server.url, tmp_path))
    assert code == 0, err
    answer = json.loads(out)
    assert any(PERMALINK.fullmatch(s["url"]) for s in answer["sources"]), answer
    assert INVENTED not in answer["text"]
    assert ["tools" in b for b in server.bodies] == [True, False]  # refused once, then retrieval


async def test_ask_json_against_a_partial_anthropic_server_refusing_cache_markers(tmp_path) -> None:
    env = openai_env("http://127.0.0.1:9/v1", tmp_path)
    async with FakeAnthropic([Turn([text("Upgrade CANN to 8.5.1 (unverified).")])], refuse=("cache_control",)) as model:
        env.update(MODEL_PROVIDER="anthropic", ANTHROPIC_API_KEY="sk-ant-test-0000", ANTHROPIC_BASE_URL=model.url)
        code, out, err = await ask("--json", QUESTION, env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["text"].startswith("Upgrade CANN to 8.5.1") and "unavailable" not in answer["text"]
    assert model.calls == 2 and '"cache_control"' not in json.dumps(model.bodies[1])


async def test_terminal_prints_the_streamed_answer_as_it_arrives() -> None:
    out = io.StringIO()
    progress = TerminalProgress(out, enabled=True)
    await progress(Progress("Researching…", stage="researching"))
    await progress(Progress("Let me", stage=DRAFT_STAGE))
    await progress(Progress("", stage=DRAFT_STAGE))  # the turn called tools: withdrawn
    await progress(Progress("Upgrade", stage=DRAFT_STAGE))
    await progress(Progress("Upgrade CANN.", stage=DRAFT_STAGE))
    progress.finish()
    assert out.getvalue() == "… Researching…\nLet me\nUpgrade CANN.\n\n"
