"""The command line as a user runs it: no network, no tokens.

`python -m bot ask` and `serve` run as real subprocesses (the entry point, exit status, signals);
the other commands run in this process with the same argv, environment and stdin
(tests/support/cli.py), which saves a few seconds of interpreter start-up each."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.cli import run_bot_here

ROOT = Path(__file__).resolve().parents[2]


def bot_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without model keys, platform tokens or REDIS_URL, plus `env`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SLACK_", "TELEGRAM_", "FEISHU_", "WECOM_"))}
    base.pop("REDIS_URL", None)
    base.update(env or {})
    return base


def run_bot_process(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """`python -m bot *args` in a new interpreter."""
    return subprocess.run([sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, cwd=ROOT, env=bot_env(env), timeout=timeout)


def run_bot(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The same command and environment, run in this process."""
    return run_bot_here(args, bot_env(env), stdin)


def test_ask_prints_a_markdown_answer():
    result = run_bot_process("ask", "vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup")
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "vllm-ascend" in out and "0.9.1" in out


def test_ask_json_reports_kind_repos_and_language():
    result = run_bot("ask", "--json", "--offline", "MindIE 报错了，说找不到符号，怎么排查？")
    data = json.loads(result.stdout)
    assert data["kind"] == "clarify" and data["language"] == "zh"
    assert {"repo", "label"} <= set(data["options"][0])
    assert set(data) >= {"kind", "repos", "options", "text", "sources", "language"}


def test_ask_json_stdin_answers_every_line_in_order_even_with_bad_bytes():
    lines = [b"How do I install vllm-ascend on Atlas 800I A2?", b"\xff\xfe broken bytes", b"", "今天天气如何".encode()]
    result = run_bot("ask", "--json", "-", stdin=b"\n".join(lines) + b"\n")
    assert result.returncode == 0, result.stderr.decode()
    rows = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert len(rows) == 4
    assert rows[0]["kind"] == "answer" and rows[0]["repos"] == ["vllm-project/vllm-ascend"]
    assert rows[3]["kind"] == "out_of_scope" and rows[3]["language"] == "zh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_starts_an_embedded_redis_and_stops_cleanly(tmp_path):
    port = _free_port()
    base = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    base["DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--port", str(port)], cwd=ROOT, env=base,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        body = b""
        while time.monotonic() < deadline:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.2)
        assert json.loads(body)["redis"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out.decode()
    assert b"embedded redis-server" in out
    assert (tmp_path / "data" / "redis").exists()


def test_doctor_reports_what_is_missing():
    result = run_bot("doctor", env={"SLACK_BOT_TOKEN": "xoxb-secret-value"})
    out = result.stdout.decode()
    assert result.returncode == 1  # slack half-configured is a problem
    assert "SLACK_SIGNING_SECRET" in out and "xoxb-secret-value" not in out


def test_chat_remembers_the_thread_and_takes_the_clarification_at_the_prompt():
    script = "MindIE 报 507015 怎么办？\n\n1\n\n帮助\n".encode()  # piped messages end at a blank line
    result = run_bot("chat", "--offline", stdin=script)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "1. MindIE-LLM" in out  # the clarification
    assert "verylucky01/MindIE-LLM" in out or "MindIE-LLM](" in out  # the resumed answer names it
    assert "507015" in out.split("1. MindIE-LLM", 1)[1]  # the original question was answered
    assert "昇腾推理助手" in out  # help in Chinese


def test_a_malformed_setting_is_one_clear_line_not_a_traceback(tmp_path):
    result = run_bot("web", "--port", "0", env={"REDIS_URL": "redis://127.0.0.1:9/0", "TELEGRAM_BOT_TOKEN": "not-a-token",
                                               "DATA_DIR": str(tmp_path), "ALLOWED_USERS": '["telegram:42"]'})
    err = result.stderr.decode()
    assert result.returncode == 2
    assert "configuration error" in err and "TELEGRAM_BOT_TOKEN" in err
    assert "Traceback" not in err and "not-a-token" not in err
