"""`search_docs`: the knowledge index (docs, FAQs, code, configs, downloaded issues) for a question in
plain words, English or Chinese. Each passage carries a permalink that opens at its lines, so what
the model cites is checked like any other tool result (core/research/citations.py)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from core.index.passage import Passage, Retriever
from core.messages import Language, Source
from core.research.tools.base import ToolArgs, ToolOutput, allowlisted, short
from core.untrusted_text import issue_label, plain_line

MAX_PASSAGES = 5
MAX_PASSAGE_LINES = 30
MAX_PASSAGE_CHARS = 1800


class SearchDocsArgs(ToolArgs):
    query: str = Field(
        min_length=1, max_length=500, description="The question or the key words, in the user's words; paste error lines as they are."
    )
    repo: str | None = Field(
        default=None, description="Optional repository (owner/name) to search first; others are searched when it has nothing good."
    )
    kind: Literal["doc", "code", "config", "issue"] | None = Field(
        default=None, description="Optional: only doc, code, config or issue passages."
    )

    @field_validator("repo")
    @classmethod
    def _allowlisted(cls, value: str | None) -> str | None:
        return allowlisted(value) if value is not None and value.strip() else None


def render_passage(n: int, passage: Passage) -> str:
    lines = passage.text.splitlines()[:MAX_PASSAGE_LINES]
    numbered = "\n".join(f"{passage.start_line + i}| {line}" for i, line in enumerate(lines))
    if len(numbered) > MAX_PASSAGE_CHARS:
        numbered = numbered[:MAX_PASSAGE_CHARS] + "…"
    title = plain_line(passage.title)  # a doc heading or an issue title: plain text, whoever wrote it
    if passage.kind == "issue":  # the model must know a stranger (or a maintainer) wrote this, not the docs
        label = issue_label(passage.path, passage.title, passage.text)
        return f"{n}. {passage.repo}: {passage.path} (issue, {label}) — {title}\n{passage.url}\n{numbered}"
    where = f"{passage.path} L{passage.start_line}-{passage.end_line}"
    if passage.release:  # read at the user's release (core/releases), not at the indexed branch
        where += f", as of {passage.release}"
    return f"{n}. {passage.repo}: {where} ({passage.kind}) — {title}\n{passage.url}\n{numbered}"


@dataclass
class SearchDocs:
    name: ClassVar[str] = "search_docs"
    description: ClassVar[str] = (
        "Search the knowledge index of the repositories' docs, FAQs, environment-variable pages, code, configs "
        "and downloaded issues with a question in plain words (English or Chinese; error codes, env vars and "
        "flags are matched exactly). Returns the best passages with a permalink that opens at the lines. "
        "Use it first for how-to, configuration and error questions; use search_code for an exact string."
    )
    Args: ClassVar[type[SearchDocsArgs]] = SearchDocsArgs
    retriever: Retriever
    cache_ttl: int
    timeout: float

    def describe(self, args: SearchDocsArgs, language: Language) -> str:
        if language == "zh":
            return f"正在知识索引中检索 {short(args.query)}"
        return f"Searching the docs index for {short(args.query)}"

    async def run(self, args: SearchDocsArgs) -> ToolOutput:
        repos = [args.repo] if args.repo else []
        passages = await asyncio.to_thread(self.retriever.search, args.query, repos, MAX_PASSAGES, args.kind)
        scope = f" in {args.repo}" if args.repo else ""
        if not passages:
            return ToolOutput(
                f"search_docs{scope} for \"{args.query}\": no passage is relevant enough. Try other words, "
                "search_code for an exact identifier, or search_issues."
            )
        head = f"search_docs{scope} for \"{args.query}\": {len(passages)} passage(s), best first"
        body = "\n\n".join(render_passage(n, p) for n, p in enumerate(passages, 1))
        sources = tuple(Source(f"{p.repo}: {p.path}" + ("" if p.kind == "issue" else f" L{p.start_line}-{p.end_line}"), p.url)
                        for p in passages)
        return ToolOutput(f"{head}\n\n{body}", sources)

