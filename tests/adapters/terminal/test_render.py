from adapters.terminal.render import render_json, render_text
from core.messages import Option, Reply, ReplyKind, Source

SRC = (Source("vllm-ascend#1", "https://github.com/vllm-project/vllm-ascend/issues/1"),)


def test_sources_are_appended_once():
    plain = render_text(Reply(ReplyKind.ANSWER, "Answer.", "en", sources=SRC))
    assert plain.count("issues/1") == 1 and "**Sources**" in plain
    chinese = render_text(Reply(ReplyKind.ANSWER, "回答。", "zh", sources=SRC))
    assert "**来源**" in chinese


def test_json_options_carry_repo_and_label_only():
    reply = Reply(ReplyKind.CLARIFY, "Which?", "en", options=(Option("vllm", "vLLM", "vllm-project/vllm"),))
    assert render_json(reply)["options"] == [{"repo": "vllm-project/vllm", "label": "vLLM"}]
