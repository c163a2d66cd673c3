"""report.json, report.md and the printed table, all from the same numbers."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.eval import calibration
from bot.eval.metrics import QuestionResult, aggregate, cost

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("routing", "routing_accuracy"),
    ("clar P", "clarify_precision"),
    ("clar R", "clarify_recall"),
    ("clar F1", "clarify_f1"),
    ("oos P", "oos_precision"),
    ("oos R", "oos_recall"),
    ("lang", "language_accuracy"),
    ("recall@k", "evidence_recall_at_k"),
    ("ans evid", "answer_evidence_rate"),
    ("cites ok", "citation_validity"),
    ("full", "facts_full"),
    ("partial", "facts_partial"),
    ("missing", "facts_missing"),
    ("wrong", "wrong_statements"),
    ("p50 ms", "latency_p50_ms"),
    ("p95 ms", "latency_p95_ms"),
)


def by_category(results: Sequence[QuestionResult]) -> dict[str, list[QuestionResult]]:
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(result.category, []).append(result)
    return dict(sorted(groups.items()))


def build_report(results: Sequence[QuestionResult], run: dict[str, Any], *, judged: bool) -> dict[str, Any]:
    groups = by_category(results)
    failed = [
        {"id": r.id, "url": link["url"], "reason": link["reason"]}
        for r in results
        for link in r.links
        if link["status"] == "failed"
    ]
    unchecked = Counter(link["reason"] for r in results for link in r.links if link["status"] == "unchecked")
    statuses = Counter(link["status"] for r in results for link in r.links)
    judge_errors = [{"id": r.id, "error": r.judge_error} for r in results if r.judge_error]
    wrong_tags = Counter(w["tag"] for r in results if r.judge is not None for w in r.judge.wrong)
    usefulness = Counter(r.judge.usefulness for r in results if r.judge is not None and r.judge.usefulness)
    levels = calibration.calibration(results, judged=judged)
    return {
        "run": run,
        "overall": aggregate(results, judged=judged),
        "by_category": {name: aggregate(group, judged=judged) for name, group in groups.items()},
        "cost": {"overall": cost(results), "by_category": {name: cost(group) for name, group in groups.items()}},
        "calibration": {"levels": levels, "high_over_low": calibration.separation(levels)},
        "links": {
            "valid": statuses["valid"],
            "failed": statuses["failed"],
            "unchecked": statuses["unchecked"],
            "unchecked_reasons": dict(unchecked.most_common()),
            "failed_links": failed,
        },
        "judge": None
        if not judged
        else {
            **run.get("judge", {}),
            "graded": sum(1 for r in results if r.judge is not None),
            "errors": judge_errors,
            "wrong_tags": dict(wrong_tags.most_common()),
            "usefulness": dict(usefulness.most_common()),
        },
        "questions": [r.to_dict() for r in results],
    }


def fmt(value: Any, key: str) -> str:
    if value is None:
        return "-"
    if key.startswith("latency") or key in ("n", "wrong_statements"):
        return str(int(round(value)))
    return f"{value:.2f}"


def table_rows(report: dict[str, Any]) -> list[list[str]]:
    header = ["category", "n", *(title for title, _ in _COLUMNS)]
    rows = [header]
    for name, metrics in [("overall", report["overall"]), *report["by_category"].items()]:
        rows.append([name, fmt(metrics["n"], "n"), *(fmt(metrics[key], key) for _, key in _COLUMNS)])
    return rows


def _plain(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def plain_table(report: dict[str, Any]) -> str:
    """The metrics per category, then the calibration table and its one-line check."""
    levels = report["calibration"]["levels"]
    return "\n\n".join((_plain(table_rows(report)), _plain(calibration.rows(levels)), calibration.summary(levels)))


def _markdown_table(rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(rows[0]))) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return out


def markdown(report: dict[str, Any]) -> str:
    run = report["run"]
    lines = [
        "# Eval report",
        "",
        f"- dataset: `{run['dataset']}` ({run['questions_run']} run, {run['questions_skipped']} skipped by the token "
        f"budget, {run['malformed_lines']} malformed lines skipped)",
        f"- date: {run['date']}; commit: `{run.get('commit') or 'unknown'}`",
        f"- mode: {run['mode']}; {_variant_note(run)}k = {run['k']}; concurrency = {run['concurrency']}; wall time {run['wall_seconds']} s",
        f"- knowledge index: {run['index']}",
    ]
    judge = report.get("judge")
    if judge:
        lines.append(
            f"- judge: {judge['provider']} `{judge['model']}`, max_tokens {judge['max_tokens']}, prompt `{judge['prompt']}` "
            f"(sha256 {judge['prompt_sha256'][:12]}); {judge['graded']} graded, {len(judge['errors'])} judge errors"
        )
    else:
        lines.append("- facts: not graded (run with `--judge` and a configured model)")
    lines += ["", "## Metrics", "", *_markdown_table(table_rows(report)), ""]
    levels = report["calibration"]["levels"]
    lines += ["## Confidence calibration", "", *_markdown_table(calibration.rows(levels)), "", calibration.summary(levels) + ".", ""]
    c = report["cost"]["overall"]
    lines += [
        "## Cost per answer",
        "",
        f"{c['answers']} answers; model tokens per answer: in {fmt(c['tokens_in_per_answer'], 'n')}, "
        f"out {fmt(c['tokens_out_per_answer'], 'n')}, cached {fmt(c['tokens_cached_per_answer'], 'n')}; "
        f"tool calls per answer {fmt(c['tool_calls_per_answer'], 'x')}.",
        "",
        "## Links",
        "",
        f"{report['links']['valid']} valid, {report['links']['failed']} failed, {report['links']['unchecked']} unchecked.",
    ]
    for reason, count in report["links"]["unchecked_reasons"].items():
        lines.append(f"- unchecked: {reason} ({count})")
    if report["links"]["failed_links"]:
        lines += ["", "Failed links:", ""]
        lines += [f"- `{f['id']}` {f['url']}: {f['reason']}" for f in report["links"]["failed_links"]]
    misrouted = [q for q in report["questions"] if q["verdicts"]["routing"] is False]
    if misrouted:
        lines += ["", "## Routing misses", "", "| id | expected | bot |", "|---|---|---|"]
        for q in misrouted:
            got = q["bot"]["action"] + (": " + ", ".join(q["bot"]["repos"]) if q["bot"]["repos"] else "")
            lines.append(f"| {q['id']} | {', '.join(q['asked']['expected_repos'] or [])} | {got} |")
    errored = [q for q in report["questions"] if q["bot"]["error"]]
    if errored:
        lines += ["", "## Questions that failed to run", ""]
        lines += [f"- `{q['id']}`: {q['bot']['error']}" for q in errored]
    if judge and judge["errors"]:
        lines += ["", "## Judge errors", ""] + [f"- `{e['id']}`: {e['error']}" for e in judge["errors"]]
    return "\n".join(lines) + "\n"


def _variant_note(run: dict[str, Any]) -> str:
    """Says which text was asked when it was not the question as written (reports before the option have no key)."""
    if run.get("variant", "question") == "question":
        return ""
    return f"variant {run['variant']} ({run.get('variant_skipped', 0)} questions without its text skipped); "


def write_report(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "report.json", out_dir / "report.md"
    json_path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    md_path.write_text(markdown(report), encoding="utf-8")
    return json_path, md_path
