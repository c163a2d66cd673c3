"""`python -m bot chat --offline`: the line `escalate` after an answer prints the pre-filled new-issue URL."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from tests.bot.test_cli import run_bot

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def issue_links(out: str) -> list[str]:
    return re.findall(r"https://(?:github|gitcode)\.com/\S+/issues/(?:new|create)\?\S+", out)


def test_escalate_after_an_answer_prints_the_prefilled_github_url():
    question = f"vllm-ascend 0.9.1 on 910B: vllm serve crashes, token {TOKEN}, RuntimeError: ACL stream synchronize failed, error code:507015"
    result = run_bot("chat", "--offline", stdin=f"{question}\n\nescalate\n".encode())  # piped messages end at a blank line
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    (url,) = issue_links(out)
    assert url.startswith("https://github.com/vllm-project/vllm-ascend/issues/new?")
    fields = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert set(fields) == {"title", "body", "labels"} and "507015" in fields["title"]
    assert TOKEN not in out.split("you> ")[-2] and TOKEN not in url  # the escalation reply carries no token


def test_the_chinese_command_for_a_mindie_question_prints_the_gitcode_url():
    result = run_bot("chat", "--offline", stdin="MindIE-LLM 启动服务报错 507015，怎么处理？\n\n提交问题\n".encode())
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    (url,) = issue_links(out)
    assert url.startswith("https://gitcode.com/Ascend/MindIE-LLM/issues/create?") and "已预填" in out


def test_escalate_first_in_a_chat_is_one_clear_line():
    result = run_bot("chat", "--offline", stdin=b"escalate\n")
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "There is no question in this thread to escalate yet" in out and not issue_links(out)
