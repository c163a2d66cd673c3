"""`ask_deepwiki` and `read_wiki_structure` through DeepWiki's MCP server (streamable HTTP).

One short MCP session per call: DeepWiki answers take seconds to minutes, so
the handshake is noise, and nothing long-lived has to survive a dropped
connection. "Repository not found" becomes a not-indexed result that sends
the model to local code search.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from mcp import Client
from pydantic import Field, field_validator

from core.messages import Language, Source
from core.research.tools.base import RepoArgs, ToolArgs, ToolOutput, allowlisted, failure, short

log = logging.getLogger(__name__)

_NOT_FOUND = "repository not found"


class DeepWiki:
    def __init__(self, url: str) -> None:
        self._url = url

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Text of the tool result and whether DeepWiki flagged it as an error."""
        async with Client(self._url, mode="legacy", cache=None) as client:
            result = await client.call_tool(tool, arguments)
        text = "".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
        return text.strip(), bool(result.is_error)


def _not_indexed(repos: list[str]) -> ToolOutput:
    names = ", ".join(repos)
    return failure(
        f"DeepWiki has not indexed {names} (it answered: repository not found). Do not ask DeepWiki about "
        f"{'it' if len(repos) == 1 else 'them'} again; use search_code and read_file on the local clone, "
        "or search_issues."
    )


async def _call(
    deepwiki: DeepWiki, tool: str, arguments: dict[str, Any], repos: list[str], instead: str
) -> str | ToolOutput:
    """DeepWiki's text for one MCP tool call, or the failure the model reads (`instead`: the tools to
    use when DeepWiki cannot be reached)."""
    try:
        text, is_error = await deepwiki.call(tool, arguments)
    except Exception as exc:  # transport failures of the MCP client surface as many types
        log.warning("deepwiki %s failed: %s", tool, type(exc).__name__)
        return failure(f"DeepWiki could not be reached ({type(exc).__name__}). Use {instead} instead.")
    if _NOT_FOUND in text.lower():
        return _not_indexed(repos)
    if is_error or not text:
        return failure(f"DeepWiki returned an error: {short(text or 'empty answer', 300)}")
    return text


def _page(repo: str) -> Source:
    """The DeepWiki page of a repository: the source a DeepWiki answer is cited by."""
    return Source(f"DeepWiki: {repo}", f"https://deepwiki.com/{repo}")


class AskDeepWikiArgs(ToolArgs):
    repo: str | list[str] = Field(description="One repository (owner/name) or a list of them.")
    question: str = Field(min_length=3, max_length=2000, description="The question, in English.")

    @field_validator("repo")
    @classmethod
    def _allowlisted(cls, value: str | list[str]) -> str | list[str]:
        names = [value] if isinstance(value, str) else value
        if not names or len(names) > 10:
            raise ValueError("give one repository or a list of up to 10")
        canonical = [allowlisted(name) for name in names]
        return canonical[0] if isinstance(value, str) else canonical

    @property
    def repos(self) -> list[str]:
        return [self.repo] if isinstance(self.repo, str) else list(self.repo)


@dataclass
class AskDeepWiki:
    name: ClassVar[str] = "ask_deepwiki"
    description: ClassVar[str] = (
        "Ask DeepWiki (an AI-generated wiki over a repository's code and docs) a question about one "
        "repository or a list of repositories. Best for architecture, how a feature works, configuration "
        "and deployment. Ask in English with precise technical terms. For vllm-ascend questions that "
        "touch inherited behaviour, also ask about vllm-project/vllm. Answers are summaries: confirm "
        "important details with search_code/read_file when a clone exists."
    )
    Args: ClassVar[type[AskDeepWikiArgs]] = AskDeepWikiArgs
    deepwiki: DeepWiki
    cache_ttl: int
    timeout: float

    def describe(self, args: AskDeepWikiArgs, language: Language) -> str:
        names = ", ".join(args.repos)
        return f"正在向 DeepWiki 询问 {names}：{short(args.question)}" if language == "zh" else f"Asking DeepWiki about {names}: {short(args.question)}"

    async def run(self, args: AskDeepWikiArgs) -> ToolOutput:
        text = await _call(
            self.deepwiki, "ask_question", {"repoName": args.repo, "question": args.question}, args.repos,
            instead="search_code or search_issues",
        )
        if isinstance(text, ToolOutput):
            return text
        # The pages we asked are sources; links and paths in the generated prose are only mentions.
        sources = tuple(_page(name) for name in args.repos)
        head = f"DeepWiki answer about {', '.join(args.repos)} ({' '.join(s.url for s in sources)}):"
        return ToolOutput(f"{head}\n{text}", sources, origin="DeepWiki")


class ReadWikiStructureArgs(RepoArgs):
    pass


@dataclass
class ReadWikiStructure:
    name: ClassVar[str] = "read_wiki_structure"
    description: ClassVar[str] = (
        "List the DeepWiki topics of one repository. Use it when unsure which part of a repository covers "
        "a topic, then ask_deepwiki a focused question."
    )
    Args: ClassVar[type[ReadWikiStructureArgs]] = ReadWikiStructureArgs
    deepwiki: DeepWiki
    cache_ttl: int
    timeout: float

    def describe(self, args: ReadWikiStructureArgs, language: Language) -> str:
        return f"正在查看 {args.repo} 的 DeepWiki 目录" if language == "zh" else f"Reading the DeepWiki topics of {args.repo}"

    async def run(self, args: ReadWikiStructureArgs) -> ToolOutput:
        text = await _call(
            self.deepwiki, "read_wiki_structure", {"repoName": args.repo}, [args.repo], instead="search_code"
        )
        if isinstance(text, ToolOutput):
            return text
        page = _page(args.repo)
        return ToolOutput(f"DeepWiki topics of {args.repo} ({page.url}):\n{text}", (page,), origin="DeepWiki")
