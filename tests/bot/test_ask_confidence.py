"""`python -m bot ask --json` carries each answer's confidence, as scripts rely on (issue 24)."""
from __future__ import annotations

import json

from tests.bot.test_cli import run_bot


def test_ask_json_carries_the_confidence_of_each_answer(tmp_path) -> None:
    lines = [
        "I run vllm 0.11.0 with vllm-ascend 0.9.1 and the engine won't start",  # a matrix mismatch: high
        "vllm-ascend feels slow on our machine, any ideas?",  # nothing specific: low
        "MindIE 报错了，说找不到符号，怎么排查？",  # a clarification: no level
    ]
    result = run_bot("ask", "--json", "--offline", "-", stdin="\n".join(lines).encode() + b"\n",
                     env={"DATA_DIR": str(tmp_path / "data")})
    assert result.returncode == 0, result.stderr.decode()
    high, low, clarify = (json.loads(line) for line in result.stdout.decode().splitlines())
    assert (high["kind"], high["confidence"]) == ("answer", "high")
    assert (low["kind"], low["confidence"]) == ("answer", "low")
    assert (clarify["kind"], clarify["confidence"]) == ("clarify", None)
    assert "Confidence" not in low["text"]  # the text is the answer; the level is data


def test_ask_prints_the_line_and_the_way_upstream_for_a_low_answer(tmp_path) -> None:
    result = run_bot("ask", "--offline", "vllm-ascend feels slow on our machine, any ideas?", env={"DATA_DIR": str(tmp_path / "data")})
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "**Confidence: low**" in out
    assert "Or ask upstream: [vllm-ascend](https://github.com/vllm-project/vllm-ascend/issues)" in out
