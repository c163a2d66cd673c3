"""A report's Markdown blocks: the research tool's findings, the environment line, grouped bullets,
next steps, code locations and the docs line."""
from __future__ import annotations

from collections.abc import Sequence

from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import Command, Note
from core.messages import Language, Source
from core.release_matrix import current_knowledge
from core.signals import Signals
from core.triage.advice import _commands, _notes
from core.triage.lookups import Line, RefLine, _label, _lookup_lines
from core.triage.report import DiagnosticReport
from core.triage.texts import Text

MAX_STEPS = 4
MAX_COMMANDS = 4


def _render_signals(signals: Signals, t: Text) -> str:
    items = []
    if signals.chips:
        items.append(f"{t('chips')} " + ", ".join(signals.chips))
    for pkg, version in signals.versions:
        items.append(f"{pkg} {version}")
    if signals.error_codes:
        items.append(f"{t('codes')} " + ", ".join(f"`{c}`" for c in signals.error_codes))
    return t("signals_prefix") + t("sep").join(items) if items else t("signals_none")


def report_markdown(report: DiagnosticReport, language: Language) -> str:
    """The findings as Markdown with sources, each entry labelled with its products (for the research tool)."""
    t = Text(language)
    kb = current_knowledge()
    parts = [_render_signals(report.signals, t)]
    lookups = _lookup_lines(report, t, kb, label=True)
    if lookups:
        parts.append("\n".join(f"- {line}" for _, line, _ in lookups))
    if report.patterns:
        lines = []
        for p in report.patterns:
            causes = t("list_sep").join(n.text.of(t.language) for n in _notes(p.causes, report))
            lines.append(f"- **{p.title.of(t.language)}** {_label(p.products, kb, t)}: {t('causes', text=causes)}")
            lines += [f"   - {n.text.of(t.language)}" for n in _notes(p.steps, report)]
        parts.append(t("patterns_heading") + "\n" + "\n".join(lines))
    if not report.has_findings:
        parts.append(t("no_findings"))
    if report.sources:
        parts.append(t("sources_heading") + "\n" + "\n".join(f"- [{s.title}]({s.url})" for s in report.sources))
    return "\n\n".join(p for p in parts if p)


def _environment_line(report: DiagnosticReport, t: Text) -> str:
    """"read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1, 910B" when this message stated versions, an
    image or a correction, or the thread's environment was checked; a chip alone is just a question."""
    stated = {k for k, _ in report.message_environment.values} - {"chip", "card", "cards"}
    if not (stated or report.environment.corrected or report.version_verdicts and not report.environment.is_empty):
        return ""
    return report.environment.summary(t.language)


def _grouped(lines: Sequence[Line] | Sequence[RefLine], repos: tuple[str, ...], t: Text, kb: KnowledgeBase, numbered: bool = False) -> str:
    """Bullets; with several routed products, each product's part under its name (shared lines first)."""
    def bullets(items: list[str]) -> str:
        return "\n".join(f"{i}. {x}" if numbered else f"- {x}" for i, x in enumerate(items, 1))

    pairs = [(line[0], line[1]) for line in lines]
    if len(repos) <= 1:
        return bullets([text for _, text in pairs])
    shared = [text for products, text in pairs if all(r in products for r in repos)]
    parts = [bullets(shared)] if shared else []
    for repo in repos:
        own = [text for products, text in pairs if repo in products and not all(r in products for r in repos)
               and next(r for r in repos if r in products) == repo]
        if own:
            name = kb.repository(repo).display_name  # type: ignore[union-attr]
            parts.append(t("product_heading", name=name) + "\n" + bullets(own))
    return "\n".join(parts)


def _steps_block(steps: list[Note], commands: list[Command], report: DiagnosticReport, t: Text, kb: KnowledgeBase) -> str:
    shown = _notes(dict.fromkeys(steps), report)[:MAX_STEPS]
    runs = list(dict.fromkeys(_commands(commands, report)))
    if not shown and not runs:
        return ""
    lines: list[Line] = [(n.products, n.text.of(t.language)) for n in shown]
    block = t("steps") + "\n" + _grouped(lines, report.repos, t, kb, numbered=True) if lines else ""
    if runs:
        block += ("\n" if block else "") + "```bash\n" + "\n".join(runs[:MAX_COMMANDS]) + "\n```"
    return block


def _docs_line(repos: tuple[str, ...], t: Text, kb: KnowledgeBase) -> tuple[str, list[Source]]:
    links, sources = [], []
    for repo in repos:
        doc = kb.doc(repo)
        if doc is None:
            continue
        src = kb.source(doc.source)
        links.append(f"[{doc.title.of(t.language)}]({src.url})")
        sources.append(Source(doc.title.of(t.language), src.url))
    return (t("more") + " · ".join(links) if links else ""), sources


def _code_block(report: DiagnosticReport, t: Text) -> str:
    if not report.code_entries:
        return ""
    lines = [f"- {', '.join(f'`{p}`' for p in e.paths[:3])}{t('colon')}{e.purpose.of(t.language)}" for e in report.code_entries]
    return t("where") + "\n" + "\n".join(lines)
