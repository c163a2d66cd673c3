"""How often offline answers hit a knowledge-base fact, per product, and how many leak another product's advice.

For every question of the routing dev set (and the held-out set), route it as the bot does, run
the offline triage in the question's language, and count per routed product:
- answers that hit a knowledge-base fact (a signature, a lookup: version row, env var, error code,
  chip, incompatibility, product fact, or a code-map entry), as opposed to "nothing matched";
- answers that contain a forbidden marker (core/product_scope.py): another product's command,
  flag, setting or rule. This must be 0.

Usage: .venv/bin/python -m bench.triage_facts [--set dev|heldout|both]
"""
from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from core.knowledge.loader import load_knowledge_base
from core.language import detect_language
from core.product_scope import leaked_markers
from core.router import route
from core.triage import triage

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SETS = {"dev": "routing_devset.jsonl", "heldout": "routing_heldout.jsonl"}


def _routed(question: str) -> tuple[str, ...] | None:
    decision = route(question)
    if decision.action == "out_of_scope":
        return None
    if decision.action == "clarify":  # what the conversation does after one clarification round
        return tuple(dict.fromkeys((*decision.repos, decision.options[0].repo)))
    return decision.repos


def run(name: str) -> None:
    kb = load_knowledge_base()
    answers: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    leaks: Counter[str] = Counter()
    lengths: list[int] = []
    skipped = 0
    started = time.perf_counter()
    lines = (DATA / SETS[name]).read_text(encoding="utf-8").splitlines()
    for line in lines:
        if not line.strip():
            continue
        question = json.loads(line)["q"]
        repos = _routed(question)
        if not repos:
            skipped += 1
            continue
        result = triage(question, repos, detect_language(question))
        report = result.report
        hit = report is not None and (report.has_lookups or bool(report.signature_patterns or report.code_entries))
        leaked = bool(leaked_markers(result.text, repos))
        lengths.append(len(result.text))
        for repo in repos:
            answers[repo] += 1
            hits[repo] += hit
            leaks[repo] += leaked
    elapsed = time.perf_counter() - started
    print(f"\n{name} set ({SETS[name]}): {sum(1 for ln in lines if ln.strip())} questions, {skipped} out of scope")
    print(f"{'product':<36}{'answers':>8}{'hit a fact':>12}{'leaks':>7}")
    for r in kb.repositories:
        if answers[r.repo]:
            print(f"{r.display_name:<36}{answers[r.repo]:>8}{hits[r.repo]:>12}{leaks[r.repo]:>7}")
    total_answers = len(lengths)
    print(f"answers with another product's commands/flags/rules: {sum(leaks.values())}")
    ordered = sorted(lengths)
    print(f"answer length (chars, no passages): median {ordered[len(ordered) // 2]}, max {ordered[-1]}; "
          f"{total_answers} answers in {elapsed * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("dev", "heldout", "both"), default="both")
    args = parser.parse_args()
    for name in ("dev", "heldout") if args.set == "both" else (args.set,):
        run(name)


if __name__ == "__main__":
    main()
