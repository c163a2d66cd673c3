"""The release-notes bullets that answer a question, ranked by what they share with it.

The release notes on the clone's default branch hold every release's section (features, fixes,
known issues, removals). A question rarely repeats a bullet's words ("Gemma3-27B 精度明显不对" vs
"Support Sliding Window Attention …, thus fixing Gemma3 accuracy issue"), so bullets are ranked
like the knowledge index ranks passages: the index's bilingual tokens (core/index/tokenizer.py, with
the hand-written Chinese↔English bridge of core/index/terms.py), weighted by how rare each token is
among all bullets, identifiers counting double. The Chinese translation of each bullet, when the
repository ships one (docs/source/locale/zh_CN/…/release_notes.po), is tokenized with it, so a
Chinese question meets the bullet in its own words.

What a question says about the user's environment (an image reference, `pip list` lines, versions
next to a package name) is taken out first: "镜像 quay.io/…:v0.9.1rc2" names the release, it is not
about images. Every regex is linear.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from core.index.terms import bridge
from core.index.tokenizer import strong_terms, tokenize
from core.index.translations import parse_po
from core.releases.changes import PARSERS, NoteBullet, git_show

TRANSLATIONS = {"vllm-project/vllm-ascend": "docs/source/locale/zh_CN/LC_MESSAGES/user_guide/release_notes.po"}

# Tokens every bullet or every question about a release carries: they rank nothing.
_GENERIC = frozenset(
    "vllm ascend vllm-ascend vllm_ascend npu version release releases support supported now new use user users "
    "work works fix fixed issue issues known add added please note next will also more when with this that "
    "true false enabled enable none null default "
    "版本 支持 问题 现在 使用 修复 新增 发布 可以 需要 是否 这版 能用 还是 一直 一个 这个 不是 是不是 我们 你们 怎么办 有没有 没有 "
    "后面 之后 然后 同样 明显 感觉 完全 好像 老的 新的 这套 那个 "
    # common English words that happen to be rare in release notes ("soon", "just"): no topic
    "just soon while still then than very really quite some any every each other another same such only even "
    "much many more most less few lot lots thing things way ways time times day days got get gets getting make makes "
    "made need needs want wants try tried trying seem seems look looks like know think sure also again already yet "
    "here there where when what which who whom whose why how does did done doing been being have has had having "
    "would could should might must shall can cannot can't won't don't doesn't didn't isn't aren't wasn't weren't "
    "it's i'm we're they're you're after before above below under over into onto from with without within about "
    "across through during until since per via around against between among both either neither whether because "
    "though although however instead else ever never always often sometimes usually still expected expect ok okay "
    "please thanks thank hi hello mo".split()
)
_VERSIONISH = re.compile(r"^v?\d{1,4}(?:[.\-]\w{1,12}){1,5}$|^\d{1,2}$|^\d{4,6}$|^\d{1,4}(?:rc|post|dev)\d{0,8}$|^rc\d{0,3}$|^post\d{0,3}$|^dev\d{0,8}$")
# Model names and chips: letters and digits in one word (Gemma3, Qwen3, GLM5, x86, 310p, w8a8).
_ENTITY = re.compile(r"^(?=[a-z0-9]{2,20}$)(?=.{0,19}[a-z])(?=.{0,19}\d)")
# A model family and its generation ("DeepSeek-V3.2", "Deepseek 3.2", "Qwen3-30B", "gemma3"): one
# token `model:deepseek3.2` on both sides, and a note about another generation is not this one's.
_MODEL = re.compile(
    r"(?i)(?<![A-Za-z0-9])(qwen|deepseek|glm|gemma|llama|kimi|minimax|mistral|internvl|baichuan|hunyuan|pangu|ernie|phi|bailing|chatglm)"
    r"[ \-]?v?(\d{1,2}(?:\.\d{1,2})?)(?![\d.]\d)(?:[ \-]?(vl|omni|next|coder|asr|math)(?![A-Za-z]))?"
)
# Words of the domain the shared bridge (core/index/terms.py) does not carry, both ways.
_BRIDGE = {
    "引擎": ("engine",), "睡眠": ("sleep",), "结构化": ("structured",), "挂": ("crash", "hang"), "起不来": ("start", "fail"),
    "ep": ("expert",), "pp": ("pipeline",), "tp": ("tensor",), "dp": ("data",), "精度": ("accuracy",), "乱码": ("garbled", "accuracy"),
    "卡死": ("hang", "stuck"), "卡住": ("hang", "stuck"), "已知": ("known",), "修复": ("fix",), "移除": ("removed",), "删除": ("removed",),
}
# Words every problem report has ("error", "服务", "fail"): they count half.
_WEAK = frozenset("error errors fail failed failure server service start startup run running crash 报错 错误 服务 服务化 启动 失败 运行 正常 不对".split())
_IMAGE_REF = re.compile(r"(?i)(?:镜像|image)?[ \t:：]{0,3}(?:[\w.\-]{1,60}/){1,3}[\w.\-]{1,60}:[\w][\w.\-]{0,80}")
_PKG_VERSION = re.compile(
    r"(?i)\b(?:vllm[-_]ascend|vllm|cann|torch[-_]npu|torch|python|triton[-_]ascend|mooncake|transformers|hdk|driver|mindie)"
    r"[ \t:=是为：]{0,4}(?:==)?v?\d{1,3}(?:\.[\w]{1,20}){0,5}"
)
_LISTED = re.compile(r"(?m)^[ \t]{0,8}[A-Za-z][\w.\-]{0,60}(?:==|[ \t]{2,60})v?\d{1,4}(?:\.[\w+]{1,20}){1,6}[ \t]*$")
_ZH_LINE_PRS = re.compile(r"/(?:pull|issues)/(\d{1,7})\b")
_MD_LINK = re.compile(r"\[([^\[\]\n]{0,300})\]\([^()\s]{0,400}\)")
_RARE_DF = 0.03  # a token in at most 3 % of the bullets says what the bullet is about
# Scores are in units of the weight of a word only one bullet has (6.8 on vllm-ascend's 1,387
# bullets), so the bars hold for notes of any length. Measured on eval/release_dev.jsonl: below
# MIN_UNITS a bullet shares only common words with the question; LEAD_UNITS (core/releases/news.py)
# is where a bullet is the answer.
MIN_UNITS = 1.3


@dataclass(frozen=True)
class NotesIndex:
    bullets: tuple[NoteBullet, ...]
    tokens: tuple[frozenset[str], ...]
    idf: dict[str, float]
    rare: frozenset[str]
    specific: frozenset[str] = frozenset()  # rarer still (0.3 %): an identifier among these counts double
    unit: float = 1.0  # the weight of a word only one bullet has
    _naming: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def bullets_naming(self, name: str) -> int:
        """How many bullets name `name` (lower case) anywhere in their text, in either spelling
        (`--additional-config` and `additional_config` are one name); counted once per name."""
        key = name.lstrip("-").replace("-", "_")
        if key not in self._naming:
            self._naming[key] = sum(key in bullet.text.lower().replace("-", "_") for bullet in self.bullets)
        return self._naming[key]

    @property
    def min_score(self) -> float:
        return MIN_UNITS * self.unit

    def rank(self, question: str, limit: int = 8, own: str = "") -> list[tuple[float, NoteBullet]]:
        """Bullets by score, best first (see `explain`)."""
        return [(score, bullet) for score, bullet, _ in self.explain(question, limit, own)]

    def explain(self, question: str, limit: int = 8, own: str = "") -> list[tuple[float, NoteBullet, frozenset[str]]]:
        """Bullets best first, with the tokens they share. A question word counts once, by its best
        token (`--additional-config` is one word, not four tokens). A bullet must share a rare word
        besides the model's name, or the model and one more word; the score must clear `min_score`.
        `own`: the user's release tag, whose known issues count more (a problem their release is
        known to have is the likeliest answer)."""
        topic = topic_text(question)
        groups = question_groups(question)
        strong = strong_terms(topic) & self.specific
        models = _models(topic)
        naming = _model_words(topic)
        scored = []
        for bullet, tokens in zip(self.bullets, self.tokens):
            score, shared, rare_hit, other_hit = 0.0, set(), False, False
            for group in groups:
                hit = group & tokens
                if not hit:
                    continue
                shared |= hit
                weights = sorted((self.idf.get(t, 0.0) * _weight(t, strong) for t in hit), reverse=True)
                # The model group counts its two best tokens: the family and the variant (Qwen3 + Next).
                score += sum(weights[:2]) if models and group == groups[0] else weights[0]
                if hit - naming:
                    other_hit = True
                    rare_hit = rare_hit or bool((hit - naming) & self.rare)
            model_hit = bool(models & shared)
            if not (rare_hit or (model_hit and other_hit)):
                continue  # the model's name alone matches every note about that model
            theirs = _models(bullet.text)
            if models and theirs and not models & theirs:
                score *= 0.4  # another model's note ("GLM5 precision") is not about Gemma3's accuracy
            if own and bullet.release == own and "known" in bullet.section.lower():
                score *= 1.5
            if score >= self.min_score:
                scored.append((score, bullet, frozenset(shared)))
        scored.sort(key=lambda item: -item[0])
        return scored[:limit]


def _model_words(text: str) -> frozenset[str]:
    """The tokens of the words that name a model ("Qwen3-30B-A3B" → qwen3, qwen, 30b, a3b, …)."""
    words = set()
    for m in _MODEL.finditer(text[:4000]):
        end = m.end()
        while end < len(text) and (text[end].isalnum() or text[end] in "-._") and end - m.start() < 60:
            end += 1
        words |= _tokens(text[m.start():end])
    return frozenset(words)


def _weight(token: str, strong: set[str]) -> float:
    if token in strong or token.startswith("model:"):
        return 2.0
    if token in _WEAK:
        return 0.5
    return 1.5 if _ENTITY.match(token) else 1.0


def _models(text: str) -> frozenset[str]:
    return frozenset(f"model:{m.group(1).lower()}{m.group(2)}{(m.group(3) or '').lower()}" for m in _MODEL.finditer(text[:4000]))


def topic_text(question: str) -> str:
    """The question without what only describes the environment (images, package versions, pip lines)."""
    text = _LISTED.sub(" ", question[:6000])
    text = _IMAGE_REF.sub(" ", text)
    return _PKG_VERSION.sub(" ", text)


def _useful(token: str) -> bool:
    if token in _GENERIC or _VERSIONISH.match(token):
        return False
    if token.isascii():
        return len(token) >= 2
    return len(token) >= 2  # one CJK character (上, 想, 跑) says nothing on its own


def _tokens(text: str) -> set[str]:
    """Index tokens, the pieces of hyphenated names (Gemma3-27B → gemma3; Qwen3-Next → next) and
    one token per model generation."""
    out = set(_models(text))
    for token in tokenize(text):
        out.add(token.removesuffix("ism") if token.endswith("parallelism") else token)
        if "-" in token or "." in token:
            out.update(p for p in re.split(r"[-.]", token) if len(p) >= 2 and not _VERSIONISH.match(p))
    return {t for t in out if _useful(t)}


_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{1,200}|[^\s\u3400-\u9fff\uf900-\ufaff,;()\[\]{}'\"`，。；：！？（）、]{1,200}")


def question_groups(question: str) -> list[frozenset[str]]:
    """One set of tokens per word of the question (a Chinese run gives one per jieba word), each
    with its translations; every word naming a model counts once, all together (Qwen3-14B and
    Qwen3-0.6B in one question are one match on Qwen3, not two)."""
    topic = topic_text(question)
    naming = _model_words(topic)
    models = _models(topic)
    groups: list[frozenset[str]] = [frozenset(models | naming)] if models else []
    seen: set[frozenset[str]] = set()
    for match in _WORD.finditer(topic):
        word = match.group(0)
        if "\u3400" <= word[0] <= "\ufaff":
            pieces = [{t} for t in tokenize(word)]
        else:
            pieces = [_tokens(word.strip(":=."))]
        for piece in pieces:
            piece = piece - naming - models
            extra = {w for t in piece for w in _BRIDGE.get(t, ())}
            group = frozenset(t for t in piece | extra | set(bridge(piece | extra)) if _useful(t))
            if group and group not in seen:  # a word said twice is one match
                seen.add(group)
                groups.append(group)
    return groups


def question_tokens(question: str) -> frozenset[str]:
    return frozenset(t for group in question_groups(question) for t in group)


def _doc_tokens(text: str) -> frozenset[str]:
    return frozenset(_tokens(text))


def _translations(po_text: str) -> tuple[dict[int, str], dict[str, str]]:
    """Chinese text per PR number (a translated line keeps its links) and per English bullet text."""
    by_pr: dict[int, str] = {}
    by_text: dict[str, str] = {}
    for msgid, msgstr in parse_po(po_text):
        lines = [ln.strip() for ln in msgstr.splitlines() if ln.strip()]
        for line in lines:
            for number in _ZH_LINE_PRS.findall(line)[:1]:
                by_pr.setdefault(int(number), _MD_LINK.sub(r"\1", line))
        # One bullet per block (a "Known issues" line without a link): the block is its translation.
        if msgid.startswith("- ") and msgid.count(" - ") == 0 and len(lines) == 1:
            by_text.setdefault(_norm(_MD_LINK.sub(r"\1", msgid[2:])), _MD_LINK.sub(r"\1", lines[0]))
    return by_pr, by_text


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def build_index(bullets: Sequence[NoteBullet], po_text: str = "") -> NotesIndex:
    by_pr, by_text = _translations(po_text) if po_text else ({}, {})
    kept = [b for b in bullets if "contributor" not in b.section.lower() and len(b.text) >= 12]
    tokens = []
    for b in kept:
        zh = next((by_pr[n] for n in b.prs + b.issues if n in by_pr), "") or by_text.get(_norm(b.raw), "")
        tokens.append(_doc_tokens(b.text + "\n" + zh))
    df: dict[str, int] = {}
    for doc in tokens:
        for t in doc:
            df[t] = df.get(t, 0) + 1
    n = max(1, len(tokens))
    idf = {t: math.log((n - c + 0.5) / (c + 0.5) + 1.0) for t, c in df.items()}
    rare = frozenset(t for t, c in df.items() if c <= max(2, _RARE_DF * n))
    specific = frozenset(t for t, c in df.items() if c <= max(2, _RARE_DF * n / 10))
    unit = math.log((n - 1 + 0.5) / 1.5 + 1.0)
    return NotesIndex(tuple(kept), tuple(tokens), idf, rare, specific, unit)


@lru_cache(maxsize=8)
def notes_index(clone: Path, head: str, notes_path: str, po_path: str, layout: str = "markdown") -> NotesIndex:
    """The notes of one clone at one commit (re-read only when HEAD moves); `layout`: a key of
    core/releases/changes.py PARSERS."""
    bullets = PARSERS[layout](git_show(clone, f"{head}:{notes_path}"))
    return build_index(bullets, git_show(clone, f"{head}:{po_path}") if po_path else "")
