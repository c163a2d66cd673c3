"""The user's environment checked against the compatibility matrix row of their vllm-ascend release.

Every column the matrix has is compared (vLLM, Python, CANN, torch, torch_npu, Triton Ascend,
Mooncake), and the hardware: whether that release supports the chip (core/knowledge/hardware.json
`since` / `not_in`, from the release notes) and whether the image they run targets it. The
result names the fields that differ and the row to move to: the row that fits more of what they
have, or their own row and the fields to change.

What holds without a row of their own:
- a post release (0.9.1.post1) repackages its release: that release's row holds;
- a development build (0.9.2.dev45+g1a2b3c4) is no release: the row of the release it leads to,
  or main's targets when it is newer than every row;
- main: the targets main is built against (Python, CANN, torch/torch_npu, Triton Ascend, and one
  verified vLLM commit rather than a vLLM release);
- any other version: the rows of its release line, or that the matrix (read from the clone or the
  built-in copy) has no such release.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.environment import Environment
from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import MatrixRow
from core.release_matrix import version_key

VerdictStatus = Literal["match", "mismatch", "unknown", "info", "expected"]
CheckKind = Literal["row", "post", "dev", "main", "no_row", "vllm_only", "none"]

FIELD_NAMES = {
    "vllm": "vLLM", "cann": "CANN", "torch": "torch", "torch_npu": "torch_npu", "python": "Python",
    "triton-ascend": "Triton Ascend", "mooncake": "Mooncake", "chip": "chip", "image": "image",
}
# The columns a row is scored on when looking for the row that fits the user's stack.
_SCORED = ("vllm", "cann", "torch", "torch_npu", "python", "triton-ascend", "mooncake")


@dataclass(frozen=True)
class VersionVerdict:
    """One comparison against the compatibility matrix.

    component: vllm | cann | torch | torch_npu | python | triton-ascend | mooncake | chip | image | vllm-ascend.
    For status "info", `expected` lists vllm-ascend releases whose row holds `found` (a vLLM version).
    """

    status: VerdictStatus
    component: str
    found: str
    expected: str
    vllm_ascend: str
    row: MatrixRow | None
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseCheck:
    kind: CheckKind
    release: str  # the vllm-ascend release as read ("" when none)
    row: MatrixRow | None  # the row the fields were checked against (main's targets for main)
    verdicts: tuple[VersionVerdict, ...]
    move_to: MatrixRow | None = None  # a row that fits more of the user's stack than their own
    # Their Python outside their row: the first newer row that takes it (newer Python), or the
    # newest older row that does (older Python), and which of the two.
    python_row: MatrixRow | None = None
    python_newer: bool = True

    @property
    def differs(self) -> tuple[str, ...]:
        return tuple(v.component for v in self.verdicts if v.status == "mismatch")


NO_CHECK = ReleaseCheck("none", "", None, ())


# ------------------------------------------------------------------ versions


def norm_version(v: str) -> str:
    v = v.strip().lower()
    v = v[1:] if v.startswith("v") else v
    return v.split("+", 1)[0].replace(".rc", "rc")


def release_line(v: str) -> str:
    """0.8.4rc2, 0.8.4.post1, 0.8.4.dev3 and 0.8.4 share the release line 0.8.4."""
    return re.split(r"rc|\.post|\.dev", v, maxsplit=1)[0]


def norm_cann(v: str) -> str:
    v = norm_version(v).upper()
    return re.sub(r"\.(?:B\d+|ALPHA\d*|BETA\d*)$", "", v)


def _py_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:2])


def find_row(kb: KnowledgeBase, vllm_ascend: str) -> MatrixRow | None:
    wanted = norm_version(vllm_ascend)
    return next((r for r in kb.matrix.rows if r.vllm_ascend == wanted), None)


def _is_dev(v: str) -> bool:
    low = v.lower()
    return ".dev" in low or "+g" in low


# ------------------------------------------------------------------ fields


def _field_status(component: str, found: str, row: MatrixRow) -> tuple[VerdictStatus, str] | None:
    """(status, the row's value) for one column; None when the row has no value for it."""
    if component == "vllm":
        if row.vllm_ascend == "main":  # main pins a vLLM commit, not a release
            sha = re.search(r"\+g([0-9a-f]{7,40})", found.lower())
            ok = bool(sha) and row.vllm[0].startswith(sha.group(1))  # type: ignore[union-attr]
            return ("match" if ok else "info"), row.vllm[0][:8]
        f = norm_version(found)
        series = f.count(".") == 1 and any(v.startswith(f + ".") for v in row.vllm)  # "vllm 0.11" names a series
        return ("match" if f in row.vllm or series else "mismatch"), " / ".join(row.vllm)
    if component == "cann":
        return ("match" if norm_cann(found) == norm_cann(row.cann) else "mismatch"), row.cann
    if component == "python":
        ok = _py_tuple(row.python_min) <= _py_tuple(found) < _py_tuple(row.python_max_exclusive)
        return ("match" if ok else "mismatch"), f">={row.python_min},<{row.python_max_exclusive}"
    expected = {"torch": row.torch, "torch_npu": row.torch_npu, "triton-ascend": row.triton_ascend, "mooncake": row.mooncake}.get(component)
    if not expected:
        return None
    return ("match" if norm_version(found) == norm_version(expected) else "mismatch"), expected


def _fields(env: Environment, row: MatrixRow, shown_as: str, sources: tuple[str, ...]) -> list[VersionVerdict]:
    out = []
    for component in ("vllm", "cann", "torch_npu", "torch", "python", "triton-ascend", "mooncake"):
        found = env.get(component)
        if component == "vllm" and not found:
            if row.vllm_ascend != "main":
                out.append(VersionVerdict("expected", "vllm", "", " / ".join(row.vllm), shown_as, row, sources))
            continue
        if not found:
            continue
        status = _field_status(component, found, row)
        if status is not None:
            out.append(VersionVerdict(status[0], component, norm_version(found) if component == "vllm" else found, status[1], shown_as, row, sources))
    return out


def _score(env: Environment, row: MatrixRow) -> int:
    return sum(1 for c in _SCORED if env.get(c) and (_field_status(c, env.get(c) or "", row) or ("", ""))[0] == "match")


def _move_to(env: Environment, own: MatrixRow, kb: KnowledgeBase, verdicts: list[VersionVerdict]) -> MatrixRow | None:
    """The row that fits strictly more of the user's versions than their own (newest first on ties)."""
    if not any(v.status == "mismatch" and v.component in _SCORED for v in verdicts):
        return None
    mine = _score(env, own)
    best = max(kb.matrix.rows, key=lambda r: _score(env, r))  # max keeps the first (newest) of equals
    return best if best is not own and _score(env, best) > mine else None


def _python_row(env: Environment, own: MatrixRow, kb: KnowledgeBase, verdicts: list[VersionVerdict]) -> tuple[MatrixRow | None, bool]:
    """For a Python outside their row: the nearest release whose row takes it, in the direction
    their Python lies ("3.12 from v0.21.0rc1 on", "3.9 up to v0.11.0")."""
    found = env.get("python")
    if not found or not any(v.component == "python" and v.status == "mismatch" for v in verdicts) or own.vllm_ascend == "main":
        return None, True
    mine, py = version_key(own.vllm_ascend), _py_tuple(found)
    newer = py >= _py_tuple(own.python_max_exclusive)
    fits = [r for r in kb.matrix.rows if r.vllm_ascend != "main"
            and _py_tuple(r.python_min) <= py < _py_tuple(r.python_max_exclusive)
            and (version_key(r.vllm_ascend) > mine if newer else version_key(r.vllm_ascend) < mine)]
    if not fits:
        return None, newer
    pick = min if newer else max
    return pick(fits, key=lambda r: version_key(r.vllm_ascend)), newer


# ------------------------------------------------------------------ hardware


def _hardware(env: Environment, release: str, row: MatrixRow, kb: KnowledgeBase) -> list[VersionVerdict]:
    """Whether this release supports the chip, and whether the image they run is built for it."""
    out = []
    chip = kb.chip(env.chip) if env.chip else None
    too_early = False  # their release does not support the chip at all: no image of it would
    if chip is not None and release and release != "main" and chip.support != "unsupported":
        early = chip.since is not None and version_key(release) < version_key(chip.since)
        too_early = early or norm_version(release) in chip.not_in
        if too_early:
            expected = f"v{chip.since}+" + (f" ({', '.join('v' + v for v in chip.not_in)} excluded)" if chip.not_in else "")
            out.append(VersionVerdict("mismatch", "chip", f"{chip.id} ({chip.family})", expected, row.vllm_ascend, row,
                                      (chip.releases_source or chip.source,)))
    target, real, image = env.get("image_target"), env.get("chip"), env.get("image") or ""
    mine = kb.chip(real) if real else None
    if target and mine is not None and target != mine.id and kb.chip(target) is not None:
        name, _, tag = image.rpartition(":")
        if name.lower().endswith("vllm-ascend") and release and too_early and chip is not None and chip.since:
            # No image of their release is built for the chip ("v0.7.3-a3" does not exist): name the range.
            wanted = f"{name}:<v{chip.since}+>{mine.image_suffix}"
        elif name.lower().endswith("vllm-ascend") and release:
            wanted = f"{name}:v{release}{mine.image_suffix}" + ("-openeuler" if "openeuler" in tag.lower() else "")
        else:
            wanted = f"{mine.family} ({mine.id})"
        out.append(VersionVerdict("mismatch", "image", f"{image} ({target})", wanted, row.vllm_ascend, row, (mine.source,)))
    return out


# ------------------------------------------------------------------ the check


def check_release(env: Environment, kb: KnowledgeBase, *, on_main: bool = False) -> ReleaseCheck:
    """Compare an environment with the vllm-ascend compatibility matrix (same row = compatible)."""
    va, vllm = env.get("vllm-ascend"), env.get("vllm")
    policy = kb.matrix.policy.source
    if va and norm_version(va) == "main":
        va, on_main = None, True
    if va:
        release = norm_version(va)
        row = find_row(kb, release)
        kind: CheckKind = "row"
        if row is None and ".post" in release and not _is_dev(va):
            row, kind = find_row(kb, release.split(".post", 1)[0]), "post"
        if row is None and _is_dev(va):
            line = [r for r in kb.matrix.rows if release_line(r.vllm_ascend) == release_line(release)]
            newest = kb.matrix.rows[0].vllm_ascend
            if line:
                row, kind = line[0], "dev"
            elif version_key(release_line(release)) > version_key(newest) and kb.matrix.main_branch.targets is not None:
                row, kind = kb.matrix.main_branch.targets, "dev"
        if row is None:
            newest = kb.matrix.rows[0].vllm_ascend
            unknown = VersionVerdict("unknown", "vllm-ascend", release, newest, release, None, (policy,))
            return ReleaseCheck("no_row", va.lstrip("vV"), None, (unknown,))
        sources = (row.source,)
        verdicts = _fields(env, row, row.vllm_ascend, sources)
        verdicts += _hardware(env, release, row, kb)
        move = _move_to(env, row, kb, verdicts) if row.vllm_ascend != "main" else None
        python_row, newer = _python_row(env, row, kb, verdicts)
        return ReleaseCheck(kind, va.lstrip("vV"), row, tuple(verdicts), move, python_row, newer)
    targets = kb.matrix.main_branch.targets
    if on_main and targets is not None and any(env.get(c) for c in _SCORED):
        verdicts = _fields(env, targets, "main", (targets.source, kb.matrix.main_branch.source))
        return ReleaseCheck("main", "main", targets, tuple(verdicts))
    if vllm:
        found = norm_version(vllm)
        rows = [r for r in kb.matrix.rows if found in r.vllm]
        if not rows and found.count(".") == 1:  # "vllm 0.11": the series, every 0.11.x row
            rows = [r for r in kb.matrix.rows if any(v.startswith(found + ".") for v in r.vllm)]
            found = f"{found}.x" if rows else found
        expected = ", ".join(f"v{r.vllm_ascend}" for r in rows)
        srcs = tuple(dict.fromkeys(r.source for r in rows)) or (policy,)
        return ReleaseCheck("vllm_only", "", None, (VersionVerdict("info", "vllm-ascend", found, expected, "", None, srcs),))
    return NO_CHECK
