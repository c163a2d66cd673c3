"""How sure an answer is, read from the evidence it rests on, never from how the text sounds.

- high: a maintainer's fix (or a colleague's saved answer) matched on the question's error
  signature, or a knowledge-base entry matched on a signature or trigger (a version mismatch, an
  error code, a named limitation); a model's answer keeps it only when its verified citations
  include that evidence.
- medium: relevant material only: lookups of what the question named, a reported case (an issue
  thread) or a passage sharing the question's identifiers, a resolved thread found by words rather
  than by the error line, or a model's verified citations.
- low: nothing specific: at most general docs found by topic words and glossary lines. A low answer says what is missing (the product's clone in the index, the
  versions, the log) and where to ask upstream.

`bot eval` reports accuracy per level (bot/eval/calibration.py), so the label can be checked.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base
from core.messages import Language, Source
from core.resolution.answer import MIN_SHARED, Match
from core.resolution.focus import LogFocus
from core.resolution.record import Certainty
from core.resolution.team import TeamAnswer
from core.resolution.words import specific_words
from core.triage import DiagnosticReport, TriageResult

Level = Literal["high", "medium", "low"]
LEVELS: tuple[Level, ...] = ("high", "medium", "low")
Reason = Literal["resolution", "team", "knowledge", "thread", "colleague", "lookups", "passages", "cited", "nothing", "uncited"]
StepKind = Literal["clone", "version", "log", "upstream"]


@dataclass(frozen=True)
class NextStep:
    """What a low answer lacks, or where to take the question: `target` is the repository to
    clone or the issue tracker's URL, `product` its display name."""

    kind: StepKind
    product: str = ""
    target: str = ""


@dataclass(frozen=True)
class Confidence:
    level: Level
    reason: Reason
    steps: tuple[NextStep, ...] = ()  # only for a low answer


_HIGH: frozenset[Reason] = frozenset({"resolution", "team", "knowledge"})


def assess(
    offline: TriageResult,
    *,
    repos: Sequence[str],
    seen: LogFocus,
    resolution: Match | None = None,
    teammate: TeamAnswer | None = None,
    researched: Sequence[Source] | None = None,
    indexed: Collection[str] | None = None,
    kb: KnowledgeBase | None = None,
) -> Confidence:
    """The level of the answer built from `offline` (and, when a model answered, its verified
    `researched` sources). `indexed` lists the repositories whose files the index holds (None: no
    index information)."""
    kb = kb or load_knowledge_base()
    reason = _offline_reason(offline, seen, resolution, teammate)
    if researched is not None:
        reason = _researched_reason(reason, offline, resolution, researched, repos, kb)
    level: Level = "high" if reason in _HIGH else "low" if reason in ("nothing", "uncited") else "medium"
    steps = _next_steps(offline, repos, seen, indexed, kb) if level == "low" else ()
    return Confidence(level, reason, steps)


def _offline_reason(offline: TriageResult, seen: LogFocus, resolution: Match | None, teammate: TeamAnswer | None) -> Reason:
    if resolution is not None and resolution.via == "signature" and _certainty(resolution) >= Certainty.MAINTAINER:
        return "resolution"
    if teammate is not None and set(seen.signatures) & set(teammate.signatures):
        return "team"
    if offline.concluded:
        return "knowledge"
    if resolution is not None:
        return "thread"
    if teammate is not None:
        return "colleague"
    if (offline.report is not None and _names_specifics(offline.report)) or offline.table_rows:
        return "lookups"  # a support table's row for the model or feature named is as specific as a fact
    asked = specific_words(seen.query())
    if any(p.kind == "issue" or len(asked & specific_words(f"{p.title}\n{p.text}")) >= MIN_SHARED for p in offline.passages):
        return "passages"
    return "nothing"


def _names_specifics(report: DiagnosticReport) -> bool:
    """Lookups of something the question itself named: an error code, a variable, a flag, versions
    checked against the matrix, a fact its trigger named, a code location. A chip's glossary line,
    facts found only by meaning and the general version policy are not specific to the case."""
    return bool(
        report.error_codes or report.unknown_codes or report.env_vars or report.flag_notes or report.incompatibilities
        or report.main_branch or report.code_entries or report.version_verdicts
        or any(getattr(f, "id", "") in report.named_facts for f in report.product_facts)
    )


def _certainty(match: Match) -> Certainty:
    return (match.original or match.record).certainty


def _researched_reason(
    offline_reason: Reason, offline: TriageResult, resolution: Match | None, cited: Sequence[Source],
    repos: Sequence[str], kb: KnowledgeBase,
) -> Reason:
    """A model's answer is as sure as the evidence its verified citations hold: the strong offline
    evidence only when it cites it, else medium with citations and low without."""
    cited_urls = {s.url for s in cited}
    if offline_reason in _HIGH and cited_urls & _evidence_urls(offline, resolution, repos, kb):
        return offline_reason
    return "cited" if cited_urls - _docs_urls(repos, kb) else "uncited"


def _evidence_urls(offline: TriageResult, resolution: Match | None, repos: Sequence[str], kb: KnowledgeBase) -> set[str]:
    """The links the strong offline evidence lives at: the matched threads, or the knowledge base's
    sources of the answer (the product's general docs link is no evidence for anything)."""
    if resolution is not None:
        return {r.url for r in (resolution.record, resolution.original) if r is not None}
    return {s.url for s in offline.sources} - _docs_urls(repos, kb)


def _docs_urls(repos: Sequence[str], kb: KnowledgeBase) -> set[str]:
    return {kb.source(doc.source).url for repo in repos if (doc := kb.doc(repo)) is not None}


def _next_steps(offline: TriageResult, repos: Sequence[str], seen: LogFocus, indexed: Collection[str] | None,
                kb: KnowledgeBase) -> tuple[NextStep, ...]:
    known = [info for repo in repos if (info := kb.repository(repo)) is not None]
    steps = [NextStep("clone", info.display_name, info.repo) for info in known if indexed is not None and info.repo not in indexed]
    if not offline.signals.versions:
        steps.append(NextStep("version"))
    report = offline.report
    if not seen.errors and report is not None and report.kind == "problem":
        steps.append(NextStep("log"))
    steps += [NextStep("upstream", info.display_name, tracker_url(info.issue_tracker.kind, info.issue_tracker.api_repo)) for info in known]
    return tuple(steps)


def tracker_url(kind: str, api_repo: str) -> str:
    """Where the product's issues are filed (GitCode for MindIE and msModelSlim)."""
    host = "https://gitcode.com" if kind == "gitcode" else "https://github.com"
    return f"{host}/{api_repo}/issues"


# --- the line every platform shows ----------------------------------------------------------

_T: dict[str, dict[str, str]] = {
    "en": {
        "high": "🟢 **Confidence: high**",
        "medium": "🟡 **Confidence: medium**",
        "low": "🔴 **Confidence: low**",
        "resolution": "a maintainer's fix matched on your error line",
        "team": "a colleague's saved answer matched on your error line",
        "knowledge": "a known issue in the knowledge base matched your message",
        "thread": "a resolved thread found by its words, not by your error line",
        "colleague": "a colleague's saved answer found by its words",
        "lookups": "facts looked up for what you named; no known fix matched",
        "passages": "related docs and threads only; no known fix matched",
        "cited": "the cited sources are related, but no known fix matched",
        "nothing": "nothing specific matched",
        "uncited": "no verified source backs this answer",
        "missing": "What would help: {items}.",
        "clone": "{product}'s code and docs in the index (`python -m bot sync {target}`, then `python -m bot index`)",
        "version": "the versions (vllm, vllm-ascend or MindIE, CANN, torch_npu)",
        "log": "the full error log",
        "upstream": "Or ask upstream: {links}",
        "sep": "; ",
        "line": "{badge} — {reason}.",
    },
    "zh": {
        "high": "🟢 **置信度：高**",
        "medium": "🟡 **置信度：中**",
        "low": "🔴 **置信度：低**",
        "resolution": "维护者的修复与你的报错行匹配",
        "team": "同事保存的回答与你的报错行匹配",
        "knowledge": "知识库中的已知问题与你的描述匹配",
        "thread": "按关键词找到的已解决帖子，并非按报错行匹配",
        "colleague": "按关键词找到的同事回答",
        "lookups": "仅查到你提到的条目，没有匹配的已知修复",
        "passages": "仅有相关文档和帖子，没有匹配的已知修复",
        "cited": "引用的来源相关，但没有匹配的已知修复",
        "nothing": "没有找到具体匹配的信息",
        "uncited": "没有经过验证的来源支撑这个回答",
        "missing": "还需要：{items}。",
        "clone": "索引中 {product} 的代码和文档（`python -m bot sync {target}`，然后 `python -m bot index`）",
        "version": "版本信息（vllm、vllm-ascend 或 MindIE、CANN、torch_npu）",
        "log": "完整的报错日志",
        "upstream": "或向上游提问：{links}",
        "sep": "；",
        "line": "{badge}（{reason}）",
    },
}


def confidence_line(confidence: Confidence, language: Language) -> str:
    """The compact Markdown every platform shows under an answer (the one place it is worded)."""
    t = _T["zh" if language == "zh" else "en"]
    line = t["line"].format(badge=t[confidence.level], reason=t[confidence.reason])
    missing = [_missing_item(step, t) for step in confidence.steps if step.kind != "upstream"]
    if missing:
        line += " " + t["missing"].format(items=t["sep"].join(missing))
    upstream = [f"[{step.product}]({step.target})" for step in confidence.steps if step.kind == "upstream"]
    if upstream:
        line += " " + t["upstream"].format(links=" · ".join(upstream))
    return line


def _missing_item(step: NextStep, t: dict[str, str]) -> str:
    return t[step.kind].format(product=step.product, target=step.target)
