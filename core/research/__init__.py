"""The research agent: with a model configured, the bot researches a question with read-only
tools and answers with citations that a tool itself produced.

`build_research_agent(settings, redis, keys)` (core/research/build.py) is the one entry point; it
returns None when no model provider is configured (the bot then answers with the offline triage
only). This module stays light: the agent and its wiring load the model SDKs, so they are imported
on first use, and every process that only reads settings starts fast.
"""
from __future__ import annotations

from typing import Any

from core.research.model import Usage
from core.research.types import ResearchOutcome, ResearchRequest, TraceStep

_LAZY = {
    "ResearchAgent": "core.research.agent",
    "build_registry": "core.research.build",
    "build_research_agent": "core.research.build",
    "model_client": "core.research.build",
}

__all__ = ["ResearchOutcome", "ResearchRequest", "TraceStep", "Usage", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib  # noqa: PLC0415

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'core.research' has no attribute {name!r}")
