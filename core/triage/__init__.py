"""The offline answer: a quick, product-aware diagnostic from the built-in knowledge base.

- report.py: the result types (VersionLookup, DiagnosticReport, TriageResult);
- matching.py: which knowledge-base entries a message names (patterns, checklist, code map, flags, facts);
- diagnosis.py: `diagnose`, the message against the knowledge base for the routed products;
- advice.py: which steps and commands apply to a report;
- lookups.py: the "what the knowledge base says" lines (version verdicts, codes, variables, chips...);
- conclusion.py: the signature that explains a problem report, with its steps;
- render.py: the report's Markdown blocks (research-tool findings, steps, code locations, docs);
- passages.py: the knowledge index's passages, excerpted within the answer's budget;
- answer.py: `triage`, `shared_lookups` and `triage_details`, the answers themselves;
- texts.py: the fixed wording, in English and Chinese.

Pure: no I/O besides the (cached) knowledge base and product facts; the user's text is never
echoed back, only values extracted by strict patterns. See docs/triage.md.
"""
from core.triage.answer import shared_lookups, triage, triage_details
from core.triage.diagnosis import diagnose
from core.triage.passages import passage_excerpt
from core.triage.report import DiagnosticReport, TriageResult

__all__ = ["DiagnosticReport", "TriageResult", "diagnose", "passage_excerpt", "shared_lookups", "triage", "triage_details"]
