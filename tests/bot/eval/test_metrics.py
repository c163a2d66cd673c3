"""Metric functions of `python -m bot eval` on hand-made cases."""
from __future__ import annotations

import io

import pytest

from bot.eval.dataset import parse_lines
from bot.eval.judge import JudgeReplyError, judge_request, parse_verdict
from bot.eval.links import RepoBases, evidence_keys, extract_links, url_keys
from bot.eval.metrics import METRIC_KEYS, JudgeVerdict, QuestionResult, aggregate, percentile, precision_recall, routing_correct
from bot.eval.progress import ProgressDisplay

ASCEND = "vllm-project/vllm-ascend"
VLLM = "vllm-project/vllm"
LLM = "verylucky01/MindIE-LLM"


def result(**fields: object) -> QuestionResult:
    base: dict[str, object] = dict(
        id="q", category="c", question="?", lang=None, expected_repos=None, needs_clarification=None,
        out_of_scope=None, evidence=None, answer_facts=None,
    )
    base.update(fields)
    return QuestionResult(**base)  # type: ignore[arg-type]


def test_routing_is_exact_for_one_repository_and_a_superset_for_several():
    assert routing_correct([ASCEND], "answered", [ASCEND])
    assert not routing_correct([ASCEND], "answered", [ASCEND, VLLM])  # one expected: extras are wrong
    assert not routing_correct([ASCEND], "answered", [VLLM])
    assert routing_correct([ASCEND, VLLM], "answered", [VLLM, ASCEND, LLM])  # several: superset is fine
    assert not routing_correct([ASCEND, VLLM], "answered", [ASCEND])
    assert not routing_correct([ASCEND], "clarified", [ASCEND])  # only an answer routes


def test_precision_recall_and_f1():
    pr = precision_recall([(True, True), (True, False), (False, True), (False, False), (True, True)])
    assert pr.precision == pytest.approx(2 / 3) and pr.recall == pytest.approx(2 / 3)
    assert pr.f1 == pytest.approx(2 / 3)
    none_predicted = precision_recall([(True, False), (False, False)])
    assert none_predicted.precision is None and none_predicted.recall == 0.0 and none_predicted.f1 is None
    assert precision_recall([(False, True)]).recall is None


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50 and percentile(values, 95) == 95
    assert percentile([7.0], 95) == 7.0 and percentile([], 50) is None


def test_aggregate_has_exactly_the_report_keys_and_null_without_data():
    metrics = aggregate([result(latency_ms=3.0)], judged=False)
    assert tuple(metrics) == METRIC_KEYS
    assert metrics["n"] == 1 and metrics["latency_p50_ms"] == 3.0
    for key in METRIC_KEYS[:-3]:
        assert metrics[key] is None, key  # nothing in the question supports the metric


def test_aggregate_counts_each_metric():
    results = [
        result(expected_repos=(ASCEND,), needs_clarification=False, out_of_scope=False, action="answered",
               repos=(ASCEND,), lang="zh", reply_language="zh", evidence_in_sources=True, evidence_hit_at_k=True,
               links=[{"url": "a", "status": "valid", "reason": ""}, {"url": "b", "status": "failed", "reason": "x"}],
               judge=JudgeVerdict(("full", "partial"), ({"tag": "wrong_product", "statement": "s"},))),
        result(expected_repos=(ASCEND,), needs_clarification=False, out_of_scope=False, action="clarified",
               lang="en", reply_language="zh", evidence_hit_at_k=False,
               links=[{"url": "c", "status": "unchecked", "reason": "docs"}]),
        result(needs_clarification=True, out_of_scope=False, action="clarified", judge=JudgeVerdict(("missing",))),
        result(out_of_scope=True, needs_clarification=False, action="answered", repos=(VLLM,)),
    ]
    m = aggregate(results, judged=True)
    assert m["routing_accuracy"] == 0.5  # the clarified one was expected to be answered
    assert m["clarify_precision"] == 0.5 and m["clarify_recall"] == 1.0
    assert m["oos_precision"] is None and m["oos_recall"] == 0.0
    assert m["language_accuracy"] == 0.5
    assert m["evidence_recall_at_k"] == 0.5 and m["answer_evidence_rate"] == 1.0
    assert m["citation_validity"] == 0.5  # unchecked links are not in the denominator
    assert m["facts_full"] == pytest.approx(1 / 3) and m["facts_missing"] == pytest.approx(1 / 3)
    assert m["wrong_statements"] == 1 and m["n"] == 4
    assert aggregate(results, judged=False)["facts_full"] is None


def test_evidence_matches_sources_by_repo_and_path_and_urls_by_normalised_form():
    bases = RepoBases()
    wanted = evidence_keys([f"{ASCEND}:docs/source/faqs.md", "https://GitHub.com/vllm-project/vllm-ascend/issues/12/"], bases)
    permalink = "https://github.com/vllm-project/vllm-ascend/blob/0123456789abcdef0123456789abcdef01234567/docs/source/faqs.md?plain=1#L3-L9"
    assert url_keys(permalink, bases) & wanted
    assert url_keys("https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md", bases) & wanted
    assert url_keys("https://www.github.com/vllm-project/vllm-ascend/issues/12#issuecomment-1", bases) & wanted
    assert not url_keys("https://github.com/vllm-project/vllm-ascend/issues/13", bases) & wanted
    assert not url_keys("https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faq.md", bases) & wanted
    assert not url_keys("https://github.com/someone/vllm-ascend/blob/main/docs/source/faqs.md", bases) & wanted
    # GitCode permalinks map to the canonical repository name
    mindie = evidence_keys([f"{LLM}:docs/zh/faq.md"], bases)
    assert url_keys("https://gitcode.com/Ascend/MindIE-LLM/blob/abc1234/docs/zh/faq.md#L1", bases) & mindie
    assert evidence_keys(["not evidence"], bases) == set()


def test_links_are_extracted_from_markdown_without_trailing_punctuation():
    text = "See [FAQ](https://github.com/a/b/blob/main/x.md#L1-L2). Also https://example.com/p, and <https://x.org/y>."
    assert extract_links(text) == ["https://github.com/a/b/blob/main/x.md#L1-L2", "https://example.com/p", "https://x.org/y"]


def test_dataset_lines_report_malformed_lines_by_number_and_ignore_extra_fields():
    lines = [
        '{"id": "a", "question": "vllm-ascend install?", "expected_repos": ["VLLM-project/vllm-ascend"], "extra": 1}',
        "",
        "{not json",
        '["a list"]',
        '{"id": "b"}',
        '{"id": "c", "question": "x", "expected_repos": ["nobody/nothing"]}',
        '{"id": "a", "question": "again"}',
        '{"id": 7, "question": "ok", "lang": "zh", "needs_clarification": true, "category": null}',
        '{"id": "d", "question": "x", "lang": "fr"}',
    ]
    items, problems = parse_lines(lines)
    assert [i.id for i in items] == ["a", "7"]
    assert items[0].expected_repos == (ASCEND,)  # canonical spelling
    assert items[1].category == "uncategorised" and items[1].needs_clarification is True
    assert items[0].answer_facts is None and items[0].lang is None
    assert [p.line for p in problems] == [3, 4, 5, 6, 7, 9]
    assert "nobody/nothing" in problems[3].reason and "duplicate" in problems[4].reason


def test_judge_reply_is_parsed_or_rejected():
    verdict = parse_verdict('```json\n{"facts": ["FULL", "partial", "missing"], "wrong": [{"tag": "wrong_product", '
                            '"statement": "x"}, "plain"], "usefulness": "useful", "why": "ok"}\n```', 3)
    assert verdict.facts == ("full", "partial", "missing")
    assert [w["tag"] for w in verdict.wrong] == ["wrong_product", "other"]
    for bad, n in (("no json here", 1), ('{"facts": ["full"]}', 2), ('{"facts": ["great"]}', 1),
                   ('{"facts": ["full"], "wrong": 3}', 1), ('{"facts": ["full",]}', 1)):
        with pytest.raises(JudgeReplyError):
            parse_verdict(bad, n)


def test_judge_request_numbers_the_facts_and_fences_the_answer():
    request = judge_request("Q?", (ASCEND,), ("fact one", "fact two"), "answer text", ("https://x/y",))
    assert "1. fact one\n2. fact two" in request and "<<<\nanswer text\n>>>" in request and "- https://x/y" in request


def test_progress_plain_lines_and_tty_bar():
    now = [0.0]
    plain = io.StringIO()
    display = ProgressDisplay(40, plain, tty=False, clock=lambda: now[0])
    for _ in range(40):
        now[0] += 0.5
        display.advance("q")
    lines = plain.getvalue().splitlines()
    assert len(lines) == 20 and lines[-1].startswith("eval: 40/40 100% elapsed 20s eta 0s")
    assert lines[0].startswith("eval: 2/40") and "eta 19s" in lines[0]
    bar = io.StringIO()
    display = ProgressDisplay(4, bar, tty=True, clock=lambda: now[0])
    display.advance()
    assert bar.getvalue().startswith("\r[#######.......................] 1/4  25%")
