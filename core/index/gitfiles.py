"""Files of a clone without one `git` process per file: blob ids from `git ls-files -s`, contents from
the work tree (`sync` keeps it at the fetched commit)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

_REGULAR = {"100644", "100755"}  # no symlinks (120000) or submodules (160000)


class GitListingError(Exception):
    pass


@dataclass(frozen=True)
class TrackedFile:
    path: str
    blob: str


def _git(clone: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitListingError(f"git {args[0]} failed in {clone}: {exc}") from exc
    if done.returncode != 0:
        raise GitListingError(f"git {args[0]} failed in {clone}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout


def head_commit(clone: Path) -> str:
    return _git(clone, "rev-parse", "HEAD").decode().strip()


def tracked_files(clone: Path) -> list[TrackedFile]:
    out: list[TrackedFile] = []
    for entry in _git(clone, "ls-files", "-s", "-z").split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) != 3 or fields[0].decode() not in _REGULAR or fields[2] != b"0":
            continue
        out.append(TrackedFile(raw_path.decode("utf-8", errors="surrogateescape"), fields[1].decode()))
    return out


def read_file(clone: Path, path: str, max_bytes: int) -> bytes | None:
    """The file's bytes from the work tree; None when missing or over `max_bytes`."""
    target = clone / path
    try:
        if target.stat().st_size > max_bytes:
            return None
        return target.read_bytes()
    except OSError:
        return None
