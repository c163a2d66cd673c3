"""Routing accuracy on a hand-written bilingual dev set.

Each line of tests/data/routing_devset.jsonl is a question as a user would
write it, with the expected action and repositories (for `clarify`, the
repositories already settled before asking). Accuracy counts a question as
right only when both the action and the repository set match.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.knowledge.loader import load_knowledge_base
from core.language import detect_language
from core.router import route

DEVSET = Path(__file__).resolve().parents[2] / "tests" / "data" / "routing_devset.jsonl"
# Written by a different hand after the router existed and never used to tune it: the honest figure.
HELDOUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "routing_heldout.jsonl"
# 19/20 (0.950) after issue 12; each floor sits just under what its set measures.
HELDOUT_THRESHOLD = 0.94
# Paraphrased from public issues of the nine products and committed before the issue-12 router
# change (0.442 then, 0.904 after); never used for tuning.
HELDOUT2 = Path(__file__).resolve().parents[2] / "tests" / "data" / "routing_heldout2.jsonl"
HELDOUT2_THRESHOLD = 0.9
# 204/205 (0.995) after issue 12; the issue asks the dev set to stay at or above 0.97.
THRESHOLD = 0.97


def _rows(path: Path = DEVSET) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            row["line"] = number
            rows.append(row)
    return rows


def test_devset_is_well_formed() -> None:
    kb = load_knowledge_base()
    known = {r.repo for r in kb.repositories}
    rows = _rows()
    assert len(rows) >= 100
    for row in rows:
        assert row["action"] in ("research", "clarify", "out_of_scope"), row
        assert set(row["repos"]) <= known, row
        assert set(row.get("session", [])) <= known, row
        if row["action"] == "research":
            assert row["repos"], row
    # every repository and every action is represented
    covered = {r for row in rows for r in row["repos"]}
    assert covered == known
    assert {row["action"] for row in rows} == {"research", "clarify", "out_of_scope"}


def test_routing_accuracy() -> None:
    _check_accuracy(_rows(DEVSET), THRESHOLD, "dev set")


def test_routing_accuracy_on_held_out_questions() -> None:
    _check_accuracy(_rows(HELDOUT), HELDOUT_THRESHOLD, "held-out")


def test_routing_accuracy_on_second_held_out_slice() -> None:
    _check_accuracy(_rows(HELDOUT2), HELDOUT2_THRESHOLD, "held-out 2")


@pytest.mark.parametrize("path", [HELDOUT, HELDOUT2], ids=["held-out", "held-out-2"])
def test_held_out_sets_are_well_formed(path: Path) -> None:
    kb = load_knowledge_base()
    known = {r.repo for r in kb.repositories}
    rows = _rows(path)
    assert len(rows) >= 20
    questions = [row["q"] for row in rows]
    assert len(set(questions)) == len(questions), "duplicate questions"
    for row in rows:
        assert row["action"] in ("research", "clarify", "out_of_scope"), row
        assert set(row["repos"]) <= known, row
        if row["action"] == "research":
            assert row["repos"], row
    # A held-out question copied into the dev set would no longer be held out.
    assert not set(questions) & {row["q"] for row in _rows(DEVSET)}


def test_second_held_out_slice_covers_both_languages_and_every_action() -> None:
    rows = _rows(HELDOUT2)
    assert len(rows) >= 40
    assert {row["action"] for row in rows} == {"research", "clarify", "out_of_scope"}
    zh = sum(detect_language(row["q"]) == "zh" for row in rows)
    assert 0.25 * len(rows) <= zh <= 0.75 * len(rows)


def _check_accuracy(rows: list[dict], threshold: float, name: str) -> None:
    kb = load_knowledge_base()
    right, action_right, misses = 0, 0, []
    for row in rows:
        decision = route(row["q"], session_repos=tuple(row.get("session", ())), kb=kb)
        ok_action = decision.action == row["action"]
        ok = ok_action and set(decision.repos) == set(row["repos"])
        action_right += ok_action
        right += ok
        if not ok:
            misses.append(f"  line {row['line']}: expected {row['action']} {row['repos']}, "
                          f"got {decision.action} {list(decision.repos)} ({decision.reason}) :: {row['q'][:70]!r}")
    accuracy = right / len(rows)
    print(f"\nrouting accuracy ({name}): {right}/{len(rows)} = {accuracy:.3f} "
          f"(action only: {action_right}/{len(rows)} = {action_right / len(rows):.3f})")
    for miss in misses:
        print(miss)
    assert accuracy >= threshold, "\n".join(misses)
