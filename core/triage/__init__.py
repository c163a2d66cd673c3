"""The offline answer (core/triage/answer.py) and its wording (core/triage/texts.py)."""
from core.triage.answer import DiagnosticReport, TriageResult, diagnose, passage_excerpt, shared_lookups, triage, triage_details

__all__ = ["DiagnosticReport", "TriageResult", "diagnose", "passage_excerpt", "shared_lookups", "triage", "triage_details"]
