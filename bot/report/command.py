"""`python -m bot report [--days N] [--html FILE] [--json] [--workspace platform:id]`.

The terminal holds REDIS_URL (the password to everything stored), so it may read any workspace;
it still follows the page's rule so a file made for one team never carries another team's
questions: all workspaces without question text by default, one workspace's text with --workspace.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError

from bot.report.access import OPERATOR, workspace_scope
from bot.report.cli import answer_log_from, checked_days
from bot.report.data import build_report
from bot.report.page import render_html

DEFAULT_DAYS = 7


def add_parser(sub: Any) -> None:
    report = sub.add_parser("report", help="what the team asks and what fails, from the stored answers (read-only)")
    report.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"the last N days, 1..366 (default {DEFAULT_DAYS})")
    report.add_argument("--html", metavar="FILE", help="write one self-contained HTML page (charts inline)")
    report.add_argument("--json", action="store_true", help="print the report's numbers as JSON")
    report.add_argument("--workspace", action="append", default=[], metavar="PLATFORM:ID",
                        help="only this workspace (repeatable), with its questions' text")


def _summary(report: dict[str, Any]) -> str:
    totals, feedback = report["totals"], report["feedback"]
    rate = feedback["helpful_rate"]
    lines = [
        f"Last {report['days']} days, {report['scope']}: {totals['questions']} questions, {totals['gaps']} unanswered "
        f"or low confidence, 👍 {totals['votes_up']} / 👎 {totals['votes_down']}"
        + ("" if rate is None else f" ({rate:.0%} helpful)"),
        "Replies by kind: " + (", ".join(f"{k} {n}" for k, n in sorted(report["kinds"].items())) or "none"),
        "Confidence: " + (", ".join(f"{k} {n}" for k, n in sorted(report["confidence"].items())) or "none"),
    ]
    for cluster in report["gaps"]["by_signature"][:3]:
        lines.append(f"Gap: {cluster['count']} x {cluster['key']}")
    escalations = report["escalations"]
    lines.append(f"Escalations: {escalations['total']}" + "".join(
        f"; {product}: " + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
        for product, states in escalations["by_product"].items()))
    for item in escalations["items"][:5]:  # a pre-filled link is kilobytes long: an opened one names its thread
        where = item["issue"] if item["state"] != "opened" else (item["link"] or item["thread"])
        lines.append(f"  {item['day']} {item['product']} {item['state']}: {where}")
    if report["truncated"]:
        lines.append(f"(stopped after {report['records_read']} records)")
    return "\n".join(lines)


async def cmd_report(args: argparse.Namespace, settings: Any) -> int:
    days = checked_days("report", args.days)
    if days is None:
        return 2
    if not settings.redis_url:
        print("report: set REDIS_URL to the Redis the bot uses (the answer records live there); "
              "with the embedded Redis of `serve`, open /admin instead", file=sys.stderr)
        return 2
    scope = workspace_scope(*args.workspace) if args.workspace else OPERATOR
    try:
        async with answer_log_from(settings) as (answer_log, redis, keys):
            report = await build_report(answer_log, redis, keys, scope, days)
    except (RedisError, OSError) as exc:
        print(f"report: cannot read Redis ({type(exc).__name__})", file=sys.stderr)
        return 1
    if args.html:
        Path(args.html).write_text(render_html(report), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    elif not args.html:
        print(_summary(report))
    return 0
