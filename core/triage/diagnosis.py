"""`diagnose(text, repos=...)`: a message matched against the knowledge base, as a DiagnosticReport.

Named entities come first (versions, env vars, error codes, chips, flags, main branch), then
problem signatures (incompatible combinations, problem patterns). Every entry names the products it
applies to; only entries of the routed repositories are used. The environment is read by
core/environment.py and checked by core/release_check.py.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Iterable

from core.environment import Environment, environment_from_session, read_environment, updated
from core.knowledge.base import KnowledgeBase
from core.messages import Source
from core.release_check import NO_CHECK, VersionVerdict, check_release, find_row, norm_version, release_line
from core.release_matrix import current_knowledge
from core.releases.ranges import outside
from core.signals import PACKAGES, Signals, extract_signals, find_env_names, find_versions, mentions_main_branch
from core.triage.matching import _code_entries, _flag_notes, _in_scope, _match_checklist, _match_patterns, _product_facts
from core.triage.report import DiagnosticReport, QuestionKind, VersionLookup

VLLM_ASCEND = "vllm-project/vllm-ascend"
# Packages whose versions are never vllm-ascend / vLLM versions.
_OTHER_PACKAGES = ("cann", "torch", "torch_npu", "transformers", "python", "mindie", "triton-ascend", "mooncake", "driver")
_CODE_QUESTION = re.compile(
    r"(?<![A-Za-z])where(?: is| are| does| do|'s)?\b.{0,60}?\b(?:implemented|defined|located|registered|code|file|class|entry)"
    r"|which (?:file|module|class|function|directory)|in (?:which|what) (?:file|module)|source (?:file|location)|code location"
    r"|在哪(?:个|里|儿)?(?:文件|实现|定义|注册|目录|模块)?|哪个(?:文件|模块|类|函数|目录)|代码(?:在|位置)|源码(?:在|位置)|入口在|实现在",
    re.IGNORECASE,
)


# A `pip list` / `pip freeze` line ("torchvision   0.22.1", "[pip3] numpy==1.26.4"): its version is
# that package's, never a vLLM or vllm-ascend version asked about.
_LISTED_VERSION = re.compile(r"(?m)^[ \t]{0,8}(?:\[\w{1,6}\][ \t]{0,3})?[A-Za-z][\w.\-]{0,60}(?:==|[ \t]{2,60})v?(\d{1,4}(?:\.[\w+]{1,20}){1,6})[ \t]*$")


def _version_lookups(text: str, signals: Signals, verdicts: tuple[VersionVerdict, ...], kb: KnowledgeBase) -> tuple[VersionLookup, ...]:
    """Bare versions (pairs like "v0.11.0rc1 和 v0.11.0") not already checked and not another package's."""
    covered = {norm_version(v.found) for v in verdicts if v.found} | {v.vllm_ascend for v in verdicts if v.vllm_ascend}
    others = {norm_version(signals.version(p) or "") for p in _OTHER_PACKAGES} - {""}
    # With the release known, a bare version the matrix has nothing on is a paste's GCC, CMake or OS
    # version (collect_env prints them): saying "no row" about each is noise.
    release_known = any(v.row is not None for v in verdicts)
    listed = {norm_version(m.group(1)) for m in _LISTED_VERSION.finditer(text)}
    # A version the matrix only knows as a torch/torch_npu/triton pin ("wants torch 2.7.1") is
    # that package's, not a missing vLLM/vllm-ascend row.
    pins = {norm_version(x) for r in kb.matrix.rows for x in (r.torch, r.torch_npu, r.triton_ascend or "") if x}
    out = []
    for version in find_versions(text):
        v = norm_version(version)
        row = find_row(kb, v)
        vllm_rows = tuple(r for r in kb.matrix.rows if v in r.vllm)
        if v in covered or v in others or v in listed or (v in pins and row is None and not vllm_rows):
            continue
        line = tuple(r for r in kb.matrix.rows if release_line(r.vllm_ascend) == release_line(v)) if not (row or vllm_rows) else ()
        if release_known and not (row or vllm_rows or line):
            continue
        out.append(VersionLookup(v, row, vllm_rows, line))
        if len(out) == 4:
            break
    return tuple(out)


def _question_kind(text: str, signals: Signals, is_problem: bool) -> QuestionKind:
    if _CODE_QUESTION.search(text[:2000]) and not signals.error_codes:
        return "code"
    return "problem" if is_problem else "howto"


def diagnose(
    text: str,
    *,
    repos: Sequence[str] = (),
    known_env: dict[str, str] | None = None,
    kb: KnowledgeBase | None = None,
    indexed_facts: tuple[str, ...] = (),
    stated: Environment | None = None,
) -> DiagnosticReport:
    """Match a message against the knowledge base for `repos` (every product when empty).

    `indexed_facts`: ids of facts the knowledge index ranked for this question (a relevance boost).
    `stated`: `read_environment(text)` when the caller already read it (read here otherwise)."""
    kb = kb or current_knowledge()
    if not isinstance(text, str):
        text = ""
    routed = tuple(r for r in repos if kb.repository(r) is not None)
    low = text.lower()
    named = extract_signals(text)
    stated = (read_environment(text) if stated is None else stated).with_unnamed_release_as(routed)
    env = updated(environment_from_session(known_env), stated)
    signals = _with_environment(named.with_env(known_env), env)
    matrix_on = _in_scope(kb.matrix.products, routed)

    codes, unknown = [], []
    for code in signals.error_codes:
        entry = kb.error_code(code)
        if entry is None:
            unknown.append(code)
        elif entry not in codes and _in_scope(entry.products, routed):
            codes.append(entry)
    names = set(find_env_names(text))
    env_vars = tuple(v for v in kb.env_vars if v.name in names and _in_scope(v.products, routed))
    on_main = mentions_main_branch(text)
    release = check_release(env, kb, on_main=on_main) if matrix_on else NO_CHECK
    verdicts = release.verdicts
    lookups = _version_lookups(text, signals, verdicts, kb) if matrix_on else ()
    main = kb.matrix.main_branch if matrix_on and on_main else None
    tokens = signals.tokens
    # Advice that names what the user's release does not have yet (or no longer has) is left out.
    user_release = (env.get("vllm-ascend") or "") if VLLM_ASCEND in routed else ""
    incompat = tuple(c for c in kb.incompatibilities if c.matches(tokens) and _in_scope(c.products, routed)
                     and not outside(c.releases, user_release))
    chips = tuple(c for c in (kb.chip(cid) for cid in signals.chips) if c is not None)
    named_chips = tuple(c.id for c in chips if c.id in named.chips or c.support != "supported")
    patterns, signature = _match_patterns(text, low, signals, kb, routed)
    checklist = _match_checklist(signals, kb, routed)
    probe = DiagnosticReport(signals, tuple(codes), tuple(unknown), patterns, incompat, verdicts, chips, checklist, ())
    kind = _question_kind(text, signals, probe.is_problem)
    # A version mismatch, an error code, an incompatibility or a problem pattern's own keywords in a
    # problem report explain the message: facts found only by meaning would compete with that conclusion.
    settled = bool(codes or incompat or any(v.status in ("mismatch", "unknown") for v in verdicts)
                   or (signature and probe.is_problem))
    facts, named_facts = _product_facts(text, routed, indexed_facts, 0 if settled else 2)
    facts = tuple(f for f in facts if not outside(getattr(f, "releases", None), user_release))
    flag_notes = _flag_notes(text, kb, routed, facts, problem=probe.is_problem)
    flag_notes = tuple(x for x in flag_notes if not outside(x[1].releases, user_release))
    code_entries = _code_entries(low, kb, routed) if kind == "code" else ()

    refs: list[str] = []
    for v in verdicts:
        refs.extend(v.sources)
    refs += [lk.row.source for lk in lookups if lk.row] + [r.source for lk in lookups for r in lk.vllm_rows]
    versions_named = bool(verdicts or lookups)
    policy = kb.matrix.policy if versions_named and (
        any(v.status in ("mismatch", "unknown", "info") for v in verdicts) or lookups
    ) else None
    if policy is not None or any(not lk.row and not lk.vllm_rows for lk in lookups):
        refs.append(kb.matrix.policy.source)
    if main is not None:
        refs.append(main.source)
    for c in codes:
        refs.extend(c.sources)
    refs += [v.source for v in env_vars]
    for i in incompat:
        refs.extend(i.sources)
    for p in patterns:
        refs.extend(p.sources)
    for item in checklist:
        refs.extend(item.sources)
    refs += [e.source for e in code_entries]
    sources = _unique_sources([*(kb.source(ref) for ref in refs), *(_fact_source(f, kb) for f in facts)])
    return DiagnosticReport(
        signals, tuple(codes), tuple(unknown), patterns, incompat, verdicts, chips, checklist, sources, policy,
        repos=routed, env_vars=env_vars, version_lookups=lookups, main_branch=main, code_entries=code_entries,
        product_facts=facts, flag_notes=flag_notes, signature_patterns=signature, kind=kind, text_low=low, named_chips=named_chips,
        named_facts=named_facts, release_check=release, environment=env, message_environment=stated, release=user_release,
    )


def _with_environment(signals: Signals, env: Environment) -> Signals:
    """The signals with the environment's versions (last value wins, corrections applied) and its chip first."""
    versions = tuple((p, v) for p in PACKAGES if (v := env.get(p)))
    chips = tuple(dict.fromkeys((*((env.chip,) if env.chip else ()), *signals.chips)))
    return replace(signals, versions=versions, chips=chips)


def _fact_source(fact: Any, kb: KnowledgeBase) -> Source:
    citation = getattr(fact, "citation", None)
    if callable(citation):
        return citation()
    return kb.source(str(getattr(fact, "source", "")))


def _unique_sources(sources: Iterable[Source]) -> tuple[Source, ...]:
    seen: dict[str, Source] = {}
    for source in sources:
        if source.url:
            seen.setdefault(source.url, source)
    return tuple(seen.values())
