"""Model-support lines from the generated supported-models table (core/knowledge/generated/model_support.py)."""
from __future__ import annotations

from core.knowledge.generated.model_support import matching_rows, support_lines, support_lookups
from core.knowledge.generated.tables import GeneratedTable


def _row(model: str, hardware: str = "A2/A3", support: str = "supported", length: str = "", doc: str = "") -> dict[str, str]:
    return {"model": model, "hardware": hardware, "support": support, "max_model_len": length, "doc": doc}


TABLE = GeneratedTable(
    name="supported_models", repo="vllm-project/vllm-ascend", commit="abcdef0123456789", committed_at="2026-01-01T00:00:00+00:00",
    source="vllm-project/vllm-ascend:docs/source/user_guide/support_matrix/supported_models.md",
    rows=(
        _row("Qwen3-30B-A3B", length="128k", doc="docs/source/tutorials/Qwen3-30B-A3B.md"),
        _row("Qwen3-30B-A3B", hardware="Atlas 300I DUO", support="experimental"),
        _row("Qwen2.5", support="experimental"),
        _row("Llama2/3/3.1/3.2", support="experimental"),
        _row("DeepSeek V3/3.1"),
        _row("Qwen3"),
    ),
)


def test_a_support_question_gets_the_rows_of_the_model_it_names() -> None:
    lines = support_lines("Can a 910B4 run Qwen3-30B-A3B?", "en", table=TABLE)
    assert lines[0] == ("vllm-ascend's supported-models table on main (abcdef0): Qwen3-30B-A3B — supported on A2/A3; max length 128k; "
                        "guide `docs/source/tutorials/Qwen3-30B-A3B.md`")
    assert "experimental on Atlas 300I DUO" in lines[1]
    assert support_lines("Qwen2.5-7B 在 910B 上支持吗", "zh", table=TABLE) == ["vllm-ascend main 分支支持模型表（abcdef0）：Qwen2.5 —— 实验性支持，硬件 A2/A3"]


def test_alternatives_in_one_cell_are_matched_one_by_one() -> None:
    assert [r.model for r in matching_rows("does Llama3.1-8B run here?", TABLE.rows)] == ["Llama2/3/3.1/3.2"]
    assert [r.model for r in matching_rows("is DeepSeek-V3.1 supported", TABLE.rows)] == ["DeepSeek V3/3.1"]


def test_a_longer_version_is_not_its_prefix() -> None:
    # Qwen3.5 is not Qwen3 (nor Qwen3-30B-A3B): no line rather than another model's support
    assert support_lines("Is Qwen3.5-35B-A3B supported on A3?", "en", table=TABLE) == []


def test_a_model_named_in_passing_is_not_a_support_question() -> None:
    assert support_lookups("vllm serve Qwen3-30B-A3B fails with NPU out of memory", "en", table=TABLE) == ([], "")


def test_no_generated_table_means_no_lines(tmp_path) -> None:
    assert support_lookups("Can I run Qwen3-30B-A3B?", "en", data_dir=tmp_path) == ([], "")


def test_a_vllm_ascend_answer_shows_the_rows_and_cites_the_table(generated) -> None:
    from core.triage import triage

    generated(TABLE)
    result = triage("Can I run Qwen3-30B-A3B on a 910B with vllm-ascend?", ("vllm-project/vllm-ascend",), "en")
    assert "supported-models table on main (abcdef0): Qwen3-30B-A3B — supported on A2/A3" in result.text
    assert any(s.url.endswith("docs/source/user_guide/support_matrix/supported_models.md") for s in result.sources)
    # another product's answer does not borrow vllm-ascend's table
    other = triage("Can I run Qwen3-30B-A3B on a 910B with MindIE?", ("verylucky01/MindIE-LLM",), "en")
    assert "supported-models table" not in other.text


def test_a_table_row_makes_the_answer_medium_not_nothing_matched(generated) -> None:
    from core.confidence import _offline_reason
    from core.resolution.focus import focus
    from core.triage import triage

    generated(TABLE)
    question = "Can I run Qwen3-30B-A3B with vllm-ascend?"
    result = triage(question, ("vllm-project/vllm-ascend",), "en")
    assert result.table_rows == 2
    assert _offline_reason(result, focus(question), None, None) == "lookups"


def test_a_table_is_parsed_once_and_read_again_when_index_rewrites_it(generated) -> None:
    from dataclasses import replace

    from core.knowledge.generated.tables import load

    path = generated(TABLE)
    first = load("supported_models")
    assert first is not None and load("supported_models") is first  # unchanged file: the parsed table
    generated(replace(TABLE, commit="1234567aaaaaaaaa", rows=TABLE.rows[:1]))
    import os
    os.utime(path, ns=(path.stat().st_mtime_ns + 1_000_000, path.stat().st_mtime_ns + 1_000_000))
    again = load("supported_models")
    assert again is not None and again.commit.startswith("1234567") and len(again.rows) == 1
