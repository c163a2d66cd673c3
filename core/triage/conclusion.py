"""The conclusion of a problem report: the first signature that explains it (a version mismatch,
an incompatibility, an unsupported chip, an error code, a named product fact, a problem pattern)."""
from __future__ import annotations

from core.knowledge.schema import Command, Note, ProblemPattern
from core.messages import Language
from core.triage.advice import _notes
from core.triage.lookups import _PACKAGE_NAMES
from core.triage.matching import _in_scope
from core.triage.report import DiagnosticReport
from core.triage.texts import Text

# Product facts that describe a failure: when one matches a problem report it is the conclusion.
_SIGNATURE_FACT_KINDS = frozenset({"error", "limitation"})


# conclusion, steps, commands, sources, and whether it is a conclusion at all: a problem pattern matched
# on the question's words is only "possibly related" (its usual causes are a guess for this user).
Found = tuple[str, list[Note], list[Command], tuple[str, ...], bool]


def _conclusion(report: DiagnosticReport, t: Text) -> Found | None:
    """The conclusion with the steps, commands and sources that belong to it, or None when no signature matched."""
    lang = t.language
    pattern = report.signature_patterns[0] if report.signature_patterns and report.is_problem else None

    def with_pattern(text: str, p: ProblemPattern | None, extra: tuple[str, ...] = (), sure: bool = True) -> Found:
        if p is None:
            return text, [], [], extra, sure
        return text, list(p.steps), list(p.commands), extra + p.sources, sure

    for v in report.version_verdicts:
        if v.component == "vllm" and v.status == "mismatch":
            versions = next((p for p in report.patterns if "versions_given" in p.features), None)
            return with_pattern(t("c_version", va=v.vllm_ascend, expected=v.expected, found=v.found), versions, v.sources)
    if report.incompatibilities:
        first = report.incompatibilities[0]
        return with_pattern(t("c_incompat", title=first.title.of(lang)), None, first.sources)
    for chip in report.chips:
        if chip.support == "unsupported" and report.repos and _in_scope(chip.applies_to, report.repos):
            return with_pattern(t("c_chip", chip=f"{chip.id}, {chip.family}"), None, (chip.source,))
    if report.error_codes:
        c = report.error_codes[0]
        text = t("c_code", code=c.code, name=c.name, layer=_lower_first(c.layer.of(lang), lang))
        steps, commands, refs = list(c.steps), list(c.commands), c.sources
        if pattern is not None and len(_notes(steps, report)) < 2:
            steps += [s for s in pattern.steps if s not in steps]
            commands += list(pattern.commands)
            refs += pattern.sources
        return text, steps, commands, refs, True
    for v in report.version_verdicts:
        if v.status == "mismatch" and v.component in ("chip", "image"):
            return with_pattern(t(f"c_{v.component}_release", found=v.found, expected=v.expected, va=v.vllm_ascend), None, v.sources)
    # A release without a matrix row is not a diagnosis ("cannot be checked offline" explains no
    # failure): the knowledge-base list says so, and the conclusion is left to what does explain it.
    for v in report.version_verdicts:
        if v.status == "mismatch":
            name = _PACKAGE_NAMES.get(v.component, v.component)
            versions = next((p for p in report.patterns if "versions_given" in p.features), None)
            return with_pattern(t("c_other_version", component=name, found=v.found, expected=v.expected, va=v.vllm_ascend), versions, v.sources)
    fact = next((f for f in report.product_facts
                 if getattr(f, "kind", "") in _SIGNATURE_FACT_KINDS and getattr(f, "id", "") in report.named_facts), None)
    if fact is not None:
        return with_pattern(t("c_fact", title=fact.title.of(lang)), pattern)
    if pattern is not None:
        causes = _notes(pattern.causes, report)[:2]
        if causes:
            text = t("or").join(_lower_first(n.text.of(lang), lang) for n in causes)
            return with_pattern(t("c_pattern", title=pattern.title.of(lang), causes=text), pattern, sure=False)
    return None


def _lower_first(text: str, language: Language) -> str:
    # "Operator execution..." reads better mid-sentence as "operator execution..."; keep acronyms.
    if language == "zh" or not text or (len(text) > 1 and text[1].isupper()):
        return text
    return text[0].lower() + text[1:]
