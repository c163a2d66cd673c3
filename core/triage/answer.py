"""`triage(...)`: the short offline answer in Markdown, in the user's language.

A conclusion only when a signature matched, otherwise one honest line; then the lookups that hit,
next steps (troubleshooting only), code locations (code questions), passages from the knowledge
index, and each product's FAQ/docs link. The full checklist and the what-to-send list come on
request (`triage_details`, the `details` command); `shared_lookups` answers what holds for every
product while the user picks one.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.environment import Environment
from core.index.passage import Passage
from core.knowledge.generated.feature_support import feature_lookups
from core.knowledge.generated.model_support import support_lookups
from core.knowledge.base import KnowledgeBase
from core.messages import Language, Source
from core.release_matrix import current_knowledge
from core.resolution.answer import Match
from core.resolution.answer import lead as resolution_lead
from core.resolution.record import Certainty
from core.signals import find_env_names
from core.triage.advice import _commands
from core.triage.conclusion import _conclusion
from core.triage.diagnosis import VLLM_ASCEND, _fact_source, _unique_sources, diagnose
from core.triage.lookups import Line, _lookup_lines
from core.triage.matching import _in_scope
from core.triage.passages import _passages_block
from core.triage.render import _code_block, _docs_line, _environment_line, _grouped, _steps_block
from core.triage.report import TriageResult
from core.triage.texts import Text


def _split_fact_passages(passages: Sequence[Passage]) -> tuple[tuple[str, ...], list[Passage]]:
    """(ids of the knowledge-base facts among the index's passages, the other passages)."""
    try:
        from core.facts_index import fact_id_of  # noqa: PLC0415 - optional knowledge
    except ImportError:
        return (), list(passages)
    ids = tuple(fact_id_of(p.path) for p in passages if isinstance(p, Passage) and fact_id_of(p.path))
    return ids, [p for p in passages if not (isinstance(p, Passage) and fact_id_of(p.path))]


def _markers_of(text: str) -> frozenset[str]:
    from core.product_scope import text_markers  # noqa: PLC0415 - product_scope imports this module's users only

    return frozenset(m.rstrip("=") for m in text_markers(text)) | frozenset(find_env_names(text))


def triage(
    text: str,
    repos: Sequence[str],
    language: Language,
    known_env: dict[str, str] | None = None,
    passages: Sequence[Passage] = (),
    *,
    kb: KnowledgeBase | None = None,
    resolution: Match | None = None,
    team_lead: str = "",
    keyed_on: str = "",
    release_notes: Sequence[str] = (),
    stated: Environment | None = None,
    thread_outcomes: Mapping[str, str] | None = None,
    release_lead: Sequence[str] = (),
    release_general: Sequence[str] = (),
) -> TriageResult:
    """A short offline answer in Markdown, in the user's language, using only the routed products' knowledge.

    A resolved thread that matched the question with confidence leads (what fixed it, who said so,
    the release); the diagnostic follows as what else to check. `release_notes`: what changed since
    the user's release, one line each; `release_lead`: what their release means for this very
    question ("fixed in v0.10.1rc1 by #2528: upgrade"), shown first; `release_general`: with their
    release unknown, the release history of the variables and keys the question names. `stated`: the environment the message states, when the
    caller already read it (the conversation reads it once for the release pins and this).
    `thread_outcomes`: how each related thread was resolved, by its url (core/resolution/answer.py)."""
    kb = kb or current_knowledge()
    t = Text(language)
    question = text if isinstance(text, str) else ""
    # Facts come back from the index as passages too: they boost the fact selection and are shown
    # as facts (once), or not at all.
    indexed_facts, passages = _split_fact_passages(passages)
    report = diagnose(question, repos=tuple(repos), known_env=known_env, kb=kb, indexed_facts=indexed_facts, stated=stated)
    routed = report.repos

    parts: list[str] = []
    refs: list[str] = []
    thread_sources: list[Source] = []
    if team_lead:  # a teammate's saved answer from this workspace comes first
        parts.append(team_lead)
    if release_lead:  # the user's release against the release notes and issue memory (core/releases/news.py)
        parts.append(t("release_lead") + "\n" + "\n".join(f"- {line}" for line in release_lead))
    if release_general:
        parts.append(t("release_general") + "\n" + "\n".join(f"- {line}" for line in release_general))
    if keyed_on and not (resolution is not None and resolution.keyed_on):  # a lead names its own line
        parts.append(t("keyed", line=keyed_on.replace("`", "'")[:160]))
    if resolution is not None:
        lead_text, thread_sources = resolution_lead(resolution, t.language)
        parts.append(lead_text)
        passages = [p for p in passages if p.url not in {s.url for s in thread_sources}]
    # A maintainer's resolution (or a colleague's answer) leads: the knowledge base's generic pattern
    # and its steps would only compete with it ("install the kernels" after "not supported on 310P").
    strong_lead = team_lead or (resolution is not None and resolution.record.certainty >= Certainty.MAINTAINER)
    found = _conclusion(report, t) if routed and report.kind == "problem" and not strong_lead else None
    if found is not None and resolution is not None and not found[4]:
        found = None  # after a thread's resolution, a pattern matched on words only adds a guess
    if found is not None:
        conclusion, steps, commands, found_refs, sure = found
        parts.append(t(("otherwise" if resolution is not None else "conclusion") if sure else "maybe") + conclusion)
        refs += found_refs
    else:
        steps, commands = [], []
    lookups = [line for line in _lookup_lines(report, t, kb) if not routed or any(r in line[0] for r in routed)]
    table_rows = 0
    if VLLM_ASCEND in routed:  # "does model X / feature Y work?": the support tables generated from the clone
        for table_lines, table_ref in (support_lookups(question, t.language), feature_lookups(question, t.language)):
            lookups += [((VLLM_ASCEND,), line, (table_ref,)) for line in table_lines]
            table_rows += len(table_lines)
    if found is not None:  # a product fact that restates the steps below would say each setting twice
        shown = _markers_of(" ".join(n.text.en for n in steps) + " " + " ".join(c.run for c in commands))
        lookups = [line for line in lookups if len(_markers_of(line[1]) & shown) < 2]
    if found is None and resolution is None and not team_lead:  # already answered: no "nothing matched"
        if not lookups and not report.code_entries:
            parts.append(t("nothing"))
        else:
            parts.append(t("nothing_with_lookups") if report.kind == "problem" else t("lookups_intro"))
    parts.append(_environment_line(report, t))
    if lookups:
        parts.append(t("lookups") + "\n" + _grouped(lookups, routed, t, kb))
        refs += [ref for line in lookups for ref in line[2]]
    if found is not None:
        # A pattern matched on words only keeps its steps but not its commands: read against real
        # reports, a generic command was more often a wrong turn (or the very setting that failed)
        # than a help; the checklist with commands stays one `details` away.
        parts.append(_steps_block(steps, commands if found[4] else [], report, t, kb))
    parts.append(_code_block(report, t))
    refs += [e.source for e in report.code_entries]
    if release_notes:  # what the newest release changed against theirs (core/releases/changes.py)
        parts.append(t("release_changes") + "\n" + "\n".join(f"- {line}" for line in release_notes))
    passage_text, passage_sources = _passages_block(passages, question, t, used=sum(len(p) for p in parts) + 250,
                                                    outcomes=thread_outcomes)
    if passage_text:
        parts.append(passage_text)
    elif found is None and resolution is None and not team_lead and not lookups and not report.code_entries:
        parts.append(t("nothing_passages"))
    docs_text, doc_sources = _docs_line(routed, t, kb)
    parts.append(docs_text)
    if report.kind == "problem" and routed:
        parts.append(t("details_hint"))
    parts.append(t("footer"))

    answer = "\n\n".join(p for p in parts if p)
    fact_sources = [_fact_source(f, kb) for f in report.product_facts if any(r in f.products for r in routed)]
    sources = _unique_sources([*thread_sources, *(kb.source(r) for r in refs), *fact_sources, *passage_sources, *doc_sources])
    return TriageResult(text=answer, sources=sources, signals=report.signals, report=report,
                        concluded=found is not None and found[4], passages=tuple(passages),
                        environment_line=_environment_line(report, t), table_rows=table_rows)


def shared_lookups(text: str, language: Language, *, kb: KnowledgeBase | None = None) -> TriageResult | None:
    """What the knowledge base says that holds for every product (a CANN variable, an ACL code).

    Shown with a "which project?" question, so a named variable or code is answered at once
    and only the product-specific steps wait for the user's pick. None when nothing applies.
    """
    kb = kb or current_knowledge()
    t = Text(language)
    question = text if isinstance(text, str) else ""
    report = diagnose(question, repos=(), known_env=None, kb=kb)
    everyone = {r.repo for r in kb.repositories if r.repo in ASCEND_PRODUCTS}
    lines = [line for line in _lookup_lines(report, t, kb) if everyone <= set(line[0])]
    if not lines:
        return None
    body = t("lookups") + "\n" + "\n".join(f"- {line[1]}" for line in lines)
    sources = _unique_sources(kb.source(ref) for line in lines for ref in line[2])
    return TriageResult(text=body, sources=sources, signals=report.signals, report=report)


# Products that run on Ascend: a CANN/torch_npu fact that names all of them is product-neutral.
ASCEND_PRODUCTS = frozenset({
    "vllm-project/vllm-ascend", "verylucky01/MindIE-LLM", "verylucky01/MindIE-SD",
    "verylucky01/MindStudio-ModelSlim", "sgl-project/sglang", "verylucky01/MindIE-Turbo",
})


# --------------------------------------------------------------- details


def triage_details(
    text: str,
    repos: Sequence[str],
    language: Language,
    known_env: dict[str, str] | None = None,
    *,
    kb: KnowledgeBase | None = None,
) -> TriageResult:
    """The full checklist and the what-to-send list for the routed products (the `details` command)."""
    kb = kb or current_knowledge()
    t = Text(language)
    lang = t.language
    question = text if isinstance(text, str) else ""
    report = diagnose(question, repos=tuple(repos), known_env=known_env, kb=kb)
    routed = report.repos
    refs: list[str] = []
    parts = [t("details_title")]

    items = [i for i in kb.checklist if routed and _in_scope(i.products, routed)]
    if items:
        lines: list[Line] = []
        for item in items:
            line = f"**{item.title.of(lang)}**{t('colon')}{item.body.of(lang)}"
            # A setting the body already spells out (ASCEND_LAUNCH_BLOCKING=1) is not repeated as a command.
            runs = [r for r in _commands(item.commands, report) if r.removeprefix("export ") not in item.body.of(lang)]
            if runs:
                line += " " + " ".join(f"`{r}`" for r in runs)
            lines.append((item.products, line))
            refs.extend(item.sources)
        parts.append(t("checklist_heading") + "\n" + _grouped(lines, routed, t, kb, numbered=True))
    else:
        names = ", ".join(kb.repository(r).display_name for r in routed) or "-"  # type: ignore[union-attr]
        parts.append(t("checklist_heading") + "\n" + t("no_checklist", repos=names))

    send: list[Line] = []
    env = kb.collect_env
    if _in_scope(env.products, routed) and routed:
        fields = t("list_sep").join(f"`{f.printed_as}`" for f in env.fields if f.key)
        send.append((env.products, t("send_collect_env", command=env.command, where=env.where.of(lang), fields=fields)))
        refs.append(env.source)
    for s in kb.send_items:
        if not routed or not _in_scope(s.products, routed):
            continue
        if s.problem_only and report.kind != "problem" and not report.is_problem:
            continue
        if s.id == "chip" and report.signals.chips:
            continue
        product = next((kb.repository(r).display_name for r in routed if r in s.products), "")  # type: ignore[union-attr]
        send.append((s.products, s.text.of(lang).replace("{product}", product)))
        if s.source:
            refs.append(s.source)
    if send:
        parts.append(t("send_heading") + "\n" + _grouped(send, routed, t, kb))
    docs_text, doc_sources = _docs_line(routed, t, kb)
    parts.append(docs_text)
    answer = "\n\n".join(p for p in parts if p)
    sources = _unique_sources([*(kb.source(r) for r in refs), *doc_sources])
    return TriageResult(text=answer, sources=sources, signals=report.signals, report=report)
