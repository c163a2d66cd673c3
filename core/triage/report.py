"""What a diagnosis finds and what the offline answer returns: the result types.

`DiagnosticReport` is filled by `diagnose` (core/triage/diagnosis.py); `TriageResult` is the answer
`triage`, `shared_lookups` and `triage_details` return (core/triage/answer.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.environment import Environment
from core.index.passage import Passage
from core.knowledge.schema import (
    Chip,
    ChecklistItem,
    CodeMapEntry,
    EnvVar,
    ErrorCode,
    Incompatibility,
    MainBranch,
    MatrixRow,
    Note,
    ProblemPattern,
    TextFact,
)
from core.messages import Language, Source
from core.release_check import NO_CHECK, ReleaseCheck, VersionVerdict
from core.signals import Signals

QuestionKind = Literal["problem", "howto", "code"]


@dataclass(frozen=True)
class VersionLookup:
    """A version named without (or beside) a package: its vllm-ascend row, the rows holding it as vLLM, or none."""

    version: str
    row: MatrixRow | None
    vllm_rows: tuple[MatrixRow, ...]
    line_rows: tuple[MatrixRow, ...] = ()  # rows of the same X.Y.Z line (rc/post releases) when none matches exactly


@dataclass(frozen=True)
class DiagnosticReport:
    signals: Signals
    error_codes: tuple[ErrorCode, ...]
    unknown_codes: tuple[str, ...]
    patterns: tuple[ProblemPattern, ...]
    incompatibilities: tuple[Incompatibility, ...]
    version_verdicts: tuple[VersionVerdict, ...]
    chips: tuple[Chip, ...]
    checklist: tuple[ChecklistItem, ...]
    sources: tuple[Source, ...]
    policy: TextFact | None = None
    repos: tuple[str, ...] = ()
    env_vars: tuple[EnvVar, ...] = ()
    version_lookups: tuple[VersionLookup, ...] = ()
    main_branch: MainBranch | None = None
    code_entries: tuple[CodeMapEntry, ...] = ()
    product_facts: tuple[Any, ...] = ()
    flag_notes: tuple[tuple[str, Note, tuple[str, ...]], ...] = ()  # (flag, the note that explains it, its sources)
    signature_patterns: tuple[ProblemPattern, ...] = ()  # patterns matched by a keyword or error code
    kind: QuestionKind = "howto"
    text_low: str = field(default="", repr=False)
    named_chips: tuple[str, ...] = ()  # chips worth a lookup line: named in this message, or not plainly supported
    named_facts: frozenset[str] = frozenset()  # product facts a trigger named (the rest were found by meaning)
    release_check: ReleaseCheck = NO_CHECK  # the environment against its matrix row (core/release_check.py)
    environment: Environment = Environment()  # the thread's environment after this message
    message_environment: Environment = Environment()  # what this message itself stated
    release: str = ""  # the user's vllm-ascend release, when routed there: advice outside its range is left out

    @property
    def is_problem(self) -> bool:
        """The message reports a failure (as opposed to a how-to question)."""
        tokens = self.signals.tokens
        return bool(
            self.error_codes or self.unknown_codes or self.incompatibilities
            or {"error", "oom", "garbled_output"} & tokens
            or any(v.status in ("mismatch", "unknown") for v in self.version_verdicts)
        )

    @property
    def has_lookups(self) -> bool:
        return bool(
            self.error_codes or self.unknown_codes or self.env_vars or self.version_verdicts or self.version_lookups
            or self.main_branch or self.chips or self.product_facts or self.incompatibilities
        )

    @property
    def has_findings(self) -> bool:
        return self.has_lookups or bool(self.patterns or self.code_entries)

    def to_markdown(self, language: Language) -> str:
        """The findings as Markdown with sources, each entry labelled with its products (for the research tool)."""
        # Rendering lives above this module (core/triage/render.py imports the report types).
        from core.triage.render import report_markdown  # noqa: PLC0415

        return report_markdown(self, language)


@dataclass(frozen=True)
class TriageResult:
    text: str  # Markdown
    sources: tuple[Source, ...]
    signals: Signals
    report: DiagnosticReport | None = None
    concluded: bool = False  # a knowledge-base entry matched on a signature or trigger leads (core/confidence.py)
    passages: tuple[Passage, ...] = ()  # the index passages offered (facts and the leading thread taken out)
    environment_line: str = ""  # "read: vllm-ascend 0.9.1, ..." as shown (a model's answer gets it too)
    table_rows: int = 0  # lines from the support tables generated from the clone for a model or feature it named

    @property
    def stated_environment(self) -> Environment:
        """What the message said about the user's stack (for the thread's session: later values win)."""
        return self.report.message_environment if self.report is not None else Environment()
