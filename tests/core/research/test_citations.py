"""Citation verification: only links and paths a tool returned survive unmarked."""
from __future__ import annotations

from core.messages import Source
from core.research.citations import Evidence, find_paths, normalize_url, verify_answer
from core.research.redact import Redactor, defang_mentions

ISSUE = "https://github.com/vllm-project/vllm-ascend/issues/1234"
PERMALINK = "https://github.com/vllm-project/vllm-ascend/blob/abc123/vllm_ascend/platform.py#L6"


def evidence() -> Evidence:
    e = Evidence(["https://github.com/vllm-project/vllm-ascend"])
    e.record(
        f"- #1234 [closed] ACL error\n  {ISSUE}\n\nvllm_ascend/platform.py\n{PERMALINK}\nsee also docs/source/faqs.md",
        [Source("vllm-project/vllm-ascend#1234: ACL error", ISSUE), Source("vllm-ascend: platform.py", PERMALINK)],
        ["docs/source/faqs.md"],  # as a directory listing would declare it
    )
    return e


def test_verified_links_are_kept_and_listed_as_sources() -> None:
    answer = f"Upgrade CANN ([#1234]({ISSUE})). The check is in {PERMALINK}."
    result = verify_answer(answer, evidence(), "en")
    assert f"[#1234]({ISSUE})" in result.text and PERMALINK in result.text
    assert result.removed_urls == 0
    assert [s.url for s in result.sources] == [ISSUE, PERMALINK]
    assert [s.title for s in result.sources] == ["vllm-project/vllm-ascend#1234: ACL error", "vllm-ascend: platform.py"]
    # Body and sources stay apart: each platform renders the list once, from `sources`.
    assert result.text == answer


def test_links_no_tool_returned_are_removed() -> None:
    answer = (
        "See [the fix](https://github.com/vllm-project/vllm-ascend/issues/99999) and "
        "https://evil.example.com/steal?x=1. Also <https://pypi.org/project/vllm/>."
    )
    result = verify_answer(answer, evidence(), "en")
    assert "99999" not in result.text and "evil.example.com" not in result.text and "pypi.org" not in result.text
    assert "the fix *(unverified link removed)*" in result.text
    assert result.removed_urls == 3
    assert result.sources == () and "No tool-verified sources" in result.text


def test_line_anchor_and_trailing_punctuation_do_not_matter() -> None:
    other_lines = "https://github.com/vllm-project/vllm-ascend/blob/abc123/vllm_ascend/platform.py#L1-L8"
    result = verify_answer(f"Look at {other_lines}, and ({ISSUE}).", evidence(), "en")
    assert other_lines in result.text and f"({ISSUE})." in result.text and result.removed_urls == 0


def test_canonical_repository_urls_are_allowed() -> None:
    result = verify_answer("Repo: https://github.com/vllm-project/vllm-ascend.git", evidence(), "en")
    assert result.removed_urls == 0 and "https://github.com/vllm-project/vllm-ascend.git" in result.text


def test_paths_are_marked_unless_a_tool_returned_them() -> None:
    answer = (
        "The platform lives in `vllm_ascend/platform.py` and `vllm_ascend/worker/made_up.py`; "
        "FAQ in docs/source/faqs.md, config in vllm_ascend/ascend_config.py:30. "
        "System path /usr/local/Ascend/ascend-toolkit/set_env.sh is not a repository path."
    )
    result = verify_answer(answer, evidence(), "en")
    assert "`vllm_ascend/platform.py` and" in result.text
    assert "`vllm_ascend/worker/made_up.py` *(unverified)*" in result.text
    assert "docs/source/faqs.md, " in result.text
    assert "vllm_ascend/ascend_config.py:30 *(unverified)*" in result.text
    assert "set_env.sh is not" in result.text
    assert result.unverified_paths == 2


def test_code_blocks_keep_their_code_and_get_a_note() -> None:
    answer = "Run:\n```bash\npython examples/fake_run.py --x\ncurl https://evil.example.com/x\n```\nDone."
    result = verify_answer(answer, evidence(), "zh")
    assert "python examples/fake_run.py --x" in result.text
    assert "evil.example.com" not in result.text and "<未经验证的链接已移除>" in result.text
    assert "上面代码块中未经验证的路径：`examples/fake_run.py`" in result.text
    assert result.sources == () and result.text.endswith("_没有经工具验证的来源：请把本回答视为未经验证。_")


def test_a_sources_section_from_the_model_is_replaced() -> None:
    answer = f"Upgrade CANN.\n\n## Sources\n- {ISSUE}\n- https://made.up/link\n"
    result = verify_answer(answer, evidence(), "en")
    assert result.text == "Upgrade CANN." and "made.up" not in result.text
    assert [s.url for s in result.sources] == [ISSUE]


def test_helpers() -> None:
    assert normalize_url("HTTPS://www.GitHub.com/a/b/#x") == "https://github.com/a/b"
    assert find_paths("a/b.py and https://x.org/c/d.py and e/Dockerfile.a3 and 2.5.1/2.5.1.post1") == ["a/b.py", "e/Dockerfile.a3"]
    assert defang_mentions("hi @channel and <!here> and @所有人 and @alice") == "hi @\u200bchannel and @\u200bhere and @\u200b所有人 and @alice"
    redact = Redactor(["supersecretvalue", "short"])
    assert redact("key supersecretvalue short ghp_" + "a" * 36) == "key [redacted] short [redacted]"


def test_product_facts_code_map_and_faq_links_are_citable_without_a_tool_call() -> None:
    from core.knowledge.loader import load_knowledge_base, load_product_facts
    from core.research.repos import canonical_urls

    urls = set(canonical_urls())
    kb = load_knowledge_base()
    assert {f.source_url for f in load_product_facts()} <= urls
    assert {kb.source(e.source).url for e in kb.code_map} <= urls
    faq = kb.doc("vllm-project/vllm-ascend")
    assert faq is not None and kb.source(faq.source).url in urls


def test_permalinks_follow_the_clone_s_origin_unless_repo_urls_says_otherwise(tmp_path) -> None:
    from core.research.repos import find_repo, web_base

    repo = find_repo("verylucky01/MindIE-LLM")
    assert repo is not None
    clone = tmp_path / "MindIE-LLM"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://gitcode.com/Ascend/MindIE-LLM.git\n'
        '[remote "origin"]\n\turl = https://github.com/verylucky01/MindIE-LLM.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    )
    assert web_base(repo, {}, clone) == "https://github.com/verylucky01/MindIE-LLM"
    assert web_base(repo, {"verylucky01/MindIE-LLM": "https://gitcode.com/Ascend/MindIE-LLM.git"}, clone) == (
        "https://gitcode.com/Ascend/MindIE-LLM"
    )
    # A local mirror as origin says nothing about the web: the original's page.
    (clone / ".git" / "config").write_text('[remote "origin"]\n\turl = /srv/mirrors/MindIE-LLM\n')
    assert web_base(repo, {}, clone) == repo.web_url
    assert web_base(repo, {}, tmp_path / "missing") == repo.web_url
