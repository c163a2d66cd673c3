"""The calibration table: how often answers of each confidence level are right.

A label is worth showing only if a high answer is right clearly more often than a low one. For each
level: how many answers carry it, how many were routed right, how many cite the thread or file that
holds the answer (`evidence_in_sources`, the offline measure of "right"), and, when a judge ran, the
share of expected facts the answer fully states.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.eval.metrics import QuestionResult, ratio
from core.confidence import LEVELS

CALIBRATION_KEYS: tuple[str, ...] = ("n", "routing_accuracy", "answer_evidence_rate", "facts_full")
_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "n"), ("routing", "routing_accuracy"), ("ans evid", "answer_evidence_rate"), ("facts full", "facts_full"),
)


def calibration(results: Sequence[QuestionResult], *, judged: bool) -> dict[str, dict[str, Any]]:
    """Per level, over the answers that carry it (clarifications and declines have no level)."""
    table: dict[str, dict[str, Any]] = {}
    for level in LEVELS:
        group = [r for r in results if r.action == "answered" and r.confidence == level]
        routing = [r.routing_ok for r in group if r.routing_ok is not None]
        evidence = [r.evidence_in_sources for r in group if r.evidence_in_sources is not None]
        grades = [g for r in group if r.judge is not None for g in r.judge.facts]
        table[level] = {
            "n": len(group),
            "routing_accuracy": ratio(sum(routing), len(routing)),
            "answer_evidence_rate": ratio(sum(evidence), len(evidence)),
            "facts_full": ratio(grades.count("full"), len(grades)) if judged else None,
        }
    return table


def separation(table: dict[str, dict[str, Any]], key: str = "answer_evidence_rate") -> float | None:
    """How many times more often a high answer is right than a low one; None when one level has no
    measured answer or no low answer is right (a ratio over zero; the summary says which)."""
    high, low = table["high"][key], table["low"][key]
    if high is None or not low:
        return None
    return high / low


def rows(table: dict[str, dict[str, Any]]) -> list[list[str]]:
    out = [["confidence", *(title for title, _ in _COLUMNS)]]
    for level in LEVELS:
        metrics = table[level]
        out.append([level, *(_fmt(metrics[key], key) for _, key in _COLUMNS)])
    return out


def summary(table: dict[str, dict[str, Any]]) -> str:
    """One line: the evidence rate of high answers against low ones (the check the label must pass)."""
    high, low = table["high"]["answer_evidence_rate"], table["low"]["answer_evidence_rate"]
    if high is None or low is None:
        return "high vs low: not measurable (no answer with labelled evidence at one of the levels)"
    times = separation(table)
    shown = f"{times:.1f}x" if times is not None else "no low answer cites its evidence"
    return f"high vs low, answers citing their evidence: {_fmt(high, 'r')} vs {_fmt(low, 'r')} ({shown})"


def _fmt(value: Any, key: str) -> str:
    if value is None:
        return "-"
    return str(value) if key == "n" else f"{value:.2f}"
