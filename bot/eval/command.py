"""`python -m bot eval DATASET.jsonl`: load, run, check links, grade, report."""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bot.eval.citations import CitationChecker, SyncedIssues
from bot.eval.dataset import VARIANTS, DatasetError, load_dataset, select_variant
from bot.eval.links import RepoBases
from bot.eval.metrics import QuestionResult
from bot.eval.progress import ProgressDisplay
from bot.eval.report import build_report, plain_table, write_report
from bot.eval.retrieval import open_retriever
from bot.eval.runner import RunOptions, answer_links, observe_research, run_questions


def positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser("eval", help="run a question set through the bot and report answer quality")
    p.add_argument("dataset", type=Path, help="JSONL file, one question per line")
    p.add_argument("--offline", action="store_true", help="never call the model for answers (offline triage)")
    p.add_argument("--judge", action="store_true", help="grade answer facts with the configured model")
    p.add_argument("-k", type=positive_int, default=5, help="recall@k of the knowledge-index search (default 5)")
    p.add_argument("--limit", type=positive_int, help="only the first N questions")
    p.add_argument("--concurrency", type=positive_int, default=1, help="questions in flight at once (model runs)")
    p.add_argument("--max-tokens-total", type=positive_int, help="stop starting questions once this many model tokens are spent")
    p.add_argument(
        "--variant", choices=VARIANTS, default="question",
        help="which text to ask: question (default) or unpinned (each item's question_unpinned; items without it are skipped)",
    )
    p.add_argument("--out", type=Path, help="report directory (default: DATA_DIR/eval/<UTC time>)")


def _say(text: str) -> None:
    print(f"eval: {text}", file=sys.stderr, flush=True)


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(__file__).resolve().parents[2],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def check_links(results: list[QuestionResult], settings: Any, bases: RepoBases) -> None:
    with CitationChecker(Path(settings.repos_dir), bases, SyncedIssues(Path(settings.data_dir))) as checker:
        for result in results:
            result.links = [checker.check(url).to_dict() for url in answer_links(result)]


async def cmd_eval(args: argparse.Namespace, settings: Any) -> int:
    from bot.cli import local_conversation, terminal_message  # noqa: PLC0415 - cli imports this module

    if args.judge and not settings.llm_enabled:
        print("eval: --judge needs a configured model (set ANTHROPIC_API_KEY); nothing was run.", file=sys.stderr)
        return 2
    try:
        items, problems = load_dataset(args.dataset)
    except DatasetError as exc:
        print(f"eval: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        _say(f"{args.dataset} {problem} (skipped)")
    items, without_variant = select_variant(items, args.variant)
    if without_variant:
        _say(f"{len(without_variant)} questions have no question_unpinned (skipped)")
    if not items:
        print(f"eval: no question in {args.dataset} has question_unpinned; nothing was run.", file=sys.stderr)
        return 2
    if args.limit:
        items = items[: args.limit]

    offline = args.offline or not settings.llm_enabled
    conversation, researcher = local_conversation(settings, offline, on_research=observe_research)
    # The index the conversation already opened (one copy in memory); else say why there is none.
    retriever, index_note = getattr(conversation, "_retriever", None), ""
    if retriever is None:
        retriever, index_note = open_retriever(settings)
    judge = None
    if args.judge:
        from bot.eval.judge import build_judge  # noqa: PLC0415 - anthropic SDK only when judging

        judge = build_judge(settings)
    bases = RepoBases(settings.repo_urls)
    display = ProgressDisplay(len(items), sys.stderr)
    started = time.perf_counter()

    async def grade(result: QuestionResult) -> int:
        assert judge is not None and result.answer_facts
        graded = await judge.grade(
            result.question, result.expected_repos or (), result.answer_facts, result.text, result.sources
        )
        result.judge, result.judge_error = graded.verdict, graded.error
        u = graded.usage
        return u.input + u.output + u.cache_write + u.cache_read

    try:
        outcome = await run_questions(
            conversation,
            items,
            terminal_message,
            options=RunOptions(k=args.k, concurrency=args.concurrency, max_tokens_total=args.max_tokens_total),
            bases=bases,
            retriever=retriever,
            grade=grade if judge is not None else None,
            display=display,
        )
    finally:
        if researcher is not None and hasattr(researcher, "aclose"):
            await researcher.aclose()
        if judge is not None:
            await judge.aclose()
    check_links(outcome.results, settings, bases)

    now = datetime.now(timezone.utc)
    run: dict[str, Any] = {
        "dataset": str(args.dataset),
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "mode": "offline" if offline else f"model ({settings.anthropic_model})",
        "variant": args.variant,
        "variant_skipped": len(without_variant),
        "k": args.k,
        "concurrency": args.concurrency,
        "limit": args.limit,
        "max_tokens_total": args.max_tokens_total,
        "tokens_spent": outcome.tokens_spent,
        "questions_run": len(outcome.results),
        "questions_skipped": len(outcome.skipped),
        "skipped_ids": outcome.skipped,
        "errors": sum(1 for r in outcome.results if r.error),
        "malformed_lines": len(problems),
        "malformed": [str(p) for p in problems],
        "index": "searched with the knowledge index" if retriever is not None else f"evidence recall not measured: {index_note}",
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    if judge is not None:
        run["judge"] = judge.config.to_dict()
    report = build_report(outcome.results, run, judged=judge is not None)
    out_dir = args.out or Path(settings.data_dir) / "eval" / now.strftime("%Y%m%dT%H%M%SZ")
    print(plain_table(report))
    try:
        json_path, md_path = write_report(report, out_dir)
    except OSError as exc:
        print(f"eval: cannot write the reports to {out_dir}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if retriever is None:
        print(f"evidence recall@k: not measured ({index_note})")
    errors = sum(1 for r in outcome.results if r.error)
    if errors:
        print(f"{errors} questions failed inside the bot (listed in report.md)")
    if outcome.skipped:
        print(f"{len(outcome.skipped)} questions skipped: --max-tokens-total {args.max_tokens_total} was spent")
    print(f"reports: {json_path} {md_path}")
    return 0
