"""A damaged or foreign index is refused with one clear line, and the bot answers without it:
truncated files (before load and under a live mapping, where the old reader died of SIGBUS), a
world-writable INDEX_DIR or generation, files owned by another user."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.index.store import IndexUnusable, current_generation
from tests.fixtures.index_repos import make_index_repos

ASCEND = "vllm-project/vllm-ascend"
QUESTION = "vllm-ascend fails at start: ImportError libfoo.so: cannot open shared object file"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    make_index_repos(tmp_path / "repos")
    build_index(tmp_path / "index", [RepoSource(ASCEND, tmp_path / "repos" / ASCEND, "https://github.com/vllm-project/vllm-ascend")])
    return tmp_path / "index"


def generation(index_dir: Path) -> Path:
    name = current_generation(index_dir)
    assert name is not None
    return index_dir / name


def refused(index_dir: Path, caplog: pytest.LogCaptureFixture) -> str:
    """The one warning line of a refused index (and that it was refused)."""
    with caplog.at_level(logging.WARNING, logger="core.index.search"):
        assert KnowledgeIndex.open_if_present(index_dir) is None
    lines = [r.getMessage() for r in caplog.records if r.name == "core.index.search"]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    return lines[0]


def test_an_intact_index_still_loads_and_searches(index_dir: Path) -> None:
    assert KnowledgeIndex(index_dir).search(QUESTION, [ASCEND], k=1)[0].path == "docs/source/faqs.md"


@pytest.mark.parametrize(("name", "keep"), [("text.bin", 100), ("meta.bin", 0), ("weights.npy", 200), ("docs.npy", 0)])
def test_a_file_truncated_before_load_is_refused_with_its_name(index_dir: Path, name: str, keep: int,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    path = generation(index_dir) / name
    os.truncate(path, keep)
    line = refused(index_dir, caplog)
    assert name in line and "rebuild the index" in line


def test_a_file_truncated_under_a_live_mapping_does_not_kill_the_worker(index_dir: Path) -> None:
    """In a child process, because the old reader died of SIGBUS: the answer comes without passages."""
    script = textwrap.dedent(f"""
        import asyncio, os, sys
        from pathlib import Path
        from core.conversation import Conversation
        from core.index.search import KnowledgeIndex
        from core.index.store import IndexUnusable
        from core.messages import InboundMessage
        from core.session import MemorySessionStore
        index_dir = Path(sys.argv[1])
        index = KnowledgeIndex(index_dir)
        root = index_dir / index.generation.name
        permalink = index.search({QUESTION!r}, [], k=1)[0].url  # what the answer would cite from the index
        for name in ("docs.npy", "weights.npy", "text.bin", "meta.bin"):
            os.truncate(root / name, 0)
        try:
            index.search({QUESTION!r}, [], k=3)
        except IndexUnusable as exc:
            print("refused:", exc)
        try:  # the passage texts themselves: read with pread, a short read is an error, not a signal
            index.generation.texts[0]
        except IndexUnusable as exc:
            print("text refused:", exc)
        message = InboundMessage("terminal", "w", "c", "t", "u", {QUESTION!r}, "m1", "m1", True)
        reply = asyncio.run(Conversation(MemorySessionStore(), retriever=index).handle(message))
        print("reply:", reply.kind.name, len(reply.text) > 0, permalink in [s.url for s in reply.sources])
    """)
    done = subprocess.run([sys.executable, "-c", script, str(index_dir)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # -7 (SIGBUS) before
    assert "refused:" in done.stdout and "is truncated" in done.stdout
    assert "text refused:" in done.stdout and "text.bin is truncated" in done.stdout
    assert "reply: ANSWER True False" in done.stdout, done.stdout


@pytest.mark.parametrize("where", ["index_dir", "generation", "file"])
def test_a_world_writable_index_is_refused(index_dir: Path, where: str, caplog: pytest.LogCaptureFixture) -> None:
    target = {"index_dir": index_dir, "generation": generation(index_dir),
              "file": generation(index_dir) / "text.bin"}[where]
    os.chmod(target, target.stat().st_mode | 0o002)
    line = refused(index_dir, caplog)
    assert "world-writable" in line and str(target) in line


def test_files_owned_by_another_user_are_refused(index_dir: Path, caplog: pytest.LogCaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = generation(index_dir) / "vocab.json"
    if os.geteuid() == 0:
        os.chown(target, 4242, -1)  # root can hand a file to someone else
    else:  # a non-root run cannot: pretend to be a different user, so our own files are foreign
        real = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: real + 1)
        target = index_dir
    line = refused(index_dir, caplog)
    assert "owned by uid" in line and str(target) in line
