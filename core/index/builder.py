"""Build (or refresh) the index from the clones and the downloaded issues.

Incremental: each repository's units are cached under INDEX_DIR/cache keyed by the file's git blob id,
so a rebuild after `sync` chunks and tokenizes only the files whose blob changed. The BM25 matrix is
then recomputed from the cached tokens (seconds) and written as a new generation.
"""
from __future__ import annotations

import fcntl
import itertools
import json
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic_file import write_json_atomically
from core.facts_index import FactDocument, fact_documents
from core.index.chunker import MAX_FILE_BYTES, chunk_file, decode, file_kind, should_index
from core.index.gitfiles import GitListingError, head_commit, read_file, tracked_files
from core.index.issues import IssueUnit, issue_units
from core.index.ranking import DEFAULT_PARAMS, RankingParams, unit_flags
from core.index.store import write_generation
from core.index.tokenizer import tokenize
from core.index.translations import parse_po, source_stem, translations_for

CACHE_FORMAT = 4  # bump when the chunker or the tokenizer changes: cached units are then rebuilt
MAX_TEXT_CHARS = 6000  # what a passage carries; longer units are windows already


@dataclass(frozen=True)
class RepoSource:
    name: str  # canonical owner/name
    clone: Path
    web_base: str  # where permalinks point, e.g. https://github.com/owner/name


@dataclass(frozen=True)
class RepoReport:
    repo: str
    commit: str
    files: int
    units: int
    changed_files: int
    seconds: float
    issues: int = 0
    note: str = ""


@dataclass
class BuildResult:
    generation: str
    reports: list[RepoReport] = field(default_factory=list)
    units: int = 0
    seconds: float = 0.0


class IndexBusy(Exception):
    """Another `index` run holds the lock."""


# A cached unit: [title, start, end, kind, text, body_tokens, title_tokens] (tokens space-joined).
CachedUnit = list[Any]


def unit_url(base: str, commit: str, path: str, start: int, end: int) -> str:
    """A permalink that opens at the lines; GitHub renders Markdown unless asked for the plain view."""
    url = f"{base}/blob/{commit}/{path}"
    if base.startswith("https://github.com/") and path.lower().endswith((".md", ".markdown", ".rst")):
        url += "?plain=1"
    return url + (f"#L{start}" if end <= start else f"#L{start}-L{end}")


def _cache_path(index_dir: Path, repo: str) -> Path:
    return index_dir / "cache" / (repo.replace("/", "+") + ".json")


def load_cache(index_dir: Path, repo: str) -> dict[str, Any]:
    try:
        data = json.loads(_cache_path(index_dir, repo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"files": {}, "issues": {}}
    if data.get("format") != CACHE_FORMAT:
        return {"files": {}, "issues": {}}
    return data


def _save_cache(index_dir: Path, repo: str, data: dict[str, Any]) -> None:
    write_json_atomically(_cache_path(index_dir, repo), {**data, "format": CACHE_FORMAT})


def chunk_units(path: str, text: str, pairs: list[tuple[str, str]] | None) -> list[CachedUnit]:
    units: list[CachedUnit] = []
    for chunk in chunk_file(path, text):
        extra = translations_for(chunk.text, pairs) if pairs else ""
        body = tokenize(chunk.text + ("\n" + extra if extra else ""))
        units.append([chunk.title, chunk.start_line, chunk.end_line, chunk.kind, chunk.text[:MAX_TEXT_CHARS],
                      " ".join(body), " ".join(tokenize(chunk.title))])
    return units


def scan_repository(source: RepoSource, cache: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
    """New cache content for one clone: (cache, files indexed, files re-chunked)."""
    commit = head_commit(source.clone)
    files = tracked_files(source.clone)
    catalogues = {source_stem(f.path): f for f in files if f.path.endswith(".po") and source_stem(f.path)}
    old: dict[str, Any] = cache.get("files", {})
    new: dict[str, Any] = {}
    changed = 0
    for tracked in files:
        if file_kind(tracked.path) is None:
            continue
        catalogue = catalogues.get(tracked.path.rsplit(".", 1)[0]) if file_kind(tracked.path) == "doc" else None
        key = tracked.blob + (":" + catalogue.blob if catalogue else "")
        previous = old.get(tracked.path)
        if previous is not None and previous["key"] == key:
            new[tracked.path] = previous
            continue
        data = read_file(source.clone, tracked.path, MAX_FILE_BYTES)
        if data is None or not should_index(tracked.path, len(data)):
            continue
        text = decode(data)
        if text is None:
            continue
        pairs = None
        if catalogue is not None:
            po = read_file(source.clone, catalogue.path, MAX_FILE_BYTES * 4)
            pairs = parse_po(po.decode("utf-8", errors="replace")) if po else None
        changed += 1
        new[tracked.path] = {"key": key, "units": chunk_units(tracked.path, text, pairs)}
    return {"commit": commit, "files": new, "issues": cache.get("issues", {})}, len(new), changed


def scan_issues(issues: Iterable[IssueUnit], cache: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """New cache content with the issues; and how many were (re)tokenized."""
    old: dict[str, Any] = cache.get("issues", {})
    new: dict[str, Any] = {}
    changed = 0
    for issue in issues:
        key = str(issue.number)
        previous = old.get(key)
        if previous is not None and previous["key"] == issue.version:
            new[key] = previous
            continue
        changed += 1
        body = tokenize(issue.text)
        new[key] = {"key": issue.version, "url": issue.url, "path": issue.path or f"issues/{issue.number}",
                    "units": [[issue.title, 1, issue.text.count("\n") + 1, "issue",
                    issue.text[:MAX_TEXT_CHARS], " ".join(body), " ".join(tokenize(issue.title))]]}
    return {**cache, "issues": new}, changed


def build_index(
    index_dir: Path,
    sources: Sequence[RepoSource],
    *,
    rescan: set[str] | None = None,
    data_dir: Path | None = None,
    params: RankingParams = DEFAULT_PARAMS,
    progress: Callable[[RepoReport], None] | None = None,
    maintainers: Callable[[str], tuple[str, ...]] = lambda _repo: (),
    facts: Sequence[FactDocument] | None = None,
) -> BuildResult:
    """Scan the clones named in `rescan` (None: all), reuse the cache for the rest, write a generation.

    `facts`: knowledge-base documents written as units of their products (None: every product fact
    and problem pattern of core/knowledge, core/facts_index.py), under `kb/<product>/<id>`."""
    started = time.monotonic()
    index_dir.mkdir(parents=True, exist_ok=True)
    with open(index_dir / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise IndexBusy(f"another `index` run is writing {index_dir}") from exc
        reports: list[RepoReport] = []
        caches: dict[str, dict[str, Any]] = {}
        bases = {s.name: s.web_base for s in sources}
        for source in sources:
            t0 = time.monotonic()
            cache = load_cache(index_dir, source.name)
            note = ""
            files = changed = 0
            if rescan is None or source.name in rescan:
                before = (cache.get("commit"), sorted(cache.get("files", {})), sorted(cache.get("issues", {})))
                if (source.clone / ".git").exists() or (source.clone / "HEAD").exists():
                    try:
                        cache, files, changed = scan_repository(source, cache)
                    except GitListingError as exc:
                        note = str(exc)
                else:
                    note = "no clone"
                if data_dir is not None:
                    cache, issues_changed = scan_issues(issue_units(data_dir, source.name, maintainers(source.name)), cache)
                else:
                    issues_changed = 0
                after = (cache.get("commit"), sorted(cache.get("files", {})), sorted(cache.get("issues", {})))
                if changed or issues_changed or before != after or not _cache_path(index_dir, source.name).exists():
                    _save_cache(index_dir, source.name, cache)
            else:
                files = len(cache.get("files", {}))
                note = "kept"
            caches[source.name] = cache
            units = sum(len(f["units"]) for f in cache.get("files", {}).values())
            report = RepoReport(source.name, cache.get("commit", ""), files, units, changed, time.monotonic() - t0,
                                len(cache.get("issues", {})), note)
            reports.append(report)
            if progress is not None:
                progress(report)
        documents = fact_documents() if facts is None else tuple(facts)
        generation, total = write_units(index_dir, caches, bases, params, reports, documents)
    return BuildResult(generation, reports, total, time.monotonic() - started)


def write_units(index_dir: Path, caches: dict[str, dict[str, Any]], bases: dict[str, str], params: RankingParams,
           reports: list[RepoReport], facts: Sequence[FactDocument] = ()) -> tuple[str, int]:
    repo_names = sorted(caches)
    # token -> id without a Python-level branch per token (a C-level map over every token)
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    ids = array("i")
    lengths = array("i")
    unit_repo = array("h")
    unit_file = array("i")
    flags = array("B")
    metas: list[str] = []
    texts: list[str] = []
    file_no = 0

    def add(repo_id: int, path: str, url: str, unit: CachedUnit, path_tokens: list[str]) -> None:
        title, start, end, kind, text, body, title_tokens = unit
        tokens = body.split() + title_tokens.split() * params.title_repeat + path_tokens * params.path_repeat
        ids.extend(map(vocab.__getitem__, tokens))
        lengths.append(len(tokens))
        unit_repo.append(repo_id)
        unit_file.append(file_no)
        flags.append(unit_flags(path, kind))
        metas.append(encode_meta(path, title, kind, start, end, url))
        texts.append(text)

    for repo_id, repo in enumerate(repo_names):
        cache = caches[repo]
        commit = cache.get("commit", "")
        base = bases.get(repo, "")
        for path, entry in sorted(cache.get("files", {}).items()):
            path_tokens = tokenize(path.replace("/", " "))
            for unit in entry["units"]:
                add(repo_id, path, unit_url(base, commit, path, unit[1], unit[2]), unit, path_tokens)
            file_no += 1
        for number, entry in sorted(cache.get("issues", {}).items(), key=lambda kv: int(kv[0])):
            for unit in entry["units"]:
                add(repo_id, entry.get("path", f"issues/{number}"), entry["url"], unit, [])
            file_no += 1

    for document in facts:  # the knowledge base's facts, searchable like passages
        for product in document.products:
            if product not in repo_names:
                continue
            text = document.text
            unit = [document.title, 1, text.count("\n") + 1, "doc", text, " ".join(tokenize(text)),
                    " ".join(tokenize(document.title_en + "\n" + document.title_zh))]
            add(repo_names.index(product), document.path(product), document.citation.url, unit, [])
            file_no += 1

    n_units = len(lengths)
    length_arr = np.frombuffer(lengths, dtype=np.int32) if n_units else np.zeros(0, dtype=np.int32)
    token_ids = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, dtype=np.int32)
    doc_of = np.repeat(np.arange(n_units, dtype=np.int64), length_arr)
    # (term, unit) pairs with their counts, sorted by term then unit: one sort of int64 keys
    keys, tfs = np.unique(token_ids.astype(np.int64) * max(n_units, 1) + doc_of, return_counts=True)
    terms = (keys // max(n_units, 1)).astype(np.int32)
    docs = (keys % max(n_units, 1)).astype(np.int32)
    arrays = _bm25(terms, docs, tfs.astype(np.float32), length_arr, len(vocab), params)
    arrays.update(
        unit_repo=np.frombuffer(unit_repo, dtype=np.int16).copy() if n_units else np.zeros(0, np.int16),
        unit_file=np.frombuffer(unit_file, dtype=np.int32).copy() if n_units else np.zeros(0, np.int32),
        unit_flags=np.frombuffer(flags, dtype=np.uint8).copy() if n_units else np.zeros(0, np.uint8),
    )
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    manifest = {
        "created_at": now,
        "repo_names": repo_names,
        "repos": {r.repo: {"commit": r.commit, "files": r.files, "units": r.units, "issues": r.issues} for r in reports},
        "units": n_units,
        "params": {"k1": params.k1, "b": params.b, "title_repeat": params.title_repeat, "path_repeat": params.path_repeat},
    }
    return write_generation(index_dir, manifest, arrays, dict(vocab), metas, texts), n_units


_SEP = "\x1f"  # ASCII unit separator: never part of a path, a heading or a URL


def encode_meta(path: str, title: str, kind: str, start: int, end: int, url: str) -> str:
    return _SEP.join((path.replace(_SEP, " "), title.replace(_SEP, " "), kind, str(start), str(end), url.replace(_SEP, " ")))


def decode_meta(raw: str) -> tuple[str, str, str, int, int, str]:
    path, title, kind, start, end, url = raw.split(_SEP)
    return path, title, kind, int(start), int(end), url


def _bm25(terms: np.ndarray, docs: np.ndarray, tfs: np.ndarray, lengths: np.ndarray, vocab_size: int,
          params: RankingParams) -> dict[str, np.ndarray]:
    """Per (term, unit) BM25 weights, stored by term (CSC): a query sums a few columns."""
    n = max(len(lengths), 1)
    df = np.bincount(terms, minlength=vocab_size).astype(np.float64) if len(terms) else np.zeros(vocab_size)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
    avgdl = float(lengths.mean()) if len(lengths) else 1.0
    norm = params.k1 * (1 - params.b + params.b * lengths[docs] / avgdl)
    weights = (idf[terms] * tfs * (params.k1 + 1) / (tfs + norm)).astype(np.float32)
    order = np.argsort(terms, kind="stable")  # already sorted when called from _write: a cheap pass
    ptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(df.astype(np.int64), out=ptr[1:])
    return {"idf": idf, "ptr": ptr, "docs": docs[order].astype(np.int32), "weights": weights[order]}
