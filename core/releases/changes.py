"""Release notes read from a clone: one bullet per change, with its release, section, PRs and issues.

Three layouts, one result:
- vllm-ascend keeps every release's notes in docs/source/user_guide/release_notes.md on its default
  branch: one `## vX.Y.Z` section per release, `###` subsections (Highlights, Bug Fixes, Known
  Issues, Deprecation …), bullets ending in PR links (`parse_release_notes`);
- MindIE-LLM's docs/zh/release_notes.md has a `## 3.0.0 更新说明` section whose `###` subsections
  (新增特性, 修改特性, 删除特性, 已解决的问题, 遗留问题 …) are HTML tables: one change per row, or per
  `<li>` of a row (`parse_table_notes`);
- msModelSlim's docs/zh/appendix/release_notes.md lists each version as `### 26.0.0.alpha02` with
  numbered items (`parse_numbered_notes`). core/releases/notes.py ranks the bullets against
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


_TABLE_RELEASE = re.compile(r"^##\s{1,4}(\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:[.\-]?(?:rc|alpha|beta)\.?\d{0,4})?)\s{0,4}更新说明")
_TABLE_SECTION = re.compile(r"^###\s{1,4}([^<\n]{1,60})")
_TAG = re.compile(r"<[^<>]{0,600}>")
_ISSUE_REF = re.compile(r"/issues/(\d{1,7})\b")
_TRAILING_ISSUES = re.compile(r"(?:\s{0,4}issue #\d{1,7}){1,20}\s{0,4}$")
_NUMBERED_RELEASE = re.compile(r"^###\s{1,4}v?(\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:[.\-]?(?:rc|alpha|beta|post)\.?\d{0,4})?)\s{0,4}$")
_NUMBERED_ITEM = re.compile(r"^\s{0,4}(?:\d{1,3}[.、)]|[-*])\s{1,4}(.{2,1000})$")


def _cell_text(html: str) -> str:
    return " ".join(_TAG.sub(" ", html).replace("&nbsp;", " ").split())


def parse_table_notes(text: str) -> list[NoteBullet]:
    """MindIE-LLM's layout: a release section of HTML tables, one change per row (or per `<li>`)."""
    bullets: list[NoteBullet] = []
    release, section, chunk = "", "", []

    def flush() -> None:
        if not (release and section and chunk):
            return
        for row in "".join(chunk).split("<tr")[1:]:
            cells = row.split("<td")[1:]
            if len(cells) < 2:
                continue  # a header row (<th>)
            head = [t for t in (_cell_text("<td" + c) for c in cells[1:-1]) if t]
            items = cells[-1].split("<li>")[1:] or ["<td" + cells[-1]]
            for item in items:
                issues = tuple(dict.fromkeys(int(n) for n in _ISSUE_REF.findall(item)))
                words = " — ".join([*head, _cell_text(item)]).replace("#Issue", "issue #").strip(" —")
                words = _TRAILING_ISSUES.sub("", words)  # the answer names the issue itself
                if len(words) >= 4:
                    bullets.append(NoteBullet(release, section, words, (), issues, words))

    for line in text.splitlines():
        if (found := _TABLE_RELEASE.match(line)) is not None:
            flush()
            release, section, chunk = found.group(1), "", []
        elif line.startswith("## "):
            flush()
            release, section, chunk = "", "", []
        elif (sub := _TABLE_SECTION.match(line)) is not None:
            flush()
            section, chunk = sub.group(1).strip(), []
        else:
            chunk.append(line + "\n")
    flush()
    return bullets


def parse_numbered_notes(text: str) -> list[NoteBullet]:
    """msModelSlim's layout: `### <version>` then numbered items (all of them what the version adds)."""
    bullets: list[NoteBullet] = []
    release = ""
    for line in text.splitlines():
        if (found := _NUMBERED_RELEASE.match(line)) is not None:
            release = found.group(1)
        elif line.startswith("#"):
            release = ""
        elif release and (item := _NUMBERED_ITEM.match(line)) is not None:
            body = item.group(1).strip()
            bullets.append(NoteBullet(release, "新增特性", drop_links(_LINK.sub(r"\1", body)).strip(), (), (), body))
    return bullets


PARSERS = {"markdown": parse_release_notes, "table": parse_table_notes, "numbered": parse_numbered_notes}


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
