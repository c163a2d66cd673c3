"""The on-disk layout of one index generation, written once and then only read.

INDEX_DIR/CURRENT names the live generation directory; a build writes a new `gen-*` directory and
then replaces CURRENT atomically, so readers never see a half-written index. Arrays are .npy files
that every worker memory-maps read-only (the page cache holds one copy for all of them); unit
metadata and texts are read by offset only for the passages a search returns.
"""
from __future__ import annotations

import json
import mmap
import os
import shutil
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


class Blobs:
    """Read-only, memory-mapped list of strings written by `_write_blobs`."""

    def __init__(self, stem: Path) -> None:
        self._offsets = np.load(stem.with_name(stem.name + "_off.npy"), mmap_mode="r")
        size = int(self._offsets[-1])
        self._file = open(stem.with_suffix(".bin"), "rb")  # noqa: SIM115 - lives as long as the mapping
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else None

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i: int) -> str:
        if self._map is None:
            return ""
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._map[a:b].decode("utf-8")


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
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise IndexMissing(f"index in {index_dir} has format {manifest.get('format')}, expected {FORMAT}: rebuild it")

    def arr(key: str) -> np.ndarray:
        return np.load(root / f"{key}.npy", mmap_mode="r")

    vocab = json.loads((root / "vocab.json").read_text(encoding="utf-8"))
    return Generation(
        name, manifest, vocab, arr("idf"), arr("ptr"), arr("docs"), arr("weights"), arr("unit_repo"), arr("unit_file"),
        arr("unit_flags"), Blobs(root / "meta"), Blobs(root / "text"),
    )
