"""Does the shipped JSON (the fallback without clones) still match what the clone says?

Compared by key: the matrix by vLLM Ascend version (main is the row "main": its verified vLLM commit
and targets), env vars by name (the shipped list holds vllm-ascend's own variables, scope
"vllm-ascend"; it has no defaults, so only presence is compared). The supported-models and features
tables have no shipped copy and are only counted.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.knowledge.generated import env_vars, matrix, tables
from core.knowledge.generated.write import EXTRACT_ERRORS, EXTRACTORS, read_table
from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base

_STAMP = re.compile(r"([0-9a-f]{7,40})[ \t]{1,4}\((\d{4}-\d{2}-\d{2})\)")
_MATRIX_FIELDS = ("vllm", "python_min", "python_max_exclusive", "cann", "torch", "torch_npu", "triton_ascend", "mooncake")
SCOPE = "vllm-ascend"


@dataclass(frozen=True)
class TableDiff:
    name: str
    shipped: int
    generated: int
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[tuple[str, tuple[str, ...]], ...] = ()  # key, fields that differ

    @property
    def matches(self) -> bool:
        return not (self.added or self.removed or self.changed)


@dataclass(frozen=True)
class CheckResult:
    diffs: tuple[TableDiff, ...]
    tables: dict[str, tables.GeneratedTable] = field(default_factory=dict)

    @property
    def matches(self) -> bool:
        return all(d.matches for d in self.diffs)


def builtin_stamp(kb: KnowledgeBase | None = None) -> tuple[str, str]:
    """The commit and day the built-in matrix was read at ("182b75e", "2026-08-22"); ("", "") if unstated."""
    m = _STAMP.search((kb or load_knowledge_base()).matrix.main_branch.as_of)
    return (m.group(1), m.group(2)) if m else ("", "")


def shipped_rows(name: str, kb: KnowledgeBase) -> dict[str, dict[str, Any]] | None:
    """The shipped copy of a generated table, by key; None when nothing is shipped for it."""
    if name == matrix.NAME:
        rows = {r.vllm_ascend: r.model_dump() for r in kb.matrix.rows}
        main = matrix.main_row(kb.matrix.main_branch.commit, kb.matrix.main_branch.targets)
        if main is not None:
            rows[main.vllm_ascend] = main.model_dump()
        return rows
    if name == env_vars.NAME:
        return {v.name: {"name": v.name} for v in kb.env_vars if v.scope == SCOPE}
    return None


def _normal(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def compare(name: str, shipped: dict[str, dict[str, Any]], generated: Iterable[dict[str, Any]]) -> TableDiff:
    key_field, fields = (("vllm_ascend", _MATRIX_FIELDS) if name == matrix.NAME else ("name", ()))
    new = {str(row.get(key_field)): row for row in generated}
    changed = []
    for key in shipped.keys() & new.keys():
        differ = tuple(f for f in fields if _normal(shipped[key].get(f)) != _normal(new[key].get(f)))
        if differ:
            changed.append((key, differ))
    return TableDiff(name, len(shipped), len(new), tuple(k for k in new if k not in shipped),
                     tuple(k for k in shipped if k not in new), tuple(sorted(changed)))


def _fresh(repos_dir: Path) -> dict[str, tables.GeneratedTable]:
    """The tables as the clones say now, without writing them (for a check against any REPOS_DIR)."""
    out = {}
    for extractor in EXTRACTORS:
        clone = repos_dir / extractor.repo
        if not (clone / ".git").exists():
            continue
        try:
            data = read_table(extractor, clone)
        except EXTRACT_ERRORS:
            continue
        out[extractor.name] = tables.GeneratedTable(extractor.name, data["repo"], data["commit"], data["committed_at"],
                                                    data["source"], tuple(data["rows"]))
    return out


def check(data_dir: Path | None = None, repos_dir: Path | None = None, kb: KnowledgeBase | None = None) -> CheckResult:
    """Compare the shipped JSON with the generated tables in DATA_DIR, or (repos_dir given) with the
    tables as the clones say now."""
    kb = kb or load_knowledge_base()
    if repos_dir is not None:
        found = _fresh(repos_dir)
    else:
        found = {e.name: t for e in EXTRACTORS if (t := tables.load(e.name, data_dir)) is not None}
    diffs = []
    for name, table in found.items():
        shipped = shipped_rows(name, kb)
        if shipped is not None:
            diffs.append(compare(name, shipped, table.rows))
    return CheckResult(tuple(diffs), found)


def _keys(keys: Iterable[str], limit: int = 8) -> str:
    keys = list(keys)
    return ", ".join(keys[:limit]) + (f", … ({len(keys) - limit} more)" if len(keys) > limit else "")


def report_lines(result: CheckResult, kb: KnowledgeBase | None = None) -> list[str]:
    commit, day = builtin_stamp(kb)
    lines = [f"built-in copy: vllm-ascend {commit or '?'} ({day or 'date unknown'})"]
    diffs = {d.name: d for d in result.diffs}
    for name, table in result.tables.items():
        head = f"{name}: {len(table.rows)} rows from {table.repo} {table.commit[:7]} ({table.day})"
        diff = diffs.get(name)
        if diff is None:
            lines.append(f"{head}; no built-in copy to compare")
        elif diff.matches:
            lines.append(f"{head}; matches the built-in copy ({diff.shipped} rows)")
        else:
            lines.append(f"{head}; differs from the built-in copy ({diff.shipped} rows): "
                         f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed")
            if diff.added:
                lines.append(f"  added: {_keys(diff.added)}")
            if diff.removed:
                lines.append(f"  removed: {_keys(diff.removed)}")
            for key, fields in diff.changed[:8]:
                lines.append(f"  changed: {key} ({', '.join(fields)})")
    if not result.tables:
        lines.append("no generated tables (run `python -m bot index` with a vllm-ascend clone in REPOS_DIR)")
    return lines


_WHAT = {matrix.NAME: ("matrix row", "matrix rows"), env_vars.NAME: ("env var", "env vars")}


def _count(n: int, name: str) -> str:
    one, many = _WHAT.get(name, (name, name))
    return f"{n} {one if n == 1 else many}"


def doctor_line(data_dir: Path, kb: KnowledgeBase | None = None) -> str:
    """'knowledge: built-in copy from vllm-ascend 182b75e (2026-08-22); clone a1b2c3d adds 3 matrix rows, 12 env vars'."""
    kb = kb or load_knowledge_base()
    commit, day = builtin_stamp(kb)
    line = f"knowledge: built-in copy from vllm-ascend {commit or '?'} ({day or 'date unknown'})"
    result = check(data_dir, kb=kb)
    if not result.tables:
        return line + "; no generated tables yet (`python -m bot index` reads them from the clones)"
    newest = max(result.tables.values(), key=lambda t: t.committed_at)
    parts = []
    for diff in result.diffs:
        if diff.added:
            parts.append(_count(len(diff.added), diff.name))
        if diff.removed:
            parts.append(f"{_count(len(diff.removed), diff.name)} fewer")
        if diff.changed:
            parts.append(f"{_count(len(diff.changed), diff.name)} changed")
    said = f"adds {', '.join(parts)}" if parts else "matches it"
    return f"{line}; clone {newest.commit[:7]} ({newest.day}) {said}"
