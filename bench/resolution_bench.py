"""Resolution memory costs: extraction per 1,000 threads, and the whole path on a real snapshot.

1. Extraction (always; synthetic threads, no network): signatures, roles, the deciding comment,
   fix items and PR links for N threads shaped like real ones (a pasted traceback in a third of
   the reports, four comments, a pull request every fifth thread). Prints ms per 1,000 threads.
2. With --snapshot DIR (a folder of thread JSONL files in GitHub's REST shape, served by a fake
   GitHub API given as --fake): `sync --issues` of the GitHub repositories, then `index`, timed as
   the commands a user runs, then the query p50/p95 of the index with the threads in it and of
   the offline answer's resolution lookup, over --queries questions (titles of the threads).

    .venv/bin/python bench/resolution_bench.py [--threads 5000]
    .venv/bin/python bench/resolution_bench.py --snapshot ../shared/data/issues --fake ../shared/tools/fake_github.py --repos-dir /work/repos
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bench._common import percentile  # noqa: E402
from core.issue_store import IssueComment, StoredIssue  # noqa: E402
from core.resolution.extract import extract_repository  # noqa: E402

REPO = "vllm-project/vllm-ascend"
GITHUB_REPOS = ("vllm-project/vllm-ascend", "sgl-project/sglang", "vllm-project/vllm")

_ERRORS = [
    "AttributeError: module 'numpy' has no attribute 'float'",
    "RuntimeError: ACL stream synchronize failed, error code:507014",
    "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB",
    "ImportError: libatb.so: cannot open shared object file: No such file or directory",
    "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens",
]
_FIXES = [
    "Please downgrade: `pip install numpy<2.0` and restart the server.",
    "Fixed by #{pr}, upgrade to v0.9.1rc1 or later.",
    "Set `VLLM_ASCEND_ENABLE_NZ=0` and add --enforce-eager until the fix lands.",
    "Could you share the output of collect_env.py?",
    "Duplicate of #{dup}",
]


def synthetic_threads(n: int, seed: int = 5) -> list[StoredIssue]:
    rng = random.Random(seed)
    out = []
    for number in range(1, n + 1):
        if number % 5 == 0:
            out.append(StoredIssue(REPO, number, f"https://github.com/{REPO}/pull/{number}", f"[Bugfix] fix {number}",
                                   f"Fixes #{number - 1}\n\nWhat this PR does: " + "x " * 200, (), "closed",
                                   "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", None, (), "dev", "pull", True))
            continue
        frames = "\n".join(f'  File "/usr/local/lib/python3.11/site-packages/vllm_ascend/m{i}.py", line {i}, in f{i}' for i in range(40))
        body = f"My server fails on 910B.\n```\nTraceback (most recent call last):\n{frames}\n{rng.choice(_ERRORS)}\n```" if number % 3 == 0 \
            else "Running Qwen3 with tensor parallel 4 gets slow after a while; env attached. " * 8
        comments = (
            IssueComment("someone", "NONE", "same here"),
            IssueComment("maint", "MEMBER", rng.choice(_FIXES).format(pr=number + 1, dup=max(1, number - 7))),
            IssueComment("reporter", "NONE", rng.choice(["works now, thanks", "still failing", "已解决"])),
            IssueComment("other", "CONTRIBUTOR", "+1"),
        )
        out.append(StoredIssue(REPO, number, f"https://github.com/{REPO}/issues/{number}", f"startup fails {number}", body, (),
                               "closed", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", None, comments, "reporter"))
    return out


def bench_extraction(n: int) -> None:
    threads = synthetic_threads(n)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        records = extract_repository(threads)
        best = min(best, time.perf_counter() - started)
    resolved = sum(r.resolved for r in records.values())
    print(f"extraction: {n} threads in {best * 1000:.0f} ms = {best * 1000 / n * 1000:.0f} ms per 1,000 threads "
          f"(best of 3; {resolved} resolved, {sum(bool(r.signatures) for r in records.values())} with a signature)")


def bench_snapshot(snapshot: Path, fake: Path, repos_dir: Path, queries: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="resolution-bench-"))
    server = subprocess.Popen([sys.executable, str(fake), "--data", str(snapshot), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""  # "listening on http://127.0.0.1:PORT (…)"
        url = next((w for w in line.split() if w.startswith("http://")), "")
        if not url:
            raise SystemExit(f"the fake GitHub did not say where it listens: {line!r}")
        env = {**os.environ, "GITHUB_API_URL": url, "DATA_DIR": str(work / "data"), "REPOS_DIR": str(repos_dir), "GITHUB_TOKEN": ""}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot", "sync", "--issues", *GITHUB_REPOS], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        synced = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bot", "index"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        indexed = time.perf_counter() - started
        print(f"sync --issues (3 repositories, re-index of what changed included): {synced:.1f} s; then `index` (cold caches kept): "
              f"{indexed:.1f} s; together {synced + indexed:.1f} s")
        bench_queries(work / "data" / "index", work / "data", queries)
    finally:
        server.terminate()


def bench_queries(index_dir: Path, data_dir: Path, queries: int) -> None:
    from core.index.search import KnowledgeIndex  # noqa: PLC0415
    from core.index.tokenizer import warm_up  # noqa: PLC0415
    from core.issue_store import iter_issues  # noqa: PLC0415
    from core.resolution.answer import find  # noqa: PLC0415
    from core.resolution.focus import focus  # noqa: PLC0415
    from core.resolution.memory import ResolutionMemory  # noqa: PLC0415

    warm_up()
    index = KnowledgeIndex(index_dir)
    memory = ResolutionMemory.from_file(index_dir / "resolutions.json")
    asked = [f"{t.title}\n{t.body[:600]}" for repo in GITHUB_REPOS for t in iter_issues(data_dir, repo)]
    random.Random(3).shuffle(asked)
    asked = asked[:queries]
    search_ms, lookup_ms = [], []
    for question in asked:
        started = time.perf_counter()
        seen = focus(question)
        passages = index.search(seen.query(), (), 5)
        search_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        threads = index.search(seen.query(), (), 3, "issue")
        find(memory, seen, (), threads)
        lookup_ms.append((time.perf_counter() - started) * 1000)
        del passages
    print(f"index query with threads in it ({len(asked)} questions): p50 {percentile(search_ms, 50):.1f} ms, "
          f"p95 {percentile(search_ms, 95):.1f} ms; resolution lookup (issue search + match): "
          f"p50 {percentile(lookup_ms, 50):.1f} ms, p95 {percentile(lookup_ms, 95):.1f} ms")
    manifest = json.loads((index_dir / (index_dir / "CURRENT").read_text().strip() / "manifest.json").read_text())
    print(f"index: {manifest.get('units')} units; memory: {len(memory)} threads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=5000)
    parser.add_argument("--snapshot", type=Path)
    parser.add_argument("--fake", type=Path)
    parser.add_argument("--repos-dir", type=Path, default=Path(os.environ.get("REPOS_DIR", "repos")))
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    bench_extraction(args.threads)
    if args.snapshot is not None:
        if args.fake is None:
            parser.error("--snapshot needs --fake (a fake GitHub API that serves it)")
        bench_snapshot(args.snapshot, args.fake, args.repos_dir, args.queries)


if __name__ == "__main__":
    main()
