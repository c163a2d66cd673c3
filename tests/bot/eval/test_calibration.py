"""The calibration table of `bot eval`: accuracy per confidence level, from a small hand-made result list."""
from __future__ import annotations

import json

from bot.eval.calibration import calibration, rows, separation, summary
from bot.eval.metrics import JudgeVerdict, QuestionResult
from bot.eval.report import build_report, markdown, plain_table
from tests.bot.eval.test_command import QUESTIONS, env_for, run_eval, write_jsonl

ASCEND = "vllm-project/vllm-ascend"
VLLM = "vllm-project/vllm"


def answered(confidence: str, *, routed: bool = True, cites: bool | None = None, facts: tuple[str, ...] = ()) -> QuestionResult:
    result = QuestionResult(id=f"q{id(object())}", category="c", question="?", lang="en", expected_repos=(ASCEND,),
                            needs_clarification=False, out_of_scope=False, evidence=("x",) if cites is not None else None,
                            answer_facts=None, action="answered", repos=(ASCEND,) if routed else (VLLM,),
                            confidence=confidence, evidence_in_sources=cites)
    if facts:
        result.judge = JudgeVerdict(facts=facts)  # type: ignore[arg-type]
    return result


RESULTS = [
    answered("high", cites=True, facts=("full", "full")),
    answered("high", cites=True, facts=("full", "partial")),
    answered("high", routed=False, cites=False, facts=("missing",)),
    answered("medium", cites=True),
    answered("medium", cites=None),  # no evidence labelled: not in the evidence rate
    answered("low", cites=False, facts=("partial",)),
    answered("low", routed=False, cites=True, facts=("full",)),
    answered("low", cites=False),
    answered("low", cites=False),
    # a clarification carries no level and is in no row
    QuestionResult(id="c", category="c", question="?", lang="en", expected_repos=None, needs_clarification=True,
                   out_of_scope=False, evidence=None, answer_facts=None, action="clarified"),
]


def test_each_level_counts_its_answers_routing_evidence_and_facts() -> None:
    table = calibration(RESULTS, judged=True)
    assert list(table) == ["high", "medium", "low"]
    assert table["high"] == {"n": 3, "routing_accuracy": 2 / 3, "answer_evidence_rate": 2 / 3, "facts_full": 3 / 5}
    assert table["medium"] == {"n": 2, "routing_accuracy": 1.0, "answer_evidence_rate": 1.0, "facts_full": None}
    assert table["low"] == {"n": 4, "routing_accuracy": 3 / 4, "answer_evidence_rate": 1 / 4, "facts_full": 1 / 2}
    assert calibration(RESULTS, judged=False)["high"]["facts_full"] is None  # no judge ran: not 0


def test_the_high_over_low_check() -> None:
    table = calibration(RESULTS, judged=False)
    assert separation(table) == (2 / 3) / (1 / 4)
    assert summary(table) == "high vs low, answers citing their evidence: 0.67 vs 0.25 (2.7x)"
    no_low_right = calibration([answered("high", cites=True), answered("low", cites=False)], judged=False)
    assert separation(no_low_right) is None and "no low answer cites its evidence" in summary(no_low_right)
    assert "not measurable" in summary(calibration([answered("high", cites=True)], judged=False))


def test_the_table_is_printed_and_written_in_both_reports() -> None:
    assert rows(calibration(RESULTS, judged=False))[1] == ["high", "3", "0.67", "0.67", "-"]
    report = build_report(RESULTS, {"dataset": "d", "questions_run": 10, "questions_skipped": 0, "malformed_lines": 0,
                                    "date": "today", "mode": "offline", "k": 5, "concurrency": 1, "wall_seconds": 1,
                                    "index": "none"}, judged=False)
    assert report["calibration"]["levels"]["low"]["n"] == 4
    assert report["calibration"]["high_over_low"] == (2 / 3) / (1 / 4)
    json.dumps(report, allow_nan=False)  # report.json stays strict JSON
    printed = plain_table(report)
    assert "confidence" in printed and "high vs low" in printed
    assert "## Confidence calibration" in markdown(report) and "| low | 4 | 0.75 | 0.25 | - |" in markdown(report)


async def test_a_real_offline_run_labels_every_answer_and_reports_the_table(tmp_path) -> None:
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    code, stdout, stderr = await run_eval(str(dataset), "--offline", "--out", str(tmp_path / "out"), env=env_for(tmp_path))
    assert code == 0, stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    for q in report["questions"]:
        answered_ = q["bot"]["action"] == "answered"
        assert (q["bot"]["confidence"] in ("high", "medium", "low")) is answered_, q["id"]
    levels = report["calibration"]["levels"]
    assert sum(levels[level]["n"] for level in levels) == sum(q["bot"]["action"] == "answered" for q in report["questions"])
    assert "high vs low" in stdout
