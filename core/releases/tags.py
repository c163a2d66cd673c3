"""The release tags a clone holds, and which one to read for the version a user gave.

A user's "0.9.1" reads at v0.9.1; a version without its own tag (a patch, a dev build, "0.10.0"
before its final release) reads at the nearest release tag at or below it, and the answer says
which. A version above every tag the clone holds has no tag to read: it is newer than the clone,
or it does not exist, and either way main is read (and the answer does not claim a release).
"""
from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from core.resolution.releases import version_key

# "0.9.2.dev45+gabc1234" -> "0.9.2.dev45": the local part names a build, not a release.
_LOCAL_PART = re.compile(r"\+[\w.]{0,80}$")
_TAGS_TTL = 60.0  # seconds a clone's tag list is trusted (sync adds tags; a worker sees them within a minute)


@dataclass(frozen=True)
class ReleaseChoice:
    """The tag one answer reads at for one repository."""

    repo: str
    asked: str  # the user's version, as read ("0.9.1", "0.10.0rc1")
    tag: str  # the release tag read ("v0.9.1")
    commit: str

    @property
    def exact(self) -> bool:
        return normalized(self.tag) == normalized(self.asked)

    @property
    def theirs(self) -> str:
        """The user's release as an answer names it: their own version, not the nearest tag read."""
        if self.exact or not self.asked:
            return self.tag
        return self.asked if self.asked[:1].lower() == "v" else "v" + self.asked


def normalized(version: str) -> str:
    """'v0.9.1' and '0.9.1' compare equal; the build part of a dev version is dropped."""
    text = _LOCAL_PART.sub("", version.strip())
    return text[1:] if text[:1] in ("v", "V") else text


def release_tags(clone: Path) -> tuple[str, ...]:
    """Release tags of a clone (v0.9.1, v0.10.0rc1, …), oldest first; () without a clone or tags."""
    try:
        done = subprocess.run(["git", "-C", str(clone), "tag", "--list"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if done.returncode != 0:
        return ()
    names = [t for t in done.stdout.decode("utf-8", errors="replace").split() if version_key(t) is not None]
    return tuple(sorted(names, key=lambda t: version_key(t) or ()))


def tag_commit(clone: Path, tag: str) -> str:
    done = subprocess.run(["git", "-C", str(clone), "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"],
                          capture_output=True, timeout=30, check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else ""


def nearest_release(tags: tuple[str, ...], version: str) -> str | None:
    """The tag of `version`, else the newest tag below it; None when it is above every tag or unreadable."""
    wanted = version_key(normalized(version))
    if wanted is None:
        return None
    keyed = [(version_key(t), t) for t in tags]
    if not any(key is not None and key >= wanted for key, _ in keyed):
        return None  # newer than the clone (or not a release at all): nothing to read it at
    below = [(key, t) for key, t in keyed if key is not None and key <= wanted]
    return max(below)[1] if below else None


class TagLists:
    """Release tags per clone, re-read at most once a minute (one `git tag` per answer is wasted work)."""

    def __init__(self, clock=time.monotonic) -> None:  # type: ignore[no-untyped-def]
        self._clock = clock
        self._seen: dict[Path, tuple[float, tuple[str, ...]]] = {}

    def of(self, clone: Path) -> tuple[str, ...]:
        now = self._clock()
        cached = self._seen.get(clone)
        if cached is not None and now - cached[0] < _TAGS_TTL:
            return cached[1]
        tags = release_tags(clone)
        self._seen[clone] = (now, tags)
        return tags
