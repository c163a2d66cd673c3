"""The cost of reading at a release tag (issue 23 item 3), on a real clone.

1. sync: a shallow clone (depth 1, no tags) of the clone through file://, then the newest N
   release tags fetched at depth 1 the way `sync` does (core/releases/fetch.py): seconds and MB.
2. release indexes (core/releases/index.py): each tag's index built on first use, units shared
   by (path, blob) with main's cache and earlier tags: seconds, files chunked, MB on disk; beside
   it what indexing every tag like main would chunk.
3. queries: p50/p95 of the dev questions about the repository through the retriever pinned to a
   tag, and unpinned (main), and of search_code / read_file at the tag and at HEAD.
4. what the release means for a question (core/releases/news.py: release notes ranked, names
   traced through every tag): the first call (parse and index the notes, read the names at all
   tags) and p50/p95 of the release_dev questions after it, pinned and unpinned; and deriving the
   knowledge base's release ranges from the clone (core/releases/ranges.py). `--only news` runs
   just this part.

    REPOS_DIR=repos INDEX_DIR=data/index .venv/bin/python bench/release_bench.py \
        [--repo vllm-project/vllm-ascend] [--tags v0.9.1,v0.13.0,v0.23.0] [--sync-tags 5,42]

INDEX_DIR is only read (its main index and unit cache): the release indexes are written to a
temporary directory that links to it, so the benchmark never changes a live index.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import percentile  # noqa: E402
from core.index.search import KnowledgeIndex  # noqa: E402
from core.releases.fetch import fetch_release_tags  # noqa: E402
from core.releases.index import ReleaseAwareRetriever, ReleaseIndexes, tree_files  # noqa: E402
from core.releases.pinning import ReleasePinner, reading_at  # noqa: E402
from core.releases.tags import ReleaseChoice, tag_commit  # noqa: E402
from core.research.git import GitError, run_git  # noqa: E402
from core.research.repos import find_repo, web_base  # noqa: E402
from core.research.tools.code import LocalRepos, ReadFile, SearchCode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IDENTIFIERS = ("ASCEND_RT_VISIBLE_DEVICES", "enable_graph_mode", "max_model_len", "VLLM_ASCEND_ENABLE_NZ", "torchair",
               "additional_config", "HCCL_BUFFSIZE", "enforce_eager", "npu_fusion_attention", "kv_transfer_config")
READ_PATHS = ("vllm_ascend/envs.py", "vllm_ascend/platform.py", "vllm_ascend/ascend_config.py", "README.md", "setup.py")


def _mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


async def _git_run(args: list[str], cwd: Path, timeout: float) -> None:
    result = await run_git(args, cwd, timeout)
    if not result.ok:
        raise GitError(result.stderr.decode(errors="replace")[-300:])


async def _git_read(args: list[str], cwd: Path, timeout: float) -> bytes:
    result = await run_git(args, cwd, timeout)
    if not result.ok:
        raise GitError(result.stderr.decode(errors="replace")[-300:])
    return result.stdout


def bench_sync(clone: Path, counts: list[int], work: Path) -> list[dict[str, object]]:
    rows = []
    for keep in counts:
        target = work / f"shallow-{keep}"
        shutil.rmtree(target, ignore_errors=True)
        t0 = time.monotonic()
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--single-branch", "--no-tags", clone.resolve().as_uri(),
                        str(target)], check=True)
        cloned = time.monotonic() - t0
        size = _mb(target / ".git")
        t1 = time.monotonic()
        fetched = asyncio.run(fetch_release_tags(target, keep, 900, _git_run, _git_read))
        rows.append({"tags": len(fetched), "clone_s": round(cloned, 1), "clone_mb": round(size, 1),
                     "tags_s": round(time.monotonic() - t1, 1), "tags_mb": round(_mb(target / ".git") - size, 1)})
        shutil.rmtree(target, ignore_errors=True)
    return rows


def _dev_questions(repo: str) -> list[str]:
    out = []
    for line in (ROOT / "eval" / "index_dev.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if repo in item.get("expected_repos", []):
            out.append(item["question"])
    return out


def _timed(fn, runs: int = 1) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times


async def _tool_times(tool, args_list) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for args in args_list:
        t0 = time.perf_counter()
        await tool.run(tool.Args.model_validate(args))
        times.append((time.perf_counter() - t0) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="vllm-project/vllm-ascend")
    parser.add_argument("--tags", default="v0.9.1,v0.13.0,v0.18.0,v0.23.0")
    parser.add_argument("--sync-tags", default="5,100", help="release tag counts to fetch in the sync measurement")
    parser.add_argument("--only", choices=("all", "news"), default="all")
    args = parser.parse_args()
    repos_dir = Path(os.environ.get("REPOS_DIR", "repos"))
    main_index = Path(os.environ.get("INDEX_DIR", "data/index"))
    info = find_repo(args.repo)
    assert info is not None, "not an allowlisted repository"
    pinner = ReleasePinner(repos_dir)
    clone = pinner.clone(args.repo)
    if clone is None:
        print(f"no clone of {args.repo} under {repos_dir}")
        return 2
    if args.only == "news":
        bench_news(clone, args.repo, [t for t in args.tags.split(",") if tag_commit(clone, t)])
        return 0
    work = Path(tempfile.mkdtemp(prefix="release-bench-"))
    try:
        print("sync (shallow clone, then the newest N release tags at depth 1):")
        for row in bench_sync(clone, [int(n) for n in args.sync_tags.split(",")], work):
            print(f"  clone {row['clone_s']} s / {row['clone_mb']} MB; {row['tags']} tags +{row['tags_s']} s / +{row['tags_mb']} MB")

        index_dir = work / "index"
        index_dir.mkdir()
        for entry in main_index.iterdir():  # main's generation and unit cache, read-only
            (index_dir / entry.name).symlink_to(entry.resolve())
        releases = ReleaseIndexes(index_dir, pinner, lambda r, c: web_base(info, {}, c), kept=100)
        tags = [t for t in args.tags.split(",") if tag_commit(clone, t)]
        print("\nrelease indexes, built on first use (units shared by path+blob with main and earlier tags):")
        total_files = 0
        for tag in tags:
            before = releases.on_disk()
            build = releases.build(args.repo, tag, tag_commit(clone, tag))
            total_files += build.files
            print(f"  {tag}: {build.seconds:.1f} s, {build.files} files ({build.chunked} chunked now), {build.units} units, "
                  f"+{(releases.on_disk() - before) / 1e6:.1f} MB")
        every = sum(1 for t in subprocess.run(["git", "-C", str(clone), "tag"], capture_output=True, text=True).stdout.split()
                    if tag_commit(clone, t))
        print(f"  on disk: {releases.on_disk() / 1e6:.1f} MB for {len(tags)} tags; shared units file "
              f"{(releases.root / args.repo.replace('/', '+') / 'units.json').stat().st_size / 1e6:.1f} MB")
        head_files = len(tree_files(clone, "HEAD"))
        print(f"  indexing all {every} tags like main would chunk about {every} x {head_files // 2}-{head_files} files; "
              f"these {len(tags)} tags hold {total_files} files")

        main = KnowledgeIndex(main_index)
        retriever = ReleaseAwareRetriever(main, releases)
        questions = _dev_questions(args.repo)
        print(f"\nquery latency, {len(questions)} dev questions about {args.repo} (ms, p50 / p95):")
        plain = [t for q in questions for t in _timed(lambda q=q: retriever.search(q, [args.repo], 3))]
        print(f"  main (no pin): {percentile(plain, 50):.1f} / {percentile(plain, 95):.1f}")
        for tag in tags:
            choice = ReleaseChoice(args.repo, tag.lstrip("v"), tag, tag_commit(clone, tag))
            with reading_at({args.repo: choice}):
                retriever.search("warm up", [args.repo], 3)
                pinned = [t for q in questions for t in _timed(lambda q=q: retriever.search(q, [args.repo], 3))]
            print(f"  pinned to {tag}: {percentile(pinned, 50):.1f} / {percentile(pinned, 95):.1f}")

        local = LocalRepos(repos_dir, {})
        search, read = SearchCode(local, 0, 30), ReadFile(local, 0, 30)
        print("\nsearch_code / read_file (ms, p50 / p95):")
        for label, pin in [("HEAD", None), *[(t, t) for t in tags[:2]]]:
            pins = {} if pin is None else {args.repo: ReleaseChoice(args.repo, pin.lstrip("v"), pin, tag_commit(clone, pin))}

            async def run() -> tuple[list[float], list[float]]:
                with reading_at(pins):
                    s = await _tool_times(search, [{"repo": args.repo, "query": q} for q in IDENTIFIERS])
                    r = await _tool_times(read, [{"repo": args.repo, "path": p} for p in READ_PATHS])
                return s, r

            s_times, r_times = asyncio.run(run())
            print(f"  at {label}: search_code {percentile(s_times, 50):.0f} / {percentile(s_times, 95):.0f}, "
                  f"read_file {percentile(r_times, 50):.0f} / {percentile(r_times, 95):.0f}")
        bench_news(clone, args.repo, tags)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def bench_news(clone: Path, repo: str, tags: list[str]) -> None:
    from core.releases.news import release_news  # noqa: PLC0415 - only this part needs it
    from core.releases.ranges import derive  # noqa: PLC0415

    questions = [(json.loads(line)["question"], json.loads(line)["lang"])
                 for line in (ROOT / "eval" / "release_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    print(f"\nwhat the release means for a question, {len(questions)} release_dev questions (ms):")
    choice = ReleaseChoice(repo, tags[0].lstrip("v"), tags[0], tag_commit(clone, tags[0])) if tags else None
    first = _timed(lambda: release_news(clone, choice, questions[0][0], questions[0][1], repo))
    print(f"  first call (notes parsed and indexed, names read at every tag): {first[0]:.0f}")
    for tag in tags:
        pinned = ReleaseChoice(repo, tag.lstrip("v"), tag, tag_commit(clone, tag))
        times = [t for q, lang in questions for t in _timed(lambda q=q, lang=lang: release_news(clone, pinned, q, lang, repo))]
        print(f"  pinned to {tag}: p50 {percentile(times, 50):.0f} / p95 {percentile(times, 95):.0f}")
    unpinned = [t for q, lang in questions for t in _timed(lambda q=q, lang=lang: release_news(clone, None, q, lang, repo))]
    print(f"  release unknown: p50 {percentile(unpinned, 50):.0f} / p95 {percentile(unpinned, 95):.0f}")
    started = time.perf_counter()
    derived = derive(clone, ROOT / "core" / "knowledge")
    print(f"  knowledge-base release ranges derived from the clone: {time.perf_counter() - started:.1f} s, {len(derived)} ranged items")


if __name__ == "__main__":
    raise SystemExit(main())
