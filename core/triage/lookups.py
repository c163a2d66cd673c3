"""The "what the knowledge base says" lines of a report: version verdicts and the row to move to,
version lookups, error codes, variables, incompatibilities, chips, flags and product facts."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import MatrixRow
from core.messages import Language
from core.release_check import ReleaseCheck, VersionVerdict, norm_version, release_line
from core.releases.ranges import needs, outside
from core.triage.matching import _in_scope
from core.triage.report import DiagnosticReport, VersionLookup
from core.triage.texts import Text

Line = tuple[tuple[str, ...], str]  # (products the line belongs to, Markdown)
RefLine = tuple[tuple[str, ...], str, tuple[str, ...]]  # ... plus the knowledge-base sources behind it


def _label(products: Sequence[str], kb: KnowledgeBase, t: Text) -> str:
    names = [kb.repository(p).display_name for p in products if kb.repository(p) is not None]  # type: ignore[union-attr]
    if len(names) >= len(kb.repositories) - 1 and "vllm-project/vllm" not in products:
        return t("applies_to", products=t("all_ascend"))
    return t("applies_to", products=", ".join(names))


def _row_text(row: MatrixRow, t: Text) -> str:
    text = t("row", cann=row.cann, torch=row.torch, torch_npu=row.torch_npu, pmin=row.python_min, pmax=row.python_max_exclusive)
    extra = [f"Triton Ascend {row.triton_ascend}" if row.triton_ascend else "", f"Mooncake {row.mooncake}" if row.mooncake else ""]
    return t("list_sep").join([text, *(e for e in extra if e)])


_PACKAGE_NAMES = {
    "vllm": "vLLM", "cann": "CANN", "torch": "torch", "torch_npu": "torch_npu", "python": "Python",
    "triton-ascend": "Triton Ascend", "mooncake": "Mooncake",
}


def _render_verdict(v: VersionVerdict, t: Text, kb: KnowledgeBase) -> str:
    if v.status == "unknown":
        line = [r for r in kb.matrix.rows if release_line(r.vllm_ascend) == release_line(norm_version(v.found))]
        if line:  # 0.8.4 asked, 0.8.4rc2 documented: name the rows that exist, with their vLLM
            rows = ", ".join(f"v{r.vllm_ascend} (vLLM {' / '.join(r.vllm)})" for r in line)
            return t("v_line_rows", found=f"vllm-ascend {v.found}", rows=rows)
        return t("v_unknown", found=v.found, oldest=kb.matrix.rows[-1].vllm_ascend, newest=v.expected, where=kb.matrix.read_from)
    if v.status == "info" and v.component == "vllm":  # on main: a vLLM release is not the verified commit
        return t("v_main_vllm", found=v.found, commit=v.expected)
    if v.status == "info":
        return t("v_info", found=v.found, expected=v.expected) if v.expected else t("v_no_row", found=f"vLLM {v.found}")
    if v.status == "expected":
        return t("v_row", va=v.vllm_ascend, expected=v.expected, row=_row_text(v.row, t) if v.row else "")
    if v.component == "chip":
        return t("v_chip_release", found=v.found, va=v.vllm_ascend, expected=v.expected)
    if v.component == "image":
        return t("v_image", found=v.found, expected=v.expected)
    if v.component == "vllm":
        if v.status == "match":
            return t("v_match", found=v.found, va=v.vllm_ascend)
        return t("v_mismatch_vllm", va=v.vllm_ascend, expected=v.expected, found=v.found, row=_row_text(v.row, t) if v.row else "")
    if v.component == "python":
        return t("v_python_ok" if v.status == "match" else "v_python", found=v.found, expected=v.expected, va=v.vllm_ascend)
    name = _PACKAGE_NAMES.get(v.component, v.component)
    return t("v_match_other" if v.status == "match" else "v_mismatch_other", component=name, found=v.found, expected=v.expected, va=v.vllm_ascend)


def _release_lines(check: ReleaseCheck, t: Text, kb: KnowledgeBase) -> list[str]:
    """What holds without a row of one's own (post, dev, main), then the fields that differ and the row to move to."""
    lines = []
    row = check.row
    if check.kind == "post" and row is not None:
        lines.append(t("v_kind_post", found=check.release, va=row.vllm_ascend))
    elif check.kind == "dev" and row is not None:
        target = t("v_target_main") if row.vllm_ascend == "main" else t("v_target_row", va=row.vllm_ascend)
        lines.append(t("v_kind_dev", found=check.release, target=target))
    elif check.kind == "main" and row is not None:
        main = kb.matrix.main_branch
        lines.append(t("v_kind_main", commit=main.commit[:8], row=_row_text(row, t), as_of=main.as_of))
    differs = [d for d in check.differs if d in _PACKAGE_NAMES]
    if differs and row is not None:
        own = "main" if row.vllm_ascend == "main" else f"v{row.vllm_ascend}"
        names = t("list_sep").join(_PACKAGE_NAMES[d] for d in differs)
        lines.append(t("v_differs", own=own, fields=names))
        if check.move_to is not None:
            m = check.move_to
            lines.append(t("v_move", va=m.vllm_ascend, vllm=" / ".join(m.vllm), row=_row_text(m, t), fields=names, own=own))
        else:
            changes = t("list_sep").join(f"{_PACKAGE_NAMES[v.component]} {v.expected}" for v in check.verdicts
                                         if v.status == "mismatch" and v.component in differs)
            lines.append(t("v_stay", own=own, changes=changes))
    if check.python_row is not None:  # which release takes their Python (core/release_check.py)
        found = next((v.found for v in check.verdicts if v.component == "python"), "")
        p = check.python_row
        lines.append(t("v_python_from" if check.python_newer else "v_python_until", found=found, va=p.vllm_ascend,
                       vllm=" / ".join(p.vllm), pmin=p.python_min, pmax=p.python_max_exclusive))
    return lines


def _render_lookup(lk: VersionLookup, t: Text) -> str:
    if lk.row is not None:
        return t("v_row", va=lk.row.vllm_ascend, expected=" / ".join(lk.row.vllm), row=_row_text(lk.row, t))
    if lk.vllm_rows:
        return t("v_info", found=lk.version, expected=", ".join(f"v{r.vllm_ascend}" for r in lk.vllm_rows))
    if lk.line_rows:  # 0.8.4 asked, 0.8.4rc2 documented: say which rows exist instead of "none"
        return t("v_line_rows", found=lk.version, rows=", ".join(f"v{r.vllm_ascend}" for r in lk.line_rows))
    return t("v_no_row", found=lk.version)


def _lookup_lines(report: DiagnosticReport, t: Text, kb: KnowledgeBase, *, label: bool = False) -> list[RefLine]:
    lang = t.language
    out: list[RefLine] = []
    matrix = kb.matrix.products
    for v in report.version_verdicts:
        out.append((matrix, _render_verdict(v, t, kb), v.sources))
    row_refs = (report.release_check.row.source,) if report.release_check.row is not None else ()
    out += [(matrix, line, row_refs) for line in _release_lines(report.release_check, t, kb)]
    for lk in report.version_lookups:
        refs = ((lk.row.source,) if lk.row else tuple(r.source for r in lk.vllm_rows)) or (kb.matrix.policy.source,)
        out.append((matrix, _render_lookup(lk, t), refs))
    if report.main_branch is not None:
        out.append((matrix, report.main_branch.text.of(lang), (report.main_branch.source,)))
    if report.policy is not None:
        out.append((matrix, t("v_policy", text=report.policy.text.of(lang)), (report.policy.source,)))
    for c in report.error_codes:
        line = t("code_line", code=c.code, name=c.name, meaning=c.meaning.of(lang))
        out.append((c.products, line + (" " + _label(c.products, kb, t) if label else ""), c.sources))
    scope_all = report.repos or tuple(r.repo for r in kb.repositories)
    for code in report.unknown_codes:
        out.append((scope_all, t("code_unknown", code=code), ()))
    # A product fact about the same variable says it better (per product, with its default); show one.
    fact_titles = " ".join(f.title.en for f in report.product_facts)
    for v in (v for v in report.env_vars if v.name not in fact_titles):
        line = t("env_var", name=v.name, scope=v.scope, purpose=v.purpose.of(lang)) + _range_note(v.releases, report, lang)
        if v.value == "user":
            line += t("env_user_value")
        out.append((v.products, line + (" " + _label(v.products, kb, t) if label else ""), (v.source,)))
    for i in report.incompatibilities:
        out.append((i.products, t("incompat_line", title=i.title.of(lang), explanation=i.explanation.of(lang), workaround=i.workaround.of(lang)), i.sources))
    for chip in (c for c in report.chips if c.id in report.named_chips):
        if _in_scope(chip.applies_to, report.repos) and chip.support != "supported":
            notes = t("chip_notes", id=chip.id, family=chip.family, support=t(f"support_{chip.support}"), notes=chip.notes.of(lang))
            out.append((chip.applies_to, notes, (chip.source,)))
        else:
            out.append((scope_all, t("chip_family", id=chip.id, family=chip.family, products=", ".join(chip.products[:3])), ()))
    for flag, note, sources in report.flag_notes:
        out.append((note.products, f"`{flag}`{t('colon')}{note.text.of(lang)}", sources))
    for f in report.product_facts:
        span = _range_note(getattr(f, "releases", None), report, lang)
        out.append((tuple(f.products), f"**{f.title.of(lang)}**{span}{t('colon')}{f.text.of(lang)}", ()))
    return out


def _range_note(releases: Any, report: DiagnosticReport, language: Language) -> str:
    """" (needs v0.14.0rc1 or later)" for a named variable their release lacks; " (v0.11.0rc0+)" when
    their release is unknown; "" when it holds (core/releases/ranges.py)."""
    if not releases or (report.release and not outside(releases, report.release)):
        return ""
    text = needs(releases, report.release or None, language)
    return f"（{text}）" if language == "zh" and text else (f" ({text})" if text else "")
