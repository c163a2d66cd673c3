"""`python -m bot import FILE.jsonl [--repo owner/name]`: thread dumps into DATA_DIR/issues.

Small hand-written lines of each accepted shape, and the bad input a dump can hold. The file is
untrusted: every problem is a count in the one summary line, never a traceback.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bot.import_command as import_command
from bot.import_command import resolve_repo, run_import
from bot.issues.sync import exclusive
from bot.settings import Settings
from core.issue_store import IssueComment, StoredIssue, issues_path, iter_issues, read_issue_file

ROOT = Path(__file__).resolve().parents[2]
ASCEND = "vllm-project/vllm-ascend"
VLLM = "vllm-project/vllm"
MINDIE = "verylucky01/MindIE-LLM"  # its issues live on GitCode as Ascend/MindIE-LLM
SGLANG = "sgl-project/sglang"


def settings_for(tmp_path: Path, **extra: object) -> Settings:
    values: dict[str, object] = {"data_dir": tmp_path / "data", "repos_dir": tmp_path / "repos"}
    values.update(extra)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def dump(tmp_path: Path, *lines: Any, name: str = "dump.jsonl") -> Path:
    """Objects become JSON lines; bytes are written as they are (for broken input)."""
    path = tmp_path / name
    path.write_bytes(b"".join((x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode()) + b"\n" for x in lines))
    return path


def run(settings: Settings, path: Path, repo: str | None = None) -> tuple[int, list[str]]:
    said: list[str] = []
    return run_import(settings, path, repo, said.append), said


def stored(settings: Settings, repo: str) -> dict[int, StoredIssue]:
    return {i.number: i for i in iter_issues(settings.data_dir, repo)}


def snapshot(number: int, **issue: Any) -> dict[str, Any]:
    comments = issue.pop("comments_list", [])
    base = {
        "number": number, "title": f"thread {number}", "state": "open", "html_url": f"https://github.com/{ASCEND}/issues/{number}",
        "user": {"login": "reporter"}, "labels": [{"name": "bug"}], "created_at": "2026-03-01T10:00:00Z", "closed_at": None,
        "body": "NPU out of memory", "comments": len(comments),
    }
    return {"repo": ASCEND, "issue": {**base, **issue}, "comments": comments}


# --- the three shapes ------------------------------------------------------------------------------


def test_snapshot_lines_with_missing_dates_and_pull_requests(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    lines = [
        # no created_at, a user deleted, a URL pointing elsewhere: dates from the comments, our own URL
        snapshot(11, created_at=None, user=None, html_url="https://evil.example/phish", state="closed",
                 comments_list=[{"user": {"login": "a"}, "created_at": "2026-03-02T08:00:00+08:00", "body": "same here"},
                                {"user": {"login": "maint"}, "created_at": "2026-03-04T00:00:00Z", "body": "fixed in 0.9.1",
                                 "author_association": "MEMBER"}]),
        # a merged pull request
        snapshot(12, pull_request={"html_url": f"https://github.com/{ASCEND}/pull/12"}, merged=True, state="closed"),
        # no date anywhere: the file's own time
        snapshot(13, created_at=None),
    ]
    path = dump(tmp_path, *lines)
    os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01T00:00:00Z

    code, said = run(settings, path)

    assert code == 0
    assert said == ["imported 3 threads into 1 repository", "run `python -m bot index` to make them searchable"]
    got = stored(settings, ASCEND)
    first = got[11]
    assert first.url == f"https://github.com/{ASCEND}/issues/11"  # never the file's URL
    assert (first.created_at, first.updated_at) == ("2026-03-02T00:00:00Z", "2026-03-04T00:00:00Z")
    assert first.author == "" and first.state == "closed" and first.labels == ("bug",)
    assert first.comments == (
        IssueComment("a", "", "same here", "2026-03-02T00:00:00Z"),  # no association in the line: ""
        IssueComment("maint", "MEMBER", "fixed in 0.9.1", "2026-03-04T00:00:00Z"),
    )
    pull = got[12]
    assert pull.kind == "pull" and pull.merged and pull.url == f"https://github.com/{ASCEND}/pull/12"
    assert pull.updated_at == "2026-03-01T10:00:00Z"  # no updated_at: the newest date known
    assert (got[13].created_at, got[13].updated_at) == ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")


def test_plain_api_objects_from_github_and_gitcode(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    github = {
        "number": 7, "title": "vllm serve hangs", "state": "open", "body": "hangs", "user": {"login": "u"},
        "repository_url": f"https://api.github.com/repos/{VLLM}", "html_url": "https://github.com/someone/else/issues/7",
        "created_at": "2026-02-01T00:00:00Z", "updated_at": "2026-02-03T00:00:00Z", "labels": ["npu"],
        "comments": [{"user": {"login": "dev"}, "body": "try --enforce-eager", "created_at": "2026-02-02T00:00:00Z", "author_association": "COLLABORATOR"}],
    }
    gitcode = {  # GitCode v5: a string number, "Ascend / MindIE-LLM", finished_at, +08:00 times
        "number": "12", "title": "MindIE 启动失败", "state": "closed", "body": "报错 ACL_ERROR", "user": {"login": "zhang"},
        "repository": {"full_name": "Ascend / MindIE-LLM", "path": "MindIE-LLM"}, "html_url": "https://gitcode.com/elsewhere/x/issues/12",
        "created_at": "2026-02-01T10:00:00.123+08:00", "updated_at": "2026-02-05T10:00:00+08:00", "finished_at": "2026-02-05T09:00:00+08:00",
        "comments": [{"user": {"login": "maint"}, "body": "升级 CANN", "created_at": "2026-02-04T10:00:00+08:00"}],
    }
    bare = {"number": 3, "title": "no repository named here", "created_at": "2026-02-01T00:00:00Z", "updated_at": "2026-02-01T00:00:00Z"}
    path = dump(tmp_path, github, gitcode, bare)

    code, said = run(settings, path)
    assert code == 0
    assert said[0] == "imported 2 threads into 2 repositories (1 without a repository (use --repo))"

    code, said = run(settings, dump(tmp_path, bare, name="bare.jsonl"), SGLANG)
    assert code == 0 and said[0] == "imported 1 thread into 1 repository"

    (vllm,) = stored(settings, VLLM).values()
    assert vllm.url == f"https://github.com/{VLLM}/issues/7" and vllm.labels == ("npu",)
    assert vllm.comments == (IssueComment("dev", "COLLABORATOR", "try --enforce-eager", "2026-02-02T00:00:00Z"),)
    (mindie,) = stored(settings, MINDIE).values()  # stored under the canonical name
    assert mindie.number == 12 and mindie.url == "https://gitcode.com/Ascend/MindIE-LLM/issues/12"
    assert (mindie.state, mindie.closed_at, mindie.created_at) == ("closed", "2026-02-05T01:00:00Z", "2026-02-01T02:00:00Z")
    assert mindie.comments == (IssueComment("maint", "", "升级 CANN", "2026-02-04T02:00:00Z"),)  # GitCode: no association
    assert list(stored(settings, SGLANG)) == [3]


def test_our_own_stored_lines_round_trip_except_the_url(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    original = StoredIssue(
        repo="Ascend/msmodelslim", number=40, url="https://evil.example/40", title="W8A8 quantisation fails", body="trace",
        labels=("quant",), state="closed", created_at="2026-01-01T00:00:00Z", updated_at="2026-01-09T00:00:00Z",
        closed_at="2026-01-09T00:00:00Z", comments=(IssueComment("m", "", "use --w-bit 8", "2026-01-08T00:00:00Z"),),
        author="reporter", kind="pull", merged=True,
    )
    code, said = run(settings, dump(tmp_path, original.to_json()))

    assert code == 0, said
    (got,) = stored(settings, "verylucky01/MindStudio-ModelSlim").values()
    assert got.url == "https://gitcode.com/Ascend/msmodelslim/pull/40"
    assert got == StoredIssue(**{**original.__dict__, "repo": "verylucky01/MindStudio-ModelSlim", "url": got.url})


def test_repository_names_are_canonical_or_the_hosts_and_nothing_else() -> None:
    assert resolve_repo("Ascend/MindIE-LLM").name == MINDIE  # type: ignore[union-attr]
    assert resolve_repo("ascend / mindie-llm").name == MINDIE  # type: ignore[union-attr]
    assert resolve_repo(ASCEND).name == ASCEND  # type: ignore[union-attr]
    assert resolve_repo("someone/else") is None and resolve_repo("") is None and resolve_repo("../../etc") is None


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_lines_are_counted_and_the_good_ones_imported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = settings_for(tmp_path, issues_body_max_chars=1000, issues_comment_max_chars=50, issues_max_comments=2)
    huge = "x" * 10_000_000  # a pasted 10 MB log
    chatty = [{"user": {"login": f"u{i}"}, "body": ("long " * 40 if i == 3 else f"+1 #{i}"), "created_at": f"2026-03-0{i + 1}T00:00:00Z"}
              for i in range(4)]
    lines: list[Any] = [
        b"\xef\xbb\xbf" + json.dumps(snapshot(1)).encode(),  # a BOM on the first line: fine
        b"{not json",
        b"",  # blank: ignored
        [1, 2],
        {"hello": "world"},
        {**snapshot(2), "issue": {**snapshot(2)["issue"], "number": -5}},
        {**snapshot(3), "repo": "someone/else"},
        snapshot(4, body=huge),
        json.dumps(snapshot(5)).replace("NPU out of memory", "NPU \\ud800 lone").encode(),  # a lone surrogate escape
        json.dumps(snapshot(6)).replace("NPU out of memory", "NPU @@").encode().replace(b"@@", b"\xff\xfe"),  # raw non-UTF-8
        b"[" * 100_000,  # nesting deep enough to exhaust the parser
        snapshot(7, comments_list=chatty),
        snapshot(8, created_at="not a date", updated_at="yesterday"),  # unreadable dates: the file's time
    ]
    path = dump(tmp_path, *lines)
    caplog.set_level(logging.WARNING)

    code, said = run(settings, path)

    assert code == 0
    assert said[0] == (
        "imported 6 threads into 1 repository (2 malformed lines, 3 lines that are not threads, 1 in an unknown repository, "
        "2 lines with invalid UTF-8 repaired, 1 body clipped, 1 comment clipped, 2 comments over ISSUES_MAX_COMMENTS dropped)"
    )
    got = stored(settings, ASCEND)
    assert sorted(got) == [1, 4, 5, 6, 7, 8]
    assert len(got[4].body) < 1100 and "truncated 9999000 characters" in got[4].body
    assert "\ufffd" in got[5].body and "\ufffd" in got[6].body
    assert [c.author for c in got[7].comments] == ["u2", "u3"] and "truncated" in got[7].comments[1].body
    assert "dump.jsonl line 2: not valid JSON" in caplog.text
    assert "someone/else" not in caplog.text and "hello" not in caplog.text  # the file's text is never logged
    assert not list(tmp_path.joinpath("data", "issues").glob("someone*"))


def test_a_line_too_long_to_hold_is_read_past(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(import_command, "_MAX_LINE_BYTES", 4096)
    settings = settings_for(tmp_path)
    path = dump(tmp_path, snapshot(1, body="y" * 20_000), snapshot(2))

    code, said = run(settings, path)

    assert code == 0 and said[0] == "imported 1 thread into 1 repository (1 line too long)"
    assert list(stored(settings, ASCEND)) == [2]


def test_a_second_import_adds_nothing_and_a_newer_store_wins(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = dump(tmp_path, snapshot(1, body="z" * 30_000), snapshot(2), snapshot(2, title="an older copy", created_at="2025-01-01T00:00:00Z"))
    assert run(settings, path)[1][0] == "imported 2 threads into 1 repository (1 already stored, 1 body clipped)"

    code, said = run(settings, path)

    assert code == 0  # usable threads were found; the store simply has them
    assert said == ["imported 0 threads into 0 repositories (3 already stored)"]  # nothing clipped: nothing written
    assert len(issues_path(settings.data_dir, ASCEND).read_text(encoding="utf-8").splitlines()) == 2
    assert stored(settings, ASCEND)[2].title == "thread 2"


def test_exit_codes_for_nothing_usable_a_missing_file_and_an_unknown_repo(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    code, said = run(settings, dump(tmp_path, b"garbage", {"repo": "someone/else", "issue": {"number": 1}}))
    assert code == 1 and said == ["imported 0 threads into 0 repositories (1 malformed line, 1 in an unknown repository)"]
    assert run(settings, dump(tmp_path, name="empty.jsonl"))[0] == 1

    code, said = run(settings, tmp_path / "missing.jsonl")
    assert code == 2 and said == [f"no such file: {tmp_path / 'missing.jsonl'}"]
    assert run(settings, tmp_path)[0] == 2  # a directory

    code, said = run(settings, dump(tmp_path, snapshot(1)), "someone/else")
    assert code == 2 and "not an allowlisted repository" in said[0]
    assert not issues_path(settings.data_dir, ASCEND).exists()


def test_the_import_waits_for_no_one_while_a_sync_holds_the_lock(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    path = dump(tmp_path, snapshot(1))
    with exclusive(settings.data_dir):
        code, said = run(settings, path)
    assert code == 1 and said[0].startswith("another issue sync or import is running on")
    assert not issues_path(settings.data_dir, ASCEND).exists()
    assert run(settings, path)[0] == 0  # released


def test_an_unwritable_store_is_one_line(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    target = issues_path(settings.data_dir, ASCEND)
    target.parent.mkdir(parents=True)
    target.mkdir()  # a directory where the issue file should be

    code, said = run(settings, dump(tmp_path, snapshot(1)))

    assert code == 1 and said[0].startswith("import stopped: could not read") and "IsADirectoryError" in said[0]
    assert said[1] == "imported 0 threads into 0 repositories"


def test_the_command_line(tmp_path: Path) -> None:
    """`python -m bot import` in a real process, configured by the environment."""
    path = dump(tmp_path, snapshot(1), {"number": 9, "title": "bare", "created_at": "2026-01-01T00:00:00Z"})
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "REPOS_DIR": str(tmp_path / "repos"), "PYTHONPATH": str(ROOT)}

    done = subprocess.run([sys.executable, "-m", "bot", "import", str(path), "--repo", "Ascend/MindIE-LLM"],
                          capture_output=True, cwd=tmp_path, env=env, timeout=120)
    missing = subprocess.run([sys.executable, "-m", "bot", "import", str(tmp_path / "nope.jsonl")],
                             capture_output=True, cwd=tmp_path, env=env, timeout=120)

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().splitlines() == ["imported 2 threads into 2 repositories", "run `python -m bot index` to make them searchable"]
    assert [i.number for i in read_issue_file(issues_path(tmp_path / "data", MINDIE)).issues] == [9]  # --repo: lines naming none
    assert missing.returncode == 2 and b"no such file" in missing.stdout
    assert b"Traceback" not in done.stderr + missing.stderr
