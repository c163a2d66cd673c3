"""The on-disk layout of one index generation, written once and then only read.

INDEX_DIR/CURRENT names the live generation directory; a build writes a new `gen-*` directory and
then replaces CURRENT atomically, so readers never see a half-written index. Arrays are .npy files
that every worker memory-maps read-only (the page cache holds one copy for all of them); unit
metadata and texts are read by offset only for the passages a search returns.

An index is data other people's text went into, read by every worker: a loader refuses one that
someone else could have swapped (a world-writable directory or file, a file owned by another user),
and one whose files are shorter than their headers say. A mapped file truncated later would kill the
process with SIGBUS on the first touch of a lost page, so texts are read with pread (a short read is
an error, not a signal) and `Generation.verify` compares the mapped files' sizes before a search.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 2
CURRENT = "CURRENT"
KEEP_GENERATIONS = 2  # the live one and the one before (a worker may still be reading it)


class IndexMissing(Exception):
    """No index under INDEX_DIR (run `python -m bot index`)."""


class IndexUnusable(ValueError):
    """An index that is there but must not be read: damaged (a truncated file) or unsafe (writable by
    others). A ValueError, so the readers that already survive a damaged index survive this one too;
    its message is one line naming the file and what to do."""


def write_generation(index_dir: Path, manifest: dict[str, Any], arrays: dict[str, np.ndarray], vocab: dict[str, int],
                     metas: list[str], texts: list[str]) -> str:
    index_dir.mkdir(parents=True, exist_ok=True)
    name = f"gen-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{time.monotonic_ns() % 1_000_000:06d}"
    tmp = index_dir / f".{name}.tmp"
    tmp.mkdir()
    for key, array in arrays.items():
        np.save(tmp / f"{key}.npy", array, allow_pickle=False)
    (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    _write_blobs(tmp / "meta", metas)
    _write_blobs(tmp / "text", texts)
    manifest = {**manifest, "format": FORMAT, "generation": name}
    (tmp / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.rename(index_dir / name)
    pointer = index_dir / f".{CURRENT}.{os.getpid()}"
    pointer.write_text(name + "\n", encoding="utf-8")
    os.replace(pointer, index_dir / CURRENT)
    _drop_old(index_dir, name)
    return name


def _write_blobs(stem: Path, items: list[str]) -> None:
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    with open(stem.with_suffix(".bin"), "wb") as out:
        position = 0
        for i, item in enumerate(items):
            data = item.encode("utf-8")
            out.write(data)
            position += len(data)
            offsets[i + 1] = position
    np.save(stem.with_name(stem.name + "_off.npy"), offsets, allow_pickle=False)


def _drop_old(index_dir: Path, live: str) -> None:
    generations = sorted(p for p in index_dir.glob("gen-*") if p.is_dir())
    old = [p for p in generations if p.name != live][: max(0, len(generations) - KEEP_GENERATIONS)]
    for path in old:
        # a worker still mapping these files keeps its pages until it moves on (POSIX unlink semantics)
        shutil.rmtree(path, ignore_errors=True)


def current_generation(index_dir: Path) -> str | None:
    try:
        name = (index_dir / CURRENT).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name if name and (index_dir / name / "manifest.json").exists() else None


class _Mapped:
    """A file the generation reads, kept open so its size can still be checked after a newer build
    unlinks it (POSIX keeps the inode while we hold it)."""

    def __init__(self, path: Path, needed: int) -> None:
        self.path = path
        self.needed = needed
        self.file = open(path, "rb")  # noqa: SIM115 - lives as long as the generation
        self.check()

    def check(self) -> None:
        size = os.fstat(self.file.fileno()).st_size
        if size < self.needed:
            raise IndexUnusable(f"{self.path} is truncated ({size} bytes, {self.needed} needed): rebuild the index "
                                "(`python -m bot index`)")


def _array(path: Path) -> tuple[np.ndarray, _Mapped]:
    try:
        array = np.load(path, mmap_mode="r")
    except (ValueError, EOFError) as exc:  # numpy's words for a header or body shorter than it should be
        raise IndexUnusable(f"{path} is damaged ({exc}): rebuild the index (`python -m bot index`)") from exc
    # a memmap knows how many bytes it spans; numpy answers an empty array without mapping anything
    needed = int(array.offset) + array.nbytes if isinstance(array, np.memmap) else path.stat().st_size
    return array, _Mapped(path, needed)


class Blobs:
    """Read-only list of strings written by `_write_blobs`: offsets memory-mapped, bytes read with pread.

    pread rather than mmap: a passage is read only when a search returns it, and a file truncated
    under a mapping kills the process on access, where a short pread is an exception."""

    def __init__(self, stem: Path) -> None:
        self._offsets, offsets_file = _array(stem.with_name(stem.name + "_off.npy"))
        self._data = _Mapped(stem.with_suffix(".bin"), int(self._offsets[-1]) if len(self._offsets) else 0)
        self.files = (offsets_file, self._data)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i: int) -> str:
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        if a == b:
            return ""
        data = os.pread(self._data.file.fileno(), b - a, a)
        if len(data) != b - a:
            self._data.check()  # names the file and its size
            raise IndexUnusable(f"{self._data.path}: short read at {a}: rebuild the index (`python -m bot index`)")
        return data.decode("utf-8")


@dataclass
class Generation:
    name: str
    manifest: dict[str, Any]
    vocab: dict[str, int]
    idf: np.ndarray
    ptr: np.ndarray
    docs: np.ndarray
    weights: np.ndarray
    unit_repo: np.ndarray
    unit_file: np.ndarray
    unit_flags: np.ndarray
    metas: Blobs
    texts: Blobs
    files: tuple[_Mapped, ...] = ()

    def verify(self) -> None:
        """Raise IndexUnusable when a mapped file is now shorter than at load (truncated in place):
        touching its lost pages would be a SIGBUS. A few fstat calls, cheap beside a search."""
        for mapped in self.files:
            mapped.check()

    @property
    def repo_names(self) -> list[str]:
        return list(self.manifest["repo_names"])

    @property
    def size(self) -> int:
        return len(self.unit_repo)


def load_generation(index_dir: Path, name: str | None = None) -> Generation:
    name = name or current_generation(index_dir)
    if name is None:
        raise IndexMissing(f"no index in {index_dir} (run `python -m bot index`)")
    root = index_dir / name
    refuse_unsafe(index_dir, root)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise IndexMissing(f"index in {index_dir} has format {manifest.get('format')}, expected {FORMAT}: rebuild it")
    keys = ("idf", "ptr", "docs", "weights", "unit_repo", "unit_file", "unit_flags")
    loaded = {key: _array(root / f"{key}.npy") for key in keys}
    vocab = json.loads((root / "vocab.json").read_text(encoding="utf-8"))
    metas, texts = Blobs(root / "meta"), Blobs(root / "text")
    files = (*(mapped for _, mapped in loaded.values()), *metas.files, *texts.files)
    return Generation(name, manifest, vocab, *(loaded[key][0] for key in keys), metas, texts, files)


def refuse_unsafe(index_dir: Path, root: Path) -> None:
    """Raise IndexUnusable when anyone but this user (or root) could have written what we are about to
    read: INDEX_DIR, CURRENT, the generation directory and each of its files. A world-writable place
    lets any local user swap in passages the bot would quote as verified sources."""
    if not hasattr(os, "geteuid"):  # no POSIX owners to check (Windows)
        return
    trusted = {os.geteuid(), 0}
    for path in (index_dir, index_dir / CURRENT, root, *sorted(root.iterdir())):
        try:
            info = path.lstat()
        except FileNotFoundError:  # CURRENT when a caller names the generation itself
            continue
        if stat.S_ISLNK(info.st_mode):
            info = path.stat()  # a link is as safe as what it points to (both checked below for the directory)
        if info.st_uid not in trusted:
            raise IndexUnusable(f"{path} is owned by uid {info.st_uid}, not by this user (uid {os.geteuid()}) or root: "
                                "refusing the index (chown it or rebuild it as this user)")
        if info.st_mode & stat.S_IWOTH:
            raise IndexUnusable(f"{path} is world-writable (mode {stat.S_IMODE(info.st_mode):04o}): refusing the index "
                                f"(chmod o-w {path})")
