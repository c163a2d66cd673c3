"""The offline answer: a quick, product-aware diagnostic from the built-in knowledge base.

`diagnose(text, repos=...)` matches a message against the knowledge base. Named
entities come first (versions, env vars, error codes, chips, flags, main branch),
then problem signatures (incompatible combinations, problem patterns). Every
entry names the products it applies to; only entries of the routed repositories
are used, and steps or commands with a `when` trigger only when it is in the text.

`triage(...)` turns that into a short Markdown answer: a conclusion only when a
signature matched, otherwise one honest line; then the lookups that hit, next
steps (troubleshooting only), code locations (code questions), passages from the
knowledge index, and each product's FAQ/docs link. The full checklist and the
what-to-send list come on request (`triage_details`, the `details` command).

Pure: no I/O besides the (cached) knowledge base and product facts; the user's
text is never echoed back, only values extracted by strict patterns.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Literal

from core.index.passage import Passage
from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import (
    Chip,
    ChecklistItem,
    CodeMapEntry,
    Command,
    EnvVar,
    ErrorCode,
    Incompatibility,
    MainBranch,
    MatrixRow,
    Note,
    ProblemPattern,
    TextFact,
)
from core.messages import Language, Source
from core.environment import Environment, environment_from_session, read_environment, updated
from core.release_check import NO_CHECK, ReleaseCheck, VersionVerdict, check_release, find_row, norm_version, release_line
from core.release_matrix import current_knowledge
from core.releases.ranges import needs, outside
from core.signals import PACKAGES, Signals, extract_signals, find_env_names, find_flags, find_versions, mentions_main_branch
from core.resolution.answer import Match
from core.resolution.answer import lead as resolution_lead
from core.resolution.record import Certainty
from core.triage.texts import Text

QuestionKind = Literal["problem", "howto", "code"]

VLLM_ASCEND = "vllm-project/vllm-ascend"
MAX_PATTERNS = 2
MAX_STEPS = 4
MAX_COMMANDS = 4
MAX_PASSAGES = 3
MAX_PRODUCT_FACTS = 3  # at most the top three that clear the relevance bar (core/facts_index.py)
PASSAGE_CHARS = 320
MIN_PASSAGE_CHARS = 160
ANSWER_BUDGET = 1600  # characters before the sources: about one chat screen
_ASCII_EDGE = re.compile(r"[A-Za-z0-9]")
# Packages whose versions are never vllm-ascend / vLLM versions.
_OTHER_PACKAGES = ("cann", "torch", "torch_npu", "transformers", "python", "mindie", "triton-ascend", "mooncake", "driver")
_CODE_QUESTION = re.compile(
    r"(?<![A-Za-z])where(?: is| are| does| do|'s)?\b.{0,60}?\b(?:implemented|defined|located|registered|code|file|class|entry)"
    r"|which (?:file|module|class|function|directory)|in (?:which|what) (?:file|module)|source (?:file|location)|code location"
    r"|在哪(?:个|里|儿)?(?:文件|实现|定义|注册|目录|模块)?|哪个(?:文件|模块|类|函数|目录)|代码(?:在|位置)|源码(?:在|位置)|入口在|实现在",
    re.IGNORECASE,
)
# Product facts that describe a failure: when one matches a problem report it is the conclusion.
_SIGNATURE_FACT_KINDS = frozenset({"error", "limitation"})
_PLACEHOLDERS = {"<vllm-version>": "vllm", "<vllm-ascend-version>": "vllm-ascend"}


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class VersionLookup:
    """A version named without (or beside) a package: its vllm-ascend row, the rows holding it as vLLM, or none."""

    version: str
    row: MatrixRow | None
    vllm_rows: tuple[MatrixRow, ...]
    line_rows: tuple[MatrixRow, ...] = ()  # rows of the same X.Y.Z line (rc/post releases) when none matches exactly


@dataclass(frozen=True)
class DiagnosticReport:
    signals: Signals
    error_codes: tuple[ErrorCode, ...]
    unknown_codes: tuple[str, ...]
    patterns: tuple[ProblemPattern, ...]
    incompatibilities: tuple[Incompatibility, ...]
    version_verdicts: tuple[VersionVerdict, ...]
    chips: tuple[Chip, ...]
    checklist: tuple[ChecklistItem, ...]
    sources: tuple[Source, ...]
    policy: TextFact | None = None
    repos: tuple[str, ...] = ()
    env_vars: tuple[EnvVar, ...] = ()
    version_lookups: tuple[VersionLookup, ...] = ()
    main_branch: MainBranch | None = None
    code_entries: tuple[CodeMapEntry, ...] = ()
    product_facts: tuple[Any, ...] = ()
    flag_notes: tuple[tuple[str, Note, tuple[str, ...]], ...] = ()  # (flag, the note that explains it, its sources)
    signature_patterns: tuple[ProblemPattern, ...] = ()  # patterns matched by a keyword or error code
    kind: QuestionKind = "howto"
    text_low: str = field(default="", repr=False)
    named_chips: tuple[str, ...] = ()  # chips worth a lookup line: named in this message, or not plainly supported
    named_facts: frozenset[str] = frozenset()  # product facts a trigger named (the rest were found by meaning)
    release_check: ReleaseCheck = NO_CHECK  # the environment against its matrix row (core/release_check.py)
    environment: Environment = Environment()  # the thread's environment after this message
    message_environment: Environment = Environment()  # what this message itself stated
    release: str = ""  # the user's vllm-ascend release, when routed there: advice outside its range is left out

    @property
    def is_problem(self) -> bool:
        """The message reports a failure (as opposed to a how-to question)."""
        tokens = self.signals.tokens
        return bool(
            self.error_codes or self.unknown_codes or self.incompatibilities
            or {"error", "oom", "garbled_output"} & tokens
            or any(v.status in ("mismatch", "unknown") for v in self.version_verdicts)
        )

    @property
    def has_lookups(self) -> bool:
        return bool(
            self.error_codes or self.unknown_codes or self.env_vars or self.version_verdicts or self.version_lookups
            or self.main_branch or self.chips or self.product_facts or self.incompatibilities
        )

    @property
    def has_findings(self) -> bool:
        return self.has_lookups or bool(self.patterns or self.code_entries)

    def to_markdown(self, language: Language) -> str:
        """The findings as Markdown with sources, each entry labelled with its products (for the research tool)."""
        t = Text(language)
        kb = current_knowledge()
        parts = [_render_signals(self.signals, t)]
        lookups = _lookup_lines(self, t, kb, label=True)
        if lookups:
            parts.append("\n".join(f"- {line}" for _, line, _ in lookups))
        if self.patterns:
            lines = []
            for p in self.patterns:
                causes = t("list_sep").join(n.text.of(t.language) for n in _notes(p.causes, self))
                lines.append(f"- **{p.title.of(t.language)}** {_label(p.products, kb, t)}: {t('causes', text=causes)}")
                lines += [f"   - {n.text.of(t.language)}" for n in _notes(p.steps, self)]
            parts.append(t("patterns_heading") + "\n" + "\n".join(lines))
        if not self.has_findings:
            parts.append(t("no_findings"))
        if self.sources:
            parts.append(t("sources_heading") + "\n" + "\n".join(f"- [{s.title}]({s.url})" for s in self.sources))
        return "\n\n".join(p for p in parts if p)


@dataclass(frozen=True)
class TriageResult:
    text: str  # Markdown
    sources: tuple[Source, ...]
    signals: Signals
    report: DiagnosticReport | None = None
    concluded: bool = False  # a knowledge-base entry matched on a signature or trigger leads (core/confidence.py)
    passages: tuple[Passage, ...] = ()  # the index passages offered (facts and the leading thread taken out)
    environment_line: str = ""  # "read: vllm-ascend 0.9.1, ..." as shown (a model's answer gets it too)

    @property
    def stated_environment(self) -> Environment:
        """What the message said about the user's stack (for the thread's session: later values win)."""
        return self.report.message_environment if self.report is not None else Environment()


# ----------------------------------------------------------- version checks
# The environment is read by core/environment.py and checked by core/release_check.py.


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


# ------------------------------------------------------------- matching

@dataclass(frozen=True)
class _Keyword:
    word: str  # lowercase
    left_edge: bool  # must not be preceded by an ASCII letter/digit
    right_edge: bool  # must not be followed by one

    def found_in(self, low: str) -> bool:
        # str.find is a fast substring search; checking the edges by hand avoids
        # regexes that start with a lookbehind, which `re` cannot skip through.
        start = low.find(self.word)
        while start != -1:
            end = start + len(self.word)
            if (not self.left_edge or start == 0 or not _ascii_alnum(low[start - 1])) and (
                not self.right_edge or end == len(low) or not _ascii_alnum(low[end])
            ):
                return True
            start = low.find(self.word, start + 1)
        return False


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _keywords(words: Iterable[str]) -> tuple[_Keyword, ...]:
    clean = sorted({w.strip().lower() for w in words if w.strip()})
    return tuple(_Keyword(w, bool(_ASCII_EDGE.match(w[0])), bool(_ASCII_EDGE.match(w[-1]))) for w in clean)


_PATTERN_CACHE: dict[int, tuple[KnowledgeBase, tuple[tuple[ProblemPattern, tuple[_Keyword, ...], frozenset[str]], ...]]] = {}


def _compiled_patterns(kb: KnowledgeBase) -> tuple[tuple[ProblemPattern, tuple[_Keyword, ...], frozenset[str]], ...]:
    cached = _PATTERN_CACHE.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    compiled = []
    for p in kb.patterns:
        flags = frozenset(f for c in p.commands for f in find_flags(c.run))
        compiled.append((p, _keywords(p.keywords_en + p.keywords_zh), flags))
    result = tuple(compiled)
    _PATTERN_CACHE[id(kb)] = (kb, result)
    return result


def _in_scope(products: Sequence[str], repos: tuple[str, ...]) -> bool:
    """An entry applies when it names one of the routed repositories (any entry when none was routed)."""
    return not repos or any(p in repos for p in products)


def _match_patterns(
    text: str, low: str, signals: Signals, kb: KnowledgeBase, repos: tuple[str, ...]
) -> tuple[tuple[ProblemPattern, ...], tuple[ProblemPattern, ...]]:
    tokens = signals.tokens
    flags = set(find_flags(text))
    scored = []
    for index, (pattern, keywords, pattern_flags) in enumerate(_compiled_patterns(kb)):
        if not _in_scope(pattern.products, repos):
            continue
        strong = sum(2 for c in pattern.error_codes if c in signals.error_codes)
        strong += sum(1 for k in keywords if k.found_in(low))
        strong += len(flags & pattern_flags)
        score = strong + sum(1 for f in pattern.features if f in tokens)
        if score:
            scored.append((-score, index, pattern, strong > 0))
    scored.sort(key=lambda item: (item[0], item[1]))
    top = scored[:MAX_PATTERNS]
    return tuple(p for _, _, p, _ in top), tuple(p for _, _, p, strong in top if strong)


def _match_checklist(signals: Signals, kb: KnowledgeBase, repos: tuple[str, ...]) -> tuple[ChecklistItem, ...]:
    tokens = signals.tokens
    return tuple(item for item in kb.checklist if _in_scope(item.products, repos) and any(t in tokens for t in item.triggers))


def _code_entries(low: str, kb: KnowledgeBase, repos: tuple[str, ...]) -> tuple[CodeMapEntry, ...]:
    scored = []
    for index, entry in enumerate(kb.code_map):
        if not _in_scope(entry.products, repos):
            continue
        hits = sum(len(k.word) for k in _keywords(entry.keywords_en + entry.keywords_zh) if k.found_in(low))
        if hits:
            scored.append((-hits, index, entry))
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(e for _, _, e in scored[:3])


def _flag_notes(
    text: str, kb: KnowledgeBase, repos: tuple[str, ...], facts: tuple[Any, ...], *, problem: bool,
) -> tuple[tuple[str, Note, tuple[str, ...]], ...]:
    """For each flag the user names (--enforce-eager...), the first knowledge-base step of a routed
    product that uses it. Not for a flag the user sets to a value in a question that reports no
    failure: that flag is their plan ("can I use --max-model-len 131072?"), and a troubleshooting
    step on it ("reduce --max-model-len") answers a failure they do not have."""
    if not repos:
        return ()
    covered = " ".join(f.text.en for f in facts)  # a product fact that explains the flag says it better
    out = []
    for flag in find_flags(text)[:3]:
        if flag in covered or (not problem and _given_a_value(flag, text)):
            continue
        entries = [*((p.steps, p.sources) for p in kb.patterns), *((c.steps, c.sources) for c in kb.error_codes)]
        for notes, sources in entries:
            note = next((n for n in notes if flag in n.text.en and any(p in repos for p in n.products) and not n.when), None)
            if note is not None:
                out.append((flag, note, sources))
                break
    return tuple(out)


def _given_a_value(flag: str, text: str) -> bool:
    """`flag` is followed by a value somewhere in `text`: "--x=anything", or a number, quoted or JSON
    value or path after a space ("--max-model-len 131072"); a word after a space may be prose ("--x do")."""
    start = text.find(flag)
    while start != -1:
        after = text[start + len(flag): start + len(flag) + 4]
        rest = after.lstrip(" ")
        if after.startswith("=") or (rest[:1].isdigit() or rest[:1] in "'\"{[/~."):
            return True
        start = text.find(flag, start + 1)
    return False


def _question_kind(text: str, signals: Signals, is_problem: bool) -> QuestionKind:
    if _CODE_QUESTION.search(text[:2000]) and not signals.error_codes:
        return "code"
    return "problem" if is_problem else "howto"


def _product_facts(
    text: str, repos: tuple[str, ...], indexed: tuple[str, ...] = (), by_meaning: int = 2
) -> tuple[tuple[Any, ...], frozenset[str]]:
    """Per-product facts of the routed repositories, found by meaning (core/facts_index.py) with the
    trigger rules as a boost, and the ids of those a trigger named (only they may be a conclusion:
    a fact found by meaning is related, not proof that this is that failure).

    `indexed` are fact ids the knowledge index returned as passages. `by_meaning` caps the facts no
    trigger named: none when something already explains the message. None if that module is absent
    or broken."""
    if not repos:
        return (), frozenset()
    try:
        from core.facts_index import select_product_facts  # noqa: PLC0415 - optional knowledge
        from core.knowledge.product_facts import trigger_hits  # noqa: PLC0415
    except ImportError:
        return (), frozenset()
    try:
        facts = tuple(select_product_facts(text, repos, limit=MAX_PRODUCT_FACTS, boosted=indexed, by_meaning=by_meaning))
        named = frozenset(h.fact.id for h in trigger_hits(text, repos)) & {f.id for f in facts}
        return facts, named
    except Exception:  # noqa: BLE001 - a broken fact file must not take the offline answer down
        return (), frozenset()


def _split_fact_passages(passages: Sequence[Passage]) -> tuple[tuple[str, ...], list[Passage]]:
    """(ids of the knowledge-base facts among the index's passages, the other passages)."""
    try:
        from core.facts_index import fact_id_of  # noqa: PLC0415 - optional knowledge
    except ImportError:
        return (), list(passages)
    ids = tuple(fact_id_of(p.path) for p in passages if isinstance(p, Passage) and fact_id_of(p.path))
    return ids, [p for p in passages if not (isinstance(p, Passage) and fact_id_of(p.path))]


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


def _markers_of(text: str) -> frozenset[str]:
    from core.product_scope import text_markers  # noqa: PLC0415 - product_scope imports this module's users only

    return frozenset(m.rstrip("=") for m in text_markers(text)) | frozenset(find_env_names(text))


def _range_note(releases: Any, report: DiagnosticReport, language: Language) -> str:
    """" (needs v0.14.0rc1 or later)" for a named variable their release lacks; " (v0.11.0rc0+)" when
    their release is unknown; "" when it holds (core/releases/ranges.py)."""
    if not releases or (report.release and not outside(releases, report.release)):
        return ""
    text = needs(releases, report.release or None, language)
    return f"（{text}）" if language == "zh" and text else (f" ({text})" if text else "")


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


# -------------------------------------------------------------- filtering


def _applies(products: Sequence[str], when: Sequence[str], report: DiagnosticReport) -> bool:
    """Advice (a step or a command) needs a routed product and, if it has one, its trigger in the text."""
    if not report.repos or not any(p in report.repos for p in products):
        return False
    return not when or any(w in report.text_low for w in when)


def _notes(notes: Iterable[Note], report: DiagnosticReport) -> list[Note]:
    # The research tool's report has no routed repositories: it shows every product's notes, labelled.
    if not report.repos:
        return [n for n in notes if not n.when or any(w in report.text_low for w in n.when)]
    return [n for n in notes if _applies(n.products, n.when, report) and not outside(n.releases, report.release)]


def _commands(commands: Iterable[Command], report: DiagnosticReport) -> list[str]:
    out = []
    for c in commands:
        if _applies(c.products, c.when, report) and not outside(c.releases, report.release) \
                and not (report.is_problem and _already_tried(c.run, report.text_low)):
            out.append(_fill(c.run, report.signals))
    return out


# A setting with its value in a command: "key": "value" in JSON, --flag=value / --flag value, NAME=value.
_SETTING = re.compile(
    r"\"([\w.\-]{1,40})\"\s{0,3}:\s{0,3}\"?([\w.\-]{1,40})"
    r"|(--[a-z][\w\-]{1,50})[= ]([\w.\-]{1,40})(?![\w<])"
    r"|\b([A-Z][A-Z0-9_]{2,60})=([\w.\-]{1,40})"
)
_SPACES_QUOTES = re.compile(r"[\s\"']{1,50}")


def _already_tried(run: str, question_low: str) -> bool:
    """The user's problem report already holds one of the command's settings with the same value
    ("method": "mtp" and then the error): suggesting it again would repeat what fails."""
    asked = _SPACES_QUOTES.sub("", question_low)
    for match in _SETTING.finditer(run):
        key, value = next((k, v) for k, v in zip(match.groups()[::2], match.groups()[1::2]) if k)
        if "<" in value or value.startswith("-"):
            continue  # a placeholder or the next flag, not a value
        if f"{key}:{value}".lower() in asked or f"{key}={value}".lower() in asked or f"{key}{value}".lower() in asked:
            return True
    return False


def _fill(run: str, signals: Signals) -> str:
    """Put the user's own versions into placeholders; unknown values stay as placeholders."""
    for placeholder, package in _PLACEHOLDERS.items():
        if placeholder in run:
            value = signals.version(package)
            if value:
                run = run.replace(placeholder, norm_version(value))
    return run


# -------------------------------------------------------------- rendering


def _label(products: Sequence[str], kb: KnowledgeBase, t: Text) -> str:
    names = [kb.repository(p).display_name for p in products if kb.repository(p) is not None]  # type: ignore[union-attr]
    if len(names) >= len(kb.repositories) - 1 and "vllm-project/vllm" not in products:
        return t("applies_to", products=t("all_ascend"))
    return t("applies_to", products=", ".join(names))


def _render_signals(signals: Signals, t: Text) -> str:
    items = []
    if signals.chips:
        items.append(f"{t('chips')} " + ", ".join(signals.chips))
    for pkg, version in signals.versions:
        items.append(f"{pkg} {version}")
    if signals.error_codes:
        items.append(f"{t('codes')} " + ", ".join(f"`{c}`" for c in signals.error_codes))
    return t("signals_prefix") + t("sep").join(items) if items else t("signals_none")


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


def _environment_line(report: DiagnosticReport, t: Text) -> str:
    """"read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1, 910B" when this message stated versions, an
    image or a correction, or the thread's environment was checked; a chip alone is just a question."""
    stated = {k for k, _ in report.message_environment.values} - {"chip", "card", "cards"}
    if not (stated or report.environment.corrected or report.version_verdicts and not report.environment.is_empty):
        return ""
    return report.environment.summary(t.language)


def _render_lookup(lk: VersionLookup, t: Text) -> str:
    if lk.row is not None:
        return t("v_row", va=lk.row.vllm_ascend, expected=" / ".join(lk.row.vllm), row=_row_text(lk.row, t))
    if lk.vllm_rows:
        return t("v_info", found=lk.version, expected=", ".join(f"v{r.vllm_ascend}" for r in lk.vllm_rows))
    if lk.line_rows:  # 0.8.4 asked, 0.8.4rc2 documented: say which rows exist instead of "none"
        return t("v_line_rows", found=lk.version, rows=", ".join(f"v{r.vllm_ascend}" for r in lk.line_rows))
    return t("v_no_row", found=lk.version)


Line = tuple[tuple[str, ...], str]  # (products the line belongs to, Markdown)
RefLine = tuple[tuple[str, ...], str, tuple[str, ...]]  # ... plus the knowledge-base sources behind it


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


_TERM = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]{2,40}|[\u4e00-\u9fff]{2,8}")
_STOP = frozenset(
    "the and for with how what does this that from are can not use using when why which where into there have has you your "
    "是否 怎么 如何 什么 为什么 可以 哪个 问题".split()
)


def _question_terms(text: str) -> set[str]:
    terms = set()
    for m in _TERM.finditer(text[:4000]):
        word = m.group(0).lower()
        if word in _STOP:
            continue
        if word.isascii():
            terms.add(word)
        else:  # Chinese runs: their 2-character pieces, so 量化配置 meets 量化
            terms.update(word[i : i + 2] for i in range(len(word) - 1))
    return terms


_ROLE_HEADING = re.compile(r"^(maintainer|reporter|user) @([^\s:]{1,100}):$")  # core/index/issues.py writes these


def passage_excerpt(passage: Passage, terms: set[str], limit: int = PASSAGE_CHARS) -> str:
    """The passage lines that share the question's terms (the first lines when none do), within `limit`."""
    lines = [_unlinked(ln) for ln in passage.text.splitlines() if ln.strip() and not ln.strip().startswith("```")]
    lines = [ln for ln in lines if ln]
    scored = [(sum(1 for term in terms if term in ln.lower()), i, ln) for i, ln in enumerate(lines)]
    answer_at = next((i for i, ln in enumerate(lines) if _ROLE_HEADING.match(ln)), None) if passage.kind == "issue" else None
    if answer_at is not None:
        # A thread's answer rarely repeats the question's words: after the report's best line, the
        # comments in order (who said what is the point of quoting a thread).
        report = sorted(scored[:answer_at], key=lambda s: (-s[0], s[1]))[:1]
        chosen = report + [(0, i, _ROLE_HEADING.sub(r"\1 \2:", ln)) for i, ln in enumerate(lines) if i >= answer_at]
    else:
        hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        chosen = sorted(hits, key=lambda s: s[1]) if hits else scored[:2]
    out, size = [], 0
    for _, _, ln in chosen:
        if size + len(ln) > limit:
            if not out:
                out.append(ln[: limit - 1] + "…")
            break
        out.append(ln)
        size += len(ln) + 3
    return " … ".join(out)


# Links inside quoted repository text are not our citations (the passage's permalink is), and a
# cut excerpt would show half a URL that leads nowhere: keep a link's words, drop every URL, in any
# letter case, and the scheme-less hosts chat apps link by themselves (core/untrusted_text.py).
from core.untrusted_text import drop_links, issue_label, plain_line  # noqa: E402 - beside its only users


def _unlinked(line: str) -> str:
    return drop_links(line).strip()


def _passages_block(passages: Sequence[Passage], text: str, t: Text, used: int = 0,
                    outcomes: Mapping[str, str] | None = None) -> tuple[str, list[Source]]:
    """Up to three passages; their excerpts share what is left of the answer's budget (never under 160 chars).
    `outcomes`: for a resolved thread (by its url), how it was resolved, shown instead of an excerpt."""
    chosen = [p for p in passages if isinstance(p, Passage)][:MAX_PASSAGES]
    if not chosen:
        return "", []
    terms = _question_terms(text)
    limit = max(MIN_PASSAGE_CHARS, min(PASSAGE_CHARS, (ANSWER_BUDGET - used) // len(chosen) - 80))
    lines, sources = [], []
    for p in chosen:
        outcome = (outcomes or {}).get(p.url, "")
        excerpt = outcome[:limit] if outcome else passage_excerpt(p, terms, limit).replace("`", "'")
        # Titles are written by whoever wrote the doc or opened the issue: plain text, never markup.
        path = p.path.replace("`", "'")
        where = f"{p.repo}: `{path}`"
        if p.kind == "issue":  # a reader (and the research model) must see who wrote it
            where += ", " + issue_label(p.path, p.title, p.text, t.language)
        if p.release:  # read at the user's release (core/releases), not at the indexed branch
            where += ", " + t("as_of", tag=p.release)
        lines.append(f"- **{plain_line(p.title)}** ({where})\n  > {excerpt}")
        sources.append(Source(title=f"{p.repo}: {p.path}", url=p.url))
    return t("passages") + "\n" + "\n".join(lines), sources


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
                        environment_line=_environment_line(report, t))


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
