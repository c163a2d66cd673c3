"""Finding a doc in a clone: at its known path, else the one file of that name under docs/ (a doc that
moved is still found; translations under locale/ are skipped)."""
from __future__ import annotations

import posixpath
from pathlib import Path

MAX_DOC_BYTES = 2_000_000


def find_doc(clone: Path, known: str) -> str | None:
    """The doc's path in the clone (posix), or None."""
    if (clone / known).is_file():
        return known
    docs = clone / "docs"
    if not docs.is_dir():
        return None
    name = posixpath.basename(known)
    found = sorted(p for p in docs.rglob(name) if p.is_file() and "locale" not in p.parts)
    return found[0].relative_to(clone).as_posix() if found else None


def read_doc(clone: Path, path: str) -> str:
    return (clone / path).read_text(encoding="utf-8", errors="replace")[:MAX_DOC_BYTES]


def read_known_doc(clone: Path, known: str, missing: type[Exception]) -> tuple[str, str]:
    """(path, text) of the doc `known` names, wherever it moved; `missing` is raised when there is none."""
    path = find_doc(clone, known)
    if path is None:
        raise missing(f"no {posixpath.basename(known)} under docs/")
    return path, read_doc(clone, path)
