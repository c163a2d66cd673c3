"""Error signatures: the decisive error lines of a text, normalised so two reports of one failure meet.

A pasted log says exactly what broke in one or two lines: the last exception of a traceback
(`AttributeError: module 'numpy' has no attribute 'float'`), a CANN/ACL/HCCL code (`EZ9999`,
`error code 507015`), a fatal line (`Segmentation fault`). The signature keeps the exception type
and message but drops what differs between two machines: paths, addresses, hex, numbers, long
quoted values. The same normalisation runs on issue threads (index time) and on questions.

Every pattern is bounded and runs on one clipped line at a time, so the cost is linear in the
input whatever it contains.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

LINE_CHARS = 400  # a longer line is clipped before matching: the type and message come first
MAX_LINES = 4000  # a paste longer than this is read at its head and tail only
SIGNATURE_CHARS = 140

ErrorKind = Literal["exception", "code", "fatal"]


@dataclass(frozen=True)
class ErrorLine:
    line: str  # the line as written, without log prefixes, clipped
    signature: str  # normalised: what matching keys on
    kind: ErrorKind


# `[rank0]:`, `(EngineCore_DP0 pid=123)`, `ERROR 05-01 10:00:00 [file.py:12]`, `2025-01-01 10:00:00,123 -`
_PREFIX = re.compile(
    r"^(?:\s{0,8}(?:\[rank\d{1,5}\]:|\((?:[A-Za-z_]{1,40}(?:\s{1,3}|_))?(?:[A-Za-z]{1,20}\d{0,4}\s{1,3})?pid=\d{1,9}\)"
    r"|(?:INFO|WARNING|WARN|ERROR|CRITICAL|DEBUG|FATAL)\s{1,3}(?:\d{2}-\d{2}\s\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)?\s{0,3}(?:\[[^\]\n]{0,80}\])?"
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\s{0,3}-?|\[\d{4}-\d{2}-\d{2}[^\]\n]{0,40}\]|\[[A-Z]{3,8}\]|>>>|\$|#)\s{0,4}){1,4}"
)
# A dotted exception type ending in Error/Exception/…, then ": message" (or nothing after it).
_EXCEPTION = re.compile(
    r"(?<![A-Za-z0-9_.])((?:[A-Za-z_][A-Za-z0-9_]{0,40}\.){0,5}[A-Za-z][A-Za-z0-9_]{0,50}"
    r"(?:Error|Exception|Exit|Interrupt|Fault|Failure|NotFound|Unavailable))(?![A-Za-z0-9_])(?::\s{0,3}([^`\n]{1,300})|\(['\"]([^`\n]{1,300}))?"
)
# Terminal colours survive copy and paste, as escape bytes or as the caret form "^[[36m".
_ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;]{0,20}[A-Za-z]")
# CANN error codes (EZ9999, EE1001, EI0002, EL0004…); ACL/HCCL numeric codes next to the words
# that introduce them ("error code 507015", "ret=507035", "aclError 107002").
_CANN_CODE = re.compile(r"(?<![A-Za-z0-9])(E[A-Z0-9][0-9]{4}|ERR[0-9]{5})(?![A-Za-z0-9])")
_NUMERIC_CODE = re.compile(
    r"(?i)(?:error[ _]?code|err[ _]?code|errno|ret(?:urn)?[ _]?code|ret|acl[ _]?error|aclerror|hccl[ _]?error|error)"
    r"\s{0,3}(?:is|=|:|：)?\s{0,3}\[?([1-5][0-9]{5})(?![0-9])"
)
_FATAL = re.compile(
    r"(?i)(segmentation fault|core dumped|killed by signal|out of memory|fatal python error|illegal memory access"
    r"|npu out of memory|device-side assert|bus error|floating point exception|watchdog timeout|timed out)"
)
# What differs between two machines and is not the failure.
_QUOTED_PATH = re.compile(r"(['\"])(?:[A-Za-z]:)?[/\\][^'\"\n]{0,300}\1")
_PATH = re.compile(r"(?<![A-Za-z0-9_])(?:~|\.{1,2})?/[A-Za-z0-9_.\-+@]{1,80}(?:/[A-Za-z0-9_.\-+@]{1,80}){0,30}")
_HEX = re.compile(r"\b0x[0-9a-fA-F]{1,32}\b|\b[0-9a-f]{12,64}\b")
_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])\d{1,30}(?:\.\d{1,30}){0,4}")  # Ascend910, float64 keep their digits
_LONG_QUOTE = re.compile(r"(['\"])[^'\"\n]{41,300}\1")
_SPACES = re.compile(r"\s{1,400}")


def strip_log_prefix(line: str) -> str:
    """The line without rank, process, level and timestamp prefixes."""
    match = _PREFIX.match(line)
    return line[match.end():] if match else line


def normalise(message: str) -> str:
    """A message with paths, hex, numbers and long quoted values replaced by placeholders."""
    text = message[:LINE_CHARS]
    text = _QUOTED_PATH.sub("<path>", text)
    text = _PATH.sub("<path>", text)
    text = _HEX.sub("<hex>", text)
    text = _LONG_QUOTE.sub("<text>", text)
    text = _NUMBER.sub("<n>", text)
    text = _SPACES.sub(" ", text).strip().rstrip(".:;,")
    return text[:SIGNATURE_CHARS]


def _lines(text: str) -> list[str]:
    lines = text.splitlines()
    if len(lines) > MAX_LINES:  # the head has the command, the tail the final exception
        lines = lines[: MAX_LINES // 4] + lines[-(MAX_LINES * 3 // 4):]
    return lines


def error_lines(text: str) -> tuple[ErrorLine, ...]:
    """Every error line of `text` in order, one per distinct signature (the later one kept)."""
    found: dict[str, ErrorLine] = {}
    for raw in _lines(text):
        line = strip_log_prefix(_ANSI.sub("", raw[: LINE_CHARS * 2]).strip()[:LINE_CHARS]).strip().strip("`").strip()
        if not line or line.startswith(("File \"", "at ", "from ", "import ", "raise ")):
            continue
        for item in _errors_in(line):
            found.pop(item.signature, None)
            found[item.signature] = item
    return tuple(found.values())


def _errors_in(line: str) -> list[ErrorLine]:
    out: list[ErrorLine] = []
    exc = _EXCEPTION.search(line)
    if exc is not None:
        kind, message = exc.group(1), (exc.group(2) or (exc.group(3) or "").rstrip(")").rstrip("'\""))
        short_kind = kind.rsplit(".", 1)[-1]
        signature = f"{short_kind}: {normalise(message)}" if message.strip() else short_kind
        out.append(ErrorLine(line[exc.start():][:LINE_CHARS].strip(), signature, "exception"))
    for code in _CANN_CODE.finditer(line):
        out.append(ErrorLine(line[:LINE_CHARS], code.group(1), "code"))
    for code in _NUMERIC_CODE.finditer(line):
        out.append(ErrorLine(line[:LINE_CHARS], f"code {code.group(1)}", "code"))
    if not out:
        fatal = _FATAL.search(line)
        if fatal is not None:
            out.append(ErrorLine(line[:LINE_CHARS], fatal.group(1).lower(), "fatal"))
    return out


def decisive(lines: tuple[ErrorLine, ...], limit: int = 3) -> tuple[ErrorLine, ...]:
    """The lines an answer keys on: the last exception (a traceback ends with the cause users
    see; earlier ones are usually "during handling of …") and the error codes, at most `limit`."""
    exceptions = [e for e in lines if e.kind == "exception"]
    codes = [e for e in lines if e.kind == "code"]
    fatal = [e for e in lines if e.kind == "fatal"]
    chosen: list[ErrorLine] = []
    if exceptions:
        chosen.append(_most_specific(exceptions))
    chosen += codes[-(limit - len(chosen)):] if codes and len(chosen) < limit else []
    if not chosen and fatal:
        chosen.append(fatal[-1])
    return tuple(chosen[:limit])


_GENERIC = frozenset({"RuntimeError", "Exception", "Error", "SystemExit", "KeyboardInterrupt"})


def _most_specific(exceptions: list[ErrorLine]) -> ErrorLine:
    """The last exception, unless it is a bare wrapper ("RuntimeError: Engine core initialization
    failed. See root cause above") and a more specific one came before it."""
    last = exceptions[-1]
    kind = last.signature.split(":", 1)[0]
    if kind in _GENERIC and ("above" in last.line.lower() or "see root cause" in last.line.lower() or ":" not in last.signature):
        for earlier in reversed(exceptions[:-1]):
            if earlier.signature.split(":", 1)[0] not in _GENERIC:
                return earlier
    return last
