"""Release notes read from a clone: one bullet per change, with its release, section, PRs and issues.

vllm-ascend keeps every release's notes in docs/source/user_guide/release_notes.md on its default
branch: one `## vX.Y.Z` section per release, `###` subsections (Highlights, Bug Fixes, Known
Issues, Deprecation …), bullets ending in PR links. core/releases/notes.py ranks the bullets against
a question and core/releases/news.py frames them for the user's release.

Every regex here is linear (bounded repetition, no nested quantifiers).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from core.untrusted_text import drop_links

_SECTION = re.compile(r"^##\s{1,4}(v?\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:\.?(?:rc|post|dev)\d{0,4})?)\b")
_SUBSECTION = re.compile(r"^###\s{1,4}(.{1,80})$")
_BULLET = re.compile(r"^\s{0,8}[-*]\s{1,4}(.{1,2000})$")
_TRAILING_PRS = re.compile(r"(?:[\s,;†]{1,4}#\d{1,7}){1,40}[\s†.]{0,4}$")
_TRAILING_IN = re.compile(r"\s{1,4}in\.?$")  # "… predictions in [#1332](…)" leaves "in" once the link goes
_LINK = re.compile(r"\[([^\]]{0,200})\]\([^)\s]{0,400}\)")
_LINK_TARGET = re.compile(r"\]\(([^)\s]{0,400})\)|<(https?://[^>\s]{0,400})>")
_ISSUE_LINK = re.compile(r"/issues/(\d{1,7})\b")
_PULL_LINK = re.compile(r"/pull/(\d{1,7})\b")
_BARE_PR = re.compile(r"(?<![\w/#])#(\d{1,7})\b")


@dataclass(frozen=True)
class NoteBullet:
    release: str  # "v0.10.0rc1"
    section: str  # "Features", "Bug Fixes", …
    text: str
    prs: tuple[int, ...]
    issues: tuple[int, ...] = ()  # issues the bullet links to (a known issue's tracking issue)
    raw: str = ""  # the bullet as written (links included), to find its translation


def git_show(clone: Path, spec: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(clone), "show", spec], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else ""


def parse_release_notes(text: str) -> list[NoteBullet]:
    bullets: list[NoteBullet] = []
    release, section = "", ""
    for line in text.splitlines():
        if (found := _SECTION.match(line)) is not None:
            name = found.group(1)
            release, section = (name if name.startswith("v") else "v" + name), ""
        elif (sub := _SUBSECTION.match(line)) is not None:
            section = sub.group(1).strip()
        elif release and (bullet := _BULLET.match(line)) is not None:
            body = bullet.group(1)
            prs, issues = _references(body)
            # Repository text: a link's words stay, no URL does (the PRs are named on their own).
            text = _TRAILING_IN.sub("", _TRAILING_PRS.sub("", drop_links(_LINK.sub(r"\1", body))).strip())
            bullets.append(NoteBullet(release, section, text, prs, issues, body))
    return bullets


def _references(body: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(PRs, issues) a bullet links to: `/issues/N` links are issues, `/pull/N` and bare `#N` PRs;
    links into another repository ("vLLM#22736") are neither."""
    prs: list[int] = []
    issues: list[int] = []
    for match in _LINK_TARGET.finditer(body):
        target = match.group(1) or match.group(2) or ""
        if (found := _ISSUE_LINK.search(target)) is not None and "/vllm/" not in target:
            issues.append(int(found.group(1)))
        elif (found := _PULL_LINK.search(target)) is not None and "/vllm/" not in target:
            prs.append(int(found.group(1)))
    rest = _LINK.sub(" ", body)
    prs += [int(n) for n in _BARE_PR.findall(rest)]
    return tuple(dict.fromkeys(prs)), tuple(dict.fromkeys(issues))


def head_commit(clone: Path) -> str:
    try:
        done = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode().strip() if done.returncode == 0 else ""
