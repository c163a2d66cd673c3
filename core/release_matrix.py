"""The vllm-ascend compatibility matrix, read from the clone when there is one.

The built-in copy (core/knowledge/version_matrix.json) goes stale the day vllm-ascend publishes a
release. With a clone at REPOS_DIR/vllm-project/vllm-ascend the rows come from the table under
"Release compatibility matrix" in docs/source/community/versioning_policy.md (or wherever HEAD's
docs hold that heading), release-branch rows HEAD does not list yet are added (a release
candidate's row lives on its branch first), and main's targets come from mkdocs.yml's `extra:`
block and .github/vllm-main-verified.commit. Without a clone, or when the table cannot be
parsed, the built-in copy stays: a broken doc never takes the answer down.

Columns are found by their header words, not their position, so an added column or a reordering
does not shift values. Each row keeps its source (HEAD's doc, or the release branch's blob URL).
"""
from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base
from core.knowledge.schema import MatrixRow, VersionMatrix

log = logging.getLogger(__name__)

REPO = "vllm-project/vllm-ascend"
MATRIX_DOC = "docs/source/community/versioning_policy.md"
MKDOCS = "mkdocs.yml"
MAIN_COMMIT_FILE = ".github/vllm-main-verified.commit"
HEADING = re.compile(r"^#{1,4}[ \t]{1,4}release compatibility matrix[ \t]*$", re.IGNORECASE | re.MULTILINE)
RECHECK_SECONDS = 300.0  # a sync replaces the clone rarely; one stat-free re-read per five minutes is enough
GIT_TIMEOUT = 10.0
MAX_DOC_BYTES = 2_000_000

_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)*(?:rc\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?)$", re.IGNORECASE)
_PY_RANGE = re.compile(r">=[ \t]*(\d+\.\d+)[ \t]*,[ \t]*<[ \t]*(\d+\.\d+)")
_EXTRA_KEY = re.compile(r"^[ \t]{1,8}(main_(?:python_version|cann_version|pytorch_torch_npu_version|triton_ascend_version))[ \t]*:[ \t]*(.{1,80})$", re.M)
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


class MatrixDocError(ValueError):
    """The doc's table is not the table we know how to read (the caller keeps the built-in copy)."""


# ------------------------------------------------------------------ parsing


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _column(header: list[str], *words: str, exclude: str = "") -> int | None:
    for i, name in enumerate(header):
        low = name.lower()
        if all(w in low for w in words) and not (exclude and exclude in low):
            return i
    return None


def _version(cell: str, what: str) -> str:
    m = _VERSION.match(cell.strip())
    if not m:
        raise MatrixDocError(f"{what} {cell!r} is not a version")
    return m.group(1)


def _optional(cell: str, what: str) -> str | None:
    return None if cell.strip().upper() in ("N/A", "NA", "-", "") else _version(cell, what)


def parse_release_table(markdown: str, source: str) -> tuple[MatrixRow, ...]:
    """The rows of the first table under the "Release compatibility matrix" heading, in the doc's order."""
    heading = HEADING.search(markdown)
    if heading is None:
        raise MatrixDocError("no 'Release compatibility matrix' heading")
    lines = markdown[heading.end() :].splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")), None)
    if start is None:
        raise MatrixDocError("no table under the heading")
    table = []
    for ln in lines[start:]:
        if not ln.lstrip().startswith("|"):
            break
        table.append(ln)
    header = _cells(table[0])
    cols = {
        "vllm_ascend": _column(header, "vllm", "ascend"),
        "vllm": _column(header, "vllm", exclude="ascend"),
        "python": _column(header, "python"),
        "cann": _column(header, "cann"),
        "torch": _column(header, "torch"),
        "triton": _column(header, "triton"),
        "mooncake": _column(header, "mooncake"),
    }
    missing = [k for k in ("vllm_ascend", "vllm", "python", "cann", "torch") if cols[k] is None]
    if missing:
        raise MatrixDocError(f"the table has no column for {', '.join(missing)}")
    rows = []
    for ln in table[2:]:  # header and the |---| line
        cells = _cells(ln)
        if len(cells) < len(header):
            raise MatrixDocError(f"short row {ln.strip()[:80]!r}")

        def cell(key: str) -> str:
            index = cols[key]
            return cells[index] if index is not None else "N/A"

        va = _version(cell("vllm_ascend"), "vLLM Ascend")
        vllm = tuple(_version(v, "vLLM") for v in re.split(r"[/,]", cell("vllm")) if v.strip())
        py = _PY_RANGE.search(cell("python"))
        if py is None:
            raise MatrixDocError(f"Python range {cell('python')!r} of {va}")
        torch, _, torch_npu = cell("torch").partition("/")
        if not torch_npu:
            raise MatrixDocError(f"PyTorch/torch_npu {cell('torch')!r} of {va}")
        rows.append(
            MatrixRow.model_construct(  # the doc's cells as read; MatrixDocError covers what is unreadable
                vllm_ascend=va, vllm=vllm, python_min=py.group(1), python_max_exclusive=py.group(2),
                cann=cell("cann").strip(), torch=_version(torch, "torch"), torch_npu=_version(torch_npu, "torch_npu"),
                triton_ascend=_optional(cell("triton"), "Triton Ascend"), mooncake=_optional(cell("mooncake"), "Mooncake"),
                source=source,
            )
        )
    if not rows:
        raise MatrixDocError("the table has no rows")
    return tuple(rows)


def parse_main_targets(mkdocs_yml: str, commit: str, source: str) -> MatrixRow | None:
    """What main is built against, from mkdocs.yml's `extra:` values; None when they are missing."""
    extra = {m.group(1): m.group(2).strip().strip("\"'") for m in _EXTRA_KEY.finditer(mkdocs_yml)}
    py = _PY_RANGE.search(extra.get("main_python_version", ""))
    torch, _, torch_npu = extra.get("main_pytorch_torch_npu_version", "").partition("/")
    cann = extra.get("main_cann_version", "")
    if py is None or not torch_npu.strip() or not cann or not _HEX.match(commit):
        return None
    triton = extra.get("main_triton_ascend_version", "").strip()
    return MatrixRow.model_construct(
        vllm_ascend="main", vllm=(commit,), python_min=py.group(1), python_max_exclusive=py.group(2), cann=cann,
        torch=torch.strip(), torch_npu=torch_npu.strip(), triton_ascend=triton if _VERSION.match(triton) else None,
        mooncake=None, source=source,
    )


# ------------------------------------------------------------------ versions


def version_key(version: str) -> tuple[tuple[int, ...], int, int, int]:
    """Orders releases: 0.9.1rc1 < 0.9.1 < 0.9.1.post1; a dev build sorts before its release."""
    v = version.lower().lstrip("v").split("+", 1)[0].replace(".rc", "rc")
    nums = tuple(int(n) for n in re.findall(r"\d+", re.split(r"rc|\.post|\.dev", v, maxsplit=1)[0]))
    rc = re.search(r"rc(\d+)", v)
    post = re.search(r"\.post(\d+)", v)
    dev = re.search(r"\.dev(\d+)", v)
    stage = 0 if dev and not rc else 1 if rc else 2
    return nums, stage, int(rc.group(1)) if rc else 0, int(post.group(1)) if post else -1


# ------------------------------------------------------------------ the clone


def _git(clone: Path, *args: str) -> str:
    # No lazy fetch: a blobless clone must not reach the network to answer a question.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, check=True)
    return done.stdout


def _blob_url(branch: str) -> str:
    return f"https://github.com/{REPO}/blob/{branch}/{MATRIX_DOC}"


def _find_doc(clone: Path) -> Path | None:
    known = clone / MATRIX_DOC
    if known.is_file():
        return known
    # The doc moved: the Markdown page under docs/ that carries the heading (translations skipped).
    for path in sorted((clone / "docs").rglob("*.md")) if (clone / "docs").is_dir() else ():
        if "locale" in path.parts or path.stat().st_size > MAX_DOC_BYTES:
            continue
        if HEADING.search(path.read_text(encoding="utf-8", errors="replace")):
            return path
    return None


def _branch_rows(clone: Path, doc: str, known: set[str]) -> list[MatrixRow]:
    """Rows that only a release branch lists yet (its release candidate is newer than HEAD's doc)."""
    refs = _git(clone, "for-each-ref", "--format=%(refname:short)", "refs/remotes/origin/releases", "refs/heads/releases").split()
    out: list[MatrixRow] = []
    for ref in refs:
        branch = ref.removeprefix("origin/")
        try:
            rows = parse_release_table(_git(clone, "show", f"{ref}:{doc}"), _blob_url(branch))
        except (subprocess.SubprocessError, OSError, MatrixDocError):
            continue  # a branch without the doc (or an older layout) adds nothing
        for row in rows:
            if row.vllm_ascend not in known:
                known.add(row.vllm_ascend)
                out.append(row)
    return out


def _merged(head: tuple[MatrixRow, ...], extra: list[MatrixRow]) -> tuple[MatrixRow, ...]:
    """HEAD's rows in its order, each branch-only row placed before the first older HEAD row."""
    rows = list(head)
    for row in sorted(extra, key=lambda r: version_key(r.vllm_ascend), reverse=True):
        at = next((i for i, r in enumerate(rows) if version_key(r.vllm_ascend) < version_key(row.vllm_ascend)), len(rows))
        rows.insert(at, row)
    return tuple(rows)


@dataclass(frozen=True)
class ClonedMatrix:
    """What a clone says: its rows (release-branch rows merged in), main's row when mkdocs.yml and the
    verified-commit file are readable (vllm_ascend "main", vllm = the verified commit), and its HEAD."""

    rows: tuple[MatrixRow, ...]
    main: MatrixRow | None
    verified: str  # .github/vllm-main-verified.commit, "" when missing or not a commit
    commit: str
    day: str
    doc: str  # the doc's path in the clone


def read_clone_matrix(clone: Path) -> ClonedMatrix:
    """The matrix as the clone says at HEAD. Raises MatrixDocError (no doc, or a table we cannot read),
    OSError or subprocess.SubprocessError."""
    doc = _find_doc(clone)
    if doc is None:
        raise MatrixDocError("no doc with a 'Release compatibility matrix' heading")
    relative = doc.relative_to(clone).as_posix()
    rows = parse_release_table(doc.read_text(encoding="utf-8", errors="replace")[:MAX_DOC_BYTES], f"{REPO}:{relative}")
    head = _git(clone, "log", "-1", "--format=%H %cs").split()
    commit, day = (head[0], head[1]) if len(head) == 2 else ("", "")
    try:
        extra = _branch_rows(clone, relative, {r.vllm_ascend for r in rows})
    except (subprocess.SubprocessError, OSError):
        extra = []
    verified = (clone / MAIN_COMMIT_FILE).read_text(encoding="utf-8", errors="replace").strip() if (clone / MAIN_COMMIT_FILE).is_file() else ""
    verified = verified if _HEX.match(verified) else ""
    main = None
    if verified:
        mkdocs = (clone / MKDOCS).read_text(encoding="utf-8", errors="replace")[:MAX_DOC_BYTES] if (clone / MKDOCS).is_file() else ""
        main = parse_main_targets(mkdocs, verified, f"{REPO}:{MKDOCS}")
    return ClonedMatrix(_merged(rows, extra), main, verified, commit, day, relative)


def with_clone_matrix(fallback: VersionMatrix, cloned: ClonedMatrix, where: str = "the vllm-ascend clone") -> VersionMatrix:
    """`fallback` (the built-in copy) with the clone's rows and main's commit and targets."""
    main = fallback.main_branch
    if cloned.verified:
        main = main.model_copy(update={"commit": cloned.verified, "as_of": f"vllm-ascend {cloned.commit[:7]} ({cloned.day})",
                                       "targets": cloned.main or main.targets})
    read_from = f"{where} at {cloned.commit[:7]} ({cloned.day})" if cloned.commit else where
    return fallback.model_copy(update={"rows": cloned.rows, "main_branch": main, "read_from": read_from})


def matrix_from_clone(clone: Path, fallback: VersionMatrix) -> VersionMatrix:
    """The matrix as the clone says at HEAD; `fallback` (the built-in copy) when it cannot be read."""
    if _find_doc(clone) is None:
        return fallback
    try:
        cloned = read_clone_matrix(clone)
    except (OSError, subprocess.SubprocessError, MatrixDocError) as exc:
        log.warning("vllm-ascend matrix in %s unreadable (%s); using the built-in copy", clone, exc)
        return fallback
    return with_clone_matrix(fallback, cloned)


# ------------------------------------------------------------------ current knowledge


@dataclass
class _Cached:
    key: tuple[str, str]
    checked: float
    kb: KnowledgeBase


_cache: dict[str, _Cached] = {}
_lock = threading.Lock()


def _clone_key(clone: Path) -> str:
    """Changes when a sync moves HEAD or rewrites the doc (no git process needed)."""
    parts = []
    for path in (clone / ".git" / "HEAD", clone / ".git" / "FETCH_HEAD", clone / ".git" / "packed-refs", clone / MATRIX_DOC):
        try:
            parts.append(f"{path.stat().st_mtime_ns}")
        except OSError:
            parts.append("-")
    return ":".join(parts)


def _configured_repos_dir() -> Path:
    from core.research.settings import ResearchSettings  # noqa: PLC0415 - REPOS_DIR is owned there

    return ResearchSettings().repos_dir


def current_knowledge(repos_dir: Path | None = None, data_dir: Path | None = None, *, clock: float | None = None) -> KnowledgeBase:
    """The built-in knowledge base with what the clones say: the generated tables of DATA_DIR/knowledge
    (written by `python -m bot index`) when they were read from a commit at least as new as the built-in
    copy, else the matrix read from the vllm-ascend clone in REPOS_DIR, else the built-in copy.

    Re-read when a table or the clone changed (checked at most every RECHECK_SECONDS). A caller that
    names `repos_dir` alone (a test, a tool) reads only that clone, no DATA_DIR."""
    from core.knowledge.generated import tables  # noqa: PLC0415 - the generated package imports this module

    base = load_knowledge_base()
    try:
        root = repos_dir if repos_dir is not None else _configured_repos_dir()
        data = data_dir
        if data is None and repos_dir is None:
            data = tables.configured_data_dir()
    except Exception:  # noqa: BLE001 - settings that fail to load are reported at startup, not here
        return base
    clone = root / REPO
    has_clone = (clone / ".git").exists()
    if not has_clone and data is None:
        return base
    now = time.monotonic() if clock is None else clock
    with _lock:
        slot = f"{clone}|{data}"
        cached = _cache.get(slot)
        if cached is not None and now - cached.checked < RECHECK_SECONDS:
            return cached.kb
        generated = ":".join(tables.stamp(name, data) for name in ("matrix", "env_vars")) if data is not None else "-"
        key = (str(id(base)), f"{_clone_key(clone) if has_clone else '-'}|{generated}")
        if cached is not None and cached.key == key:
            cached.checked = now
            return cached.kb
        kb = _with_generated(base, data) if data is not None else base
        if kb.matrix is base.matrix and has_clone:
            matrix = matrix_from_clone(clone, base.matrix)
            kb = kb if matrix is base.matrix else replace(kb, matrix=matrix)
        _cache[slot] = _Cached(key, now, kb)
        return kb


def _with_generated(base: KnowledgeBase, data_dir: Path) -> KnowledgeBase:
    """`base` with the generated matrix and env vars of `data_dir` that are at least as new as it."""
    from core.knowledge.generated import env_vars, matrix, tables  # noqa: PLC0415
    from core.knowledge.generated.check import builtin_stamp  # noqa: PLC0415

    _, day = builtin_stamp(base)
    kb = base
    table = tables.load(matrix.NAME, data_dir)
    if table is not None and table.is_newer_than(day):
        try:
            kb = replace(kb, matrix=with_clone_matrix(base.matrix, matrix.cloned_matrix(table), "the indexed vllm-ascend clone"))
        except (KeyError, TypeError, IndexError) as exc:
            log.warning("generated matrix in %s unreadable (%s); not used", data_dir, exc)
    table = tables.load(env_vars.NAME, data_dir)
    if table is not None and table.is_newer_than(day):
        kb = replace(kb, env_vars=env_vars.with_generated(base.env_vars, table))
    return kb
