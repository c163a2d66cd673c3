"""Feature-support lines from the generated supported-features table (core/knowledge/generated/feature_support.py)."""
from __future__ import annotations

from core.knowledge.generated.feature_support import feature_lookups, matching_features
from core.knowledge.generated.tables import GeneratedTable

TABLE = GeneratedTable(
    name="supported_features", repo="vllm-project/vllm-ascend", commit="abcdef0123456789", committed_at="2026-01-01T00:00:00+00:00",
    source="vllm-project/vllm-ascend:docs/source/user_guide/support_matrix/supported_features.md",
    rows=({"feature": "Automatic Prefix Caching", "status": "functional"}, {"feature": "Beam search", "status": "experimental"},
          {"feature": "Graph Mode", "status": "functional"}, {"feature": "Sleep Mode", "status": "functional"}),
)


def test_a_support_question_gets_the_status_of_the_feature_it_names() -> None:
    lines, source = feature_lookups("Is prefix caching supported on the NPU?", "en", table=TABLE)
    assert lines == ["vllm-ascend's supported-features table on main (abcdef0): Automatic Prefix Caching — functional"]
    assert source.endswith("supported_features.md")
    assert feature_lookups("vllm-ascend 支持束搜索吗", "zh", table=TABLE)[0] == ["vllm-ascend main 分支特性支持表（abcdef0）：Beam search —— 实验性"]
    assert feature_lookups("Can I use sleep mode with vllm-ascend?", "en", table=TABLE)[0][0].endswith("Sleep Mode — functional")


def test_a_word_of_a_feature_is_not_the_feature() -> None:
    # "graph capture sizes" is about graph mode's settings, not whether graph mode exists
    assert matching_features("are graph capture sizes supported?", TABLE.rows) == []
    assert feature_lookups("How do I enable prefix caching?", "en", table=TABLE) == ([], "")  # not a support question


def test_a_vllm_ascend_answer_shows_the_feature_status(generated) -> None:
    from core.triage import triage

    generated(TABLE)
    result = triage("Does vllm-ascend support beam search?", ("vllm-project/vllm-ascend",), "en")
    assert "supported-features table on main (abcdef0): Beam search — experimental" in result.text
    assert any(s.url.endswith("supported_features.md") for s in result.sources)


def test_support_words_inside_a_pasted_error_do_not_ask() -> None:
    question = "0.9.1rc1 跑 DeepSeek-R1 报：\nNotImplementedError: ACL Graph does not support deepseek. Please try torchair graph mode"
    assert feature_lookups(question, "zh", table=TABLE) == ([], "")
