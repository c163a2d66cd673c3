"""`python -m bot index` and `python -m bot search` as a user runs them, on fixture clones.

The commands run in this process (tests/support/cli.py: the same argv, environment, stdin and exit
status as a subprocess, without the few seconds of interpreter start-up each of the 13 runs cost)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.index_repos import make_index_repos
from tests.support.cli import run_bot_here

RESULT_KEYS = {"repo", "path", "title", "url", "kind", "start_line", "end_line", "score", "text"}


def run_bot(env: dict[str, str], *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "INDEX_", "REPOS_", "DATA_"))}
    base.pop("REDIS_URL", None)
    base.update(env)
    done = run_bot_here(args, base, stdin)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("index-cli")
    make_index_repos(root / "repos")
    env = {"REPOS_DIR": str(root / "repos"), "DATA_DIR": str(root / "data")}
    done = run_bot(env, "index")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "vllm-project/vllm-ascend" in done.stdout and "units" in done.stdout and "changed" in done.stdout
    return env


def test_index_prints_one_line_per_repository_and_a_rerun_changes_nothing(indexed: dict[str, str]) -> None:
    again = run_bot(indexed, "index", "vllm-project/vllm-ascend")
    assert again.returncode == 0, again.stdout + again.stderr
    line = next(l for l in again.stdout.splitlines() if l.startswith("vllm-project/vllm-ascend"))
    assert "changed     0" in line and "files     4" in line
    assert (Path(indexed["DATA_DIR"]) / "index" / "CURRENT").exists()  # INDEX_DIR defaults to DATA_DIR/index


def test_search_json_shape(indexed: dict[str, str]) -> None:
    done = run_bot(indexed, "search", "--json", "-k", "2", "libfoo.so cannot open shared object file")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == "libfoo.so cannot open shared object file"
    assert 1 <= len(data["results"]) <= 2
    first = data["results"][0]
    assert set(first) == RESULT_KEYS
    assert first["path"] == "docs/source/faqs.md" and first["kind"] == "doc"
    assert "?plain=1#L" in first["url"] and isinstance(first["score"], float) and first["start_line"] <= first["end_line"]


def test_search_stdin_lines_plain_and_json_with_repos(indexed: dict[str, str]) -> None:
    lines = [
        "PLUGIN_VISIBLE_CARDS",
        json.dumps({"query": "请求没有返回", "repos": ["verylucky01/MindIE-LLM"]}, ensure_ascii=False),
        "",
        '{"query": broken',
        json.dumps({"query": "x", "repos": ["nobody/nothing"]}),
    ]
    done = run_bot(indexed, "search", "--json", "-", stdin="\n".join(lines).encode())
    rows = [json.loads(l) for l in done.stdout.splitlines()]
    assert [r["query"] for r in rows[:2]] == ["PLUGIN_VISIBLE_CARDS", "请求没有返回"]
    assert rows[0]["results"][0]["path"] == "plugin/envs.py"
    assert {r["repo"] for r in rows[1]["results"]} == {"verylucky01/MindIE-LLM"}
    assert "not valid JSON" in rows[2]["error"] and "unknown repository" in rows[3]["error"]
    assert done.returncode == 1  # bad lines are reported and make the run fail, good ones are answered


def test_search_text_output_and_no_result_line(indexed: dict[str, str]) -> None:
    done = run_bot(indexed, "search", "--repo", "vllm-project/vllm-ascend", "PLUGIN_VISIBLE_CARDS")
    assert done.returncode == 0 and "plugin/envs.py:3-5" in done.stdout and "https://github.com/" in done.stdout
    none = run_bot(indexed, "search", "zebra quokka pyjamas")
    assert none.returncode == 0 and "no passage clears the relevance threshold" in none.stdout


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (("search", "   "), "empty query", 2),
        (("search", "--repo", "foo/bar", "x"), "unknown repository 'foo/bar'", 2),
        (("search", "--repo", "sgl-project/sglang", "x"), "sgl-project/sglang is not in the index", 2),
        (("search", "-k", "0", "x"), "-k must be between 1 and 50", 2),
        (("index", "foo/bar"), "unknown repository 'foo/bar'", 2),
        (("index", "sgl-project/sglang"), "no clone of sgl-project/sglang", 1),
    ],
)
def test_bad_input_gets_one_clear_line(indexed: dict[str, str], args: tuple[str, ...], message: str, code: int) -> None:
    done = run_bot(indexed, *args)
    assert done.returncode == code
    assert done.stdout.strip().splitlines() == [next(l for l in done.stdout.splitlines() if message in l)]


def test_missing_index(tmp_path: Path) -> None:
    done = run_bot({"INDEX_DIR": str(tmp_path / "none"), "REPOS_DIR": str(tmp_path)}, "search", "anything")
    assert done.returncode == 1 and "no knowledge index" in done.stdout and "python -m bot index" in done.stdout
    empty = run_bot({"INDEX_DIR": str(tmp_path / "none"), "REPOS_DIR": str(tmp_path / "empty")}, "index")
    assert empty.returncode == 1 and "no clones" in empty.stdout
