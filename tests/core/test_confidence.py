"""Confidence from constructed evidence: each level, what a low answer offers, a model answer's citations."""
from __future__ import annotations

import pytest

from core.confidence import Confidence, NextStep, assess, confidence_line, tracker_url
from core.index.passage import Passage
from core.messages import Source
from core.resolution.answer import Match
from core.resolution.focus import focus
from core.resolution.record import Certainty, Resolution
from core.resolution.team import TeamAnswer
from core.triage import triage

ASCEND = "vllm-project/vllm-ascend"
MINDIE = "verylucky01/MindIE-LLM"
TRACEBACK = (
    "vllm serve fails:\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.11/site-packages/vllm_ascend/worker/model_runner_v1.py", line 812, in load_model\n'
    "RuntimeError: call aclnnMoeDistributeDispatchV2 failed, the tiling of the dispatch kernel went wrong\n"
)
VAGUE = "vllm-ascend feels slow on our machine, any ideas?"


def record(certainty: Certainty, **fields: object) -> Resolution:
    base: dict[str, object] = dict(repo=ASCEND, number=4242, url=f"https://github.com/{ASCEND}/issues/4242", title="t",
                                   state="closed", kind="issue", certainty=certainty, said_by="maintainer",
                                   summary="Upgrade to v0.11.0rc1, where the dispatch tiling is fixed.")
    base.update(fields)
    return Resolution(**base)  # type: ignore[arg-type]


def match(certainty: Certainty, via: str) -> Match:
    seen = focus(TRACEBACK)
    return Match(record(certainty), via, seen.keyed_on if via == "signature" else "", 1, 1)  # type: ignore[arg-type]


def passage(kind: str, text: str, repo: str = ASCEND, path: str = "docs/source/faqs.md") -> Passage:
    return Passage(repo=repo, path=path, title="A section", url=f"https://github.com/{repo}/blob/main/{path}", kind=kind,  # type: ignore[arg-type]
                   start_line=1, end_line=9, score=10.0, text=text)


def level_of(question: str, repos: tuple[str, ...] = (ASCEND,), **kwargs: object) -> Confidence:
    passages = kwargs.pop("passages", ())
    resolution = kwargs.get("resolution")
    offline = triage(question, repos, "en", passages=passages, resolution=resolution)  # type: ignore[arg-type]
    return assess(offline, repos=repos, seen=focus(question), **kwargs)  # type: ignore[arg-type]


# --- high -------------------------------------------------------------------------------------


def test_a_maintainers_fix_matched_on_the_error_signature_is_high() -> None:
    sure = level_of(TRACEBACK, resolution=match(Certainty.MAINTAINER, "signature"))
    assert (sure.level, sure.reason, sure.steps) == ("high", "resolution", ())


@pytest.mark.parametrize(("certainty", "via"), [
    (Certainty.MAINTAINER, "search"),  # found by words, not by the error line
    (Certainty.REPORTER, "signature"),  # the reporter's own workaround
])
def test_a_weaker_thread_match_is_medium(certainty: Certainty, via: str) -> None:
    sure = level_of(TRACEBACK, resolution=match(certainty, via))
    assert (sure.level, sure.reason) == ("medium", "thread")


def test_a_knowledge_base_entry_matched_on_a_signature_is_high() -> None:
    sure = level_of("I run vllm 0.11.0 with vllm-ascend 0.9.1 and the engine won't start")  # a matrix mismatch
    assert (sure.level, sure.reason) == ("high", "knowledge")


def test_a_colleagues_answer_on_the_same_error_is_high_and_on_words_only_medium() -> None:
    same = TeamAnswer.saved("slack", "T1", "C1", "Ana", TRACEBACK, "Pin the CANN kernels to 8.2.RC1.", "2026-01-01", (ASCEND,))
    assert level_of(TRACEBACK, teammate=same).reason == "team"
    assert level_of(TRACEBACK, teammate=same).level == "high"
    other = TeamAnswer.saved("slack", "T1", "C1", "Ana", "tune aclnnMoeDistributeDispatchV2 HCCL_BUFFSIZE", "x", "2026-01-01", (ASCEND,))
    assert (level_of(TRACEBACK, teammate=other).level, level_of(TRACEBACK, teammate=other).reason) == ("medium", "colleague")


# --- medium -----------------------------------------------------------------------------------


def test_a_lookup_of_a_named_variable_is_medium() -> None:
    sure = level_of("What does VLLM_ASCEND_ENABLE_NZ do?")
    assert (sure.level, sure.reason) == ("medium", "lookups")


def test_a_reported_case_or_a_passage_sharing_identifiers_is_medium() -> None:
    thread = passage("issue", "Slow decoding on A2 after the upgrade", path="issues/77")
    assert (level_of(VAGUE, passages=(thread,)).level, level_of(VAGUE, passages=(thread,)).reason) == ("medium", "passages")
    question = "How do I set max_num_batched_tokens and enable_chunked_prefill for vllm-ascend?"
    doc = passage("doc", "Set max_num_batched_tokens to 8192 and enable_chunked_prefill for long prompts.")
    assert level_of(question, passages=(doc,)).level == "medium"


# --- low --------------------------------------------------------------------------------------


def test_general_docs_found_by_topic_words_are_low() -> None:
    doc = passage("doc", "Performance tuning guide: general advice for serving large models.")
    sure = level_of(VAGUE, passages=(doc,))
    assert (sure.level, sure.reason) == ("low", "nothing")


def test_a_low_answer_says_what_is_missing_and_where_to_ask_upstream() -> None:
    problem = "vllm-ascend crashes when I start serving, what is wrong?"
    sure = level_of(problem, indexed={"vllm-project/vllm"})
    assert sure.level == "low"
    assert [s.kind for s in sure.steps] == ["clone", "version", "log", "upstream"]
    assert sure.steps[0] == NextStep("clone", "vllm-ascend", ASCEND)
    assert sure.steps[-1].target == "https://github.com/vllm-project/vllm-ascend/issues"
    # The clone is there, the versions and the log are given: only the way upstream is left.
    given = "On CANN 8.2.RC1 vllm-ascend crashes:\nTraceback (most recent call last):\nRuntimeError: something odd happened in the engine core loop\n"
    sure = level_of(given, indexed={ASCEND})
    assert sure.level == "low" and [s.kind for s in sure.steps] == ["upstream"]


def test_no_index_information_asks_for_no_clone() -> None:
    assert "clone" not in [s.kind for s in level_of(VAGUE, indexed=None).steps]


def test_the_upstream_tracker_is_gitcode_for_mindie() -> None:
    sure = level_of("MindIE-LLM feels slow on our machine, any ideas?", repos=(MINDIE,))
    assert sure.level == "low"
    assert [s.target for s in sure.steps if s.kind == "upstream"] == ["https://gitcode.com/Ascend/MindIE-LLM/issues"]
    assert tracker_url("github", "sgl-project/sglang") == "https://github.com/sgl-project/sglang/issues"


# --- a model's answer: its verified citations decide ---------------------------------------------


def test_a_model_answer_is_high_only_when_it_cites_the_matched_thread() -> None:
    found = match(Certainty.MAINTAINER, "signature")
    thread = Source("vllm-ascend#4242", found.record.url)
    cited = level_of(TRACEBACK, resolution=found, researched=(thread,))
    assert (cited.level, cited.reason) == ("high", "resolution")
    other = Source("a doc", "https://github.com/vllm-project/vllm-ascend/blob/abc/docs/source/tutorials/x.md#L1-L9")
    uncited = level_of(TRACEBACK, resolution=found, researched=(other,))
    assert (uncited.level, uncited.reason) == ("medium", "cited")


def test_a_model_answer_without_verified_sources_is_low_whatever_the_offline_evidence() -> None:
    found = match(Certainty.MAINTAINER, "signature")
    assert level_of(TRACEBACK, resolution=found, researched=()).level == "low"
    faq = Source("vllm-ascend FAQ", "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md")
    assert level_of(VAGUE, researched=(faq,)).reason == "uncited"  # the product's general docs link backs nothing


# --- the line ---------------------------------------------------------------------------------


def test_the_line_in_both_languages() -> None:
    high = Confidence("high", "resolution")
    assert confidence_line(high, "en") == "🟢 **Confidence: high** — a maintainer's fix matched on your error line."
    assert confidence_line(high, "zh") == "🟢 **置信度：高**（维护者的修复与你的报错行匹配）"
    low = Confidence("low", "nothing", (NextStep("clone", "vllm-ascend", ASCEND), NextStep("version"),
                                         NextStep("upstream", "vllm-ascend", "https://github.com/vllm-project/vllm-ascend/issues")))
    en, zh = confidence_line(low, "en"), confidence_line(low, "zh")
    assert en.startswith("🔴 **Confidence: low** — nothing specific matched. What would help: ")
    assert "`python -m bot sync vllm-project/vllm-ascend`" in en and "the versions" in en
    assert en.endswith("Or ask upstream: [vllm-ascend](https://github.com/vllm-project/vllm-ascend/issues)")
    assert zh.startswith("🔴 **置信度：低**（没有找到具体匹配的信息） 还需要：") and "或向上游提问：" in zh
    assert "\n" not in en and "\n" not in zh  # one compact line
