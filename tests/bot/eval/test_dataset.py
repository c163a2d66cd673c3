"""The loader of `bot eval` (bot/eval/dataset.py): the unpinned wording of a question and the variant."""
from __future__ import annotations

import json

from bot.eval.dataset import parse_lines, select_variant


def line(**fields: object) -> str:
    return json.dumps({"id": "q", "question": "Which CANN for vllm-ascend v0.9.1?", **fields}, ensure_ascii=False)


def test_a_blank_or_repeated_unpinned_wording_is_a_skipped_line() -> None:
    lines = [
        line(id="blank", question_unpinned="   "),
        line(id="same", question_unpinned="  which cann for VLLM-ASCEND v0.9.1? "),
        line(id="empty", question_unpinned=""),
        line(id="number", question_unpinned=7),
        line(id="good", question_unpinned="Which CANN for my vllm-ascend release?"),
    ]
    items, problems = parse_lines(lines)
    assert [item.id for item in items] == ["good"]
    reasons = [str(p) for p in problems]
    assert "repeats question" in reasons[1] and reasons[1].startswith("line 2")
    assert "blank" in reasons[0] and all("question_unpinned" in r for r in reasons), reasons


def test_select_variant_swaps_the_text_and_names_the_items_left_out() -> None:
    items, _ = parse_lines([line(id="a", question_unpinned="Which CANN for my release?"), line(id="b", question="plain")])
    same, missing = select_variant(items, "question")
    assert same == items and missing == []
    chosen, missing = select_variant(items, "unpinned")
    assert [(i.id, i.question, i.question_unpinned) for i in chosen] == [("a", "Which CANN for my release?", None)]
    assert missing == ["b"]
    assert items[0].question == "Which CANN for vllm-ascend v0.9.1?"  # the loaded items are left as they were
