"""The shape of every knowledge file, as frozen pydantic models (one schema for the loader and for editors).

Each JSON file under core/knowledge/ validates into one `*File` model (see FILES); product facts
(products/*.json) into `ProductFactsFile`. Checks that need another file (a product must be a
repository of repositories.json, a pattern's error code must exist in error_codes.json, a source
path must exist in a clone) read it from the validation context that core/knowledge/loader.py
passes; built without a context (a test's sample fact) those checks are skipped.

On disk a text comes in two languages as a pair of keys (`title_en` / `title_zh`, or `en` / `zh`
in a step); each model joins the pair into one `Bilingual` field, so callers write
`fact.title.of(language)`. Release ranges (`since` / `until` / `not_in`, written by
core/releases/ranges.py) join into one `Releases` field the same way. The JSON Schema for editors
keeps the disk shape: `python -m core.knowledge.schema --write` writes json_schema/*.schema.json.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, ClassVar

from annotated_types import MinLen
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from core.messages import Language
from core.releases.ranges import NO_RANGE, Releases
from core.signals import CHIP_IDS, FEATURE_TOKENS

JSON_SCHEMA_DIR = Path(__file__).with_name("json_schema")

URL = re.compile(r"^https?://[^\s]+$")
HTTPS = re.compile(r"^https://[^\s]+$")
REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<path>[^\s:]+)$")
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)*(?:rc\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?$", re.I)
_HASH = re.compile(r"[0-9a-f]{7,40}")

# Product facts are short answers: these bound what one may say.
SUPPORT = ("supported", "experimental", "unsupported", "images")  # a chip's support in a product
KINDS = frozenset({"faq", "env_var", "error", "config", "howto", "feature", "limitation", "version"})
MAX_TEXT = 350
MAX_TITLE = 120
_FACT_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")
_FACT_RELEASE = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,4}(?:rc\d{1,3})?(?:\.post\d{1,3})?$")
# A literal example version in a command would be advice for someone else's
# setup (issue 12); commands carry placeholders like <vllm-version> instead.
_LITERAL_VERSION = re.compile(
    r"(?<![\w.<-])v?\d+\.\d+(?:\.\d+|\.rc\d+)(?:rc\d+)?(?:\.post\d+)?(?![\w.>])", re.IGNORECASE
)
# A lower bound ("pydantic>=2.10.1") is a requirement, not somebody's example version.
_LOWER_BOUND = re.compile(r"(?:>=|~=|>)\s*v?\d[\w.]*")


# ------------------------------------------------------------ value checks
# Each raises ValueError with the whole message; the loader adds the file and the entry.


def _context(info: ValidationInfo, key: str) -> Any:
    return (info.context or {}).get(key)


def _text(value: Any, info: ValidationInfo) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"field '{info.field_name}' must be a non-empty string")
    return value


def _any_text(value: Any, info: ValidationInfo) -> str:
    if not isinstance(value, str):
        raise ValueError(f"field '{info.field_name}' must be a string")
    return value


def _optional_text(value: Any, info: ValidationInfo) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"field '{info.field_name}' must be a non-empty string or null")
    return value


def _texts(value: Any, info: ValidationInfo) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"field '{info.field_name}' must be a list of non-empty strings")
    return tuple(value)


def _not_empty(value: tuple[Any, ...], info: ValidationInfo) -> tuple[Any, ...]:
    if not value:
        raise ValueError(f"field '{info.field_name}' must not be empty")
    return value


def _objects(value: Any, info: ValidationInfo) -> Any:
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"field '{info.field_name}' must be a non-empty list")
    return value


def _list(value: Any, info: ValidationInfo) -> Any:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"field '{info.field_name}' must be a list")
    return value


def _lowercase(value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    if any(v != v.lower() for v in value):
        raise ValueError(f"field '{info.field_name}': entries must be lowercase")
    return value


def _known_products(value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    known = _context(info, "products")
    for v in value:
        if known is not None and v not in known:
            raise ValueError(f"field '{info.field_name}': unknown product {v!r} (use the repo name from repositories.json)")
    return value


def _source_format(value: str) -> str:
    if not (URL.match(value) or REPO_PATH.match(value)):
        raise ValueError(f"source '{value}' is neither a URL nor 'owner/name:path'")
    return value


def _sources_format(values: tuple[str, ...]) -> tuple[str, ...]:
    for v in values:
        _source_format(v)
    return values


def _release(value: Any, pattern: re.Pattern[str] = _VERSION) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise ValueError(f"release {value!r} is not like X.Y.Z[rcN][.postN] (no leading 'v')")
    return value


def _signal_tokens(value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    for t in value:
        if t.startswith("chip:"):
            if t[5:] not in CHIP_IDS:
                raise ValueError(f"field '{info.field_name}': unknown chip token {t!r}")
        elif t not in FEATURE_TOKENS:
            raise ValueError(f"field '{info.field_name}': unknown signal token {t!r} (see core/signals.py FEATURE_TOKENS)")
    return value


Text = Annotated[str, BeforeValidator(_text), MinLen(1)]
AnyText = Annotated[str, BeforeValidator(_any_text)]
OptionalText = Annotated[str | None, BeforeValidator(_optional_text)]
Texts = Annotated[tuple[str, ...], BeforeValidator(_texts)]  # may be empty
SomeTexts = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), MinLen(1)]
Lowercase = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), AfterValidator(_lowercase), MinLen(1)]
Products = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), AfterValidator(_known_products), MinLen(1)]
SourceRef = Annotated[str, BeforeValidator(_text), AfterValidator(_source_format), MinLen(1)]
SourceRefs = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), AfterValidator(_sources_format), MinLen(1)]
Release = Annotated[str, AfterValidator(_release)]
Signals = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_signal_tokens)]
SomeSignals = Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), AfterValidator(_signal_tokens), MinLen(1)]


def _objects_of(model: type) -> Any:
    return Annotated[tuple[model, ...], BeforeValidator(_objects), MinLen(1)]  # type: ignore[valid-type]


# ------------------------------------------------------------------ values


class Bilingual(BaseModel):
    """One text in English and Chinese (on disk: a `<name>_en` / `<name>_zh` pair of keys)."""

    model_config = ConfigDict(frozen=True)

    en: str
    zh: str

    def __init__(self, en: str, zh: str) -> None:
        super().__init__(en=en, zh=zh)

    def of(self, language: Language) -> str:
        return self.zh if language == "zh" else self.en


_TEXT_SCHEMA = {"type": "string", "minLength": 1}
_RELEASE_SCHEMA = {"type": "string", "pattern": _VERSION.pattern}
_RANGE_SCHEMA: dict[str, Any] = {
    "since": {"anyOf": [_RELEASE_SCHEMA, {"type": "null"}], "description": "first vllm-ascend release it holds on"},
    "until": {"anyOf": [_RELEASE_SCHEMA, {"type": "null"}], "description": "first vllm-ascend release without it"},
    "not_in": {"type": "array", "items": _RELEASE_SCHEMA, "description": "releases in the range that lack it"},
    "range_from": {"type": "string", "description": "what the range was derived from (core/releases/ranges.py)"},
    "range_anchor": {
        "type": "object", "required": ["pattern", "path"],
        "properties": {"pattern": {"type": "string", "description": "a regex"}, "path": {"type": "string"}},
    },
}


class Model(BaseModel):
    """A knowledge entry: frozen; keys it does not know (`_about` notes) are ignored as they always were.

    Bilingual fields read their pair of keys (`BILINGUAL_KEYS` overrides the `<field>_en` /
    `<field>_zh` default); a `releases` field reads `since` / `until` / `not_in`.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    BILINGUAL_KEYS: ClassVar[dict[str, tuple[str, str]]] = {}
    STRIP_TEXT: ClassVar[bool] = False
    RELEASE_FORMAT: ClassVar[re.Pattern[str]] = _VERSION

    @classmethod
    def bilingual_keys(cls) -> dict[str, tuple[str, str]]:
        return {
            name: cls.BILINGUAL_KEYS.get(name, (f"{name}_en", f"{name}_zh"))
            for name, field in cls.model_fields.items() if field.annotation is Bilingual
        }

    @model_validator(mode="before")
    @classmethod
    def _from_disk(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data  # pydantic reports "expected an object"
        data = dict(data)
        for name, keys in cls.bilingual_keys().items():
            if name in data:
                continue  # built in code, not read from disk
            texts = []
            for key in keys:
                value = data.pop(key, None)
                if not isinstance(value, str) or not value.strip():
                    raise ValueError(f"field '{key}' must be a non-empty string")
                texts.append(value.strip() if cls.STRIP_TEXT else value)
            data[name] = Bilingual(*texts)
        if "releases" in cls.model_fields and "releases" not in data:
            data["releases"] = _releases(data, cls.RELEASE_FORMAT)
        return data

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        props: dict[str, Any] = target.setdefault("properties", {})
        required: list[str] = target.setdefault("required", [])
        for name, keys in cls.bilingual_keys().items():
            props.pop(name, None)
            if name in required:
                required.remove(name)
            for key in keys:
                props[key] = dict(_TEXT_SCHEMA)
                required.append(key)
        if "releases" in cls.model_fields:
            props.pop("releases", None)
            props.update(_RANGE_SCHEMA)
        if not required:
            target.pop("required")
        return schema


def _releases(data: dict[str, Any], pattern: re.Pattern[str]) -> Releases:
    """`since` / `until` / `not_in` of an entry, and the `range_anchor` regex they were derived from
    (checked to compile)."""
    anchor = data.get("range_anchor")
    if anchor is not None:
        if not isinstance(anchor, dict) or not isinstance(anchor.get("pattern"), str) or not isinstance(anchor.get("path"), str):
            raise ValueError("field 'range_anchor' must be an object with string 'pattern' and 'path'")
        try:
            re.compile(anchor["pattern"])
        except re.error as exc:
            raise ValueError(f"range_anchor: pattern does not compile: {exc}") from None
    if "range_from" in data and (not isinstance(data["range_from"], str) or not data["range_from"].strip()):
        raise ValueError("field 'range_from' must be a non-empty string")
    not_in = data.get("not_in", [])
    if not isinstance(not_in, list):
        raise ValueError("field 'not_in' must be a list of non-empty strings")
    bounds = [data.get("since"), data.get("until")]
    for value in (*(b for b in bounds if b is not None), *not_in):
        _release(value, pattern)
    return Releases(bounds[0], bounds[1], tuple(not_in))


def _scoped(items: tuple[Any, ...], field: str, entry: tuple[str, ...]) -> tuple[Any, ...]:
    """Steps, causes or commands with their products: the entry's when they name none, else a subset of it."""
    out = []
    for i, item in enumerate(items):
        for p in item.products:
            if p not in entry:
                raise ValueError(f"{field}[{i}]: field 'products': {p!r} is not one of its entry's products")
        out.append(item if item.products else item.model_copy(update={"products": entry}))
    return tuple(out)


def _unique(values: list[str], what: str) -> None:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise ValueError(f"duplicate {what} {v!r}")
        seen.add(v)


# ------------------------------------------------------------ shared parts


class Note(Model):
    """A step or cause that applies to some products, optionally only when a trigger is in the text.

    `products` is a subset of its entry's products (the entry's when the JSON leaves it out);
    `when` lists lowercase phrases of which one must occur in the user's text (empty: always);
    `unless` lists phrases none of which may occur (the error that calls for the opposite advice).
    """

    BILINGUAL_KEYS: ClassVar[dict[str, tuple[str, str]]] = {"text": ("en", "zh")}

    text: Bilingual
    products: Products = ()
    when: Lowercase = ()
    unless: Lowercase = ()
    releases: Releases = NO_RANGE  # vllm-ascend releases it holds on (core/releases/ranges.py)


class Command(Model):
    """A command line to suggest. Placeholders like `<vllm-version>` are filled from the user's text.

    On disk either the command itself (for all of the entry's products) or an object with `run`."""

    run: Text
    products: Products = ()
    when: Lowercase = ()
    unless: Lowercase = ()
    releases: Releases = NO_RANGE

    @model_validator(mode="before")
    @classmethod
    def _plain(cls, data: Any) -> Any:
        if isinstance(data, str):
            if not data.strip():
                raise ValueError("a command must be a non-empty string or an object with 'run'")
            return {"run": data}
        return data

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        schema = super().__get_pydantic_json_schema__(core_schema, handler)
        return {"anyOf": [dict(_TEXT_SCHEMA), handler.resolve_ref_schema(schema)]}


Notes = Annotated[tuple[Note, ...], BeforeValidator(_objects), MinLen(1)]
Commands = Annotated[tuple[Command, ...], BeforeValidator(_list)]


class TextFact(Model):
    text: Bilingual
    source: SourceRef


# -------------------------------------------------------- repositories.json


class IssueTracker(Model):
    kind: Annotated[Text, Field(json_schema_extra={"enum": ["github", "gitcode"]})]
    api_repo: Text  # owner/name as the tracker's API expects it (Ascend/<name> for GitCode)

    @field_validator("kind")
    @classmethod
    def _kind(cls, kind: str) -> str:
        if kind not in ("github", "gitcode"):
            raise ValueError("kind must be 'github' or 'gitcode'")
        return kind

    @field_validator("api_repo")
    @classmethod
    def _api_repo(cls, api_repo: str) -> str:
        if not _REPO.match(api_repo):
            raise ValueError(f"api_repo {api_repo!r} must be 'owner/name'")
        return api_repo


class Evidence(Model):
    """A regex whose match settles a repository; every match contains one of `needles`."""

    pattern: Text
    needles: Lowercase

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
        return pattern


class Repository(Model):
    key: Text
    repo: Text
    display_name: Text
    aliases: SomeTexts
    evidence: Annotated[tuple[Evidence, ...], BeforeValidator(_list)]
    description: Bilingual
    github_url: Text
    origin_url: Text
    issue_tracker: IssueTracker
    doc_ref: Text
    source: SourceRef

    @field_validator("key")
    @classmethod
    def _key(cls, key: str) -> str:
        if not _KEY.match(key):
            raise ValueError(f"key {key!r} must be short lowercase ASCII (letters, digits, '-')")
        return key

    @field_validator("repo")
    @classmethod
    def _repo(cls, repo: str) -> str:
        if not _REPO.match(repo):
            raise ValueError(f"repo {repo!r} must be 'owner/name'")
        return repo


class RepositoriesFile(Model):
    repositories: _objects_of(Repository)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_names(self) -> RepositoriesFile:
        _unique([r.key for r in self.repositories], "key")
        _unique([r.repo for r in self.repositories], "repo")
        return self


# ------------------------------------------------------------ hardware.json


class Chip(Model):
    id: Text
    family: Text
    products: SomeTexts  # server products built on the chip (Atlas 800I A2, ...)
    applies_to: Products  # repositories whose support notes these are
    support: Annotated[Text, Field(json_schema_extra={"enum": list(SUPPORT)})]
    cann_kernels: AnyText
    soc_version_example: AnyText
    image_suffix: AnyText
    notes: Bilingual
    source: SourceRef
    # vllm-ascend releases that support the chip, from the release notes: the first one, and the
    # releases after it that left it out (the v0.9.1 line shipped without Atlas 300I).
    since: Annotated[Release | None, BeforeValidator(_optional_text)] = None
    not_in: Annotated[tuple[Release, ...], BeforeValidator(_texts)] = ()
    releases_source: SourceRef = ""

    @field_validator("id")
    @classmethod
    def _known_chip(cls, chip_id: str) -> str:
        if chip_id not in CHIP_IDS:
            raise ValueError(f"chip id {chip_id!r} is not one core/signals.py can report {sorted(CHIP_IDS)}")
        return chip_id

    @field_validator("support")
    @classmethod
    def _support(cls, support: str) -> str:
        if support not in SUPPORT:
            raise ValueError(f"support {support!r} must be supported|experimental|unsupported|images")
        return support


class HardwareFile(Model):
    chips: _objects_of(Chip)  # type: ignore[valid-type]
    soc_version: TextFact

    @model_validator(mode="after")
    def _unique_ids(self) -> HardwareFile:
        _unique([c.id for c in self.chips], "chip id")
        return self


# --------------------------------------------------------- error_codes.json


class ErrorCode(Model):
    code: Text
    name: Text
    kind: Text
    aliases: Texts
    products: Products
    meaning: Bilingual
    layer: Bilingual
    steps: Notes
    commands: Commands
    sources: SourceRefs

    @model_validator(mode="after")
    def _scope(self) -> ErrorCode:
        return self.model_copy(update={
            "steps": _scoped(self.steps, "steps", self.products),
            "commands": _scoped(self.commands, "commands", self.products),
        })


class ErrorCodesFile(Model):
    codes: _objects_of(ErrorCode)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_codes(self) -> ErrorCodesFile:
        _unique([c.code for c in self.codes] + [a for c in self.codes for a in c.aliases], "code")
        return self


# ---------------------------------------------------- incompatibilities.json


class Incompatibility(Model):
    id: Text
    products: Products
    requires_all: SomeSignals
    requires_any: Signals
    title: Bilingual
    explanation: Bilingual
    workaround: Bilingual
    sources: SourceRefs
    releases: Releases = NO_RANGE

    def matches(self, tokens: frozenset[str]) -> bool:
        if not all(t in tokens for t in self.requires_all):
            return False
        return not self.requires_any or any(t in tokens for t in self.requires_any)


class IncompatibilitiesFile(Model):
    combinations: _objects_of(Incompatibility)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_ids(self) -> IncompatibilitiesFile:
        _unique([c.id for c in self.combinations], "id")
        return self


# ----------------------------------------------------- problem_patterns.json


def _defined_codes(codes: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    known = _context(info, "error_codes")
    for c in codes:
        if known is not None and c.upper() not in known:
            raise ValueError(f"error code {c!r} is not defined in error_codes.json")
    return codes


class ProblemPattern(Model):
    id: Text
    title: Bilingual
    keywords_en: Texts
    keywords_zh: Texts
    features: Signals
    error_codes: Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_defined_codes)]
    products: Products
    causes: Notes
    steps: Notes
    commands: Commands
    sources: SourceRefs
    markers: SomeTexts = ()  # phrases that only this entry's products' advice contains

    @model_validator(mode="after")
    def _matchable_and_scoped(self) -> ProblemPattern:
        if not self.keywords_en and not self.keywords_zh and not self.features:
            raise ValueError("needs at least one keyword or feature, or it can never match")
        return self.model_copy(update={
            "causes": _scoped(self.causes, "causes", self.products),
            "steps": _scoped(self.steps, "steps", self.products),
            "commands": _scoped(self.commands, "commands", self.products),
        })


class ProblemPatternsFile(Model):
    patterns: _objects_of(ProblemPattern)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_ids(self) -> ProblemPatternsFile:
        _unique([p.id for p in self.patterns], "id")
        return self


# ------------------------------------------------------------ checklist.json


class ChecklistItem(Model):
    number: SkipJsonSchema[int] = 0  # 1-based position in the checklist (from the file's order)
    id: Text
    title: Bilingual
    body: Bilingual
    triggers: Signals
    products: Products
    commands: Commands
    sources: SourceRefs
    markers: SomeTexts = ()

    @model_validator(mode="after")
    def _scope(self) -> ChecklistItem:
        return self.model_copy(update={"commands": _scoped(self.commands, "commands", self.products)})


class ChecklistFile(Model):
    items: _objects_of(ChecklistItem)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _numbered(self) -> ChecklistFile:
        _unique([c.id for c in self.items], "id")
        numbered = tuple(item.model_copy(update={"number": i + 1}) for i, item in enumerate(self.items))
        return self.model_copy(update={"items": numbered})


# ------------------------------------------------------- version_matrix.json


class MatrixRow(Model):
    """A vllm-ascend release and what it is built against."""

    vllm_ascend: Text
    vllm: SomeTexts
    python_min: Text
    python_max_exclusive: Text
    cann: Text
    torch: Text
    torch_npu: Text
    triton_ascend: OptionalText = None
    mooncake: OptionalText = None
    source: SourceRef


def _targets_schema() -> dict[str, Any]:
    """main's `targets` on disk: a row without the release and vLLM columns (main has neither)."""
    schema = MatrixRow.model_json_schema()
    for key in ("vllm_ascend", "vllm"):
        schema["properties"].pop(key)
        schema["required"].remove(key)
    return {**schema, "title": "Targets", "description": "What main is built against."}


class MatrixNote(Model):
    applies_to: Text
    text: Bilingual
    source: SourceRef


class MainBranch(Model):
    """What the matrix says about main: no row, one verified vLLM commit (as of a snapshot)."""

    commit: Text
    as_of: Text
    text: Bilingual
    source: SourceRef
    # What main is built against (Python, CANN, torch/torch_npu, Triton Ascend): on disk a Targets
    # object, held as a row for "main" with the commit as its vLLM.
    targets: Annotated[MatrixRow | None, WithJsonSchema(_targets_schema())] = None

    @model_validator(mode="before")
    @classmethod
    def _targets_as_row(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("targets"), dict):
            data = {**data, "targets": {**data["targets"], "vllm_ascend": "main", "vllm": [data.get("commit")]}}
        return data

    @field_validator("commit")
    @classmethod
    def _git_hash(cls, commit: str) -> str:
        if not _HASH.fullmatch(commit):
            raise ValueError(f"commit {commit!r} must be a git hash")
        return commit


class VersionMatrix(Model):
    products: Products
    rows: _objects_of(MatrixRow)  # type: ignore[valid-type]
    policy: TextFact
    install_order: TextFact
    notes: _objects_of(MatrixNote)  # type: ignore[valid-type]
    main_branch: MainBranch
    # Where the rows were read: the built-in copy, or a clone at a commit (core/release_matrix.py).
    read_from: SkipJsonSchema[str] = ""

    @model_validator(mode="after")
    def _versions(self) -> VersionMatrix:
        for i, row in enumerate(self.rows):
            for v in (row.vllm_ascend, *row.vllm):
                if not _VERSION.match(v):
                    raise ValueError(f"rows[{i}]: version {v!r} is not like X.Y.Z[rcN][.postN] (no leading 'v')")
        _unique([row.vllm_ascend for row in self.rows], "vllm_ascend row")
        return self


# --------------------------------------------------------- collect_env.json


class CollectEnvField(Model):
    name: Text
    printed_as: Text
    key: StrictBool
    why: Bilingual


class CollectEnvInfo(Model):
    products: Products
    command: Text
    where: Bilingual
    source: SourceRef
    fields: _objects_of(CollectEnvField)  # type: ignore[valid-type]


class SendItem(Model):
    """One thing to ask the user for; `{product}` in the text is the product's display name."""

    id: Text
    products: Products
    problem_only: StrictBool
    text: Bilingual
    source: Annotated[str | None, BeforeValidator(_optional_text), AfterValidator(lambda v: v and _source_format(v))] = None


def _repository_of_file(repo: str, info: ValidationInfo) -> str:
    known = _context(info, "products")
    if known is not None and repo not in known:
        raise ValueError(f"repo {repo!r} is not a repository of repositories.json")
    return repo


class DocLink(Model):
    repo: Annotated[str, BeforeValidator(_text), AfterValidator(_repository_of_file)]
    title: Bilingual
    source: SourceRef


class CollectEnvFile(Model):
    collect_env: CollectEnvInfo
    send: _objects_of(SendItem)  # type: ignore[valid-type]
    docs: _objects_of(DocLink)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_ids(self) -> CollectEnvFile:
        _unique([s.id for s in self.send], "send id")
        _unique([d.repo for d in self.docs], "docs repo")
        return self


# ------------------------------------------------------------ env_vars.json


class EnvVar(Model):
    name: Text
    scope: Text
    products: Products
    # "setting": the documented values are the advice; "user": depends on the user's setup
    value: Annotated[Text, Field(json_schema_extra={"enum": ["setting", "user"]})]
    example: Text  # illustrative only; never printed as advice
    purpose: Bilingual
    source: SourceRef
    releases: Releases = NO_RANGE

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        if value not in ("setting", "user"):
            raise ValueError("value must be 'setting' or 'user'")
        return value


class EnvVarsFile(Model):
    variables: _objects_of(EnvVar)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _unique_names(self) -> EnvVarsFile:
        _unique([v.name for v in self.variables], "variable")
        return self


# ------------------------------------------------------------ code_map.json


def _inside_repository(paths: tuple[str, ...]) -> tuple[str, ...]:
    if any(p.startswith("/") or ".." in p.split("/") for p in paths):
        raise ValueError("paths must be relative and stay inside the repository")
    return paths


class CodeMapEntry(Model):
    id: Text
    products: SkipJsonSchema[tuple[str, ...]] = ()  # the file's products
    keywords_en: Lowercase
    keywords_zh: Lowercase
    paths: Annotated[tuple[str, ...], BeforeValidator(_texts), AfterValidator(_not_empty), AfterValidator(_inside_repository), MinLen(1)]
    purpose: Bilingual
    source: SourceRef


class CodeMapFile(Model):
    products: Products
    entries: _objects_of(CodeMapEntry)  # type: ignore[valid-type]

    @model_validator(mode="after")
    def _of_products(self) -> CodeMapFile:
        _unique([e.id for e in self.entries], "id")
        entries = tuple(e.model_copy(update={"products": self.products}) for e in self.entries)
        return self.model_copy(update={"entries": entries})


# --------------------------------------------------------- products/*.json


def name_key(text: str) -> str:
    # Spaces, '-' and '_' are interchangeable in names, as in repositories.json aliases.
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def _bounded(limit: int) -> Callable[[str, ValidationInfo], str]:
    def check(value: str, info: ValidationInfo) -> str:
        if len(value) > limit:
            raise ValueError(f"field '{info.field_name}' has {len(value)} characters (at most {limit})")
        return value.strip()
    return check


def _fact_id(value: str) -> str:
    if not _FACT_ID.match(value):
        raise ValueError("id must be lowercase ASCII letters, digits and '-'")
    return value


def _kind(value: str) -> str:
    if value not in KINDS:
        raise ValueError(f"kind {value!r} is not one of {sorted(KINDS)}")
    return value


def _stripped(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v.strip() for v in values)


def _triggers(triggers: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
    # Too short to mean anything on its own, or a product's name: the router uses
    # names to pick the product; a trigger must point at one fact of it.
    names = _context(info, "product_names") or frozenset()
    for t in triggers:
        if len(t) < (3 if t.isascii() else 2):
            raise ValueError(f"trigger {t!r} is too short")
        if name_key(t) in names:
            raise ValueError(f"trigger {t!r} is a product name; name what the fact is about")
    return triggers


def _placeholder_versions(commands: tuple[str, ...]) -> tuple[str, ...]:
    for c in commands:
        if _LITERAL_VERSION.search(_LOWER_BOUND.sub("", c)):
            raise ValueError(f"command {c!r} holds a literal version; use a placeholder like <vllm-version>")
    return commands


def _fact_source(ref: str, info: ValidationInfo) -> str:
    """An https URL, or `owner/name:path` of a known repository that stays inside it (and, given
    clones, exists in its clone)."""
    if HTTPS.match(ref):
        return ref
    m = REPO_PATH.match(ref)
    if not m:
        raise ValueError(f"source {ref!r} is neither an https URL nor 'owner/name:path'")
    repo, path = m.group("repo"), m.group("path")
    known = _context(info, "products")
    if known is not None and repo not in known:
        raise ValueError(f"source {ref!r} names a repository that is not in repositories.json")
    if path.startswith("/") or ".." in Path(path).parts:
        raise ValueError(f"source {ref!r} leaves its repository")
    repos_dir = _context(info, "repos_dir")
    if repos_dir is not None:
        clone = Path(repos_dir) / repo
        if clone.is_dir() and not (clone / path).exists():
            raise ValueError(f"source path {path!r} does not exist in the clone of {repo}")
    return ref


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


class ProductFact(Model):
    """A short, sourced answer a maintainer of one product would give (core/knowledge/product_facts.py)."""

    STRIP_TEXT: ClassVar[bool] = True
    RELEASE_FORMAT: ClassVar[re.Pattern[str]] = _FACT_RELEASE

    id: Annotated[str, BeforeValidator(_text), AfterValidator(_bounded(64)), AfterValidator(_fact_id),
                  Field(json_schema_extra={"pattern": _FACT_ID.pattern})]
    products: Annotated[Products, AfterValidator(_stripped)]  # canonical repo names from repositories.json
    kind: Annotated[str, BeforeValidator(_text), AfterValidator(_bounded(20)), AfterValidator(_kind),
                    Field(json_schema_extra={"enum": sorted(KINDS)})]
    triggers: Annotated[SomeTexts, AfterValidator(_stripped), AfterValidator(_triggers)]
    title: Bilingual
    text: Bilingual
    commands: Annotated[Texts, AfterValidator(_stripped), AfterValidator(_placeholder_versions)] = ()
    source: Annotated[str, BeforeValidator(_text), AfterValidator(_bounded(300)), AfterValidator(_fact_source), MinLen(1)]
    releases: Releases = NO_RANGE  # vllm-ascend releases it holds on (core/releases/ranges.py writes them)

    @model_validator(mode="after")
    def _short_and_chinese(self) -> ProductFact:
        for name, limit in (("title", MAX_TITLE), ("text", MAX_TEXT)):
            pair: Bilingual = getattr(self, name)
            for key, value in ((f"{name}_en", pair.en), (f"{name}_zh", pair.zh)):
                if len(value) > limit:
                    raise ValueError(f"field '{key}' has {len(value)} characters (at most {limit})")
        if not _has_cjk(self.text.zh):
            raise ValueError("text_zh must be written in Chinese")
        return self

    def citation(self) -> Any:
        """The source as a citable link (a core.messages.Source), resolved like every other knowledge fact."""
        from core.knowledge.loader import load_repositories  # noqa: PLC0415 - the loader imports this module
        from core.knowledge.base import resolve_source  # noqa: PLC0415

        return resolve_source(self.source, load_repositories())

    @property
    def source_url(self) -> str:
        return str(self.citation().url)


class ProductFactsFile(Model):
    facts: tuple[ProductFact, ...]

    @model_validator(mode="before")
    @classmethod
    def _has_facts(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("facts"), list) or not data["facts"]:
            raise ValueError("top level must be an object with a non-empty 'facts' list")
        return data

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        schema = super().__get_pydantic_json_schema__(core_schema, handler)
        handler.resolve_ref_schema(schema)["properties"]["facts"]["minItems"] = 1
        return schema


# ------------------------------------------------------------------ files

# Each top-level knowledge file and the model its content validates into.
FILES: dict[str, type[Model]] = {
    "repositories.json": RepositoriesFile,
    "hardware.json": HardwareFile,
    "error_codes.json": ErrorCodesFile,
    "incompatibilities.json": IncompatibilitiesFile,
    "problem_patterns.json": ProblemPatternsFile,
    "checklist.json": ChecklistFile,
    "version_matrix.json": VersionMatrix,
    "collect_env.json": CollectEnvFile,
    "env_vars.json": EnvVarsFile,
    "code_map.json": CodeMapFile,
}
PRODUCT_FILE_SCHEMA = "product_facts.schema.json"


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every knowledge file, by the name of the schema file that holds it."""
    out = {name.replace(".json", ".schema.json"): _schema(model, name) for name, model in FILES.items()}
    out[PRODUCT_FILE_SCHEMA] = _schema(ProductFactsFile, "products/<product>.json")
    return out


def _schema(model: type[Model], file: str) -> dict[str, Any]:
    body = _tidy(model.model_json_schema(mode="validation"))
    props = body.setdefault("properties", {})
    props["$schema"] = {"type": "string", "description": "where editors find this schema"}
    props["_about"] = {"description": "a note for people editing the file; not read"}
    header = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": file,
              "description": f"core/knowledge/{file}; generated from core/knowledge/schema.py by "
                             "`python -m core.knowledge.schema --write`"}
    return {**header, **{k: v for k, v in body.items() if k not in ("title", "description")}}


def _tidy(node: Any) -> Any:
    """Array length in JSON Schema's words (pydantic writes minLength for a tuple's MinLen), without the
    per-property titles pydantic derives from field names."""
    if isinstance(node, list):
        return [_tidy(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tidy(v) for k, v in node.items()}
    if out.get("type") == "array" and "minLength" in out:
        out["minItems"] = out.pop("minLength")
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: {a: b for a, b in v.items() if a != "title"} for k, v in out["properties"].items()}
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def stale_schemas(directory: Path = JSON_SCHEMA_DIR) -> list[str]:
    """Schema files missing from `directory` or different from what the models emit."""
    stale = []
    for name, schema in json_schemas().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != render(schema):
            stale.append(name)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.knowledge.schema",
                                     description="Emit the JSON Schema of the knowledge files for editors.")
    parser.add_argument("--write", action="store_true", help=f"write them to {JSON_SCHEMA_DIR}")
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed files are out of date")
    args = parser.parse_args(argv)
    if args.write:
        JSON_SCHEMA_DIR.mkdir(exist_ok=True)
        for name, schema in json_schemas().items():
            (JSON_SCHEMA_DIR / name).write_text(render(schema), encoding="utf-8")
        print(f"wrote {len(FILES) + 1} schema files to {JSON_SCHEMA_DIR}")
        return 0
    stale = stale_schemas()
    if args.check:
        if stale:
            print("out of date: " + ", ".join(stale) + " (run python -m core.knowledge.schema --write)", file=sys.stderr)
        return 1 if stale else 0
    print(render(json_schemas()), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
