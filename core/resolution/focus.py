"""What a question keys on when it carries a pasted log: the decisive lines, not the whole paste.

A 300-line startup log shares words with every thread in the index; its last exception and its
error codes are what a maintainer reads. `focus()` splits a message into the user's own words, the
decisive error lines and the failing command, and `query` is what routing, retrieval and
resolution matching use instead of the raw text. The answer names the line it keyed on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.resolution.signatures import LINE_CHARS, ErrorLine, decisive, error_lines, strip_log_prefix

PROSE_CHARS = 1200
# A line that is log output rather than the user's words: traceback frames, level/timestamp
# prefixes, rank/pid prefixes, shell prompts, indented code.
_LOG_LINE = re.compile(
    r"^\s{0,8}(?:File \"|Traceback \(|During handling|The above exception|\[rank\d|\(\w{0,40}\s{0,2}pid=|"
    r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b|\d{4}-\d{2}-\d{2}[ T]\d{2}:|\[\d{4}-\d{2}-\d{2}|"
    r"\^{2,}|~{3,}|at [\w.$]{1,80}\(|[\w.]{1,80}(?:Error|Exception):|\s{4})"
)
# The command that failed: what the user ran, so the answer can name the flag or entry point.
_COMMAND = re.compile(
    r"^\s{0,4}(?:\$\s{0,2}|#\s{0,2})?((?:vllm serve|vllm |python3? -m \S{1,80}|python3? \S{1,120}\.py|docker run|"
    r"torchrun|sglang|mindieservice_daemon|msmodelslim|ascend-|npu-smi|pip3? install)[^\n]{0,300})"
)
_FENCE = "```"


@dataclass(frozen=True)
class LogFocus:
    prose: str  # the user's own words
    errors: tuple[ErrorLine, ...]  # the decisive error lines (at most three)
    all_errors: tuple[ErrorLine, ...]  # every distinct error line, for counting signatures
    command: str  # the failing command when one was pasted, else ""
    is_paste: bool  # the message is mostly log output

    @property
    def signatures(self) -> tuple[str, ...]:
        return tuple(e.signature for e in self.errors)

    @property
    def keyed_on(self) -> str:
        """The one line an answer says it keyed on ("" when nothing decisive was found)."""
        return self.errors[0].line if self.errors else ""

    def query(self) -> str:
        """The text to route and search with: the user's words, the decisive lines, the command."""
        if not self.is_paste:
            return self.prose
        parts = [self.prose, *(e.line for e in self.errors), self.command]
        return "\n".join(p for p in parts if p)


def focus(text: str) -> LogFocus:
    lines = text.splitlines()
    prose: list[str] = []
    log_lines = 0
    command = ""
    in_fence = False
    for raw in lines:
        stripped = raw.strip()
        if stripped.startswith(_FENCE):
            in_fence = not in_fence
            continue
        if not stripped:
            continue
        found = _COMMAND.match(strip_log_prefix(stripped))
        if found and not command:
            command = found.group(1).strip()[:LINE_CHARS]
        if in_fence or _LOG_LINE.match(raw):
            log_lines += 1
        else:
            prose.append(stripped)
    errors = error_lines(text)
    is_paste = log_lines >= 3 and log_lines * 2 >= len([ln for ln in lines if ln.strip()]) - 2
    own_words = "\n".join(prose)
    if is_paste:
        # A long paste outside fences reads as prose too; keep only the head, where people write.
        own_words = own_words[:PROSE_CHARS]
    else:
        own_words = text
    return LogFocus(own_words, decisive(errors), errors, command, is_paste)
