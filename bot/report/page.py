"""The report as one self-contained HTML page (inline CSS and SVG; no script, nothing fetched).

The same page is served at /admin and written by `python -m bot report --html FILE`. Every value
from the log is escaped; links are only the http(s) thread links bot/report/links.py builds.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from bot.report.charts import horizontal_bars, lines, stacked_bars

PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
MAX_TABLE_ROWS = 400  # the latency/tokens table of a year of many workspaces; the JSON has them all
TOP_WORKSPACES = 6  # workspaces drawn in the latency chart

CSS = """
body{font-family:sans-serif;margin:24px;color:#222;max-width:900px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
.tiles{display:flex;gap:12px;flex-wrap:wrap}.tile{border:1px solid #ddd;border-radius:6px;padding:8px 14px}
.tile b{display:block;font-size:22px}.note{color:#666;font-size:12px}.empty{color:#888;font-style:italic}
.warn{background:#fff3cd;padding:6px 10px}
"""


def _h2(en: str, zh: str) -> str:
    return f"<h2>{escape(en)} · {escape(zh)}</h2>"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """`rows` hold HTML already escaped (cells may be links)."""
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        return '<p class="empty">none</p>'
    return "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr>" + body + "</table>"


def _thread(example: Mapping[str, Any]) -> str:
    link = str(example.get("link") or "")
    label = escape(str(example.get("thread", "")))
    if link.startswith(("https://", "http://")):
        return f'<a href="{escape(link, quote=True)}" rel="noreferrer">{label}</a>'
    return label


def _examples(examples: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for example in examples:
        text = escape(str(example["question"])) + "<br>" if "question" in example else ""
        out.append(f"{text}<span class=note>{escape(str(example.get('day', '')))} {_thread(example)}</span>")
    return "<br>".join(out)


def render_html(report: Mapping[str, Any]) -> str:
    daily = report["daily"]
    days = [d["day"] for d in daily]
    totals, feedback = report["totals"], report["feedback"]
    rate = feedback["helpful_rate"]
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        # The policy travels with a saved file too: nothing on the page may run or load.
        f'<meta http-equiv="Content-Security-Policy" content="{escape(PAGE_POLICY, quote=True)}">',
        '<meta name="viewport" content="width=device-width">',
        f"<title>Ascend Inference Copilot report ({report['days']} days)</title><style>{CSS}</style></head><body>",
        "<h1>Ascend Inference Copilot · 使用报告</h1>",
        f"<p class=note>Last {report['days']} days (UTC, since {escape(report['since'])}); generated "
        f"{escape(report['generated_at'])}; scope: {escape(report['scope'])}; "
        f"{report['records_read']} records read in {report['build_seconds']} s.</p>",
    ]
    if report["truncated"]:
        parts.append(f"<p class=warn>Stopped after {report['records_read']} records: narrow the days or the workspace.</p>")
    if not report["shows_question_text"]:
        parts.append("<p class=note>Question text is shown only to each workspace's own admins (ADMIN_TOKENS).</p>")
    parts.append(
        "<div class=tiles>"
        f"<div class=tile><b>{totals['questions']}</b>questions · 问题</div>"
        f"<div class=tile><b>{totals['gaps']}</b>unanswered or low confidence · 未解决</div>"
        f"<div class=tile><b>{totals['votes_up']} / {totals['votes_down']}</b>👍 / 👎</div>"
        f"<div class=tile><b>{'-' if rate is None else f'{rate:.0%}'}</b>helpful · 有用率</div></div>"
    )
    parts.append(_h2("Questions per day", "每日问题"))
    for name, title in (("platform", "by platform"), ("product", "by product"), ("language", "by language")):
        parts.append(stacked_bars(f"Questions per day {title}", [(d["day"], d[name]) for d in daily]))
    parts.append(_h2("Answer kinds and confidence", "回答类型与置信度"))
    parts.append(horizontal_bars("Replies by kind", sorted(report["kinds"].items(), key=lambda kv: -kv[1])))
    order = {"high": 0, "medium": 1, "low": 2}
    parts.append(horizontal_bars("Answers by confidence",
                                 sorted(report["confidence"].items(), key=lambda kv: order.get(kv[0], 3))))
    parts.append(_h2("Feedback", "反馈"))
    for direction, label in (("up", "👍 helpful"), ("down", "👎 not helpful")):
        rows = [(_thread(t), escape(t["workspace"]), escape(t["day"]), str(t["up"]), str(t["down"]),
                 escape(t.get("question", ""))) for t in feedback["threads"][direction]]
        parts.append(f"<h3>{label}</h3>" + _table(("thread", "workspace", "day", "👍", "👎", "question"), rows))
    parts.append(_h2("Documentation gaps", "文档缺口"))
    parts.append("<p class=note>Questions refused as out of scope, failed, answered with low confidence or with no "
                 "source, grouped by error signature and by topic word (one question can share several words).</p>")
    parts.append("<h3>By error signature</h3>" + _table(
        ("questions", "signature", "examples"),
        ((str(c["count"]), f"<code>{escape(c['key'])}</code>", _examples(c["examples"])) for c in report["gaps"]["by_signature"])))
    parts.append("<h3>By topic word</h3>" + _table(
        ("questions", "word", "examples"),
        ((str(c["count"]), escape(c["key"]), _examples(c["examples"])) for c in report["gaps"]["by_topic"])))
    parts.append(_h2("Top error signatures", "常见错误"))
    parts.append(horizontal_bars("Error signatures in questions",
                                 [(s["signature"], s["count"]) for s in report["top_signatures"]]))
    parts.append(_h2("Latency and model tokens", "延迟与模型用量"))
    parts.extend(_latency_and_tokens(report["per_workspace_day"], days))
    parts.append(_h2("Escalations", "上报问题"))
    parts.extend(_escalations(report["escalations"]))
    parts.append("</body></html>")
    return "".join(parts)


def _escalations(section: Mapping[str, Any]) -> list[str]:
    states = ("opened", "filed", "answered", "closed")
    counts = [(escape(product), *(str(by_state.get(state, 0)) for state in states))
              for product, by_state in section["by_product"].items()]
    rows = [(escape(e["day"]), escape(e["workspace"]), escape(e["product"]), escape(e["state"]),
             _link(e["issue"], "new-issue page" if e["state"] == "opened" else "issue"), _thread(e),
             escape(e.get("question", ""))) for e in section["items"]]
    return [
        "<p class=note>Opened: the pre-filled new-issue link was given in the thread; filed: the bot filed the "
        "issue itself (ESCALATE_FILE_DIRECTLY); answered, closed: a maintainer replied on the issue, or it was "
        "closed, and the thread was told (ESCALATION_FOLLOWUP_WORKSPACES).</p>",
        _table(("product", *states), counts),
        _table(("day", "workspace", "product", "state", "issue", "thread", "question"), rows),
    ]


def _link(url: str, label: str) -> str:
    if url.startswith("https://"):
        return f'<a href="{escape(url, quote=True)}" rel="noreferrer">{escape(label)}</a>'
    return escape(url)


def _latency_and_tokens(cells: Sequence[Mapping[str, Any]], days: Sequence[str]) -> list[str]:
    all_days = sorted({c["day"] for c in cells} | set(days))
    answers: dict[str, int] = {}
    for c in cells:
        answers[c["workspace"]] = answers.get(c["workspace"], 0) + c["answers"]
    top = sorted(answers, key=lambda w: (-answers[w], w))[:TOP_WORKSPACES]
    by_key = {(c["day"], c["workspace"]): c for c in cells}
    p95 = {w: [by_key[(d, w)]["latency_p95"] if (d, w) in by_key else None for d in all_days] for w in top}
    tokens: dict[str, dict[str, float]] = {d: {} for d in all_days}
    for c in cells:
        tokens[c["day"]][c["workspace"]] = c["tokens"]
    rows = [(escape(c["day"]), escape(c["workspace"]), str(c["answers"]), f"{c['latency_p50']:g}",
             f"{c['latency_p95']:g}", str(c["tokens"])) for c in cells[-MAX_TABLE_ROWS:]]
    more = len(cells) - len(rows)
    return [
        lines("Latency p95 per day (seconds), busiest workspaces", all_days, p95),
        stacked_bars("Model tokens per day by workspace", [(d, tokens[d]) for d in all_days]),
        _table(("day", "workspace", "replies", "p50 s", "p95 s", "tokens"), rows),
        f"<p class=note>{more} earlier rows are in --json.</p>" if more > 0 else "",
    ]
