"""What the user's release means for their question: the lead of the answer and the lines after it.

Read from the clone at answer time (nothing hand-copied):
- names the question uses (env vars, additional_config keys) that their release lacks or that a
  later release renamed or removed (core/releases/names.py): both names and both releases;
- release-notes bullets that match the question (core/releases/notes.py), framed by where their
  release sits against the user's: "fixed in v0.10.1rc1 by #2528: upgrade", "a known issue of your
  v0.9.1", "added in v0.14.0rc1", "removed in v0.12.0rc1, before your v0.13.0", "already in your
  release". Whether a release is in the user's is read from the history when the clone has it (the
  v0.9.1 line is not in v0.10.0rc1 although 0.9.1 < 0.10.0rc1); a shallow clone falls back to
  version order.

The strongest of these lead the answer; the rest follow under "Since your release".
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.knowledge.generated.feature_support import asks_for_feature
from core.messages import Language
from core.releases.changes import NoteBullet, head_commit
from core.releases.names import NameHistory, name_history
from core.releases.notes import TRANSLATIONS, NotesIndex, notes_index
from core.releases.tags import ReleaseChoice, TagLists, normalized
from core.resolution.releases import version_key
from core.resolution.words import specific_words
from core.router import named_repositories
from core.signals import extract_signals, find_chips

# Each product's release notes on its default branch, and their layout (core/releases/changes.py).
RELEASE_NOTES = {
    "vllm-project/vllm-ascend": ("docs/source/user_guide/release_notes.md", "markdown"),
    "verylucky01/MindIE-LLM": ("docs/zh/release_notes.md", "table"),
    "verylucky01/MindStudio-ModelSlim": ("docs/zh/appendix/release_notes.md", "numbered"),
}
LEAD_UNITS = 2.65  # a bullet this close to the question leads the answer (see core/releases/notes.py)
KEEP_RATIO = 0.6  # bullets within this share of the best score are shown too
KEEP_RATIO_NEWER = 0.45  # … a fix or a feature their release lacks, within this share (the point of the answer)
MAX_LEAD = 2
FIX_BOOST = 1.25  # a fix their release lacks (the "upgrade to vX" answer) outranks a same-score note
ADDED_BOOST = 1.1
INCLUDED_SHARE = 0.75  # a change their release already has: shown from this share of the lead bar
MAX_LINES = 2  # below the lead bar: a third line was noise in every eval/release_dev.jsonl answer that had one
MAX_TEXT = 260

# Identifiers a question can name: ENV_VARS and snake_case keys (also inside --additional-config JSON).
_SUBJECT_PR = re.compile(r"\(#(\d{1,7})\)")
_NAME = re.compile(r"(?<![A-Za-z0-9_])([A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,10}|[a-z][a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){1,10})(?![A-Za-z0-9_])")


@dataclass(frozen=True)
class ReleaseNews:
    lead: tuple[str, ...] = ()  # what their release means for the question, shown first
    lines: tuple[str, ...] = ()  # the rest, "since your release"
    general: tuple[str, ...] = ()  # their release unknown: the name histories of what the question names

    def __bool__(self) -> bool:
        return bool(self.lead or self.lines or self.general)


_PRODUCT_NAMES = {"verylucky01/MindStudio-ModelSlim": "msModelSlim"}


def _product(repo: str) -> str:
    return _PRODUCT_NAMES.get(repo, repo.split("/")[-1])


_TAGS = TagLists()  # release tags per clone, re-read at most once a minute


@lru_cache(maxsize=64)
def _merged_tags(clone: Path, commit: str) -> frozenset[str] | None:
    """The tags in a commit's history (one `git tag --merged` per user release); None when unknown."""
    if not commit:
        return None
    try:
        done = subprocess.run(["git", "-C", str(clone), "tag", "--merged", commit], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return frozenset(done.stdout.decode("utf-8", "replace").split()) if done.returncode == 0 else None


@lru_cache(maxsize=64)
def _shallow(clone: Path) -> bool:
    done = subprocess.run(["git", "-C", str(clone), "rev-parse", "--is-shallow-repository"], capture_output=True, timeout=30, check=False)
    return done.stdout.decode().strip() != "false"


@lru_cache(maxsize=64)
def _prs_in(clone: Path, commit: str) -> frozenset[int]:
    """PR numbers in the subjects of a commit's history ("… (#2478)")."""
    try:
        done = subprocess.run(["git", "-C", str(clone), "log", "--format=%s", commit], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(int(n) for n in _SUBJECT_PR.findall(done.stdout.decode("utf-8", "replace")))


def relation(clone: Path, bullet: NoteBullet, choice: ReleaseChoice) -> str:
    """Where a bullet's release sits against the user's: "same", "included" (their release has it),
    "newer" (it does not yet), or "" (another release line: cannot tell)."""
    release = bullet.release
    if normalized(release) == normalized(choice.tag):
        return "same"
    theirs, mine = version_key(release), version_key(choice.tag)
    by_version = "included" if theirs is not None and mine is not None and theirs <= mine else "newer"
    merged = None if _shallow(clone) else _merged_tags(clone, choice.commit)
    if merged is None or release not in _TAGS.of(clone):
        return by_version  # no history to read, or no tag for that release: version order
    if release in merged:
        return "included"
    if by_version == "newer":
        return "newer"
    # An older version on another line (v0.9.1rc3 against v0.10.0rc1): the PR decides when it is there.
    return "included" if bullet.prs and any(n in _prs_in(clone, choice.commit) for n in bullet.prs) else ""


def bullet_kind(bullet: NoteBullet) -> str:
    """known | removed | fix | added | changed, from the section and the bullet's first words."""
    section, low = bullet.section.lower(), bullet.text.lower().lstrip("*[")
    if "known" in section or "遗留" in section or "已知" in section:
        return "known"
    if any(w in section for w in ("deprecat", "breaking", "remov", "migration", "删除", "日落", "废弃")) \
            or low.startswith(("remove", "deprecat", "drop")) \
            or " is removed" in low or " was removed" in low or " removed:" in low or "doesn't work anymore" in low:
        return "removed"
    if "fix" in section or "已解决" in section or "修复" in section or low.startswith(("fix", "resolve", "repair", "correct")) \
            or "fixing" in low:
        return "fix"
    if "新增" in section:
        return "added"
    if low.startswith(("add", "support", "introduc", "enable", "new ")) or " is supported" in low or " now support" in low \
            or " works with" in low or " works on" in low or " supports " in low \
            or any(w in section for w in ("feature", "highlight", "model", "hardware", "core")):
        return "added"
    return "changed"


_TEXTS: dict[str, tuple[str, str]] = {
    "newer fix": ("Fixed in {product} {release} by {ref}: {text} Your {tag} predates it: upgrade to {release} or later.",
                  "{product} {release} 已修复（{ref}）：{text} 您的 {tag} 早于该版本：请升级到 {release} 或更高版本。"),
    "newer added": ("Added in {product} {release}{paren}: {text} Your {tag} does not have it: upgrade to {release} or later.",
                    "{product} {release} 新增{paren_zh}：{text} 您的 {tag} 还没有：请升级到 {release} 或更高版本。"),
    "newer removed": ("Changed in {product} {release}{paren}, after your {tag}: {text}",
                      "{product} {release} 起变更{paren_zh}（晚于您的 {tag}）：{text}"),
    "newer changed": ("Changed in {product} {release}{paren}, after your {tag}: {text}",
                      "{product} {release} 有变更{paren_zh}（晚于您的 {tag}）：{text}"),
    "same known": ("A known issue of {product} {tag} (its release notes): {text}",
                   "{product} {tag} 的已知问题（见其发布说明）：{text}"),
    "same fix": ("Fixed in your release, {product} {tag}{paren}: {text}", "您的 {product} {tag} 已修复{paren_zh}：{text}"),
    "same added": ("Added in your release, {product} {tag}{paren}: {text}", "您的 {product} {tag} 新增{paren_zh}：{text}"),
    "same removed": ("Changed in your release, {product} {tag}{paren}: {text}", "您的 {product} {tag} 起变更{paren_zh}：{text}"),
    "same changed": ("In your release, {product} {tag}{paren}: {text}", "您的 {product} {tag}{paren_zh}：{text}"),
    "included fix": ("Already fixed in {product} {release}{paren}, which your {tag} includes: {text}",
                     "{product} {release} 已修复{paren_zh}，您的 {tag} 已包含：{text}"),
    "included added": ("Available since {product} {release}{paren}, which your {tag} includes: {text}",
                       "{product} {release} 起提供{paren_zh}，您的 {tag} 已包含：{text}"),
    "included removed": ("Changed in {product} {release}{paren}, before your {tag}: {text}",
                         "{product} {release} 起变更{paren_zh}（早于您的 {tag}）：{text}"),
    "included changed": ("Changed in {product} {release}{paren}, before your {tag}: {text}",
                         "{product} {release} 起变更{paren_zh}（早于您的 {tag}）：{text}"),
}


def bullet_line(bullet: NoteBullet, where: str, choice: ReleaseChoice, language: Language) -> str:
    """One bullet framed for the user's release; "" for what does not concern them (a later
    release's known issue, an old known issue their release is past)."""
    kind = bullet_kind(bullet)
    template = _TEXTS.get(f"{where} {kind}") if where else None
    if template is None:
        return ""
    ref = f"#{bullet.prs[0]}" if bullet.prs else (f"issue #{bullet.issues[0]}" if bullet.issues else "")
    if kind == "fix" and where == "newer" and not ref:
        template = _TEXTS[f"{where} changed"]
    text = bullet.text if len(bullet.text) <= MAX_TEXT else bullet.text[:MAX_TEXT - 1] + "…"
    text = text if text.endswith((".", "。", "…", "!")) else text + "."
    return template[1 if language == "zh" else 0].format(
        product=_product(choice.repo), release=bullet.release, tag=choice.theirs, ref=ref, text=text,
        paren=f" ({ref})" if ref else "", paren_zh=f"（{ref}）" if ref else "",
    )


def _label(name: str) -> str:
    return name if name.isupper() else f"additional_config.{name}"


def name_lines(history: NameHistory, choice: ReleaseChoice, question: str, language: Language) -> list[str]:
    """Env vars and additional_config keys the question names whose life crosses the user's release."""
    head = history.tags[-1]
    mine = choice.tag if choice.tag in history.at else ""
    if not mine:
        return []
    lines: list[str] = []
    asked = list(dict.fromkeys(m.group(1) for m in _NAME.finditer(question[:6000])))
    for name in asked[:6]:
        present = history.present(name)
        if not present:
            continue  # not a name of this repository's releases (an upstream or CANN variable)
        label = f"`{_label(name)}`"
        if history.at[mine].has(name):
            if history.at[head].has(name):
                continue
            gone = history.removed_in(name, mine)
            after = history.counterpart(name, head)
            where = gone if version_key(gone) else "main"
            if language == "zh":
                line = f"{label} 在您的 {mine} 中存在，{where} 起已移除" + (f"，改为 `{_label(after)}`" if after else "")
            else:
                line = f"{label} exists in your {mine}; removed in {where}" + (f", replaced by `{_label(after)}`" if after else "")
            lines.append(line + ("。" if language == "zh" else "."))
            continue
        since, before = present[0], history.counterpart(name, mine)
        newer = (version_key(since) or ()) > (version_key(mine) or ())
        later = history.counterpart(name, head) if not history.at[head].has(name) else ""
        if newer:
            if language == "zh":
                line = f"您的 {mine} 中没有 {label}：它从 {since} 才有" + (f"；{mine} 中对应的是 `{_label(before)}`" if before else "")
            else:
                line = f"{label} does not exist in your {mine}: it appeared in {since}" + (
                    f"; in {mine} the same switch is `{_label(before)}`" if before else "")
        else:
            gone = history.removed_in(name, present[-1])
            gone = gone if version_key(gone) else mine
            if language == "zh":
                line = f"{label} 已在 {gone} 移除（存在于 {since} 至 {present[-1]}），您的 {mine} 中没有" + (
                    f"；{mine} 中请用 `{_label(before)}`" if before else "")
            else:
                line = f"{label} was removed in {gone} (it existed from {since} to {present[-1]}); your {mine} does not have it" + (
                    f"; in {mine} use `{_label(before)}`" if before else "")
        if later and later != before:
            line += f"（最新版本中为 `{_label(later)}`）" if language == "zh" else f" (the newest release: `{_label(later)}`)"
        lines.append(line + ("。" if language == "zh" else "."))
    return lines


def general_name_lines(history: NameHistory, question: str, language: Language) -> list[str]:
    """Their release unknown: the releases that have each env var or config key the question names,
    and what replaced it."""
    head = history.tags[-1]
    lines = []
    for name in list(dict.fromkeys(m.group(1) for m in _NAME.finditer(question[:6000])))[:6]:
        present = history.present(name)
        if not present or len(present) == len(history.tags):
            continue  # unknown here, or in every release: nothing release-specific to say
        since = present[0]
        gone = "" if history.at[head].has(name) else history.removed_in(name, present[-1])
        later = history.counterpart(name, head) if gone else ""
        label = f"`{_label(name)}`"
        if language == "zh":
            line = f"{label} 从 {since} 起才有" + (f"，{gone if version_key(gone) else 'main'} 起已移除" if gone else "") + (
                f"，之后改为 `{_label(later)}`" if later else "")
        else:
            line = f"{label} exists from {since}" + (f"; removed in {gone if version_key(gone) else 'main'}" if gone else "") + (
                f", replaced by `{_label(later)}`" if later else "")
        lines.append(line + ("。" if language == "zh" else "."))
    return lines


def _dedup(scored: Sequence[tuple[float, NoteBullet]]) -> list[tuple[float, NoteBullet]]:
    """The same change in several releases' notes (a final release repeats its rc): keep the earliest."""
    best: dict[object, tuple[float, NoteBullet]] = {}
    for score, bullet in scored:
        key: object = bullet.prs[0] if bullet.prs else " ".join(bullet.text.lower().split())[:160]
        kept = best.get(key)
        if kept is None or (version_key(bullet.release) or ()) < (version_key(kept[1].release) or ()):
            best[key] = (max(score, kept[0]) if kept else score, bullet)
    return sorted(best.values(), key=lambda item: -item[0])


_MODEL_NAME = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2,20}\d{1,3}(?:\.\d{1,2})?(?![A-Za-z0-9])")


def _names(text: str, repo: str = "") -> set[str]:
    """What a text names: identifiers (core/resolution/words.py), versioned model names (Gemma3, Qwen2.5)
    and the products it names other than `repo` itself (MindIE-Turbo in vllm-ascend's notes). A bare
    number is no name: "4.7" of GLM-4.7 also numbers an unrelated release or model."""
    found = specific_words(text) | {m.lower() for m in _MODEL_NAME.findall(text[:20_000])}
    products = {f"product:{r}" for r in named_repositories(text[:20_000]) if r != repo}
    return {name for name in found if any(ch.isalpha() for ch in name)} | products


_PAIR_WORD = re.compile(r"[a-z][a-z0-9]{1,20}")
_PAIR_STOP = frozenset(
    "the a an and or of for to in on with is are be by from at as it this that now not no can will into than then "
    "support supported supports added add adds fix fixed fixes model models vllm ascend npu version release".split()
)


def _word_pairs(text: str) -> set[tuple[str, str]]:
    """Two content words in a row ("sleep mode", "pipeline parallel"): how a feature is named in prose."""
    words = [w for w in _PAIR_WORD.findall(text[:20_000].lower()) if w not in _PAIR_STOP]
    return set(zip(words, words[1:]))


_ENV_VAR = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]{1,30}(?:_[A-Z0-9]{1,30}){1,10}(?![A-Za-z0-9_])")
CARRIER_BULLETS = 8  # a name this many bullets carry (--additional-config) names none of them


def _env_vars(text: str) -> set[str]:
    return {m.lower() for m in _ENV_VAR.findall(text[:20_000])}


def shared_names(asked: set[str], asked_env: set[str], bullet_text: str, repo: str, index: NotesIndex) -> set[str]:
    """What a bullet names as the question does. An env var counts only when the question writes it as
    one (the bullet's VLLM_VERSION is not a traceback's `vllm_version = ...`), and a code name that many
    bullets carry (`--additional-config`, `additional_config`) does not say which change is theirs (a
    model's or a feature's name is weighed by the ranking, core/releases/notes.py)."""
    shared = (asked & _names(bullet_text, repo)) - (_env_vars(bullet_text) - asked_env)
    return {n for n in shared if not _identifiers({n}) or index.bullets_naming(n) < CARRIER_BULLETS}


_FAILURE = re.compile(
    r"fail|error|exception|traceback|crash|hang|stuck|slow|worse|degrad|timeout|timed out|garbled|wrong|oom|"
    r"报错|失败|挂了|挂掉|就挂|卡住|卡死|变慢|很慢|变差|乱码|不对|超时|起不来",
    re.IGNORECASE,
)


def reports_failure(question: str) -> bool:
    """Whether the message reports something failing (a pasted error, "hangs", "报错"), as opposed to
    asking how to do something or whether it is there."""
    return _FAILURE.search(question[:20_000]) is not None


def _their_hardware(bullet_text: str, asked_chips: set[str]) -> bool:
    """Whether a bullet applies to the user's hardware: it names no chip, or one they name."""
    chips = set(find_chips(bullet_text))
    return not chips or bool(chips & asked_chips)


# Features a user turns on (a graph mode, speculative decoding, a quantization, PD disaggregation), as
# core/signals.py reads them; symptoms and model traits (oom, moe, multimodal) are left out.
_SETUP_FEATURES = frozenset({
    "aclgraph", "full_decode_only", "torchair", "graph_mode", "enforce_eager", "mtp", "speculative", "eagle", "nz",
    "w8a8", "w4a8", "w4a4", "quantization", "pd_disaggregation", "mooncake", "lora", "multi_node", "rl_training",
    "prefix_caching", "async_scheduling",
})


@lru_cache(maxsize=4096)
def _setup(text: str) -> frozenset[str]:
    return frozenset(extract_signals(text).features) & _SETUP_FEATURES


def _their_setup(bullet_text: str, asked_setup: frozenset[str]) -> bool:
    """Whether a fix applies to the user's setup: it names no feature, or one they name."""
    scoped = _setup(bullet_text)
    return not scoped or bool(scoped & asked_setup)


@dataclass(frozen=True)
class _Asked:
    """What a question says that decides whether a release-notes bullet is about it, read once per answer."""

    names: set[str]
    env_vars: set[str]
    chips: set[str]
    setup: frozenset[str]
    pairs: set[tuple[str, str]]
    support: bool  # they ask whether something is there ("supported?", "能用吗")
    failing: bool  # they report something failing

    @classmethod
    def read(cls, question: str, repo: str) -> _Asked:
        text = question[:20_000]
        return cls(_names(text, repo), _env_vars(text), set(find_chips(text)), _setup(text), _word_pairs(text),
                   asks_for_feature(question), reports_failure(text))


def _same_thing(shared: set[str]) -> bool:
    """Named the same way, not just the same model: an identifier or another product."""
    return bool(_identifiers(shared)) or any(n.startswith("product:") for n in shared)


def _concerns_them(bullet: NoteBullet, where: str, kind: str, shared: set[str], asked: _Asked) -> bool:
    """Whether a bullet, placed `where` against their release, is about their case. Each rule answers a
    wrong statement the judges found (docs/releases.md): an unrelated "upgrade to vX" reads as the fix."""
    code_name = bool(_identifiers(shared))  # a flag, key, variable or file they use
    if where == "newer":
        if kind == "fix" and not shared:
            return False  # a fix alike in words only, sold as the way out: it must name what they named
        if kind in ("changed", "removed") and not (code_name or (asked.support and _same_thing(shared))):
            return False  # a later change about their model or tool is not their case unless it renames what they use
        if kind == "added" and not (asked.support or _same_thing(shared) or asked.pairs & _word_pairs(bullet.text)):
            # "added in vX" answers "is X there?", or names the feature as they do (an identifier, or two words
            # in a row: "sleep mode"); a model's name is shared by every change about that model.
            return False
        if kind in ("fix", "added") and not (_their_hardware(bullet.text, asked.chips) and _their_setup(bullet.text, asked.setup)):
            return False  # a fix on one device (a 310P race) or in one setup (W8A8 with MTP) is theirs only there
    elif where in ("included", "same") and kind in ("added", "changed") and asked.failing and not (asked.support or code_name):
        # A feature or a speed-up their release already has does not explain what fails for them; it answers
        # "is X there?" or "how do I turn X on in my release?". Known issues and removals stay.
        return False
    return True


def _identifiers(names: set[str]) -> set[str]:
    """The code names among `names`: a flag, a snake_case key or variable, a file (not a model or product name)."""
    return {n for n in names if "_" in n or n.startswith("--") or n.endswith((".py", ".so", ".cpp", ".json", ".yaml"))}


def _their_side(where: str, bullet: NoteBullet, choice: ReleaseChoice) -> str:
    """`where` for the user's own version when the tag read is only the nearest one below it
    (0.19.0rc1 read at v0.18.0): a release up to theirs is one they have, not "newer" or "yours"."""
    if choice.exact or where not in ("same", "newer"):
        return where
    theirs, bullets = version_key(choice.asked), version_key(bullet.release)
    if theirs is None or bullets is None:
        return where
    return "included" if bullets <= theirs else where


def release_news(clone: Path, choice: ReleaseChoice | None, question: str, language: Language,
                 repo: str = "") -> ReleaseNews:
    """The lead lines and the other lines for this question at the user's release; with `choice`
    None (their release unknown) only the name histories of what the question names."""
    repo = choice.repo if choice is not None else repo
    head = head_commit(clone)
    if not head:
        return ReleaseNews()
    lead: list[str] = []
    lines: list[str] = []
    history = name_history(clone, repo, _TAGS.of(clone), head)
    if history is not None and history.tags:
        lead += name_lines(history, choice, question, language) if choice else general_name_lines(history, question, language)
    # Release-note bullets only against a known release: with the release unknown, "fixed in vX: upgrade"
    # cannot be said rightly (they may have it), and a bullet matched in words read as a diagnosis of
    # something else in most answers the judges read (docs/releases.md). Name histories stay: they are exact.
    notes = RELEASE_NOTES.get(repo) if choice is not None else None
    if notes:
        index = notes_index(clone, head, notes[0], TRANSLATIONS.get(repo, ""), notes[1])
        lead_score = LEAD_UNITS * index.unit
        framed = []
        asked = _Asked.read(question, repo)
        for score, bullet in _dedup(index.rank(question, limit=16, own=choice.tag)):
            where = _their_side(relation(clone, bullet, choice), bullet, choice)
            kind = bullet_kind(bullet)
            shared = shared_names(asked.names, asked.env_vars, bullet.text, repo, index)
            if not _concerns_them(bullet, where, kind, shared, asked):
                continue
            named = bool(shared)
            same_thing = _same_thing(shared)
            if where == "newer" and kind in ("fix", "added"):
                score *= FIX_BOOST if kind == "fix" else ADDED_BOOST  # what their release lacks is the point
            if where == "included" and kind != "removed" and score < INCLUDED_SHARE * lead_score:
                continue  # an old feature their release already has is worth a line only when it is close to the answer
            line = bullet_line(bullet, where, choice, language)
            if line and line not in lead and all(line != other for _, other, _, _ in framed):
                # below the lead bar, what their release has may share just the model's name (its known limits
                # with Qwen3-Next); a later change must be named the same way.
                framed.append((score, line, where == "newer" and kind in ("fix", "added"), same_thing if where == "newer" else named))
        framed.sort(key=lambda item: -item[0])
        best = framed[0][0] if framed else 0.0
        for score, line, upgrade, same in framed:
            if score < (KEEP_RATIO_NEWER if upgrade else KEEP_RATIO) * best:
                continue
            if score >= lead_score and len(lead) < MAX_LEAD:
                lead.append(line)
            elif len(lines) < MAX_LINES and not upgrade and same:
                # Below the lead bar, "added in vX: upgrade" was an unrelated feature sold as the way
                # out more often than not (judged on the doc-style set), and a change alike in words only
                # (a kernel speed-up for another model, new Python images) read as relevant to the
                # question (judged on eval/real_issues_dev.jsonl): only what their release has or
                # changed about something they named the same way (a shared model name alone is not it).
                lines.append(line)
    if choice is None:  # not about their release: the name histories, under their own heading
        return ReleaseNews(general=tuple(lead[:MAX_LEAD + 1]))
    return ReleaseNews(tuple(lead), tuple(lines))


def thread_fix_line(clone: Path, release: str, pr: int, choice: ReleaseChoice, language: Language) -> str:
    """A matched thread's fix (issue memory: its PR and the first release that carries it), for the
    user's release: "fixed in v0.10.0rc1 by #121: upgrade" or "your v0.11.0 already has it"."""
    bullet = NoteBullet(release, "Bug Fixes", "", (pr,))
    where = _their_side(relation(clone, bullet, choice), bullet, choice)
    product = _product(choice.repo)
    if where == "newer":
        if language == "zh":
            return f"{product} {release} 已修复（#{pr}），您的 {choice.theirs} 早于该版本：请升级到 {release} 或更高版本。"
        return f"Fixed in {product} {release} by #{pr}; your {choice.theirs} predates it: upgrade to {release} or later."
    if where in ("same", "included"):
        if language == "zh":
            return f"该问题已在 {product} {release} 修复（#{pr}），您的 {choice.theirs} 已包含这个修复。"
        return f"Fixed in {product} {release} by #{pr}, which your {choice.theirs} already includes."
    return ""
