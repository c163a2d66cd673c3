"""Which steps and commands of the knowledge base apply to a report: a routed product, the `when`
trigger in the text, the user's release in range, and not a setting the report already tried."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Iterable

from core.knowledge.schema import Command, Note
from core.release_check import norm_version
from core.releases.ranges import outside
from core.signals import Signals
from core.triage.report import DiagnosticReport

_PLACEHOLDERS = {"<vllm-version>": "vllm", "<vllm-ascend-version>": "vllm-ascend"}


def _triggered(when: Sequence[str], unless: Sequence[str], report: DiagnosticReport) -> bool:
    """Its trigger (if it has one) is in the text, and none of the phrases that call for other advice."""
    return (not when or any(w in report.text_low for w in when)) and not any(u in report.text_low for u in unless)


def _applies(products: Sequence[str], when: Sequence[str], report: DiagnosticReport, unless: Sequence[str] = ()) -> bool:
    """Advice (a step or a command) needs a routed product and, if it has one, its trigger in the text."""
    if not report.repos or not any(p in report.repos for p in products):
        return False
    return _triggered(when, unless, report)


def _notes(notes: Iterable[Note], report: DiagnosticReport) -> list[Note]:
    # The research tool's report has no routed repositories: it shows every product's notes, labelled.
    if not report.repos:
        return [n for n in notes if _triggered(n.when, n.unless, report)]
    return [n for n in notes if _applies(n.products, n.when, report, n.unless) and not outside(n.releases, report.release)]


def _commands(commands: Iterable[Command], report: DiagnosticReport) -> list[str]:
    out = []
    for c in commands:
        if _applies(c.products, c.when, report, c.unless) and not outside(c.releases, report.release) \
                and not (report.is_problem and _already_tried(c.run, report.text_low)):
            out.append(_fill(c.run, report.signals))
    return out


# A setting with its value in a command: "key": "value" in JSON, --flag=value / --flag value, NAME=value.
_SETTING = re.compile(
    r"\"([\w.\-]{1,40})\"\s{0,3}:\s{0,3}\"?([\w.\-]{1,40})"
    r"|(--[a-z][\w\-]{1,50})[= ]([\w.\-]{1,40})(?![\w<])"
    r"|\b([A-Z][A-Z0-9_]{2,60})=([\w.\-]{1,40})"
)
_SPACES_QUOTES = re.compile(r"[\s\"']{1,50}")


def _already_tried(run: str, question_low: str) -> bool:
    """The user's problem report already holds one of the command's settings with the same value
    ("method": "mtp" and then the error): suggesting it again would repeat what fails."""
    asked = _SPACES_QUOTES.sub("", question_low)
    for match in _SETTING.finditer(run):
        key, value = next((k, v) for k, v in zip(match.groups()[::2], match.groups()[1::2]) if k)
        if "<" in value or value.startswith("-"):
            continue  # a placeholder or the next flag, not a value
        if f"{key}:{value}".lower() in asked or f"{key}={value}".lower() in asked or f"{key}{value}".lower() in asked:
            return True
    return False


def _fill(run: str, signals: Signals) -> str:
    """Put the user's own versions into placeholders; unknown values stay as placeholders."""
    for placeholder, package in _PLACEHOLDERS.items():
        if placeholder in run:
            value = signals.version(package)
            if value:
                run = run.replace(placeholder, norm_version(value))
    return run
