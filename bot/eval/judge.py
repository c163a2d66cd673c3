"""Model-graded facts: each expected fact full/partial/missing, plus the wrong statements.

The rubric is the fixed prompt in eval/judge_prompt.md (sent whole as the system prompt, its hash
written in the report). A reply that is not the JSON the prompt asks for becomes a `judge_error`
for that question, never a crash and never a guessed grade.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.eval.metrics import FactGrade, JudgeVerdict
from core.research.model import Message, ModelClient, ModelUnavailable, TextBlock, Usage

PROMPT_PATH = Path(__file__).resolve().parents[2] / "eval" / "judge_prompt.md"
ANSWER_MAX_CHARS = 24_000  # a judge sees what a user would read; longer answers are cut, with a note
_GRADES: dict[str, FactGrade] = {"full": "full", "partial": "partial", "missing": "missing"}
_TAGS = {"wrong_product", "literal_example", "wrong_diagnosis", "contradicting_command", "refusal"}


@dataclass(frozen=True)
class JudgeConfig:
    provider: str
    model: str
    max_tokens: int
    prompt_path: str
    prompt_sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "tools": "none",
            "prompt": self.prompt_path,
            "prompt_sha256": self.prompt_sha256,
        }


@dataclass(frozen=True)
class Grading:
    verdict: JudgeVerdict | None
    error: str
    usage: Usage


class JudgeReplyError(ValueError):
    pass


def load_prompt(path: Path = PROMPT_PATH) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def judge_request(question: str, repos: tuple[str, ...], facts: tuple[str, ...], answer: str, sources: tuple[str, ...]) -> str:
    """The user turn of one judging request. Delimiters make the untrusted answer's extent plain."""
    shown = answer if len(answer) <= ANSWER_MAX_CHARS else answer[:ANSWER_MAX_CHARS] + "\n[answer cut for judging]"
    lines = [
        "QUESTION:",
        "<<<",
        question,
        ">>>",
        "REPOSITORIES THE QUESTION IS ABOUT: " + (", ".join(repos) if repos else "(not given)"),
        f"EXPECTED FACTS ({len(facts)}; grade each, in this order):",
        *(f"{i}. {fact}" for i, fact in enumerate(facts, start=1)),
        "BOT ANSWER (untrusted text):",
        "<<<",
        shown,
        ">>>",
        "SOURCES LISTED WITH THE ANSWER:",
        *([f"- {url}" for url in sources] or ["(none)"]),
    ]
    return "\n".join(lines)


def parse_verdict(reply: str, expected_facts: int) -> JudgeVerdict:
    """The judge's JSON reply, checked against the format the prompt asks for."""
    body = _without_fence(reply.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise JudgeReplyError("no JSON object in the reply")
    try:
        data = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeReplyError(f"invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise JudgeReplyError("reply is not a JSON object")
    raw_facts = data.get("facts")
    if not isinstance(raw_facts, list) or len(raw_facts) != expected_facts:
        got = len(raw_facts) if isinstance(raw_facts, list) else "no"
        raise JudgeReplyError(f"expected {expected_facts} fact grades, got {got}")
    facts: list[FactGrade] = []
    for grade in raw_facts:
        if not isinstance(grade, str) or grade.strip().lower() not in _GRADES:
            raise JudgeReplyError(f"unknown fact grade {grade!r}")
        facts.append(_GRADES[grade.strip().lower()])
    raw_wrong = data.get("wrong", [])
    if not isinstance(raw_wrong, list):
        raise JudgeReplyError("'wrong' is not a list")
    wrong: list[dict[str, str]] = []
    for entry in raw_wrong:
        if isinstance(entry, dict):
            tag = str(entry.get("tag", "")).strip().lower()
            wrong.append({"tag": tag if tag in _TAGS else "other", "statement": str(entry.get("statement", ""))[:500]})
        elif isinstance(entry, str):
            wrong.append({"tag": "other", "statement": entry[:500]})
        else:
            raise JudgeReplyError("an entry of 'wrong' is neither an object nor a string")
    return JudgeVerdict(
        facts=tuple(facts),
        wrong=tuple(wrong),
        usefulness=str(data.get("usefulness", ""))[:40],
        why=str(data.get("why", ""))[:500],
    )


def _without_fence(body: str) -> str:
    """A reply wrapped in a ```json fence despite the prompt; string operations, no regex."""
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
    if body.endswith("```"):
        body = body[:-3]
    return body.strip()


class Judge:
    def __init__(self, client: ModelClient, config: JudgeConfig, prompt: str) -> None:
        self._client = client
        self.config = config
        self._prompt = prompt

    async def grade(
        self, question: str, repos: tuple[str, ...], facts: tuple[str, ...], answer: str, sources: tuple[str, ...]
    ) -> Grading:
        request = judge_request(question, repos, facts, answer, sources)
        try:
            reply = await self._client.complete(
                system=self._prompt, tools=(), messages=(Message("user", (TextBlock(request),)),)
            )
        except ModelUnavailable as exc:
            return Grading(None, f"judge model unavailable: {exc}", Usage())
        try:
            return Grading(parse_verdict(reply.text, len(facts)), "", reply.usage)
        except JudgeReplyError as exc:
            return Grading(None, f"malformed judge reply: {exc}", reply.usage)

    async def aclose(self) -> None:
        await self._client.aclose()


def build_judge(settings: Any) -> Judge:
    """The judge on the configured model (the research agent's provider settings)."""
    from core.research import model_client  # noqa: PLC0415

    prompt, digest = load_prompt()
    client = model_client(settings)
    try:
        shown_path = str(PROMPT_PATH.relative_to(Path.cwd()))
    except ValueError:
        shown_path = str(PROMPT_PATH)
    if settings.resolved_model_provider == "openai":  # the recorded judge names the provider it really used
        config = JudgeConfig("openai", settings.openai_model or "(first listed)", settings.openai_max_tokens, shown_path, digest)
    else:
        config = JudgeConfig("anthropic", settings.anthropic_model, settings.anthropic_max_tokens, shown_path, digest)
    return Judge(client, config, prompt)
