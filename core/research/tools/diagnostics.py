"""`lookup_diagnostics`: the built-in knowledge base (error codes, problem patterns, the quick
diagnostic checklist, the version matrix) applied to a text the model chooses.

Answers in English: the model queries in English and writes the user's language itself.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import Field

from core.messages import Language, Source
from core.research.tools.base import ToolArgs, ToolOutput, short
from core.triage import diagnose


class LookupDiagnosticsArgs(ToolArgs):
    text: str = Field(min_length=1, max_length=20_000, description="Error message, log excerpt, versions or command to check.")


class LookupDiagnostics:
    name: ClassVar[str] = "lookup_diagnostics"
    description: ClassVar[str] = (
        "Check a text (an error message, a log excerpt, version numbers, a startup command) against the "
        "built-in knowledge base: ACL/CANN error codes, common problem patterns, the quick diagnostic "
        "checklist and the vllm / vllm-ascend / CANN / torch_npu version matrix. Fast and offline; use it "
        "first for errors and version questions."
    )
    Args: ClassVar[type[LookupDiagnosticsArgs]] = LookupDiagnosticsArgs

    def __init__(self, diagnose_fn: Callable[[str], Any] | None = None, timeout: float = 10.0) -> None:
        self._diagnose: Callable[[str], Any] = diagnose_fn or diagnose
        self.cache_ttl = 0  # local and fast: caching would only add a Redis round trip
        self.timeout = timeout

    def describe(self, args: LookupDiagnosticsArgs, language: Language) -> str:
        return f"正在查询诊断知识库：{short(args.text, 40)}" if language == "zh" else f"Checking the diagnostic knowledge base for {short(args.text, 40)}"

    async def run(self, args: LookupDiagnosticsArgs) -> ToolOutput:
        # Pattern matching over a long log is CPU work; keep the event loop free.
        report = await asyncio.to_thread(self._diagnose, args.text)
        # The report lists its own sources in the Markdown, so they are citable from the text.
        text = report.to_markdown("en").strip() or "The knowledge base has nothing specific for this text."
        return ToolOutput(text, tuple(Source(s.title, s.url) for s in report.sources))
