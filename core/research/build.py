"""Wiring the research agent from its settings: the model client, the tools and the agent.

Kept apart from the package's __init__ so that importing `core.research.settings` (which every
process does through `bot.settings`) does not load the model SDKs and the MCP client.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from core.keys import Keys
from core.research.agent import ResearchAgent
from core.research.anthropic_client import AnthropicClient
from core.research.cache import ToolCache
from core.research.loop import LoopLimits
from core.research.metering import Metered
from core.research.model import ModelClient
from core.research.openai_client import OpenAIClient
from core.research.redact import Redactor
from core.research.repos import canonical_urls
from core.research.tools.code import LocalRepos, ReadFile, SearchCode
from core.research.tools.deepwiki import AskDeepWiki, DeepWiki, ReadWikiStructure
from core.research.tools.diagnostics import LookupDiagnostics
from core.research.tools.docs import SearchDocs
from core.research.tools.issues import GetIssue, IssueApis, SearchIssues
from core.research.tools.registry import ToolRegistry
from core.secrets import secret

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from collections.abc import Callable

    from core.index.passage import Retriever
    from core.resolution.memory import ResolutionMemory
    from core.research.settings import ResearchSettings

__all__ = ["build_registry", "build_research_agent", "model_client"]


def build_registry(
    settings: "ResearchSettings", redis: "Redis | None", keys: Keys, http: httpx.AsyncClient, retriever: "Retriever | None" = None,
    memory: "Callable[[], ResolutionMemory] | None" = None,
) -> ToolRegistry:
    """The read-only tools, wired from settings (search_docs only when a knowledge index is there)."""

    timeout = settings.tool_timeout_seconds
    repos = LocalRepos(settings.repos_dir, dict(settings.repo_urls), git_timeout=timeout)
    apis = IssueApis(
        http,
        settings.github_api_url,
        secret(settings.github_token),
        settings.gitcode_api_url,
        secret(settings.gitcode_token),
    )
    deepwiki = DeepWiki(settings.deepwiki_mcp_url)
    tools = [
        LookupDiagnostics(timeout=timeout),
        SearchCode(repos, settings.cache_ttl_code_seconds, timeout),
        ReadFile(repos, settings.cache_ttl_code_seconds, timeout),
        SearchIssues(apis, settings.cache_ttl_issues_seconds, timeout, local=retriever, memory=memory),
        GetIssue(apis, settings.cache_ttl_issues_seconds, timeout, memory=memory),
        AskDeepWiki(deepwiki, settings.cache_ttl_deepwiki_seconds, settings.deepwiki_timeout_seconds),
        ReadWikiStructure(deepwiki, settings.cache_ttl_deepwiki_seconds, settings.deepwiki_timeout_seconds),
    ]
    if retriever is not None:
        tools.insert(1, SearchDocs(retriever, settings.cache_ttl_code_seconds, timeout))
    return ToolRegistry(tools, ToolCache(redis, keys), Redactor.from_settings(settings), settings.tool_output_max_bytes)


def provider_client(
    settings: "ResearchSettings", *, max_retries: int, stream: bool, timeout: float, max_tokens: int | None = None,
) -> ModelClient:
    """The configured provider's client, with the call's retries, streaming and timeout (the
    research agent, the eval judge and `doctor`'s one-token probe differ only there);
    `max_tokens` None: the provider's own setting."""
    call = {"max_retries": max_retries, "stream": stream, "timeout": timeout}
    if settings.resolved_model_provider == "openai":
        return OpenAIClient(api_key=secret(settings.openai_api_key), model=settings.openai_model,
                            base_url=settings.openai_base_url, max_tokens=max_tokens or settings.openai_max_tokens, **call)
    return AnthropicClient(api_key=secret(settings.anthropic_api_key), model=settings.anthropic_model,
                           base_url=settings.anthropic_base_url, max_tokens=max_tokens or settings.anthropic_max_tokens, **call)


def model_client(settings: "ResearchSettings") -> ModelClient:
    """The configured model (the research agent and the eval judge speak to the same one), its
    usage estimated when the server reports none (so budgets hold)."""
    return Metered(provider_client(settings, max_retries=settings.anthropic_max_retries,
                                   stream=settings.anthropic_stream, timeout=settings.research_deadline_seconds))


def build_research_agent(
    settings: "ResearchSettings",
    redis: "Redis | None",
    keys: Keys,
    *,
    client: ModelClient | None = None,
    retriever: "Retriever | None" = None,
    memory: "Callable[[], ResolutionMemory] | None" = None,
) -> ResearchAgent | None:
    """The research agent, or None when no model key is configured."""
    if client is None and not settings.llm_enabled:
        return None
    http = httpx.AsyncClient(timeout=httpx.Timeout(settings.tool_timeout_seconds, connect=10.0))
    client = client or model_client(settings)
    return ResearchAgent(
        client=client,
        registry=build_registry(settings, redis, keys, http, retriever, memory),
        redactor=Redactor.from_settings(settings),
        limits=LoopLimits(max_steps=settings.research_max_steps, deadline_seconds=settings.research_deadline_seconds),
        allowed_urls=canonical_urls(),
        closers=(http.aclose,),
        tools_mode=settings.model_tools,
        fallback_when_no_tool_call=settings.resolved_model_provider == "openai",
    )
