"""What every research tool is: a name, a description, pydantic arguments and a run method.

Tools are read-only. A tool returns `ToolOutput`: the text the model reads,
the sources the tool itself produced (URL + title: a permalink it built, an
issue's own html_url, the DeepWiki page it asked), the repository paths it
vouches for, and whether it failed. Only declared sources can be cited as
verified; URLs and paths inside the third-party text a tool passes on (issue
bodies, comments, wiki prose, file contents) are mentions, labelled with
`origin` when the tool knows where they came from. Failures
the model can act on (rate limited, not indexed, not found) are outputs, not
exceptions, so the loop carries on.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.messages import Language, Source
from core.research.repos import RepoInfo, find_repo, repo_names


@dataclass(frozen=True)
class ToolOutput:
    text: str
    sources: tuple[Source, ...] = ()
    is_error: bool = False
    cacheable: bool = True
    paths: tuple[str, ...] = ()  # repository paths the tool found itself (git ls-tree), beyond its permalinks
    origin: str = ""  # what third-party text this is ("#1234", "DeepWiki"), for "(mentioned in …)" notes

    def to_json(self) -> str:
        return json.dumps(
            {
                "text": self.text,
                "sources": [[s.title, s.url] for s in self.sources],
                "is_error": self.is_error,
                "paths": list(self.paths),
                "origin": self.origin,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, raw: str | bytes) -> "ToolOutput":
        data = json.loads(raw)
        return cls(
            data["text"],
            tuple(Source(t, u) for t, u in data["sources"]),
            bool(data["is_error"]),
            paths=tuple(str(p) for p in data.get("paths") or ()),  # entries cached before paths existed
            origin=str(data.get("origin") or ""),
        )


def failure(text: str) -> ToolOutput:
    """A failed call the model should read (never cached)."""
    return ToolOutput(text, is_error=True, cacheable=False)


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)


class RepoArgs(ToolArgs):
    repo: str = Field(description="Repository, owner/name.")

    @field_validator("repo")
    @classmethod
    def _allowlisted(cls, value: str) -> str:
        return allowlisted(value)

    @property
    def info(self) -> RepoInfo:
        info = find_repo(self.repo)
        assert info is not None  # validated
        return info


class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]  # validates every call; the model sees its input_schema()
    cache_ttl: int  # seconds; 0 means never cached
    timeout: float  # seconds for one call

    async def run(self, args: Any) -> ToolOutput: ...

    def describe(self, args: Any, language: Language) -> str:
        """A short progress line for the user, in their language."""
        ...


def allowlisted(name: str) -> str:
    """The canonical name of an allowlisted repository; otherwise a ValueError the model can act on."""
    repo = find_repo(name)
    if repo is None:
        raise ValueError(f"'{short(name, 60)}' is not allowlisted; use one of: {', '.join(repo_names())}")
    return repo.name


def short(text: str, limit: int = 60) -> str:
    """A one-line, shortened form of a query for progress lines."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def input_schema(args: type[ToolArgs]) -> dict[str, Any]:
    """A compact, deterministic JSON schema: pydantic's, without titles, with each field's
    `description` last (then the repository enum).

    Byte-stable output matters: the tool list is the start of the cached prompt prefix.
    """
    schema = args.model_json_schema()

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema = strip(schema)
    for name, field in args.model_fields.items():
        prop = schema["properties"][name]
        prop.pop("description", None)
        if field.description:
            prop["description"] = field.description
        if name == "repo":
            _add_repo_enum(prop)
    schema.pop("additionalProperties", None)
    return schema


def _add_repo_enum(prop: dict[str, Any]) -> None:
    names = list(repo_names())
    if prop.get("type") == "string":
        prop["enum"] = names
    for option in prop.get("anyOf", []):
        if option.get("type") == "string":
            option["enum"] = names
        elif option.get("type") == "array":
            option["items"] = {"type": "string", "enum": names}
