"""What one answer record adds to the report's counters: the one definition both read paths use.

The writer (bot/report/log.py) adds a record's tally to its workspace's day counters in Redis at
record time; a report reads those counters for the days they cover completely and folds the
records themselves only for the rest (bot/report/data.py). Both fold the same `Tally`, so the
two paths cannot count differently:

- `plain`: always added: the reply's combination of kind, language, products and confidence
  (`c|<json>`), the reply count `n`, the model tokens `t`, and `g` for a documentation gap;
- `capped`: the cluster keys, admitted only while the day holds fewer than a capped number of
  fields: `s|<signature>` (every question with an error signature), `gs|<signature>` and
  `gt|<topic word>` (a gap, by what failed or else by its words);
- `latency`: the latency to three significant digits, the key of the day's latency histogram
  (percentiles of a histogram are exact for every reply, unlike a sample, and its size is bounded
  by the digits, not by the replies);
- `identity`: which question a record is, so a cluster's examples are distinct questions.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.report.topics import topic_terms

if TYPE_CHECKING:
    from bot.report.log import AnswerRecord

QUESTION_KINDS = ("answer", "clarify", "out_of_scope", "error")  # a notice (help, rate limit) is no question
_QUESTION_KINDS = frozenset(QUESTION_KINDS)
COMBO, REPLIES, TOKENS, GAPS = "c|", "n", "t", "g"
SIGNATURE, GAP_SIGNATURE, GAP_TOPIC, EXAMPLES = "s|", "gs|", "gt|", "x|"
LATENCY_DIGITS = 3


def is_gap(record: "AnswerRecord") -> bool:
    """A question the bot could not answer well: refused as out of scope, failed, labelled low
    confidence, or (before confidence labels) answered with no source at all."""
    if record.kind in ("out_of_scope", "error"):
        return True
    if record.kind != "answer":
        return False
    return record.confidence == "low" or (not record.confidence and record.sources == 0)


def is_question(record: "AnswerRecord") -> bool:
    return record.kind in _QUESTION_KINDS


def latency_key(latency: float) -> str:
    """The latency to three significant digits (1.23 s, 12.3 s, 0.0456 s): the histogram's key."""
    return f"{max(latency, 0.0):.{LATENCY_DIGITS}g}"


def combo_field(kind: str, language: str, repos: tuple[str, ...], confidence: str) -> str:
    return COMBO + json.dumps([kind, language, list(repos), confidence], ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=4_096)  # the same few combinations every day
def parse_combo(field: str) -> tuple[str, str, tuple[str, ...], str] | None:
    """(kind, language, repos, confidence) of a `c|` field, or None when it is not one."""
    try:
        kind, language, repos, confidence = json.loads(field[len(COMBO):])
    except (TypeError, ValueError):
        return None
    if not all(isinstance(x, str) for x in (kind, language, confidence)) or not isinstance(repos, list):
        return None
    return kind, language, tuple(map(str, repos)), confidence


def identity(record: "AnswerRecord") -> str:
    """A short digest of the question (of its thread when the text is empty): examples are distinct questions."""
    text = record.question or f"\x1f{record.channel}\x1f{record.thread}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Tally:
    plain: dict[str, int]
    capped: tuple[str, ...]
    latency: str
    identity: str


def gap_keys(record: "AnswerRecord") -> tuple[str, ...]:
    """The gap cluster keys of a gap: its signature, or else its topic words."""
    if record.signature:
        return (GAP_SIGNATURE + record.signature,)
    return tuple(GAP_TOPIC + term for term in topic_terms(record.question))


def tally_of(record: "AnswerRecord") -> Tally:
    plain = {combo_field(record.kind, record.language, record.repos, record.confidence): 1, REPLIES: 1,
             TOKENS: record.tokens}
    capped: list[str] = []
    if is_question(record):
        if record.signature:
            capped.append(SIGNATURE + record.signature)
        if is_gap(record):
            plain[GAPS] = 1
            capped.extend(gap_keys(record))
    return Tally(plain, tuple(capped), latency_key(record.latency), identity(record))
