"""Routing costs (issue 22): the vocabulary map's build time and size, and the router per message.

1. Build (with clones): `build_vocabulary` over every clone found in --repos-dir, from scratch, then
   again with nothing changed (what `python -m bot index` pays after a sync that moved nothing).
   Prints seconds, identifiers and bytes.
2. Route (always): every question of the eval sets (eval/*.jsonl) through `route()` with the map
   (empty without clones), plus a 200 KB pasted log as the bot routes it (head and tail, 32 KB);
   prints p50/p95/p99 per message in ms.

    .venv/bin/python bench/router_bench.py --repos-dir /path/to/clones [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench._common import percentile  # noqa: E402
from core.conversation import analysis_window  # noqa: E402
from core.knowledge.loader import load_knowledge_base  # noqa: E402
from core.research.repos import REPOSITORIES, local_path  # noqa: E402
from core.router import route  # noqa: E402
from core.vocabulary.build import FILE_NAME, build_vocabulary  # noqa: E402
from core.vocabulary.map import VocabularyMap  # noqa: E402


def _questions() -> list[str]:
    out = []
    for path in sorted((ROOT / "eval").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["question"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos-dir", type=Path, default=ROOT / "repos")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    clones = [(r.name, local_path(args.repos_dir, r)) for r in REPOSITORIES]
    clones = [(name, path) for name, path in clones if (path / ".git").exists()]
    vocabulary = VocabularyMap()
    with tempfile.TemporaryDirectory() as tmp:
        if clones:
            first = build_vocabulary(Path(tmp), clones)
            again = build_vocabulary(Path(tmp), clones)
            print(f"vocabulary build: {len(clones)} clones, {first.tokens} identifiers, {first.bytes / 1e6:.1f} MB, "
                  f"{first.seconds:.1f} s from scratch, {again.seconds:.2f} s when no clone moved")
            started = time.perf_counter()
            vocabulary = VocabularyMap.from_file(Path(tmp) / FILE_NAME)
            print(f"vocabulary load: {(time.perf_counter() - started) * 1000:.0f} ms")
        else:
            print(f"no clones in {args.repos_dir}: routing measured with an empty vocabulary map")

    kb = load_knowledge_base()
    questions = _questions()
    paste = "INFO step ok tokens=128\n" * 8000 + 'File "/x/vllm_ascend/worker/worker.py", line 1\nRuntimeError: error code:507015\n'
    route(questions[0], kb=kb, vocabulary=vocabulary)  # compile the patterns once
    timings = []
    for _ in range(args.rounds):
        for text in questions:
            started = time.perf_counter()
            route(text, kb=kb, vocabulary=vocabulary)
            timings.append((time.perf_counter() - started) * 1000)
    paste_ms = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        route(analysis_window(paste), kb=kb, vocabulary=vocabulary)  # what the bot routes of a paste
        paste_ms.append((time.perf_counter() - started) * 1000)
    print(f"route: {len(questions)} eval questions x {args.rounds}: p50 {percentile(timings, 50):.2f} ms, "
          f"p95 {percentile(timings, 95):.2f} ms, p99 {percentile(timings, 99):.2f} ms, max {max(timings):.1f} ms")
    print(f"route: a {len(paste) // 1000} KB pasted log (its 32 KB analysis window): median {sorted(paste_ms)[len(paste_ms) // 2]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
