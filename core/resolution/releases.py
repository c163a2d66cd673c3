"""Pull request → merge commit → the first release tag that contains it, read from a clone.

Squash merges on GitHub end their subject with "(#N)"; the commit of PR N is found by that
number in the subjects of every branch and tag (release branches carry their own backports). A
commit's first release is the lowest version tag it is reachable from: tags are walked in version
order and each commit is credited to the first tag that reaches it (one `git rev-list` per tag,
about a second for vllm-ascend's 40 tags, instead of one `git tag --contains` per PR).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_PR_SUBJECT = re.compile(r"\(#(\d{1,7})\)\s{0,4}$|^Merge pull request #(\d{1,7})\b")
_RELEASE_TAG = re.compile(r"^v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:[.\-]?(rc|post|dev|alpha|beta)\.?(\d{0,4}))?$", re.IGNORECASE)
# dev < alpha < beta < rc < the release < post (msModelSlim's 26.0.0.alpha02, MindIE's 3.0.0.beta.1).
_STAGE_RANK = {"dev": 0, "alpha": 1, "beta": 2, "rc": 3, None: 4, "post": 5}


def version_key(tag: str) -> tuple[int, ...] | None:
    """Sort key of a release tag (v0.9.1rc1 < v0.9.1 < v0.9.1.post1); None for other tags."""
    match = _RELEASE_TAG.match(tag.strip())
    if match is None:
        return None
    major, minor, patch, stage, n = match.groups()
    rank = _STAGE_RANK[stage.lower() if stage else None]
    return (int(major), int(minor), int(patch or 0), rank, int(n or 0))


@dataclass
class ReleaseMap:
    """PR number → first release tag, for one clone."""

    first_release: dict[int, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()  # release tags, oldest first

    def release_of(self, pr: int) -> str:
        return self.first_release.get(pr, "")


def _git(clone: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, timeout=300, check=False)
    if done.returncode != 0:
        raise OSError(f"git {args[0]}: {done.stderr.decode(errors='replace').strip()[:200]}")
    return done.stdout.decode("utf-8", errors="replace")


def release_map(clone: Path, wanted: set[int] | None = None) -> ReleaseMap:
    """Release of each PR in `wanted` (all PRs found in subjects when None). Empty without tags."""
    tags = sorted((t for t in _git(clone, "tag", "--list").split() if version_key(t) is not None), key=lambda t: version_key(t) or ())
    commits_of: dict[int, list[str]] = {}
    for line in _git(clone, "log", "--all", "--format=%H %s").splitlines():
        sha, _, subject = line.partition(" ")
        match = _PR_SUBJECT.search(subject)
        if match is None:
            continue
        number = int(match.group(1) or match.group(2))
        if wanted is None or number in wanted:
            commits_of.setdefault(number, []).append(sha)
    if not tags or not commits_of:
        return ReleaseMap({}, tuple(tags))
    looking = {sha for shas in commits_of.values() for sha in shas}
    first_tag: dict[str, str] = {}
    for tag in tags:
        if not looking:
            break
        reached = set(_git(clone, "rev-list", tag, "--").split())
        for sha in looking & reached:
            first_tag[sha] = tag
        looking -= reached
    found: dict[int, str] = {}
    for number, shas in commits_of.items():
        releases = [first_tag[s] for s in shas if s in first_tag]
        if releases:
            found[number] = min(releases, key=lambda t: version_key(t) or ())
    return ReleaseMap(found, tuple(tags))
