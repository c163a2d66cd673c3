"""Resolution memory: every thread's record and the error signatures that lead to them.

Built by `python -m bot index` next to the knowledge index (INDEX_DIR/resolutions.json, replaced
atomically), read by the offline answer and the research tools. Like the index it is a cache:
deleting it loses nothing that a rebuild cannot restore.
"""
from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.atomic_file import write_json_atomically
from core.issue_store import iter_issues
from core.reloading import ReloadingFile
from core.resolution.extract import extract_repository
from core.resolution.record import Resolution
from core.resolution.releases import ReleaseMap, release_map, version_key
from core.resolution.words import specific_words

log = logging.getLogger(__name__)

FILE_NAME = "resolutions.json"
_SCHEMA = 1


@dataclass(frozen=True)
class RepoInput:
    name: str  # canonical owner/name
    clone: Path | None  # for the releases; None or missing: no release names
    maintainers: tuple[str, ...] = ()  # configured logins (GitCode has no author association)


@dataclass(frozen=True)
class MemoryReport:
    threads: int
    resolved: int
    with_release: int
    signatures: int
    seconds: float
    shallow: tuple[str, ...] = ()  # clones without history or tags: their fixes get no release name


def build_memory(index_dir: Path, data_dir: Path, repos: Sequence[RepoInput]) -> MemoryReport:
    started = time.monotonic()
    records: list[Resolution] = []
    shallow: list[str] = []
    for repo in repos:
        found = extract_repository(iter_issues(data_dir, repo.name), repo.maintainers)
        if not found:
            continue
        if repo.clone is not None and (repo.clone / ".git" / "shallow").exists():
            shallow.append(repo.name)
        releases = _releases(repo.clone, {n for r in found.values() for n in (*r.fixed_by, *((r.number,) if r.kind == "pull" else ()))})
        records += [_with_release(r, releases) for r in found.values()]
    memory = ResolutionMemory(records)
    write_json_atomically(index_dir / FILE_NAME, {"v": _SCHEMA, "records": [r.to_json() for r in records]}, compact=False)
    return MemoryReport(len(records), sum(r.resolved for r in records), sum(bool(r.release) for r in records),
                        len(memory.signature_counts), time.monotonic() - started, tuple(shallow))


def _releases(clone: Path | None, wanted: set[int]) -> ReleaseMap:
    if clone is None or not wanted or not ((clone / ".git").exists() or (clone / "HEAD").exists()):
        return ReleaseMap()
    try:
        return release_map(clone, wanted)
    except (OSError, ValueError) as exc:  # a damaged clone costs the release names only
        log.warning("releases of %s not read: %s", clone, exc)
        return ReleaseMap()


def _with_release(record: Resolution, releases: ReleaseMap) -> Resolution:
    numbers = (record.number,) if record.kind == "pull" and record.merged else (record.closed_by or record.fixed_by)
    found = [releases.release_of(n) for n in numbers if releases.release_of(n)]
    if not found:
        return record
    return replace(record, release=min(found, key=lambda t: version_key(t) or ()))


class ResolutionMemory:
    """Records by thread and by error signature (only reports count: a signature quoted in a
    maintainer's reply does not make a thread a report of that error)."""

    def __init__(self, records: Iterable[Resolution]) -> None:
        self._by_thread: dict[tuple[str, int], Resolution] = {}
        self._by_signature: dict[str, list[Resolution]] = defaultdict(list)
        self._threads_with: Counter[str] = Counter()  # specific word → threads that carry it
        for record in records:
            self._by_thread[(record.repo, record.number)] = record
            self._threads_with.update(specific_words(" ".join((record.title, record.error_line, record.summary, *record.fix_items))))
            if record.kind == "issue":
                for signature in record.signatures:
                    self._by_signature[signature].append(record)

    def rarity(self, words: Iterable[str]) -> float:
        """Summed inverse thread frequency: "ascend_transport.so" weighs more than "910b"."""
        total = len(self._by_thread) + 1
        return sum(math.log(total / (self._threads_with.get(w, 0) + 1)) for w in words)

    @property
    def signature_counts(self) -> Mapping[str, int]:
        return {s: len(r) for s, r in self._by_signature.items()}

    def __len__(self) -> int:
        return len(self._by_thread)

    def get(self, repo: str, number: int) -> Resolution | None:
        return self._by_thread.get((repo, number))

    def with_signature(self, signature: str, repos: Sequence[str] = ()) -> list[Resolution]:
        return [r for r in self._by_signature.get(signature, ()) if not repos or r.repo in repos]

    def original_of(self, record: Resolution) -> Resolution | None:
        """A duplicate's original when it is resolved itself (one step; no chains)."""
        if record.duplicate_of is None:
            return None
        original = self.get(record.repo, record.duplicate_of)
        return original if original is not None and original.resolved else None

    @classmethod
    def from_file(cls, path: Path) -> ResolutionMemory:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("v") != _SCHEMA or not isinstance(data.get("records"), list):
            raise ValueError(f"{path} is not a resolution memory of schema {_SCHEMA}")
        records = []
        for item in data["records"]:
            try:
                records.append(Resolution.from_json(item))
            except (TypeError, ValueError):
                continue
        return cls(records)


class MemoryFile(ReloadingFile[ResolutionMemory]):
    """The memory of one INDEX_DIR, reloaded when `index` replaced the file (checked at most every
    `check_every` seconds), so workers pick up a rebuild without a restart."""

    def __init__(self, index_dir: Path, check_every: float = 30.0) -> None:
        super().__init__(Path(index_dir) / FILE_NAME, ResolutionMemory.from_file, ResolutionMemory(()), check_every)


__all__ = ["MemoryFile", "MemoryReport", "RepoInput", "ResolutionMemory", "build_memory"]
