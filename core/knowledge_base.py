"""The built-in knowledge base: facts about the Ascend inference repositories.

The facts live as JSON under `core/knowledge/` so they can be reviewed and
extended without touching code (see "The built-in knowledge base" in README.md). They are read
once, validated strictly (a malformed file raises `KnowledgeBaseError` naming
the file and the entry), and exposed as frozen dataclasses. Every fact carries
a `source`: either a URL or `owner/name:path` inside a repository, which
`KnowledgeBase.source()` turns into a citable link.

Every piece of advice names the products it applies to (`products`: canonical
repository names from repositories.json, checked at load). Steps, causes and
commands may narrow that to a subset and may carry a `when` trigger (a phrase
that must be in the user's text), so triage shows vllm-ascend commands only for
vllm-ascend questions and the VLLM_VERSION step only for InvalidVersion.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from core.messages import Language, Source
from core.releases.ranges import NO_RANGE, Releases
from core.signals import CHIP_IDS, FEATURE_TOKENS

KNOWLEDGE_DIR = Path(__file__).with_name("knowledge")

_URL = re.compile(r"^https?://[^\s]+$")
_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<path>[^\s:]+)$")
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)*(?:rc\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?$", re.I)


class KnowledgeBaseError(ValueError):
    """A knowledge file is missing, is not valid JSON, or breaks the schema."""


# ---------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class IssueTracker:
    kind: str  # "github" | "gitcode"
    api_repo: str  # owner/name as the tracker's API expects it (Ascend/<name> for GitCode)


@dataclass(frozen=True)
class Evidence:
    """A regex whose match settles a repository; every match contains one of `needles`."""

    pattern: str
    needles: tuple[str, ...]


@dataclass(frozen=True)
class Repository:
    key: str
    repo: str
    display_name: str
    aliases: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    description_en: str
    description_zh: str
    github_url: str
    origin_url: str
    issue_tracker: IssueTracker
    doc_ref: str
    source: str

    def description(self, language: Language) -> str:
        return self.description_zh if language == "zh" else self.description_en


@dataclass(frozen=True)
class Note:
    """A step or cause that applies to some products, optionally only when a trigger is in the text.

    `products` is a subset of its entry's products (the entry's when the JSON leaves it out);
    `when` lists lowercase phrases of which one must occur in the user's text (empty: always).
    """

    text_en: str
    text_zh: str
    products: tuple[str, ...]
    when: tuple[str, ...] = ()
    releases: Releases = NO_RANGE  # vllm-ascend releases it holds on (core/releases/ranges.py)

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en


@dataclass(frozen=True)
class Command:
    """A command line to suggest. Placeholders like `<vllm-version>` are filled from the user's text."""

    run: str
    products: tuple[str, ...]
    when: tuple[str, ...] = ()
    releases: Releases = NO_RANGE


@dataclass(frozen=True)
class Chip:
    id: str
    family: str
    products: tuple[str, ...]  # server products built on the chip (Atlas 800I A2, ...)
    applies_to: tuple[str, ...]  # repositories whose support notes these are
    support: str  # supported | experimental | unsupported | images
    cann_kernels: str
    soc_version_example: str
    image_suffix: str
    notes_en: str
    notes_zh: str
    source: str
    # vllm-ascend releases that support the chip, from the release notes: the first one, and the
    # releases after it that left it out (the v0.9.1 line shipped without Atlas 300I).
    since: str | None = None
    not_in: tuple[str, ...] = ()
    releases_source: str = ""

    def notes(self, language: Language) -> str:
        return self.notes_zh if language == "zh" else self.notes_en


@dataclass(frozen=True)
class TextFact:
    text_en: str
    text_zh: str
    source: str

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en


@dataclass(frozen=True)
class ErrorCode:
    code: str
    name: str
    kind: str
    aliases: tuple[str, ...]
    products: tuple[str, ...]
    meaning_en: str
    meaning_zh: str
    layer_en: str
    layer_zh: str
    steps: tuple[Note, ...]
    commands: tuple[Command, ...]
    sources: tuple[str, ...]

    def meaning(self, language: Language) -> str:
        return self.meaning_zh if language == "zh" else self.meaning_en

    def layer(self, language: Language) -> str:
        return self.layer_zh if language == "zh" else self.layer_en


@dataclass(frozen=True)
class Incompatibility:
    id: str
    products: tuple[str, ...]
    requires_all: tuple[str, ...]
    requires_any: tuple[str, ...]
    title_en: str
    title_zh: str
    explanation_en: str
    explanation_zh: str
    workaround_en: str
    workaround_zh: str
    sources: tuple[str, ...]
    releases: Releases = NO_RANGE

    def title(self, language: Language) -> str:
        return self.title_zh if language == "zh" else self.title_en

    def explanation(self, language: Language) -> str:
        return self.explanation_zh if language == "zh" else self.explanation_en

    def workaround(self, language: Language) -> str:
        return self.workaround_zh if language == "zh" else self.workaround_en

    def matches(self, tokens: frozenset[str]) -> bool:
        if not all(t in tokens for t in self.requires_all):
            return False
        return not self.requires_any or any(t in tokens for t in self.requires_any)


@dataclass(frozen=True)
class ProblemPattern:
    id: str
    title_en: str
    title_zh: str
    keywords_en: tuple[str, ...]
    keywords_zh: tuple[str, ...]
    features: tuple[str, ...]
    error_codes: tuple[str, ...]
    products: tuple[str, ...]
    causes: tuple[Note, ...]
    steps: tuple[Note, ...]
    commands: tuple[Command, ...]
    sources: tuple[str, ...]
    markers: tuple[str, ...] = ()  # phrases that only this entry's products' advice contains

    def title(self, language: Language) -> str:
        return self.title_zh if language == "zh" else self.title_en


@dataclass(frozen=True)
class ChecklistItem:
    number: int  # 1-based position in the checklist
    id: str
    title_en: str
    title_zh: str
    body_en: str
    body_zh: str
    triggers: tuple[str, ...]
    products: tuple[str, ...]
    commands: tuple[Command, ...]
    sources: tuple[str, ...]
    markers: tuple[str, ...] = ()

    def title(self, language: Language) -> str:
        return self.title_zh if language == "zh" else self.title_en

    def body(self, language: Language) -> str:
        return self.body_zh if language == "zh" else self.body_en


@dataclass(frozen=True)
class MatrixRow:
    vllm_ascend: str
    vllm: tuple[str, ...]
    python_min: str
    python_max_exclusive: str
    cann: str
    torch: str
    torch_npu: str
    triton_ascend: str | None
    mooncake: str | None
    source: str


@dataclass(frozen=True)
class MatrixNote:
    applies_to: str
    text_en: str
    text_zh: str
    source: str

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en


@dataclass(frozen=True)
class MainBranch:
    """What the matrix says about main: no row, one verified vLLM commit (as of a snapshot)."""

    commit: str
    as_of: str
    text_en: str
    text_zh: str
    source: str
    targets: MatrixRow | None = None  # what main is built against (Python, CANN, torch/torch_npu, Triton Ascend)

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en


@dataclass(frozen=True)
class VersionMatrix:
    products: tuple[str, ...]
    rows: tuple[MatrixRow, ...]
    policy: TextFact
    install_order: TextFact
    notes: tuple[MatrixNote, ...]
    main_branch: MainBranch
    read_from: str = ""  # where the rows were read: the built-in copy, or a clone at a commit (core/release_matrix.py)


@dataclass(frozen=True)
class CollectEnvField:
    name: str
    printed_as: str
    key: bool
    why_en: str
    why_zh: str

    def why(self, language: Language) -> str:
        return self.why_zh if language == "zh" else self.why_en


@dataclass(frozen=True)
class CollectEnvInfo:
    products: tuple[str, ...]
    command: str
    where_en: str
    where_zh: str
    source: str
    fields: tuple[CollectEnvField, ...]

    def where(self, language: Language) -> str:
        return self.where_zh if language == "zh" else self.where_en


@dataclass(frozen=True)
class SendItem:
    """One thing to ask the user for; `{product}` in the text is the product's display name."""

    id: str
    products: tuple[str, ...]
    problem_only: bool
    text_en: str
    text_zh: str
    source: str | None

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en


@dataclass(frozen=True)
class DocLink:
    repo: str
    title_en: str
    title_zh: str
    source: str

    def title(self, language: Language) -> str:
        return self.title_zh if language == "zh" else self.title_en


@dataclass(frozen=True)
class CodeMapEntry:
    id: str
    products: tuple[str, ...]
    keywords_en: tuple[str, ...]
    keywords_zh: tuple[str, ...]
    paths: tuple[str, ...]
    purpose_en: str
    purpose_zh: str
    source: str

    def purpose(self, language: Language) -> str:
        return self.purpose_zh if language == "zh" else self.purpose_en


@dataclass(frozen=True)
class EnvVar:
    name: str
    scope: str
    products: tuple[str, ...]
    value: str  # "setting": the documented values are the advice; "user": depends on the user's setup
    example: str  # illustrative only; never printed as advice
    purpose_en: str
    purpose_zh: str
    source: str
    releases: Releases = NO_RANGE

    def purpose(self, language: Language) -> str:
        return self.purpose_zh if language == "zh" else self.purpose_en


@dataclass(frozen=True)
class KnowledgeBase:
    repositories: tuple[Repository, ...]
    chips: tuple[Chip, ...]
    soc_version: TextFact
    error_codes: tuple[ErrorCode, ...]
    incompatibilities: tuple[Incompatibility, ...]
    patterns: tuple[ProblemPattern, ...]
    checklist: tuple[ChecklistItem, ...]
    matrix: VersionMatrix
    collect_env: CollectEnvInfo
    env_vars: tuple[EnvVar, ...]
    send_items: tuple[SendItem, ...] = ()
    docs: tuple[DocLink, ...] = ()
    code_map: tuple[CodeMapEntry, ...] = ()

    def repository(self, repo_or_key: str) -> Repository | None:
        wanted = repo_or_key.strip().lower()
        for r in self.repositories:
            if r.repo.lower() == wanted or r.key == wanted:
                return r
        return None

    def chip(self, chip_id: str) -> Chip | None:
        return next((c for c in self.chips if c.id == chip_id), None)

    def error_code(self, code: str) -> ErrorCode | None:
        wanted = code.strip().upper()
        for e in self.error_codes:
            if e.code.upper() == wanted or wanted in (a.upper() for a in e.aliases):
                return e
        return None

    def env_var(self, name: str) -> EnvVar | None:
        return next((v for v in self.env_vars if v.name == name), None)

    def doc(self, repo: str) -> DocLink | None:
        return next((d for d in self.docs if d.repo == repo), None)

    def source(self, ref: str) -> Source:
        """Turn a fact's `source` into a citable Source (title + canonical URL)."""
        return _resolve_source(ref, {r.repo: r for r in self.repositories})


# ------------------------------------------------------------ source links

_GH = re.compile(r"^https://github\.com/(?P<repo>[^/\s]+/[^/\s]+)/(?P<kind>issues|pull|blob)/(?P<rest>\S+)$")


def _resolve_source(ref: str, repos: dict[str, Repository]) -> Source:
    m = _REPO_PATH.match(ref)
    if m:
        repo, path = m.group("repo"), m.group("path")
        known = repos.get(repo)
        branch = known.doc_ref if known else "main"
        return Source(title=f"{repo}: {path}", url=f"https://github.com/{repo}/blob/{branch}/{path}")
    g = _GH.match(ref)
    if g:
        repo, kind, rest = g.group("repo"), g.group("kind"), g.group("rest")
        if kind == "issues":
            return Source(title=f"{repo}#{rest}", url=ref)
        if kind == "pull":
            return Source(title=f"{repo} PR #{rest}", url=ref)
        # blob/<ref>/<path>: show the path, not the branch
        _, _, path = rest.partition("/")
        return Source(title=f"{repo}: {path}", url=ref)
    return Source(title=ref, url=ref)


# --------------------------------------------------------------- validation


class _Reader:
    """Typed access to one JSON object with errors that name file and entry."""

    def __init__(self, file: str, where: str, obj: Any) -> None:
        if not isinstance(obj, dict):
            raise KnowledgeBaseError(f"{file}: {where}: expected an object, got {type(obj).__name__}")
        self.file, self.where, self.obj = file, where, obj

    def fail(self, message: str) -> KnowledgeBaseError:
        return KnowledgeBaseError(f"{self.file}: {self.where}: {message}")

    def str(self, key: str, *, allow_empty: bool = False) -> str:
        value = self.obj.get(key)
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.fail(f"field '{key}' must be a non-empty string")
        return value

    def opt_str(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"field '{key}' must be a non-empty string or null")
        return value

    def bool(self, key: str) -> bool:
        value = self.obj.get(key)
        if not isinstance(value, bool):
            raise self.fail(f"field '{key}' must be true or false")
        return value

    def strs(self, key: str, *, allow_empty: bool = True) -> tuple[str, ...]:
        value = self.obj.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(f"field '{key}' must be a list of non-empty strings")
        if not allow_empty and not value:
            raise self.fail(f"field '{key}' must not be empty")
        return tuple(value)

    def source(self, key: str = "source") -> str:
        value = self.str(key)
        _check_source(self, value)
        return value

    def sources(self, key: str = "sources") -> tuple[str, ...]:
        values = self.strs(key, allow_empty=False)
        for v in values:
            _check_source(self, v)
        return values

    def child(self, key: str) -> "_Reader":
        return _Reader(self.file, f"{self.where}.{key}", self.obj.get(key))

    def list(self, key: str) -> list[Any]:
        value = self.obj.get(key)
        if not isinstance(value, list) or not value:
            raise self.fail(f"field '{key}' must be a non-empty list")
        return value


def _check_source(reader: _Reader, value: str) -> None:
    if not (_URL.match(value) or _REPO_PATH.match(value)):
        raise reader.fail(f"source '{value}' is neither a URL nor 'owner/name:path'")


def _products(r: _Reader, known: frozenset[str], key: str = "products", within: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """A non-empty list of canonical repository names (from repositories.json), optionally a subset of `within`."""
    values = r.strs(key, allow_empty=False)
    for v in values:
        if v not in known:
            raise r.fail(f"{key}: {v!r} is not a repository of repositories.json")
        if within is not None and v not in within:
            raise r.fail(f"{key}: {v!r} is not one of its entry's products")
    return values


def _when(r: _Reader) -> tuple[str, ...]:
    if "when" not in r.obj:
        return ()
    values = r.strs("when", allow_empty=False)
    if any(v != v.lower() for v in values):
        raise r.fail("when: trigger phrases must be lowercase")
    return values


def _notes(r: _Reader, key: str, known: frozenset[str], entry: tuple[str, ...], *, allow_empty: bool = False) -> tuple[Note, ...]:
    raw = r.obj.get(key)
    if not isinstance(raw, list) or (not raw and not allow_empty):
        raise r.fail(f"field '{key}' must be a non-empty list")
    out = []
    for i, item in enumerate(raw):
        n = _Reader(r.file, f"{r.where}.{key}[{i}]", item)
        products = _products(n, known, within=entry) if "products" in n.obj else entry
        out.append(Note(n.str("en"), n.str("zh"), products, _when(n), _releases(n)))
    return tuple(out)


def _commands(r: _Reader, known: frozenset[str], entry: tuple[str, ...]) -> tuple[Command, ...]:
    raw = r.obj.get("commands")
    if not isinstance(raw, list):
        raise r.fail("field 'commands' must be a list")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str) and item.strip():
            out.append(Command(item, entry))
            continue
        c = _Reader(r.file, f"{r.where}.commands[{i}]", item)
        products = _products(c, known, within=entry) if "products" in c.obj else entry
        out.append(Command(c.str("run"), products, _when(c), _releases(c)))
    return tuple(out)


def _markers(r: _Reader) -> tuple[str, ...]:
    return r.strs("markers", allow_empty=False) if "markers" in r.obj else ()


def _load_json(directory: Path, name: str) -> Any:
    path = directory / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnowledgeBaseError(f"{name}: file not found in {directory}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise KnowledgeBaseError(f"{name}: not valid JSON: {exc}") from None


def _entries(file: str, data: Any, key: str) -> Iterable[tuple[int, Any]]:
    top = _Reader(file, "top level", data)
    return enumerate(top.list(key))


def _label(entry: Any, field: str, index: int) -> str:
    if isinstance(entry, dict) and isinstance(entry.get(field), str):
        return f"{field}={entry[field]!r}"
    return f"entry #{index}"


def _unique(file: str, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise KnowledgeBaseError(f"{file}: duplicate {what} {v!r}")
        seen.add(v)


def _parse_repositories(data: Any) -> tuple[Repository, ...]:
    file = "repositories.json"
    out = []
    for i, entry in _entries(file, data, "repositories"):
        r = _Reader(file, _label(entry, "repo", i), entry)
        key, repo = r.str("key"), r.str("repo")
        if not _KEY.match(key):
            raise r.fail(f"key {key!r} must be short lowercase ASCII (letters, digits, '-')")
        if not _REPO.match(repo):
            raise r.fail(f"repo {repo!r} must be 'owner/name'")
        evidence = []
        raw = r.obj.get("evidence")
        if not isinstance(raw, list):
            raise r.fail("field 'evidence' must be a list")
        for j, item in enumerate(raw):
            e = _Reader(file, f"{r.where}.evidence[{j}]", item)
            pattern, needles = e.str("pattern"), e.strs("needles", allow_empty=False)
            try:
                re.compile(pattern)
            except re.error as exc:
                raise e.fail(f"pattern {pattern!r} does not compile: {exc}") from None
            if any(n != n.lower() for n in needles):
                raise e.fail("needles must be lowercase")
            evidence.append(Evidence(pattern, needles))
        tracker = r.child("issue_tracker")
        kind = tracker.str("kind")
        if kind not in ("github", "gitcode"):
            raise tracker.fail("kind must be 'github' or 'gitcode'")
        api_repo = tracker.str("api_repo")
        if not _REPO.match(api_repo):
            raise tracker.fail(f"api_repo {api_repo!r} must be 'owner/name'")
        out.append(
            Repository(
                key=key,
                repo=repo,
                display_name=r.str("display_name"),
                aliases=r.strs("aliases", allow_empty=False),
                evidence=tuple(evidence),
                description_en=r.str("description_en"),
                description_zh=r.str("description_zh"),
                github_url=r.str("github_url"),
                origin_url=r.str("origin_url"),
                issue_tracker=IssueTracker(kind=kind, api_repo=api_repo),
                doc_ref=r.str("doc_ref"),
                source=r.source(),
            )
        )
    _unique(file, [r.key for r in out], "key")
    _unique(file, [r.repo for r in out], "repo")
    return tuple(out)


def _parse_hardware(data: Any, known: frozenset[str]) -> tuple[tuple[Chip, ...], TextFact]:
    file = "hardware.json"
    chips = []
    for i, entry in _entries(file, data, "chips"):
        r = _Reader(file, _label(entry, "id", i), entry)
        chip_id = r.str("id")
        if chip_id not in CHIP_IDS:
            raise r.fail(f"chip id {chip_id!r} is not one core/signals.py can report {sorted(CHIP_IDS)}")
        support = r.str("support")
        if support not in ("supported", "experimental", "unsupported", "images"):
            raise r.fail(f"support {support!r} must be supported|experimental|unsupported|images")
        chips.append(
            Chip(
                id=chip_id,
                family=r.str("family"),
                products=r.strs("products", allow_empty=False),
                applies_to=_products(r, known, "applies_to"),
                support=support,
                cann_kernels=r.str("cann_kernels", allow_empty=True),
                soc_version_example=r.str("soc_version_example", allow_empty=True),
                image_suffix=r.str("image_suffix", allow_empty=True),
                notes_en=r.str("notes_en"),
                notes_zh=r.str("notes_zh"),
                source=r.source(),
                since=_release(r, "since"),
                not_in=tuple(_release_of(r, v) for v in r.strs("not_in")) if "not_in" in r.obj else (),
                releases_source=r.source("releases_source") if "releases_source" in r.obj else "",
            )
        )
    _unique(file, [c.id for c in chips], "chip id")
    soc = _Reader(file, "top level", data).child("soc_version")
    return tuple(chips), TextFact(soc.str("text_en"), soc.str("text_zh"), soc.source())


def _releases(r: _Reader) -> Releases:
    """`since` / `until` / `not_in` of an item (written by core/releases/ranges.py from a clone), and
    the `range_anchor` regex it was derived from, checked to compile."""
    anchor = r.obj.get("range_anchor")
    if anchor is not None:
        a = r.child("range_anchor")
        try:
            re.compile(a.str("pattern"))
        except re.error as exc:
            raise a.fail(f"pattern does not compile: {exc}") from None
        a.str("path")
    if "range_from" in r.obj:
        r.str("range_from")
    not_in = tuple(_release_of(r, v) for v in r.strs("not_in")) if "not_in" in r.obj else ()
    return Releases(_release(r, "since"), _release(r, "until"), not_in)


def _release(r: _Reader, key: str) -> str | None:
    value = r.opt_str(key)
    return None if value is None else _release_of(r, value)


def _release_of(r: _Reader, value: str) -> str:
    if not _VERSION.match(value):
        raise r.fail(f"release {value!r} is not like X.Y.Z[rcN][.postN] (no leading 'v')")
    return value


def _parse_error_codes(data: Any, known: frozenset[str]) -> tuple[ErrorCode, ...]:
    file = "error_codes.json"
    out = []
    for i, entry in _entries(file, data, "codes"):
        r = _Reader(file, _label(entry, "code", i), entry)
        products = _products(r, known)
        out.append(
            ErrorCode(
                code=r.str("code"),
                name=r.str("name"),
                kind=r.str("kind"),
                aliases=r.strs("aliases"),
                products=products,
                meaning_en=r.str("meaning_en"),
                meaning_zh=r.str("meaning_zh"),
                layer_en=r.str("layer_en"),
                layer_zh=r.str("layer_zh"),
                steps=_notes(r, "steps", known, products),
                commands=_commands(r, known, products),
                sources=r.sources(),
            )
        )
    _unique(file, [c.code for c in out] + [a for c in out for a in c.aliases], "code")
    return tuple(out)


def _check_tokens(r: _Reader, tokens: tuple[str, ...], field: str) -> None:
    for t in tokens:
        if t.startswith("chip:"):
            if t[5:] not in CHIP_IDS:
                raise r.fail(f"{field}: unknown chip token {t!r}")
        elif t not in FEATURE_TOKENS:
            raise r.fail(f"{field}: unknown signal token {t!r} (see core/signals.py FEATURE_TOKENS)")


def _parse_incompatibilities(data: Any, known: frozenset[str]) -> tuple[Incompatibility, ...]:
    file = "incompatibilities.json"
    out = []
    for i, entry in _entries(file, data, "combinations"):
        r = _Reader(file, _label(entry, "id", i), entry)
        requires_all, requires_any = r.strs("requires_all", allow_empty=False), r.strs("requires_any")
        _check_tokens(r, requires_all, "requires_all")
        _check_tokens(r, requires_any, "requires_any")
        out.append(
            Incompatibility(
                id=r.str("id"),
                products=_products(r, known),
                requires_all=requires_all,
                requires_any=requires_any,
                title_en=r.str("title_en"),
                title_zh=r.str("title_zh"),
                explanation_en=r.str("explanation_en"),
                explanation_zh=r.str("explanation_zh"),
                workaround_en=r.str("workaround_en"),
                workaround_zh=r.str("workaround_zh"),
                sources=r.sources(),
                releases=_releases(r),
            )
        )
    _unique(file, [c.id for c in out], "id")
    return tuple(out)


def _parse_patterns(data: Any, known_codes: set[str], known: frozenset[str]) -> tuple[ProblemPattern, ...]:
    file = "problem_patterns.json"
    out = []
    for i, entry in _entries(file, data, "patterns"):
        r = _Reader(file, _label(entry, "id", i), entry)
        features = r.strs("features")
        _check_tokens(r, features, "features")
        codes = r.strs("error_codes")
        for c in codes:
            if c.upper() not in known_codes:
                raise r.fail(f"error code {c!r} is not defined in error_codes.json")
        keywords_en, keywords_zh = r.strs("keywords_en"), r.strs("keywords_zh")
        if not keywords_en and not keywords_zh and not features:
            raise r.fail("needs at least one keyword or feature, or it can never match")
        products = _products(r, known)
        out.append(
            ProblemPattern(
                id=r.str("id"),
                title_en=r.str("title_en"),
                title_zh=r.str("title_zh"),
                keywords_en=keywords_en,
                keywords_zh=keywords_zh,
                features=features,
                error_codes=codes,
                products=products,
                causes=_notes(r, "causes", known, products),
                steps=_notes(r, "steps", known, products),
                commands=_commands(r, known, products),
                sources=r.sources(),
                markers=_markers(r),
            )
        )
    _unique(file, [p.id for p in out], "id")
    return tuple(out)


def _parse_checklist(data: Any, known: frozenset[str]) -> tuple[ChecklistItem, ...]:
    file = "checklist.json"
    out = []
    for i, entry in _entries(file, data, "items"):
        r = _Reader(file, _label(entry, "id", i), entry)
        triggers = r.strs("triggers")
        _check_tokens(r, triggers, "triggers")
        products = _products(r, known)
        out.append(
            ChecklistItem(
                number=i + 1,
                id=r.str("id"),
                title_en=r.str("title_en"),
                title_zh=r.str("title_zh"),
                body_en=r.str("body_en"),
                body_zh=r.str("body_zh"),
                triggers=triggers,
                products=products,
                commands=_commands(r, known, products),
                sources=r.sources(),
                markers=_markers(r),
            )
        )
    _unique(file, [c.id for c in out], "id")
    return tuple(out)


def _parse_matrix(data: Any, known: frozenset[str]) -> VersionMatrix:
    file = "version_matrix.json"
    rows = []
    for i, entry in _entries(file, data, "rows"):
        r = _Reader(file, _label(entry, "vllm_ascend", i), entry)
        vllm_ascend = r.str("vllm_ascend")
        vllm = r.strs("vllm", allow_empty=False)
        for v in (vllm_ascend, *vllm):
            if not _VERSION.match(v):
                raise r.fail(f"version {v!r} is not like X.Y.Z[rcN][.postN] (no leading 'v')")
        rows.append(
            MatrixRow(
                vllm_ascend=vllm_ascend,
                vllm=vllm,
                python_min=r.str("python_min"),
                python_max_exclusive=r.str("python_max_exclusive"),
                cann=r.str("cann"),
                torch=r.str("torch"),
                torch_npu=r.str("torch_npu"),
                triton_ascend=r.opt_str("triton_ascend"),
                mooncake=r.opt_str("mooncake"),
                source=r.source(),
            )
        )
    _unique(file, [row.vllm_ascend for row in rows], "vllm_ascend row")
    top = _Reader(file, "top level", data)
    policy, order, main = top.child("policy"), top.child("install_order"), top.child("main_branch")
    commit = main.str("commit")
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise main.fail(f"commit {commit!r} must be a git hash")
    notes = []
    for i, entry in enumerate(top.list("notes")):
        n = _Reader(file, f"notes[{i}]", entry)
        notes.append(MatrixNote(n.str("applies_to"), n.str("text_en"), n.str("text_zh"), n.source()))
    targets = None
    if "targets" in main.obj:
        t = main.child("targets")
        targets = MatrixRow("main", (commit,), t.str("python_min"), t.str("python_max_exclusive"), t.str("cann"), t.str("torch"),
                            t.str("torch_npu"), t.opt_str("triton_ascend"), t.opt_str("mooncake"), t.source())
    return VersionMatrix(
        products=_products(top, known),
        rows=tuple(rows),
        policy=TextFact(policy.str("text_en"), policy.str("text_zh"), policy.source()),
        install_order=TextFact(order.str("text_en"), order.str("text_zh"), order.source()),
        notes=tuple(notes),
        main_branch=MainBranch(commit, main.str("as_of"), main.str("text_en"), main.str("text_zh"), main.source(), targets),
        read_from=f"the built-in copy ({main.str('as_of')})",
    )


def _parse_collect_env(data: Any, known: frozenset[str]) -> tuple[CollectEnvInfo, tuple[SendItem, ...], tuple[DocLink, ...]]:
    file = "collect_env.json"
    top = _Reader(file, "top level", data)
    ce = top.child("collect_env")
    fields = []
    for i, entry in enumerate(ce.list("fields")):
        f = _Reader(file, _label(entry, "name", i), entry)
        fields.append(CollectEnvField(f.str("name"), f.str("printed_as"), f.bool("key"), f.str("why_en"), f.str("why_zh")))
    info = CollectEnvInfo(
        products=_products(ce, known),
        command=ce.str("command"),
        where_en=ce.str("where_en"),
        where_zh=ce.str("where_zh"),
        source=ce.source(),
        fields=tuple(fields),
    )
    send = []
    for i, entry in enumerate(top.list("send")):
        r = _Reader(file, f"send[{i}]", entry)
        source = r.opt_str("source")
        if source is not None:
            _check_source(r, source)
        send.append(SendItem(r.str("id"), _products(r, known), r.bool("problem_only"), r.str("text_en"), r.str("text_zh"), source))
    _unique(file, [s.id for s in send], "send id")
    docs = []
    for i, entry in enumerate(top.list("docs")):
        r = _Reader(file, f"docs[{i}]", entry)
        repo = r.str("repo")
        if repo not in known:
            raise r.fail(f"repo {repo!r} is not a repository of repositories.json")
        docs.append(DocLink(repo, r.str("title_en"), r.str("title_zh"), r.source()))
    _unique(file, [d.repo for d in docs], "docs repo")
    return info, tuple(send), tuple(docs)


def _parse_env_vars(data: Any, known: frozenset[str]) -> tuple[EnvVar, ...]:
    file = "env_vars.json"
    out = []
    for i, entry in _entries(file, data, "variables"):
        r = _Reader(file, _label(entry, "name", i), entry)
        value = r.str("value")
        if value not in ("setting", "user"):
            raise r.fail("value must be 'setting' or 'user'")
        out.append(
            EnvVar(
                r.str("name"), r.str("scope"), _products(r, known), value, r.str("example"),
                r.str("purpose_en"), r.str("purpose_zh"), r.source(), _releases(r),
            )
        )
    _unique(file, [v.name for v in out], "variable")
    return tuple(out)


def _parse_code_map(data: Any, known: frozenset[str]) -> tuple[CodeMapEntry, ...]:
    file = "code_map.json"
    top = _Reader(file, "top level", data)
    products = _products(top, known)
    out = []
    for i, entry in _entries(file, data, "entries"):
        r = _Reader(file, _label(entry, "id", i), entry)
        keywords_en, keywords_zh = r.strs("keywords_en", allow_empty=False), r.strs("keywords_zh", allow_empty=False)
        if any(k != k.lower() for k in keywords_en + keywords_zh):
            raise r.fail("keywords must be lowercase")
        paths = r.strs("paths", allow_empty=False)
        if any(p.startswith("/") or ".." in p.split("/") for p in paths):
            raise r.fail("paths must be relative and stay inside the repository")
        out.append(
            CodeMapEntry(r.str("id"), products, keywords_en, keywords_zh, paths, r.str("purpose_en"), r.str("purpose_zh"), r.source())
        )
    _unique(file, [e.id for e in out], "id")
    return tuple(out)


def _build(directory: Path) -> KnowledgeBase:
    repositories = _parse_repositories(_load_json(directory, "repositories.json"))
    known = frozenset(r.repo for r in repositories)
    error_codes = _parse_error_codes(_load_json(directory, "error_codes.json"), known)
    known_codes = {c.code.upper() for c in error_codes} | {a.upper() for c in error_codes for a in c.aliases}
    chips, soc = _parse_hardware(_load_json(directory, "hardware.json"), known)
    collect_env, send_items, docs = _parse_collect_env(_load_json(directory, "collect_env.json"), known)
    return KnowledgeBase(
        repositories=repositories,
        chips=chips,
        soc_version=soc,
        error_codes=error_codes,
        incompatibilities=_parse_incompatibilities(_load_json(directory, "incompatibilities.json"), known),
        patterns=_parse_patterns(_load_json(directory, "problem_patterns.json"), known_codes, known),
        checklist=_parse_checklist(_load_json(directory, "checklist.json"), known),
        matrix=_parse_matrix(_load_json(directory, "version_matrix.json"), known),
        collect_env=collect_env,
        env_vars=_parse_env_vars(_load_json(directory, "env_vars.json"), known),
        send_items=send_items,
        docs=docs,
        code_map=_parse_code_map(_load_json(directory, "code_map.json"), known),
    )


@lru_cache(maxsize=4)
def _cached(directory: str) -> KnowledgeBase:
    return _build(Path(directory))


def load_knowledge_base(directory: Path | str | None = None) -> KnowledgeBase:
    """Load and validate the knowledge files once per directory (cached).

    Raises KnowledgeBaseError with the file and entry at fault.
    """
    target = Path(directory) if directory is not None else KNOWLEDGE_DIR
    return _cached(str(target.resolve()))
