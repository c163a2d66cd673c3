"""What checking a streamed draft costs per chunk (issue 21, item 8): incremental vs a full re-scan.

A 20,000-character answer (prose with links, inline code, a code block, Chinese text) arrives in
chunks of `--chunk` characters, as a model streams it. "before" checks the whole text so far on every
chunk (a fresh `DraftGuard` each time: the cost of any check without state, which grows with the
answer); "after" is one `DraftGuard` that keeps its state and scans only the new text and a short tail.
Prints the mean and worst cost per chunk, and the whole stream's total, for a realistic answer and
for hostile ones (one long word, an open `[` with no end, a run of backticks).

    .venv/bin/python bench/stream_check_bench.py [--chars 20000] [--chunk 20]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.research.draft_guard import DraftGuard  # noqa: E402

PARAGRAPH = (
    "The error comes from the graph capture: see https://github.com/vllm-project/vllm-ascend/issues/1234 "
    "and [the FAQ](https://docs.vllm.ai/projects/ascend/en/latest/faqs.html). Set `max_model_len` lower, "
    "then restart. 如果仍然失败，请检查 CANN 版本（参见 www.hiascend.com/document）。\n\n"
    "```bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1\nvllm serve Qwen/Qwen3-8B --max-model-len 8192\n```\n\n"
)
ANSWERS: dict[str, Callable[[int], str]] = {
    "realistic answer": lambda n: (PARAGRAPH * (n // len(PARAGRAPH) + 1))[:n],
    "one long word": lambda n: "a" * n,
    "open [ then words": lambda n: ("[" + "word " * n)[:n],
    "backticks": lambda n: "`" * n,
}


def stream_cost(text: str, chunk: int, incremental: bool) -> list[float]:
    """Seconds of checking per chunk while `text` streams in."""
    guard = DraftGuard("en")
    costs = []
    for end in range(chunk, len(text) + chunk, chunk):
        started = time.perf_counter()
        (guard if incremental else DraftGuard("en")).view(text[:end])
        costs.append(time.perf_counter() - started)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=20)
    args = parser.parse_args()
    print(f"{args.chars:,}-character answer in {args.chunk}-character chunks; cost of the draft check per chunk")
    print(f"{'answer':<20} {'check':<7} {'mean µs':>9} {'max µs':>9} {'total ms':>9}")
    for name, build in ANSWERS.items():
        text = build(args.chars)
        for label, incremental in (("before", False), ("after", True)):
            costs = stream_cost(text, args.chunk, incremental)
            mean, worst, total = sum(costs) / len(costs), max(costs), sum(costs)
            print(f"{name:<20} {label:<7} {mean * 1e6:>9.1f} {worst * 1e6:>9.1f} {total * 1e3:>9.1f}")


if __name__ == "__main__":
    main()
