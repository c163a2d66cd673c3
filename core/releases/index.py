"""A small knowledge index per release tag, built on first use, from units shared by blob.

Indexing every tag like main would cost a full build per tag (vllm-ascend: 42 tags). Most files do
not change between releases, so units are shared by (path, blob): the main index's cache
(INDEX_DIR/cache) already holds the units of every file main has, and INDEX_DIR/releases/<repo>/
units.json holds those of the blobs only older releases have. A tag's index is then the tag's
path → blob list (`git ls-tree`), the units of the few blobs not seen before (chunked once, read
with one `git cat-file --batch`), and the BM25 arrays written as a generation under
INDEX_DIR/releases/<repo>/<tag>/ - the same format the main index uses, opened the same way.
At most RELEASE_INDEXES_KEPT tag indexes are kept per repository (the least recently used go).
Costs are measured by bench/release_bench.py and stated in docs/index.md.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.atomic_file import write_json_atomically
from core.facts_index import fact_documents
from core.index.builder import CACHE_FORMAT, RepoReport, chunk_units, load_cache, write_units
from core.index.chunker import decode, file_kind, should_index
from core.index.passage import Passage, PassageKind
from core.index.ranking import DEFAULT_PARAMS, RankingParams
from core.index.search import KnowledgeIndex
from core.index.store import current_generation
from core.index.translations import parse_po, source_stem
from core.releases.pinning import ReleasePinner, current_pins

log = logging.getLogger(__name__)

_REGULAR = {b"100644", b"100755"}


@dataclass(frozen=True)
class TagBuild:
    repo: str
    tag: str
    commit: str
    files: int
    units: int
    chunked: int  # files whose units were made now (not shared with main or an earlier release)
    seconds: float


@dataclass(frozen=True)
class _Entry:
    path: str
    blob: str
    size: int


def _git(clone: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-C", str(clone), *args], input=stdin, capture_output=True, timeout=300, check=False)
    if done.returncode != 0:
        raise OSError(f"git {args[0]}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout


def tree_files(clone: Path, commit: str) -> list[_Entry]:
    """Regular files at a commit with their blob ids and sizes (`git ls-tree -r -l`)."""
    out: list[_Entry] = []
    for row in _git(clone, ["ls-tree", "-r", "-l", "-z", commit]).split(b"\0"):
        meta, _, raw_path = row.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4 or fields[0] not in _REGULAR or fields[1] != b"blob" or not fields[3].isdigit():
            continue
        out.append(_Entry(raw_path.decode("utf-8", errors="surrogateescape"), fields[2].decode(), int(fields[3])))
    return out


def read_blobs(clone: Path, blobs: Sequence[str]) -> dict[str, bytes]:
    """Contents of many blobs with one `git cat-file --batch`."""
    if not blobs:
        return {}
    raw = _git(clone, ["cat-file", "--batch"], ("\n".join(blobs) + "\n").encode())
    found: dict[str, bytes] = {}
    at = 0
    while at < len(raw):
        end = raw.index(b"\n", at)
        header = raw[at:end].split()
        at = end + 1
        if len(header) != 3:  # "<oid> missing"
            continue
        size = int(header[2])
        found[header[0].decode()] = raw[at:at + size]
        at += size + 1
    return found


class ReleaseIndexes:
    """Per-tag indexes of the repositories' clones, built on first use and cached under INDEX_DIR/releases."""

    def __init__(self, index_dir: Path, pinner: ReleasePinner, web_base: Callable[[str, Path], str], *, kept: int = 4,
                 params: RankingParams = DEFAULT_PARAMS, background: bool = False) -> None:
        self.root = index_dir / "releases"
        self._main_dir = index_dir
        self._pinner = pinner
        self._web_base = web_base
        self._kept = kept
        self._params = params
        self._open: dict[tuple[str, str], KnowledgeIndex] = {}
        self._lock = threading.Lock()  # one build at a time in this process (the file lock covers others)
        # A chat server must not hold an answer for the ~8 s a first build takes: it builds in the background
        # and that answer reads main; the terminal (`ask`, `eval`) builds inline, since someone waits for it.
        self._background = background
        self._building: set[tuple[str, str]] = set()
        self._building_lock = threading.Lock()

    def tag_dir(self, repo: str, tag: str) -> Path:
        return self.root / repo.replace("/", "+") / tag

    def index_for(self, repo: str, tag: str, commit: str) -> KnowledgeIndex | None:
        """The tag's index, built now when missing (in the background for a server: None until it is
        ready); None when it cannot be built (the caller reads main)."""
        opened = self._open.get((repo, tag))
        if opened is not None:
            return opened
        if not self._background:
            return self._open_or_build(repo, tag, commit)
        if self._built(repo, tag, commit):
            return self._open_or_build(repo, tag, commit) if (repo, tag) not in self._building else None
        with self._building_lock:
            if (repo, tag) not in self._building:
                self._building.add((repo, tag))
                threading.Thread(target=self._build_later, args=(repo, tag, commit), daemon=True,
                                 name=f"release-index-{tag}").start()
        return None

    def _build_later(self, repo: str, tag: str, commit: str) -> None:
        try:
            self._open_or_build(repo, tag, commit)
        finally:
            with self._building_lock:
                self._building.discard((repo, tag))

    def _open_or_build(self, repo: str, tag: str, commit: str) -> KnowledgeIndex | None:
        opened = self._open.get((repo, tag))
        if opened is not None:
            return opened
        with self._lock:
            try:
                if not self._built(repo, tag, commit):
                    self.build(repo, tag, commit)
                index = KnowledgeIndex(self.tag_dir(repo, tag), check_every=3600.0, params=self._params)
            except (OSError, ValueError) as exc:  # a clone without the tag's files, a full disk: read main
                log.warning("release index %s@%s not available: %s", repo, tag, exc)
                return None
            self._open[(repo, tag)] = index
            os.utime(self.tag_dir(repo, tag))  # most recently used: kept longest
            return index

    def _built(self, repo: str, tag: str, commit: str) -> bool:
        where = self.tag_dir(repo, tag)
        name = current_generation(where)
        if name is None:
            return False
        try:
            manifest = json.loads((where / name / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return manifest.get("repos", {}).get(repo, {}).get("commit") == commit  # a moved tag is built again

    def build(self, repo: str, tag: str, commit: str) -> TagBuild:
        started = time.monotonic()
        clone = self._pinner.clone(repo)
        if clone is None:
            raise OSError(f"no clone of {repo}")
        where = self.tag_dir(repo, tag)
        where.mkdir(parents=True, exist_ok=True)
        with open(where.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker building the same repository's releases waits
            shared = self._load_shared(repo)
            main_files: dict[str, Any] = load_cache(self._main_dir, repo).get("files", {})
            files, chunked = self._units(clone, commit, shared, main_files)
            if chunked:
                self._save_shared(repo, shared)
            cache = {"commit": commit, "files": files, "issues": {}}
            units = sum(len(f["units"]) for f in files.values())
            report = RepoReport(repo, commit, len(files), units, chunked, 0.0)
            write_units(where, {repo: cache}, {repo: self._web_base(repo, clone)}, self._params, [report],
                        fact_documents())
        self._evict(repo, keep=tag)
        return TagBuild(repo, tag, commit, len(files), units, chunked, time.monotonic() - started)

    def _units(self, clone: Path, commit: str, shared: dict[str, Any], main_files: dict[str, Any]) -> tuple[dict[str, Any], int]:
        tree = tree_files(clone, commit)
        entries = [e for e in tree if file_kind(e.path) is not None and should_index(e.path, e.size)]
        catalogues = {source_stem(e.path): e for e in tree if e.path.endswith(".po") and source_stem(e.path)}
        files: dict[str, Any] = {}
        todo: list[tuple[_Entry, str, _Entry | None]] = []
        for entry in entries:
            catalogue = catalogues.get(entry.path.rsplit(".", 1)[0]) if file_kind(entry.path) == "doc" else None
            key = entry.blob + (":" + catalogue.blob if catalogue else "")  # the main cache's key
            known = main_files.get(entry.path)
            if known is not None and known.get("key") == key:
                files[entry.path] = known
            elif f"{entry.path}\0{key}" in shared:
                files[entry.path] = {"key": key, "units": shared[f"{entry.path}\0{key}"]}
            else:
                todo.append((entry, key, catalogue))
        contents = read_blobs(clone, sorted({e.blob for e, _, _ in todo} | {c.blob for _, _, c in todo if c is not None}))
        chunked = 0
        for entry, key, catalogue in todo:
            text = decode(contents.get(entry.blob, b""))
            if text is None:
                continue
            po = contents.get(catalogue.blob) if catalogue is not None else None
            units = chunk_units(entry.path, text, parse_po(po.decode("utf-8", errors="replace")) if po else None)
            shared[f"{entry.path}\0{key}"] = units
            files[entry.path] = {"key": key, "units": units}
            chunked += 1
        return files, chunked

    def _shared_path(self, repo: str) -> Path:
        return self.root / repo.replace("/", "+") / "units.json"

    def _load_shared(self, repo: str) -> dict[str, Any]:
        try:
            data = json.loads(self._shared_path(repo).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data.get("units", {}) if data.get("format") == CACHE_FORMAT else {}

    def _save_shared(self, repo: str, units: dict[str, Any]) -> None:
        write_json_atomically(self._shared_path(repo), {"format": CACHE_FORMAT, "units": units})

    def _evict(self, repo: str, keep: str) -> None:
        tags = sorted((p for p in (self.root / repo.replace("/", "+")).iterdir() if p.is_dir()),
                      key=lambda p: p.stat().st_mtime, reverse=True)
        for old in [p for p in tags if p.name != keep][max(0, self._kept - 1):]:
            shutil.rmtree(old, ignore_errors=True)
            self._open.pop((repo, old.name), None)

    def on_disk(self) -> int:
        """Bytes under INDEX_DIR/releases (for the benchmark and doctor)."""
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file()) if self.root.exists() else 0


class ReleaseAwareRetriever:
    """The knowledge index, read at the answer's pinned releases (core/releases/pinning.py).

    A pinned repository's docs and code come from its tag's index, each passage marked with the
    release; its issues and every other repository come from main. Without pins it is main."""

    def __init__(self, main: KnowledgeIndex, releases: ReleaseIndexes) -> None:
        self.main = main
        self.releases = releases

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: PassageKind | None = None) -> list[Passage]:
        pins = current_pins()
        pinned = [r for r in repos if r in pins]
        if not pinned or kind == "issue":
            return self.main.search(query, repos, k, kind)
        found: list[Passage] = []
        for repo in pinned:
            choice = pins[repo]
            index = self.releases.index_for(repo, choice.tag, choice.commit)
            if index is None:
                return self.main.search(query, repos, k, kind)  # no release index: main, unmarked, as before
            found += [replace(p, release=choice.tag) for p in index.search(query, [repo], k, kind)]
        # Issue threads are not versioned (main holds them); other routed repositories read main. One
        # ranking for both: a resolved thread that matches better than the release's docs keeps its place.
        rest = [p for p in self.main.search(query, repos, k, kind) if p.repo not in pinned or p.kind == "issue"]
        return sorted(found + rest, key=lambda p: -p.score)[:k]

    def repos_with_files(self) -> set[str]:
        return self.main.repos_with_files()

    def __getattr__(self, name: str) -> Any:
        # Everything else (doctor's manifest, search's repository list) is about the main index.
        return getattr(self.main, name)
