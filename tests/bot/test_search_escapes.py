"""`python -m bot search` prints index text and queries written by anyone: no terminal escape reaches the terminal.

A hostile document in a clone (or an issue once synced) carries OSC 52 (writes the user's clipboard),
OSC 8 (a link hidden behind innocent text), CSI (clears the screen, moves the cursor) and an 8-bit C1
CSI; a query read from a file carries them too. The command as a user runs it (in this process:
tests/support/cli.py) on a fixture clone.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.bot.test_index_cli import run_bot
from tests.fixtures.git_repos import make_repo

HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b31m\x1b]8;;https://evil.example/\x07docs\x1b]8;;\x07\x07\x08\r"
ESCAPE_OR_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("search-escapes")
    files = {
        "docs/source/zebra.md": (
            f"# Quokka zebra guide {HOSTILE}\n\n"
            f"The quokka zebra setting {HOSTILE} controls the pyjamas cache.\n"
            "Set quokka zebra pyjamas to 4 before starting the server.\n"
        ),
        "README.md": "# Plugin\n\nRuns the engine on NPU cards.\n",
    }
    make_repo(root / "repos" / "vllm-project" / "vllm-ascend", files)
    env = {"REPOS_DIR": str(root / "repos"), "DATA_DIR": str(root / "data")}
    done = run_bot(env, "index")
    assert done.returncode == 0, done.stdout + done.stderr
    return env


def test_text_output_carries_no_escape_from_the_index_or_the_query(hostile_index: dict[str, str]) -> None:
    done = run_bot(hostile_index, "search", "-", stdin=f"quokka zebra pyjamas {HOSTILE}\n".encode())
    assert done.returncode == 0, done.stderr
    assert "docs/source/zebra.md" in done.stdout and "Quokka zebra guide" in done.stdout  # the passage is there
    assert not ESCAPE_OR_CONTROL.search(done.stdout), repr(done.stdout)
    assert "52;c;" not in done.stdout and "evil.example" not in done.stdout  # the sequences went whole


def test_bad_lines_are_echoed_without_escapes(hostile_index: dict[str, str]) -> None:
    done = run_bot(hostile_index, "search", "-", stdin=f'{{"query": "{HOSTILE[:9]}\n'.encode() + b"\x9b2J{broken\n")
    assert done.returncode == 1 and "error" in done.stdout
    assert not ESCAPE_OR_CONTROL.search(done.stdout), repr(done.stdout)


def test_json_output_escapes_every_control_and_keeps_the_data(hostile_index: dict[str, str]) -> None:
    done = run_bot(hostile_index, "search", "--json", "-k", "1", f"quokka zebra pyjamas {HOSTILE}")
    assert done.returncode == 0, done.stderr
    assert not ESCAPE_OR_CONTROL.search(done.stdout), repr(done.stdout)
    data = json.loads(done.stdout)
    assert data["query"] == f"quokka zebra pyjamas {HOSTILE}".strip()  # escaped, not lost: scripts get the exact text
    assert data["results"][0]["path"] == "docs/source/zebra.md"
