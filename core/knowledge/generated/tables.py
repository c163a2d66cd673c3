"""The one accessor for generated tables: DATA_DIR/knowledge/<name>.json, or None.

A file is {"repo", "commit", "committed_at", "source", "rows"}; `rows` are plain JSON objects, each
consumer turns them into its own types (core/knowledge/generated/<table>.py).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger(__name__)

SUBDIR = "knowledge"
MAX_TABLE_BYTES = 5_000_000


@dataclass(frozen=True)
class GeneratedTable:
    name: str
    repo: str
    commit: str
    committed_at: str  # ISO 8601 committer date of `commit`
    source: str  # owner/name:path the rows were read from
    rows: tuple[dict[str, Any], ...]

    @property
    def day(self) -> str:
        return self.committed_at[:10]

    def is_newer_than(self, day: str) -> bool:
        """Read from a commit at least as recent as `day` (YYYY-MM-DD); an unknown day loses."""
        return bool(self.day) and self.day >= day


class _DataDirSettings(BaseSettings):
    # The same DATA_DIR as bot.settings.Settings.data_dir (core must not import bot/).
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")
    data_dir: Path = Path(".copilot-data")


def configured_data_dir() -> Path:
    return _DataDirSettings().data_dir


def table_path(name: str, data_dir: Path) -> Path:
    return data_dir / SUBDIR / f"{name}.json"


# Parsed tables by path, with the (mtime, size) they were read at: answers look tables up on every
# question, and a table changes only when `index` rewrites it.
_loaded: dict[Path, tuple[tuple[int, int], GeneratedTable | None]] = {}


def load(name: str, data_dir: Path | None = None) -> GeneratedTable | None:
    """The generated table `name`, or None when it was never written or cannot be read."""
    path = table_path(name, configured_data_dir() if data_dir is None else data_dir)
    try:
        st = path.stat()
    except OSError:
        return None
    seen = (st.st_mtime_ns, st.st_size)
    cached = _loaded.get(path)
    if cached is not None and cached[0] == seen:
        return cached[1]
    table = _read(name, path, st.st_size)
    _loaded[path] = (seen, table)
    return table


def _read(name: str, path: Path, size: int) -> GeneratedTable | None:
    if size > MAX_TABLE_BYTES:
        log.warning("generated table %s is larger than %d bytes; ignored", path, MAX_TABLE_BYTES)
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("generated table %s unreadable (%s); ignored", path, exc)
        return None
    try:
        rows = tuple(row for row in data["rows"] if isinstance(row, dict))
        return GeneratedTable(name, str(data["repo"]), str(data["commit"]), str(data["committed_at"]), str(data["source"]), rows)
    except (KeyError, TypeError) as exc:
        log.warning("generated table %s has no %s; ignored", path, exc)
        return None


def lookup(name: str, render: Callable[[GeneratedTable], list[str]], data_dir: Path | None = None,
           table: GeneratedTable | None = None) -> tuple[list[str], str]:
    """The lines `render` makes of table `name` (or of `table`), and the table's source to cite beside
    them; ([], "") when there is no table or nothing to say."""
    table = table or load(name, data_dir)
    lines = render(table) if table is not None else []
    return lines, (table.source if lines and table is not None else "")


def stamp(name: str, data_dir: Path) -> str:
    """Changes when the table is rewritten (for caches); '-' when there is none."""
    try:
        return str(table_path(name, data_dir).stat().st_mtime_ns)
    except OSError:
        return "-"


@dataclass(frozen=True)
class Extraction:
    """What one extractor read from a clone: the file (path in the clone) and its rows (dataclasses)."""

    path: str
    rows: tuple[Any, ...]
