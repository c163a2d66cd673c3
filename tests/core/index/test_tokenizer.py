"""Golden tests of the bilingual tokenizer and the query-side reading of a question."""
from __future__ import annotations

import pytest

from core.index.ranking import plan_query
from core.index.terms import bridge
from core.index.tokenizer import stem, strong_terms, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ASCEND_RT_VISIBLE_DEVICES", ["ascend_rt_visible_devices", "ascend", "rt", "visible", "device"]),
        ("NPUModelRunner", ["npumodelrunner", "npu", "model", "runner"]),
        ("--enforce-eager", ["--enforce-eager", "enforce-eager", "enforce", "eager"]),
        ("v0.11.0rc1", ["0.11.0rc1"]),
        ("error 507015", ["error", "507015"]),
        ("EZ9999", ["ez9999", "ez", "9999"]),
        ("vllm_ascend.worker", ["vllm_ascend.worker", "vllm", "ascend", "worker"]),
        ("Failed devices", ["fail", "device"]),
        ("How is the cache used?", ["cache"]),
    ],
)
def test_english_and_identifier_tokens(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_chinese_search_mode_keeps_the_compound_and_its_parts() -> None:
    tokens = tokenize("环境变量怎么配置")
    assert {"环境", "变量", "环境变量", "配置"} <= set(tokens)
    assert "怎么" not in tokens  # a question word, not content


def test_mixed_text_keeps_both_languages_in_order() -> None:
    tokens = tokenize("设置 MINDIE_LOG_LEVEL 报错")
    assert tokens.index("设置") < tokens.index("mindie_log_level") < tokens.index("报错")


def test_strong_terms_are_the_exact_names_in_a_question() -> None:
    found = strong_terms("vllm 0.11.0rc1 with --enforce-eager fails: EL0004, 507015, ASCEND_LAUNCH_BLOCKING in libatb.so")
    assert found == {"0.11.0rc1", "--enforce-eager", "el0004", "507015", "ascend_launch_blocking", "libatb.so"}
    assert strong_terms("how do I install MindIE or msModelSlim") == set()  # product names are not exact names


def test_light_stemmer() -> None:
    assert [stem(w) for w in ("devices", "policies", "running", "quantized", "class", "status", "os")] == [
        "device", "policy", "runn", "quantiz", "class", "status", "os",
    ]


def test_bridge_adds_the_other_language_only() -> None:
    assert "quantization" in bridge(["量化"])
    assert "量化" in bridge(["quantization"])
    assert bridge(["量化", "quantization"]) == [t for t in bridge(["量化", "quantization"]) if t not in ("量化", "quantization")]


def test_query_plan_weights_exact_names_and_reads_the_question_type() -> None:
    plan = plan_query("启动报错 EZ9999，怎么设置 ASCEND_RT_VISIBLE_DEVICES")
    assert plan.strong == {"ez9999", "ascend_rt_visible_devices"}
    assert {"ez9999", "ascend_rt_visible_devices", "启动", "报错"} <= set(plan.weights)
    assert plan.is_error and plan.is_setting and not plan.is_where and not plan.is_version
    assert plan_query("where is the scheduler implemented").is_where
    assert plan_query("what changed in v0.11.0").is_version
    assert "error" in plan.weights and "报错" in plan.weights  # bridged from 报错


def test_chat_words_for_failures_reach_the_english_docs() -> None:
    # How users describe a broken reasoning parser or a hang in Chinese meets the English thread words.
    found = set(bridge(tokenize("思考内容混在 content 里，服务卡住，工具调用也坏了")))
    assert {stem("reasoning"), stem("hang"), stem("tool"), stem("call")} <= found
