"""Reads the knowledge files once per directory, validated by core/knowledge/schema.py.

A malformed file raises an error naming the file and the entry at fault ("error_codes.json:
code='EL0009'.steps[0]: field 'zh' must be a non-empty string"). The top-level files make one
KnowledgeBase (`load_knowledge_base`); products/*.json make the product facts
(`load_product_facts`), which read only repositories.json besides, so a problem in another
knowledge file cannot take product facts down with it.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import (
    FILES,
    ChecklistFile,
    CodeMapFile,
    CollectEnvFile,
    EnvVarsFile,
    ErrorCodesFile,
    HardwareFile,
    IncompatibilitiesFile,
    Model,
    ProblemPatternsFile,
    ProductFact,
    ProductFactsFile,
    RepositoriesFile,
    Repository,
    VersionMatrix,
    name_key,
)

KNOWLEDGE_DIR = Path(__file__).parent
PRODUCTS_DIR = KNOWLEDGE_DIR / "products"

M = TypeVar("M", bound=Model)

# Fields that name an entry in a message, in order of preference ("id='nccl-timeout'").
_LABELS = ("id", "code", "repo", "name", "vllm_ascend")


class KnowledgeBaseError(ValueError):
    """A knowledge file is missing, is not valid JSON, or breaks the schema."""


class ProductFactError(KnowledgeBaseError):
    """A product-fact file is missing, malformed or breaks the schema."""


# ------------------------------------------------------------------ reading


def _read_json(path: Path, error: type[KnowledgeBaseError]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path.name}: file not found in {path.parent}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path.name}: not valid JSON: {exc}") from None


def _validate(model: type[M], data: Any, file: str, error: type[KnowledgeBaseError], context: dict[str, Any]) -> M:
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise error(describe(file, data, exc)) from None


def describe(file: str, data: Any, exc: ValidationError) -> str:
    """The first problem as `<file>: <entry>: <what is wrong>`, the entry named by its id when it has one."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(first["loc"])
    depth = _object_depth(data, loc)
    if first["type"] in ("model_type", "model_attributes_type", "dict_type"):
        where, message = _where(data, loc), f"expected an object, got {type(first['input']).__name__}"
    else:
        where = _where(data, loc[:depth])
        field = loc[depth] if depth < len(loc) else None
        message = _message(first, field)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{file}: {where}: {message}{more}"


def _object_depth(data: Any, loc: tuple[Any, ...]) -> int:
    """How far `loc` leads through JSON objects: the error is about a field of the object there."""
    node, depth = data, 0
    for i, seg in enumerate(loc):
        try:
            node = node[seg]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict):
            depth = i + 1
    return depth


def _where(data: Any, loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    node = data
    for i, seg in enumerate(loc):
        node = node[seg]
        if isinstance(seg, str):
            parts.append(seg)
            continue
        label = next((f"{k}={node[k]!r}" for k in _LABELS if isinstance(node, dict) and isinstance(node.get(k), str)), None)
        if i == 1:  # an entry of the file's list: its label alone, as editors search for it
            parts = [label or f"entry #{seg}"]
        else:
            parts[-1] += f"[{label or seg}]"
    return ".".join(parts) or "top level"


def _message(error: Any, field: Any) -> str:
    if error["type"] in ("value_error", "assertion_error"):
        return str(error["ctx"]["error"])
    if error["type"] == "missing":
        return f"field '{field}' is missing"
    if error["type"] == "bool_type":
        return f"field '{field}' must be true or false"
    return f"field '{field}': {error['msg']}" if field is not None else str(error["msg"])


# ------------------------------------------------------------ knowledge base


def _file(directory: Path, model: type[M], context: dict[str, Any]) -> M:
    name = next(n for n, m in FILES.items() if m is model)
    return _validate(model, _read_json(directory / name, KnowledgeBaseError), name, KnowledgeBaseError, context)


def _repositories_of(directory: Path) -> tuple[Repository, ...]:
    return _file(directory, RepositoriesFile, {}).repositories


def _build(directory: Path) -> KnowledgeBase:
    repositories = _repositories_of(directory)
    context: dict[str, Any] = {"products": frozenset(r.repo for r in repositories)}
    error_codes = _file(directory, ErrorCodesFile, context).codes
    context["error_codes"] = {c.code.upper() for c in error_codes} | {a.upper() for c in error_codes for a in c.aliases}
    hardware = _file(directory, HardwareFile, context)
    collect = _file(directory, CollectEnvFile, context)
    matrix = _file(directory, VersionMatrix, context)
    return KnowledgeBase(
        repositories=repositories,
        chips=hardware.chips,
        soc_version=hardware.soc_version,
        error_codes=error_codes,
        incompatibilities=_file(directory, IncompatibilitiesFile, context).combinations,
        patterns=_file(directory, ProblemPatternsFile, context).patterns,
        checklist=_file(directory, ChecklistFile, context).items,
        matrix=matrix.model_copy(update={"read_from": f"the built-in copy ({matrix.main_branch.as_of})"}),
        collect_env=collect.collect_env,
        env_vars=_file(directory, EnvVarsFile, context).variables,
        send_items=collect.send,
        docs=collect.docs,
        code_map=_file(directory, CodeMapFile, context).entries,
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


@lru_cache(maxsize=1)
def load_repositories() -> dict[str, Repository]:
    """The built-in repositories.json alone, by owner/name (what product facts check and cite against)."""
    return {r.repo: r for r in _repositories_of(KNOWLEDGE_DIR)}


# ------------------------------------------------------------- product facts


@lru_cache(maxsize=1)
def _product_names() -> frozenset[str]:
    # The names themselves (key, owner/name, the repository's short name), not every
    # alias: aliases also hold CLI and module names, which are fine triggers.
    out: set[str] = set()
    for r in load_repositories().values():
        out.update(name_key(n) for n in (r.key, r.repo, r.repo.split("/", 1)[1], r.display_name))
    return frozenset(out)


def _build_facts(directory: Path, repos_dir: Path | None) -> tuple[ProductFact, ...]:
    if not directory.is_dir():
        raise ProductFactError(f"product facts directory not found: {directory}")
    files = sorted(directory.glob("*.json"))
    if not files:
        raise ProductFactError(f"no product fact files in {directory}")
    context = {"products": frozenset(load_repositories()), "product_names": _product_names(), "repos_dir": repos_dir}
    facts: list[ProductFact] = []
    seen: dict[str, str] = {}
    for path in files:
        data = _read_json(path, ProductFactError)
        for fact in _validate(ProductFactsFile, data, path.name, ProductFactError, context).facts:
            if fact.id in seen:
                raise ProductFactError(f"{path.name}: duplicate id {fact.id!r} (first in {seen[fact.id]})")
            seen[fact.id] = path.name
            facts.append(fact)
    return tuple(facts)


@lru_cache(maxsize=8)
def _cached_facts(directory: str, repos_dir: str | None) -> tuple[ProductFact, ...]:
    return _build_facts(Path(directory), Path(repos_dir) if repos_dir else None)


def load_product_facts(directory: Path | str | None = None, repos_dir: Path | str | None = None) -> tuple[ProductFact, ...]:
    """Load and validate every product fact once per (directory, repos_dir); cached.

    `repos_dir` (a REPOS_DIR with clones at <owner>/<name>) makes a source path
    missing from its clone an error; repositories without a clone are not checked.
    Raises ProductFactError naming the file and the fact at fault.
    """
    target = Path(directory) if directory is not None else PRODUCTS_DIR
    clones = str(Path(repos_dir).resolve()) if repos_dir is not None else None
    return _cached_facts(str(target.resolve()), clones)


def clear_caches() -> None:
    """Forget every loaded file (a benchmark that measures loading)."""
    for cached in (_cached, _cached_facts, load_repositories, _product_names):
        cached.cache_clear()
