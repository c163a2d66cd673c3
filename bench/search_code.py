"""search_code latency on a synthetic 3,000-file git repository (p50/p99).

Builds the repository in a temp dir, then runs the real tool through the
registry (validation, git grep at the commit, formatting, truncation,
wrapping), without the Redis cache, so every call does the search.

    .venv/bin/python bench/search_code.py [--files 3000] [--runs 40]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench._common import percentile  # noqa: E402




from core.keys import Keys  # noqa: E402
from core.research.cache import ToolCache  # noqa: E402
from core.research.citations import Evidence  # noqa: E402
from core.research.model import ToolUse  # noqa: E402
from core.research.redact import Redactor  # noqa: E402
from core.research.tools.code import LocalRepos, ReadFile, SearchCode  # noqa: E402
from core.research.tools.registry import ToolRegistry  # noqa: E402
from tests.fixtures.git_repos import git, make_repo, synthetic_tree  # noqa: E402

REPO = "vllm-project/vllm-ascend"
QUERIES = {
    "rare identifier": "RARE_MARKER_507015",
    "common word (capped output)": "scheduler",
    "no match": "no_such_identifier_anywhere",
    "multi-word fallback": "kv_cache helper 42",
}


async def main(files: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repos_dir = Path(tmp) / "repos"
        started = time.perf_counter()
        make_repo(repos_dir / REPO, synthetic_tree(files))
        git(repos_dir / REPO, "gc", "-q")  # packed, like a real clone
        print(f"synthetic repository: {files} files, built in {time.perf_counter() - started:.1f} s")
        local = LocalRepos(repos_dir, {})
        registry = ToolRegistry([SearchCode(local, 0, 30), ReadFile(local, 0, 30)], ToolCache(None, Keys("bench")), Redactor([]), 12_000)
        await registry.run(ToolUse("warm", "search_code", {"repo": REPO, "query": "warmup"}), Evidence(), 30)
        print(f"{'query':32} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'bytes':>7}")
        git(repos_dir / REPO, "tag", "v1.0.0")
        cases = [(label, {"query": query}) for label, query in QUERIES.items()]
        cases.append(("rare identifier at a tag (tree)", {"query": QUERIES["rare identifier"], "ref": "v1.0.0"}))
        for label, extra in cases:
            times, size = [], 0
            for i in range(runs):
                run = await registry.run(ToolUse(f"t{i}", "search_code", {"repo": REPO, **extra}), Evidence(), 30)
                times.append(run.duration_ms)
                size = run.output_bytes
            print(f"{label:32} {percentile(times, 50):8.1f} {percentile(times, 99):8.1f} {statistics.mean(times):8.1f} {size:7d}")
        times = []
        for i in range(runs):
            run = await registry.run(
                ToolUse(f"r{i}", "read_file", {"repo": REPO, "path": "pkg0/sub0/" + _first_file(repos_dir), "start_line": 1, "end_line": 120}),
                Evidence(),
                30,
            )
            times.append(run.duration_ms)
        print(f"{'read_file 120 lines':32} {percentile(times, 50):8.1f} {percentile(times, 99):8.1f} {statistics.mean(times):8.1f}")


def _first_file(repos_dir: Path) -> str:
    return sorted(p.name for p in (repos_dir / REPO / "pkg0" / "sub0").iterdir())[0]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=40)
    options = parser.parse_args()
    asyncio.run(main(options.files, options.runs))
