"""A real MCP server on loopback standing in for DeepWiki (streamable HTTP under uvicorn).

It exposes DeepWiki's tool names and argument names (ask_question with
repoName + question, read_wiki_structure and read_wiki_contents with
repoName) and answers from a dict. A repository that is not in the dict gets
DeepWiki's real "Repository not found" text.
"""
from __future__ import annotations

from typing import Any

import anyio
from mcp.server import MCPServer

from tests.support.fake_http import UvicornRunner


class FakeDeepWiki:
    def __init__(self, answers: dict[str, str], structure: dict[str, str] | None = None) -> None:
        self.answers = answers
        self.structure = structure or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.delay = 0.0  # seconds before answering ask_question, to provoke tool timeouts
        server = MCPServer("DeepWiki")
        calls = self.calls

        @server.tool()
        async def ask_question(repoName: str | list[str], question: str) -> str:
            """Ask any question about a GitHub repository and get an AI-powered, context-grounded response."""
            calls.append(("ask_question", {"repoName": repoName, "question": question}))
            if self.delay:
                await anyio.sleep(self.delay)
            names = [repoName] if isinstance(repoName, str) else repoName
            missing = [n for n in names if n not in self.answers]
            if missing:
                return (
                    "Error processing question: Repository not found. Visit https://deepwiki.com to index it. "
                    f"Requested repos: {', '.join(missing)}"
                )
            return "\n\n".join(self.answers[n] for n in names)

        @server.tool()
        def read_wiki_structure(repoName: str) -> str:
            """Get a list of documentation topics for a GitHub repository."""
            calls.append(("read_wiki_structure", {"repoName": repoName}))
            if repoName not in self.structure:
                return "Error fetching wiki structure: Repository not found."
            return f"Available pages for {repoName}:\n\n{self.structure[repoName]}"

        @server.tool()
        def read_wiki_contents(repoName: str) -> str:
            """View documentation about a GitHub repository."""
            calls.append(("read_wiki_contents", {"repoName": repoName}))
            return self.answers.get(repoName, "Error fetching wiki: Repository not found.")

        self._runner = UvicornRunner(server.streamable_http_app(stateless_http=True))

    @property
    def url(self) -> str:
        return self._runner.url + "/mcp"

    async def __aenter__(self) -> "FakeDeepWiki":
        await self._runner.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.stop()
