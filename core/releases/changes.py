"""What changed between the user's release and the newest one, for the question asked.

Three sources, all read from the local clone at answer time (nothing hand-copied):
- the release notes on the default branch (vllm-ascend's docs/source/user_guide/release_notes.md:
  one `## vX.Y.Z` section per release, bullets ending in PR links): a bullet of a release newer
  than the user's that shares a specific name with the question says "added in vX (#N)" or
  "fixed in vX by #N";
- the env vars (keys of `env_variables` in vllm_ascend/envs.py) and additional_config keys
  (`.get("key"` in vllm_ascend/ascend_config.py) at the user's tag and at HEAD: a name the question
  uses that one side lacks was renamed, removed or added; a release-notes bullet naming it and
  another name gives the new name, so the answer says both;
- issue memory's PR → release links (core/resolution/releases.py): a fix the user's release predates.

Every regex here is linear (bounded repetition, no nested quantifiers).
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.messages import Language
from core.releases.tags import ReleaseChoice
from core.resolution.releases import version_key
from core.resolution.words import specific_words
from core.untrusted_text import drop_links

RELEASE_NOTES = {"vllm-project/vllm-ascend": "docs/source/user_guide/release_notes.md"}
ENV_FILES = {"vllm-project/vllm-ascend": "vllm_ascend/envs.py"}
CONFIG_FILES = {"vllm-project/vllm-ascend": "vllm_ascend/ascend_config.py"}
MAX_LINES = 4  # an answer is not a changelog

_SECTION = re.compile(r"^##\s{1,4}(v?\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:\.?(?:rc|post|dev)\d{0,4})?)\b")
_SUBSECTION = re.compile(r"^###\s{1,4}(.{1,80})$")
_BULLET = re.compile(r"^\s{0,8}[-*]\s{1,4}(.{1,2000})$")
_PR = re.compile(r"/pull/(\d{1,7})\b|(?<![\w/])#(\d{1,7})\b")
_ENV_KEY = re.compile(r"""^\s{1,12}["']([A-Z][A-Z0-9_]{2,80})["']\s{0,4}:""")
_CONFIG_KEY = re.compile(r"""\.get\(\s{0,4}["']([a-z][a-z0-9_]{2,80})["']""")
_BACKTICKED = re.compile(r"`([^`\s]{3,120})`")
_RENAME_WORDS = re.compile(r"(?i)\b(renamed|replaced|replace|migrate|moved|instead|deprecated)\b|改名|替换|迁移")
_VERSION_WORD = re.compile(r"^\d{1,3}\.\d{1,3}")
_IDENTIFIER = re.compile(r"^(?:[A-Z][A-Z0-9_]{2,80}|[a-z][a-z0-9_]{2,80})$")  # an env var or a config key
_TRAILING_PRS = re.compile(r"(?:[\s,;†]{1,4}#\d{1,7}){1,40}[\s†.]{0,4}$")
_LINK = re.compile(r"\[([^\]]{0,200})\]\([^)\s]{0,400}\)")


@dataclass(frozen=True)
class NoteBullet:
    release: str  # "v0.10.0rc1"
    section: str  # "Features", "Bug Fixes", …
    text: str
    prs: tuple[int, ...]


def _git_show(clone: Path, spec: str) -> str:
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
            prs = tuple(dict.fromkeys(int(a or b) for a, b in _PR.findall(body)))
            # Repository text: a link's words stay, no URL does (the PRs are named on their own).
            text = _TRAILING_PRS.sub("", drop_links(_LINK.sub(r"\1", body))).strip()
            bullets.append(NoteBullet(release, section, text, prs))
    return bullets


@lru_cache(maxsize=64)
def _notes(clone: Path, head: str, path: str) -> tuple[NoteBullet, ...]:
    return tuple(parse_release_notes(_git_show(clone, f"{head}:{path}")))


@lru_cache(maxsize=256)
def _names(clone: Path, commit: str, path: str, kind: str) -> frozenset[str]:
    text = _git_show(clone, f"{commit}:{path}")
    if kind == "env":
        return frozenset(m.group(1) for line in text.splitlines() if (m := _ENV_KEY.match(line)))
    return frozenset(_CONFIG_KEY.findall(text))


def _head(clone: Path) -> str:
    done = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, timeout=30, check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else ""


def _newer(bullet: NoteBullet, than: str) -> bool:
    mine, theirs = version_key(than), version_key(bullet.release)
    return mine is not None and theirs is not None and theirs > mine


def _question_words(question: str) -> set[str]:
    return {w for w in specific_words(question) if not _VERSION_WORD.match(w)}


def _note_line(bullet: NoteBullet, language: Language) -> str:
    pr = f"#{bullet.prs[0]}"  # only bullets with a PR are shown
    text = bullet.text if len(bullet.text) <= 220 else bullet.text[:219] + "…"
    lowered = bullet.text.lower()
    fix = "fix" in bullet.section.lower() or lowered.startswith("fix")
    added = any(w in bullet.section.lower() for w in ("feature", "highlight", "model", "hardware")) or \
        lowered.startswith(("add", "support", "introduc", "new "))
    if language == "zh":
        what = f"已在 {bullet.release} 修复（{pr}）" if fix else f"{bullet.release} 新增（{pr}）" if added else f"{bullet.release} 有变更（{pr}）"
    else:
        what = f"fixed in {bullet.release} by {pr}" if fix else f"added in {bullet.release} ({pr})" if added else f"changed in {bullet.release} ({pr})"
    return f"{what}: {text}"


def _name_lines(clone: Path, choice: ReleaseChoice, head: str, question: str, bullets: Sequence[NoteBullet],
                language: Language) -> list[str]:
    """Env vars and additional_config keys the question names that differ between their tag and HEAD."""
    lines: list[str] = []
    for files, kind in ((ENV_FILES, "env"), (CONFIG_FILES, "config")):
        path = files.get(choice.repo)
        if path is None:
            continue
        theirs, latest = _names(clone, choice.commit, path, kind), _names(clone, head, path, kind)
        if not theirs or not latest:
            continue  # the file moved or is missing on one side: no claim either way
        for name in sorted(n for n in theirs ^ latest if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", question)):
            label = name if kind == "env" else f"additional_config.{name}"
            if name in theirs:  # theirs has it, the newest does not: renamed or removed
                renamed, bullet = _renamed(name, bullets, choice.tag)
                gone = renamed and renamed.removeprefix("additional_config.") not in latest
                if language == "zh":
                    lines.append(f"`{label}` 在 {choice.tag} 中存在，" + (
                        f"{bullet.release} 起改为 `{renamed}`（{_pr(bullet)}）" + ("，最新版本中也已不存在" if gone else "")
                        if renamed and bullet else "最新版本已移除"))
                else:
                    lines.append(f"`{label}` exists in {choice.tag}; " + (
                        f"renamed to `{renamed}` in {bullet.release} ({_pr(bullet)})" + (", which the newest release no longer has" if gone else "")
                        if renamed and bullet else "the newest release no longer has it"))
            else:
                old, bullet = _renamed(name, bullets, choice.tag)
                if language == "zh":
                    lines.append(f"`{label}` 是 {choice.tag} 之后才有的" + (f"（{choice.tag} 中叫 `{old}`）" if old else "，您的版本中没有"))
                else:
                    lines.append(f"`{label}` is newer than {choice.tag}" +
                                 (f" (in {choice.tag} it is `{old}`)" if old else "; your release does not have it"))
    return lines


def _renamed(name: str, bullets: Sequence[NoteBullet], since: str) -> tuple[str, NoteBullet | None]:
    """The other name a newer release-notes bullet gives for `name` ("X is renamed to Y", "migrate
    from X to Y"), and that bullet; ("", None) when no bullet says so."""
    for bullet in bullets:
        if not _newer(bullet, since) or f"`{name}`" not in bullet.text or not _RENAME_WORDS.search(bullet.text):
            continue
        for other in _BACKTICKED.findall(bullet.text):
            bare = other.removeprefix("additional_config.").split("=")[0]
            if bare != name and (_IDENTIFIER.match(bare) or other.startswith("additional_config.")):
                return other.split("=")[0], bullet
    return "", None


def _pr(bullet: NoteBullet) -> str:
    return f"#{bullet.prs[0]}" if bullet.prs else bullet.release


def _shares_enough(question_words: set[str], bullet: NoteBullet) -> bool:
    """One shared identifier (an env var, a snake_case key, a flag) or two shared names: a model name
    alone ("DeepSeek") is in half the notes."""
    shared = question_words & specific_words(bullet.text)
    return any("_" in w or w.startswith("-") for w in shared) or len(shared) >= 2


def what_changed(clone: Path, choice: ReleaseChoice, question: str, language: Language) -> list[str]:
    """Lines for the answer: what the newest release changed against the user's, about this question."""
    head = _head(clone)
    if not head or head == choice.commit:
        return []
    notes_path = RELEASE_NOTES.get(choice.repo)
    bullets = _notes(clone, head, notes_path) if notes_path else ()
    lines = _name_lines(clone, choice, head, question, bullets, language)
    words = _question_words(question)
    if words:
        for bullet in bullets:
            if len(lines) >= MAX_LINES:
                break
            if _newer(bullet, choice.tag) and bullet.prs and _shares_enough(words, bullet) and not any(f"#{n}" in " ".join(lines) for n in bullet.prs):
                lines.append(_note_line(bullet, language))
    return lines[:MAX_LINES]


def fix_predates(release: str, pr: int, choice: ReleaseChoice, language: Language) -> str:
    """"fixed in v0.10.0rc1 by #121; your v0.9.1 predates it" when the user's release is older than the fix."""
    theirs, fixed = version_key(choice.tag), version_key(release)
    if theirs is None or fixed is None or fixed <= theirs:
        return ""
    if language == "zh":
        return f"已在 {release} 修复（#{pr}），您的 {choice.tag} 早于该版本：请升级到 {release} 或更高版本。"
    return f"Fixed in {release} by #{pr}; your {choice.tag} predates it: upgrade to {release} or later."
