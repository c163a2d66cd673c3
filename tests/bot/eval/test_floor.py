"""CI floor: the offline eval on a slice of the public set must not fall under today's figures.

The slice is every STRIDE-th question of eval/eval_set.jsonl (57 of 170, all categories), offline,
no model, no network. Figures on 2026-12-02 (commit b425e51): routing accuracy 0.67,
citation validity 1.00 (every checked link resolved in the clones). The floors sit just under them;
raise them when the bot improves, and re-measure when the set changes.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from bot.cli import local_conversation, terminal_message
from bot.eval.command import check_links
from bot.eval.dataset import load_dataset
from bot.eval.links import RepoBases
from bot.eval.metrics import aggregate
from bot.eval.runner import RunOptions, run_questions
from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
EVAL_SET = ROOT / "eval" / "eval_set.jsonl"
STRIDE = 3
ROUTING_FLOOR = 0.64
CITATION_FLOOR = 0.95


def _repos_dir() -> Path | None:
    for candidate in (os.environ.get("REPOS_DIR"), "/work/repos"):
        if candidate and (Path(candidate) / "vllm-project" / "vllm-ascend" / ".git").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not EVAL_SET.exists():
        pytest.skip("eval/eval_set.jsonl is not in this checkout")
    repos = _repos_dir()
    data_dir = tmp_path_factory.mktemp("eval-floor")
    settings = Settings(_env_file=None, anthropic_api_key=None, redis_url=None, data_dir=data_dir,  # type: ignore[call-arg]
                        repos_dir=repos or data_dir / "no-clones")
    items, _ = load_dataset(EVAL_SET)
    conversation, _ = local_conversation(settings, offline=True)
    bases = RepoBases(settings.repo_urls)
    outcome = asyncio.run(run_questions(conversation, items[::STRIDE], terminal_message, options=RunOptions(), bases=bases))
    check_links(outcome.results, settings, bases)
    return {"metrics": aggregate(outcome.results, judged=False), "results": outcome.results, "clones": repos is not None,
            "expected_n": len(items[::STRIDE])}


def test_routing_accuracy_stays_above_the_floor(offline_run):
    metrics = offline_run["metrics"]
    assert metrics["n"] == offline_run["expected_n"]
    assert not [r.id for r in offline_run["results"] if r.error], "questions failed inside the bot"
    assert metrics["routing_accuracy"] is not None and metrics["routing_accuracy"] >= ROUTING_FLOOR, metrics


def test_citation_validity_stays_above_the_floor(offline_run):
    if not offline_run["clones"]:
        pytest.skip("no clones under REPOS_DIR: permalinks cannot be resolved here")
    failed = [(r.id, link["url"], link["reason"]) for r in offline_run["results"] for link in r.links if link["status"] == "failed"]
    validity = offline_run["metrics"]["citation_validity"]
    assert validity is not None and validity >= CITATION_FLOOR, failed
