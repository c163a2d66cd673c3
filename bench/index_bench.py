"""Knowledge index vs a plain BM25 baseline, measured in the same run on the same machine.

Builds the index for vllm-ascend and the five verylucky01 MindIE/ModelSlim clones under REPOS_DIR
(default /work/repos) into a temporary INDEX_DIR, then prints: build seconds, query p50/p99, index
load time in a fresh process, resident memory added per worker, and recall@1/5/10 on
eval/index_dev.jsonl (overall, per language, cross-language), side by side with the baseline of
docs/index.md (60-line windows with the path prepended, bm25s, restricted to the expected repos).

    .venv/bin/python bench/index_bench.py [--repos-dir /work/repos] [--index-dir DIR] [--no-build]
        [--skip-baseline] [--compare-libs] [--ablations] [--misses]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import percentile  # noqa: E402
from core.index.builder import RepoSource, build_index  # noqa: E402
from core.index.gitfiles import read_file, tracked_files  # noqa: E402
from core.index.search import KnowledgeIndex  # noqa: E402

BENCH_REPOS = (
    ("vllm-project/vllm-ascend", "https://github.com/vllm-project/vllm-ascend"),
    ("verylucky01/MindIE-LLM", "https://gitcode.com/Ascend/MindIE-LLM"),
    ("verylucky01/MindIE-SD", "https://gitcode.com/Ascend/MindIE-SD"),
    ("verylucky01/MindIE-Motor", "https://gitcode.com/Ascend/MindIE-Motor"),
    ("verylucky01/MindIE-PyMotor", "https://gitcode.com/Ascend/MindIE-PyMotor"),
    ("verylucky01/MindStudio-ModelSlim", "https://gitcode.com/Ascend/msmodelslim"),
)

Search = Callable[[str, Sequence[str], int], list[tuple[str, str]]]  # -> [(repo, path)] distinct, best first


def load_dev(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row["files"] = {tuple(e.split(":", 1)) for e in row["evidence"] if not e.startswith("http") and ":" in e}
    return rows


def evaluate(search: Search, rows: list[dict], misses: bool = False, label: str = "") -> dict[str, dict[str, float]]:
    buckets: dict[str, list[list[bool]]] = defaultdict(list)
    latencies: list[float] = []
    for row in rows:
        if not row["files"]:
            continue  # URL-only evidence (repos that are not cloned): reported apart
        started = time.perf_counter()
        found = search(row["question"], row.get("expected_repos", []), 10)
        latencies.append((time.perf_counter() - started) * 1000)
        hits = [any((r, p) in row["files"] for r, p in found[:k]) for k in (1, 5, 10)]
        keys = ["all", f"lang={row.get('lang')}", "cross-language" if row.get("cross_language") else "same-language"]
        keys.append(f"cat={row.get('category')}")
        for key in keys:
            buckets[key].append(hits)
        if misses and not hits[1]:
            print(f"  MISS[{label}] {row['id']}: {row['question'][:90]}\n     want {sorted(row['files'])}\n     got  {found[:5]}")
    out = {k: {"n": len(v), "r1": sum(h[0] for h in v) / len(v), "r5": sum(h[1] for h in v) / len(v),
               "r10": sum(h[2] for h in v) / len(v)} for k, v in buckets.items()}
    out["_latency"] = {"p50": percentile(latencies, 50), "p99": percentile(latencies, 99), "n": len(latencies)}
    return out


# --- the baseline ----------------------------------------------------------------------------

_BASE_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*|[\u4e00-\u9fff]+")


def baseline_tokens(text: str) -> list[str]:
    from core.index.tokenizer import _jieba  # noqa: PLC0415 - the same jieba, loaded once

    out: list[str] = []
    for match in _BASE_WORD.finditer(text):
        piece = match.group(0)
        if "\u4e00" <= piece[0] <= "\u9fff":
            out += [w for w in _jieba().lcut_for_search(piece, HMM=False) if w.strip()]
        else:
            out.append(piece.lower().strip(".-"))
    return out


def build_baseline(sources: list[RepoSource]):  # type: ignore[no-untyped-def]
    import bm25s  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    started = time.perf_counter()
    docs: list[list[str]] = []
    owners: list[tuple[str, str]] = []
    for source in sources:
        for tracked in tracked_files(source.clone):
            data = read_file(source.clone, tracked.path, 1_000_000)
            if data is None or b"\0" in data[:8000]:
                continue
            lines = data.decode("utf-8", errors="replace").splitlines()
            for start in range(0, max(len(lines), 1), 60):
                docs.append(baseline_tokens(tracked.path + "\n" + "\n".join(lines[start : start + 60])))
                owners.append((source.name, tracked.path))
    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    repo_of = np.array([o[0] for o in owners])
    seconds = time.perf_counter() - started

    def search(question: str, repos: Sequence[str], k: int) -> list[tuple[str, str]]:
        tokens = [t for t in baseline_tokens(question) if t in retriever.vocab_dict] or [""]
        mask = np.isin(repo_of, list(repos)).astype(np.float32) if repos else None
        scores = retriever.get_scores(tokens, weight_mask=mask)
        best = np.argsort(-scores)[:200]
        seen: list[tuple[str, str]] = []
        for i in best:
            if scores[i] <= 0:
                break
            if owners[i] not in seen:
                seen.append(owners[i])
            if len(seen) >= k:
                break
        return seen

    return search, seconds, len(docs)


# --- worker start: load time and memory, in a fresh process ----------------------------------

_PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
def status():
    out = {}
    for line in open('/proc/self/status'):
        key, _, value = line.partition(':')
        if key in ('VmRSS', 'RssAnon', 'RssFile'):
            out[key] = int(value.split()[0]) / 1024
    return out
import numpy  # the interpreter and numpy are there before the index (every worker has them)
before = status()
t0 = time.perf_counter()
from core.index.search import KnowledgeIndex
from core.index.tokenizer import warm_up
index = KnowledgeIndex(__import__('pathlib').Path(sys.argv[2]))
load = time.perf_counter() - t0
t1 = time.perf_counter()
warm_up()
jieba_s = time.perf_counter() - t1
for q in json.loads(sys.argv[3]):
    index.search(q, (), 10)
after = status()
print(json.dumps({"load_s": load, "jieba_s": jieba_s, "before": before, "after": after}))
"""


def probe_worker(index_dir: Path, questions: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT), str(index_dir), json.dumps(questions)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- library comparison on the same units and tokens -----------------------------------------

def compare_libraries(index_dir: Path, rows: list[dict]) -> None:
    """Plain BM25 over the index's own units and tokens: own numpy CSC vs bm25s vs SQLite FTS5."""
    import sqlite3  # noqa: PLC0415

    import bm25s  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from core.index.builder import load_cache  # noqa: PLC0415
    from core.index.tokenizer import tokenize  # noqa: PLC0415

    docs: list[list[str]] = []
    owners: list[tuple[str, str]] = []
    for name, _ in BENCH_REPOS:
        cache = load_cache(index_dir, name)
        for path, entry in cache.get("files", {}).items():
            for unit in entry["units"]:
                docs.append(unit[5].split() + unit[6].split() * 3 + tokenize(path.replace("/", " ")) * 2)
                owners.append((name, path))
    repo_of = np.array([o[0] for o in owners])

    def distinct(order: Sequence[int], k: int, ok: Callable[[int], bool]) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for i in order:
            if ok(i) and owners[i] not in seen:
                seen.append(owners[i])
            if len(seen) >= k:
                break
        return seen

    results = []
    # bm25s
    t0 = time.perf_counter()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(docs, show_progress=False)
    build = time.perf_counter() - t0

    def s_bm25s(q: str, repos: Sequence[str], k: int) -> list[tuple[str, str]]:
        tokens = [t for t in tokenize(q) if t in retriever.vocab_dict] or [""]
        mask = np.isin(repo_of, list(repos)).astype(np.float32) if repos else None
        scores = retriever.get_scores(tokens, weight_mask=mask)
        return distinct(np.argsort(-scores)[:300], k, lambda i: scores[i] > 0)

    results.append(("bm25s 0.3 (numpy backend)", build, evaluate(s_bm25s, rows)))
    # own CSC over numpy: the builder's code path
    from core.index.builder import _bm25  # noqa: PLC0415
    from core.index.ranking import DEFAULT_PARAMS  # noqa: PLC0415

    t0 = time.perf_counter()
    vocab: dict[str, int] = {}
    terms, dids, tfs, lengths = [], [], [], []
    from collections import Counter  # noqa: PLC0415

    for d, tokens in enumerate(docs):
        for token, tf in Counter(tokens).items():
            terms.append(vocab.setdefault(token, len(vocab)))
            dids.append(d)
            tfs.append(tf)
        lengths.append(len(tokens))
    arrays = _bm25(np.array(terms, dtype=np.int32), np.array(dids, dtype=np.int32), np.array(tfs, dtype=np.float32),
                   np.array(lengths, dtype=np.int32), len(vocab), DEFAULT_PARAMS)
    build = time.perf_counter() - t0

    def s_own(q: str, repos: Sequence[str], k: int) -> list[tuple[str, str]]:
        scores = np.zeros(len(docs), dtype=np.float32)
        for token in set(tokenize(q)):
            t = vocab.get(token)
            if t is not None:
                a, b = arrays["ptr"][t], arrays["ptr"][t + 1]
                scores[arrays["docs"][a:b]] += arrays["weights"][a:b]
        if repos:
            scores *= np.isin(repo_of, list(repos))
        return distinct(np.argsort(-scores)[:300], k, lambda i: scores[i] > 0)

    results.append(("own CSC over numpy (chosen)", build, evaluate(s_own, rows)))
    # SQLite FTS5: tokens pre-joined, whitespace tokenizer keeps them as they are
    t0 = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE u USING fts5(body, repo UNINDEXED, tokenize=\"unicode61 tokenchars '-_.'\")")
    db.executemany("INSERT INTO u(rowid, body, repo) VALUES (?, ?, ?)", ((i, " ".join(d), owners[i][0]) for i, d in enumerate(docs)))
    db.commit()
    build = time.perf_counter() - t0

    def s_fts(q: str, repos: Sequence[str], k: int) -> list[tuple[str, str]]:
        tokens = [t.replace('"', "") for t in set(tokenize(q)) if t]
        if not tokens:
            return []
        match = " OR ".join(f'"{t}"' for t in tokens)
        where = f" AND repo IN ({','.join('?' * len(repos))})" if repos else ""
        rows_ = db.execute(f"SELECT rowid FROM u WHERE u MATCH ?{where} ORDER BY bm25(u) LIMIT 300", (match, *repos)).fetchall()
        return distinct([r[0] for r in rows_], k, lambda i: True)

    results.append(("SQLite FTS5 (bm25())", build, evaluate(s_fts, rows)))
    print("\nLibrary comparison (plain BM25 on the index's units and tokens, no boosts/priors):")
    print(f"{'library':32} {'build s':>8} {'p50 ms':>7} {'p99 ms':>7} {'R@1':>5} {'R@5':>5} {'R@10':>5}")
    for name, build, m in results:
        a, lat = m["all"], m["_latency"]
        print(f"{name:32} {build:8.1f} {lat['p50']:7.1f} {lat['p99']:7.1f} {a['r1']:5.2f} {a['r5']:5.2f} {a['r10']:5.2f}")


def ablations(index_dir: Path, rows: list[dict]) -> None:
    """Query-time variants of the ranking on the same index: what each part is worth."""
    from dataclasses import replace  # noqa: PLC0415

    from core.index.ranking import DEFAULT_PARAMS as P  # noqa: PLC0415

    variants = {
        "full ranking (default)": P,
        "no bilingual bridge": replace(P, bridge_weight=0.0),
        "no exact-name boost": replace(P, exact_boost=0.0),
        "exact names weighted 3x in the query": replace(P, strong_weight=3.0),
        "no question-type/path priors": replace(P, faq_prior_error=1, env_prior_setting=1, code_prior_where=1,
                                                doc_prior=1, test_prior=1, release_prior=1),
        "no repository restriction": None,
    }
    print("\nAblations (same index, query-time changes):")
    print(f"{'variant':40} {'R@1':>5} {'R@5':>5} {'R@10':>5} {'xlang R@5':>9}")
    for name, params in variants.items():
        index = KnowledgeIndex(index_dir, params=params or P)

        def search(q: str, repos: Sequence[str], k: int, index: KnowledgeIndex = index, all_: bool = params is None) -> list[tuple[str, str]]:
            return [(p.repo, p.path) for p in index.search(q, () if all_ else repos, k)]

        m = evaluate(search, rows)
        a, x = m["all"], m["cross-language"]
        print(f"{name:40} {a['r1']:5.2f} {a['r5']:5.2f} {a['r10']:5.2f} {x['r5']:9.2f}")


def print_recall(title: str, metrics: dict[str, dict[str, float]]) -> None:
    print(f"\n{title}")
    for key in sorted(k for k in metrics if not k.startswith("_")):
        m = metrics[key]
        print(f"  {key:24} n={int(m['n']):3}  R@1 {m['r1']:.2f}  R@5 {m['r5']:.2f}  R@10 {m['r10']:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repos-dir", type=Path, default=Path(os.environ.get("REPOS_DIR", "/work/repos")))
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--dev", type=Path, default=ROOT / "eval" / "index_dev.jsonl")
    parser.add_argument("--no-build", action="store_true", help="measure an existing --index-dir")
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--compare-libs", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print the questions missed at 5")
    parser.add_argument("--ablations", action="store_true", help="recall of query-time ranking variants")
    args = parser.parse_args()

    index_dir = args.index_dir or Path(tempfile.mkdtemp(prefix="index-bench-"))
    sources = [RepoSource(name, args.repos_dir / name, base) for name, base in BENCH_REPOS if (args.repos_dir / name).exists()]
    rows = load_dev(args.dev)
    print(f"repos: {len(sources)} under {args.repos_dir}; dev questions: {len(rows)} "
          f"({sum(1 for r in rows if r['files'])} with file evidence); cpus: {os.cpu_count()}")
    if not args.no_build:
        result = build_index(index_dir, sources)
        print(f"index build (cold, empty cache): {result.seconds:.1f} s, {result.units} units")
        for report in result.reports:
            print(f"  {report.repo:34} {report.commit[:12]} files {report.files:5} units {report.units:6} {report.seconds:5.1f} s")
        again = build_index(index_dir, sources)
        print(f"index rebuild, nothing changed (warm cache): {again.seconds:.1f} s")
    index = KnowledgeIndex(index_dir)

    def ours(question: str, repos: Sequence[str], k: int) -> list[tuple[str, str]]:
        return [(p.repo, p.path) for p in index.search(question, repos, k)]

    ours_m = evaluate(ours, rows, args.misses, "index")
    evaluate(ours, rows)  # warm pass; the figures below are from a second pass
    ours_m2 = evaluate(ours, rows)
    ours_m["_latency"] = ours_m2["_latency"]
    probe = probe_worker(index_dir, [r["question"] for r in rows[:50]])
    if not args.skip_baseline:
        base_search, base_build, base_docs = build_baseline(sources)
        base_m = evaluate(base_search, rows, args.misses, "baseline")
        print(f"baseline build: {base_build:.1f} s ({base_docs} windows)")
    print_recall("knowledge index", ours_m)
    if not args.skip_baseline:
        print_recall("plain BM25 baseline (60-line windows + path, bm25s)", base_m)
    lat = ours_m["_latency"]
    print(f"\nquery latency (index, {lat['n']} dev questions, warm): p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms")
    if not args.skip_baseline:
        print(f"query latency (baseline): p50 {base_m['_latency']['p50']:.1f} ms, p99 {base_m['_latency']['p99']:.1f} ms")
    before, after = probe["before"], probe["after"]
    print(f"worker start: index load {probe['load_s']:.2f} s (+ jieba dictionary {probe['jieba_s']:.2f} s, loaded in a "
          f"background thread by the worker); memory added after 50 queries: "
          f"RSS {after['VmRSS'] - before['VmRSS']:.0f} MB (private {after['RssAnon'] - before['RssAnon']:.0f} MB, "
          f"shared file pages {after['RssFile'] - before['RssFile']:.0f} MB)")
    if args.ablations:
        ablations(index_dir, rows)
    if args.compare_libs:
        compare_libraries(index_dir, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
