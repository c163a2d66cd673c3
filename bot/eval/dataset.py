"""Reading an eval set: one JSON object per line, validated at the edge.

A malformed line is reported with its line number and skipped, so one typo does not cost a whole
run; a file with nothing usable is an error the command turns into exit 2.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.research.repos import find_repo

UNCATEGORISED = "uncategorised"

# Which text of each item is asked: `question` as written, or `question_unpinned` (the same question
# with the user's versions taken out), so one set measures what stating the release is worth.
Variant = Literal["question", "unpinned"]
VARIANTS: tuple[Variant, ...] = ("question", "unpinned")


def _normalised(text: str) -> str:
    return " ".join(text.casefold().split())


class EvalItem(BaseModel):
    """One question. Optional fields left out (None) skip the metrics that need them."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=False)

    id: str = Field(min_length=1, max_length=200)
    question: str = Field(min_length=1, max_length=200_000)
    question_unpinned: str | None = Field(default=None, min_length=1, max_length=200_000)
    expected_repos: tuple[str, ...] | None = None
    needs_clarification: bool | None = None
    out_of_scope: bool | None = None
    evidence: tuple[str, ...] | None = None
    answer_facts: tuple[str, ...] | None = None
    category: str = UNCATEGORISED
    lang: Literal["zh", "en"] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("question")
    @classmethod
    def _question_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        return value

    @model_validator(mode="after")
    def _unpinned_is_another_wording(self) -> EvalItem:
        # An unpinned text equal to the question would make the two runs the same run under two names.
        if self.question_unpinned is not None:
            if not self.question_unpinned.strip():
                raise ValueError("question_unpinned is blank")
            if _normalised(self.question_unpinned) == _normalised(self.question):
                raise ValueError("question_unpinned repeats question")
        return self

    @field_validator("expected_repos")
    @classmethod
    def _canonical_repos(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        names = []
        for name in value:
            repo = find_repo(name)
            if repo is None:
                raise ValueError(f"unknown repository {name!r} in expected_repos")
            names.append(repo.name)
        return tuple(dict.fromkeys(names))

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, value: object) -> object:
        return UNCATEGORISED if value is None or (isinstance(value, str) and not value.strip()) else value


@dataclass(frozen=True)
class LineProblem:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class DatasetError(Exception):
    """The file cannot be used at all (missing, unreadable, or no valid question)."""


def parse_lines(lines: list[str]) -> tuple[list[EvalItem], list[LineProblem]]:
    items: list[EvalItem] = []
    problems: list[LineProblem] = []
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(LineProblem(number, f"not valid JSON ({exc.msg})"))
            continue
        if not isinstance(data, dict):
            problems.append(LineProblem(number, "not a JSON object"))
            continue
        try:
            item = EvalItem.model_validate(data)
        except ValidationError as exc:
            problems.append(LineProblem(number, _first_error(exc)))
            continue
        if item.id in seen:
            problems.append(LineProblem(number, f"duplicate id {item.id!r}"))
            continue
        seen.add(item.id)
        items.append(item)
    return items, problems


def load_dataset(path: Path) -> tuple[list[EvalItem], list[LineProblem]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"no such dataset file: {path}") from None
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = raw.decode("utf-8", errors="replace").splitlines()
    items, problems = parse_lines(lines)
    if not items:
        why = "is empty" if not any(line.strip() for line in lines) else "has no valid question"
        raise DatasetError(f"{path} {why}")
    return items, problems


def select_variant(items: list[EvalItem], variant: Variant) -> tuple[list[EvalItem], list[str]]:
    """The items to run, each carrying the variant's text as its `question`, and the ids of items
    that have no such text (left out). Every later step (the chat message, the index search, the
    judge, the report) then reads the one text that was asked."""
    if variant == "question":
        return list(items), []
    chosen: list[EvalItem] = []
    missing: list[str] = []
    for item in items:
        if item.question_unpinned is None:
            missing.append(item.id)
        else:
            chosen.append(item.model_copy(update={"question": item.question_unpinned, "question_unpinned": None}))
    return chosen, missing


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "line"
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}"
