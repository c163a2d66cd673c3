"""`eval --judge` end to end: offline answers graded by the real anthropic SDK talking to the fake
Messages API on loopback, which returns scripted verdicts the report must count."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic, Turn, text
from tests.bot.eval.test_command import env_for, run_eval, write_jsonl

CANARY = "sk-ant-canary-eval-0987654321"
QUESTIONS = [
    {"id": "a", "question": "vllm-ascend 0.9.1 on Atlas 800I A2: ACL error 507015 at startup",
     "expected_repos": ["vllm-project/vllm-ascend"], "answer_facts": ["fact A1", "fact A2", "fact A3"],
     "category": "troubleshooting", "lang": "en"},
    {"id": "b", "question": "msModelSlim W8A8 quantization of Qwen2.5-7B: how do I run it?",
     "expected_repos": ["verylucky01/MindStudio-ModelSlim"], "answer_facts": ["fact B1", "fact B2"],
     "category": "howto", "lang": "en"},
    {"id": "c", "question": "MindIE-LLM config.json: where is maxSeqLen set?",
     "expected_repos": ["verylucky01/MindIE-LLM"], "answer_facts": ["fact C1"], "category": "howto", "lang": "en"},
    {"id": "d", "question": "What's the weather in Shenzhen tomorrow?", "out_of_scope": True, "category": "oos"},
]
VERDICTS = {
    "fact A1": {"facts": ["full", "partial", "missing"], "usefulness": "useful", "why": "w",
                "wrong": [{"tag": "wrong_product", "statement": "a vllm flag for MindIE"}]},
    "fact B1": {"facts": ["full", "full"], "wrong": [], "usefulness": "useful", "why": "w"},
}


def judge_script(body: dict[str, Any]) -> Turn:
    request = body["messages"][0]["content"][0]["text"]
    for marker, verdict in VERDICTS.items():
        if marker in request:
            return Turn([text(json.dumps(verdict))])
    return Turn([text("I think the answer is quite good overall.")])  # not the JSON the prompt asks for


async def test_judge_grades_each_fact_and_records_a_malformed_reply_as_judge_error(tmp_path: Path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    async with FakeAnthropic(judge_script) as model:
        env = env_for(tmp_path) | {"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_MODEL": "judge-x"}
        code, out, err = await run_eval(str(dataset), "--offline", "--judge", "--out", str(tmp_path / "o"), env=env)
    assert code == 0, err
    assert model.calls == 3  # one judging request per question with answer facts; none for answers (offline)
    assert all(not b.get("tools") for b in model.bodies)
    prompt = (Path(__file__).resolve().parents[3] / "eval" / "judge_prompt.md").read_text(encoding="utf-8")
    assert model.bodies[0]["system"][0]["text"] == prompt
    assert CANARY not in out + err

    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    overall = report["overall"]
    # graded facts: A = full, partial, missing; B = full, full; C is a judge error and not counted
    assert overall["facts_full"] == 3 / 5 and overall["facts_partial"] == 1 / 5 and overall["facts_missing"] == 1 / 5
    assert overall["wrong_statements"] == 1
    assert report["by_category"]["howto"]["facts_full"] == 1.0
    assert report["by_category"]["oos"]["facts_full"] is None  # nothing graded there
    by_id = {q["id"]: q for q in report["questions"]}
    assert by_id["a"]["verdicts"]["facts"] == ["full", "partial", "missing"]
    assert by_id["c"]["verdicts"]["judge_error"].startswith("malformed judge reply")
    assert by_id["c"]["verdicts"]["facts"] is None
    judge = report["judge"]
    assert judge["model"] == "judge-x" and judge["provider"] == "anthropic" and len(judge["prompt_sha256"]) == 64
    assert judge["graded"] == 2 and [e["id"] for e in judge["errors"]] == ["c"]
    assert judge["wrong_tags"] == {"wrong_product": 1}
    markdown = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "judge-x" in markdown and "## Judge errors" in markdown


async def test_token_budget_stops_starting_questions_and_the_report_says_how_many(tmp_path: Path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    async with FakeAnthropic(judge_script) as model:
        env = env_for(tmp_path) | {"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": model.url}
        code, out, err = await run_eval(str(dataset), "--offline", "--judge", "--max-tokens-total", "1",
                                        "--out", str(tmp_path / "o"), env=env)
    assert code == 0, err
    assert model.calls == 1  # the first question's judging spent the budget
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["questions_skipped"] == 3 and report["run"]["skipped_ids"] == ["b", "c", "d"]
    assert report["overall"]["n"] == 1 and report["run"]["tokens_spent"] > 1
    assert "3 questions skipped" in out and "token budget spent" in err


async def test_model_answers_report_their_tokens_and_tool_calls(tmp_path: Path):
    """Not offline: each answer is researched through the fake model (one tool call, then the
    answer); the per-answer cost in the report comes from the research outcomes."""
    questions = [q for q in QUESTIONS if q["id"] in ("a", "b")]
    dataset = write_jsonl(tmp_path / "set.jsonl", questions)
    research_usage: list[dict[str, int]] = []

    def script(body: dict[str, Any]) -> Turn:
        if not body.get("tools"):
            return judge_script(body)
        already_used_tool = any(
            isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
            for m in body["messages"]
        )
        if already_used_tool:
            return Turn([text("In vllm-ascend, check the version matrix first.")])
        return Turn([{"type": "tool_use", "name": "lookup_diagnostics", "input": {"text": "507015"}}])

    async with FakeAnthropic(script) as model:
        env = env_for(tmp_path) | {"ANTHROPIC_API_KEY": CANARY, "ANTHROPIC_BASE_URL": model.url,
                                   "DEEPWIKI_MCP_URL": "http://127.0.0.1:9/mcp", "GITHUB_API_URL": "http://127.0.0.1:9",
                                   "GITCODE_API_URL": "http://127.0.0.1:9"}
        code, out, err = await run_eval(str(dataset), "--judge", "--concurrency", "2", "--out", str(tmp_path / "o"), env=env)
        research_usage = [u for b, u in zip(model.bodies, model.usages) if b.get("tools")]
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["mode"].startswith("model")
    assert len(research_usage) == 4  # two model turns per answer
    cost = report["cost"]["overall"]
    assert cost["answers"] == 2 and cost["tool_calls_per_answer"] == 1.0
    total_in = sum(u["input_tokens"] + u["cache_creation_input_tokens"] for u in research_usage)
    total_out = sum(u["output_tokens"] for u in research_usage)
    total_cached = sum(u["cache_read_input_tokens"] for u in research_usage)
    assert cost["tokens_in_per_answer"] == round(total_in / 2, 1) and cost["tokens_out_per_answer"] == round(total_out / 2, 1)
    assert cost["tokens_cached_per_answer"] == round(total_cached / 2, 1)
    per_question = sum(q["bot"]["tokens"]["input"] for q in report["questions"])
    assert per_question == total_in
    assert report["overall"]["facts_full"] == 3 / 5  # the judge still grades both answers
