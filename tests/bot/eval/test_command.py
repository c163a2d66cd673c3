"""`python -m bot eval` through the real command line, offline, on a dataset written by the test.

The commands run in this process (tests/support/cli.py: the same argv, environment and exit status
as a subprocess, without the interpreter start-up each run cost)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from bot.eval.metrics import METRIC_KEYS
from tests.fixtures.git_repos import make_repo
from tests.support.cli import run_bot_here_async

QUESTIONS = [
    {"id": "route-1", "question": "vllm-ascend install on Atlas 800I A2: which CANN version do I need?",
     "expected_repos": ["vllm-project/vllm-ascend"], "needs_clarification": False, "out_of_scope": False,
     "evidence": ["vllm-project/vllm-ascend:docs/source/faqs.md"], "category": "howto", "lang": "en",
     "source_note": "extra fields are ignored"},
    {"id": "route-2", "question": "MindIE-LLM 的 LLM Manager 是怎么调度 prefill 和 decode 的？",
     "expected_repos": ["verylucky01/MindIE-LLM"], "needs_clarification": False, "out_of_scope": False,
     "category": "howto", "lang": "zh"},
    {"id": "clarify-1", "question": "EZ9999 inner error right after the process starts, what now?", "needs_clarification": True,
     "out_of_scope": False, "category": "clarify", "lang": "en"},
    {"id": "oos-1", "question": "What's the weather in Shenzhen tomorrow?", "needs_clarification": False,
     "out_of_scope": True, "category": "oos", "lang": "en"},
    {"id": "bare", "question": "How to bake sourdough bread at home?"},  # only required fields
]


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "REDIS_URL", "GITHUB_", "GITCODE_"))}
    env.update(REPOS_DIR=str(tmp_path / "repos"), DATA_DIR=str(tmp_path / "data"), ANTHROPIC_API_KEY="")
    return env


async def run_eval(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    done = await run_bot_here_async(["eval", *args], env)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def write_jsonl(path: Path, rows: list[object], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    path.write_text("\n".join([*lines[:2], *extra_lines, *lines[2:]]) + "\n", encoding="utf-8")
    return path


async def test_offline_eval_writes_both_reports_with_the_issue_keys(tmp_path):
    make_repo(tmp_path / "repos" / "vllm-project" / "vllm-ascend", {"docs/source/faqs.md": "# FAQ\n" * 50})
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS, extra_lines=("{broken",))
    out = tmp_path / "out"
    code, stdout, stderr = await run_eval(str(dataset), "--offline", "--out", str(out), env=env_for(tmp_path))
    assert code == 0, stderr
    assert "line 3: not valid JSON" in stderr  # the malformed line, by its number, skipped
    assert "eval: 5/5 100%" in stderr  # plain progress lines when stderr is not a terminal

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {"overall", "by_category", "questions"} <= set(report)
    assert tuple(report["overall"]) == METRIC_KEYS
    assert set(report["by_category"]) == {"howto", "clarify", "oos", "uncategorised"}
    assert all(tuple(m) == METRIC_KEYS for m in report["by_category"].values())
    assert report["overall"]["n"] == 5 and report["run"]["malformed_lines"] == 1

    by_id = {q["id"]: q for q in report["questions"]}
    assert by_id["clarify-1"]["bot"]["action"] == "clarified"
    assert by_id["oos-1"]["bot"]["action"] == "oos" and by_id["oos-1"]["verdicts"]["oos"] is True
    assert by_id["route-1"]["asked"]["expected_repos"] == ["vllm-project/vllm-ascend"]
    for q in report["questions"]:
        asked, bot = q["asked"], q["bot"]
        if asked["expected_repos"] and not asked["needs_clarification"] and not asked["out_of_scope"]:
            exact = bot["action"] == "answered" and bot["repos"] == asked["expected_repos"]
            assert q["verdicts"]["routing"] is exact, q
        else:
            assert q["verdicts"]["routing"] is None, q
    routed = [q["verdicts"]["routing"] for q in report["questions"] if q["verdicts"]["routing"] is not None]
    assert report["overall"]["routing_accuracy"] == sum(routed) / len(routed)
    assert report["overall"]["clarify_recall"] == 1.0 and report["overall"]["oos_recall"] == 1.0
    assert report["by_category"]["uncategorised"]["routing_accuracy"] is None  # no expected_repos: skipped
    assert report["overall"]["facts_full"] is None and report["judge"] is None  # no --judge
    assert report["overall"]["evidence_recall_at_k"] is None
    assert "evidence recall not measured" in report["run"]["index"]
    # every link was classified, and the checked ones are in the validity figure
    links = [link for q in report["questions"] for link in q["links"]]
    valid = sum(link["status"] == "valid" for link in links)
    failed = sum(link["status"] == "failed" for link in links)
    assert report["overall"]["citation_validity"] == (valid / (valid + failed) if valid + failed else None)

    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "| overall | 5 |" in markdown and "| clarify | 1 |" in markdown
    assert "routing" in stdout.splitlines()[0] and stdout.count("\n") >= 6  # the printed table


async def test_limit_takes_the_first_questions(tmp_path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    code, _, stderr = await run_eval(str(dataset), "--offline", "--limit", "2", "--out", str(tmp_path / "o"), env=env_for(tmp_path))
    assert code == 0, stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert [q["id"] for q in report["questions"]] == ["route-1", "route-2"]


async def test_missing_empty_or_useless_dataset_exits_2_with_one_clear_line(tmp_path):
    env = env_for(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("nope\n", encoding="utf-8")
    for path, says in ((tmp_path / "absent.jsonl", "no such dataset file"), (empty, "is empty"), (junk, "no valid question")):
        code, out, err = await run_eval(str(path), "--offline", "--out", str(tmp_path / "o"), env=env)
        assert code == 2 and says in err and out == ""
    assert not (tmp_path / "o").exists()


async def test_judge_without_a_model_exits_2(tmp_path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    code, out, err = await run_eval(str(dataset), "--judge", "--out", str(tmp_path / "o"), env=env_for(tmp_path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--judge needs a configured model" in err
    assert not (tmp_path / "o").exists()


async def test_bad_numbers_are_rejected(tmp_path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    code, _, err = await run_eval(str(dataset), "-k", "0", env=env_for(tmp_path))
    assert code == 2 and "must be at least 1" in err


async def test_recall_at_k_uses_the_index_the_conversation_opened(tmp_path):
    faq = "# FAQ\n\n## Which CANN version does vllm-ascend need on Atlas 800I A2?\n\nUse the CANN release of the matrix.\n"
    make_repo(tmp_path / "repos" / "vllm-project" / "vllm-ascend", {"docs/source/faqs.md": faq, "README.md": "# vLLM Ascend\n"})
    env = env_for(tmp_path)
    indexed = await run_bot_here_async(["index", "vllm-project/vllm-ascend"], env)
    assert indexed.returncode == 0, indexed.stderr.decode()
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS[:1] + [{**QUESTIONS[1], "evidence": ["verylucky01/MindIE-LLM:docs/x.md"]}])
    code, _, stderr = await run_eval(str(dataset), "--offline", "-k", "3", "--out", str(tmp_path / "o"), env=env)
    assert code == 0, stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["index"] == "searched with the knowledge index"
    hits = {q["id"]: q["verdicts"]["evidence_hit_at_k"] for q in report["questions"]}
    assert hits == {"route-1": True, "route-2": False}  # the FAQ is indexed; MindIE-LLM is not
    assert report["overall"]["evidence_recall_at_k"] == 0.5


async def test_an_unwritable_report_directory_is_one_clear_line(tmp_path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    code, out, err = await run_eval(str(dataset), "--offline", "--out", str(blocker / "sub"), env=env_for(tmp_path))
    assert code == 2 and "cannot write the reports" in err and "Traceback" not in err
    assert "overall" in out  # the figures were still printed


async def test_variant_unpinned_asks_the_unpinned_text_and_skips_items_without_it(tmp_path):
    pinned = {"id": "rel-1", "question": "On vllm-ascend v0.9.1 which CANN goes with it?",
              "question_unpinned": "On my vllm-ascend release which CANN goes with it?",
              "expected_repos": ["vllm-project/vllm-ascend"], "category": "version", "lang": "en"}
    plain = {"id": "plain-1", "question": "MindIE-LLM 的 LLM Manager 是怎么调度 prefill 和 decode 的？", "lang": "zh"}
    dataset = write_jsonl(tmp_path / "set.jsonl", [pinned, plain])
    out = tmp_path / "o"
    code, _, stderr = await run_eval(str(dataset), "--offline", "--variant", "unpinned", "--out", str(out), env=env_for(tmp_path))
    assert code == 0, stderr
    assert stderr.count("1 questions have no question_unpinned (skipped)") == 1
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["variant"] == "unpinned" and report["run"]["variant_skipped"] == 1
    assert [(q["id"], q["asked"]["question"]) for q in report["questions"]] == [("rel-1", pinned["question_unpinned"])]
    assert "variant unpinned (1 questions without its text skipped)" in (out / "report.md").read_text(encoding="utf-8")

    # the same file without the option asks both questions as written
    code, _, stderr = await run_eval(str(dataset), "--offline", "--out", str(tmp_path / "p"), env=env_for(tmp_path))
    assert code == 0 and "question_unpinned" not in stderr, stderr
    report = json.loads((tmp_path / "p" / "report.json").read_text(encoding="utf-8"))
    assert report["run"]["variant"] == "question" and report["run"]["variant_skipped"] == 0
    assert [q["asked"]["question"] for q in report["questions"]] == [pinned["question"], plain["question"]]


async def test_variant_unpinned_on_a_set_without_the_field_exits_2(tmp_path):
    dataset = write_jsonl(tmp_path / "set.jsonl", QUESTIONS)
    code, out, err = await run_eval(str(dataset), "--offline", "--variant", "unpinned", "--out", str(tmp_path / "o"), env=env_for(tmp_path))
    assert code == 2 and out == "" and "has question_unpinned; nothing was run" in err
    assert not (tmp_path / "o").exists()
    code, _, err = await run_eval(str(dataset), "--variant", "bare", env=env_for(tmp_path))
    assert code == 2 and "invalid choice" in err
