"""`python -m bot sync` ends with a summary (ok, or failed with the reason in a few words) and, when a
clone failed, the next step: REPO_URLS mirrors in the exact JSON shape, or `sync --from DIR`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.sync import SyncResult, git_error_line, url_host
from bot.sync_command import run_sync
from bot.sync_report import failure_reason, next_step_lines, suggested_mirror
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, make_bare_remote, make_repo

ROOT = Path(__file__).resolve().parents[2]
ASCEND = "vllm-project/vllm-ascend"


def _repo_urls_line(out: str) -> dict[str, str]:
    line = next(l.strip() for l in out.splitlines() if l.strip().startswith("REPO_URLS="))
    return json.loads(line.removeprefix("REPO_URLS="))


async def test_unreachable_sources_get_a_reason_each_and_the_next_step(make_settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    settings = make_settings(repo_urls={
        "vllm-project/vllm": "file:///nonexistent/vllm.git",
        "sgl-project/sglang": "https://user:hunter2-secret-token@127.0.0.1:1/sglang.git",
    })
    assert await run_sync(settings, ["vllm-project/vllm", "sgl-project/sglang"]) == 1
    out = capsys.readouterr().out
    summary = out[out.index("Summary:"):]
    assert summary.startswith("Summary: 0 of 2 repositories synced, 2 failed.")
    assert "  failed  vllm-project/vllm   not found: no repository at /nonexistent/vllm.git" in summary
    assert "  failed  sgl-project/sglang  refused: cannot connect to 127.0.0.1" in summary
    assert "hunter2" not in out
    # the next step: the REPO_URLS line is valid JSON for exactly the failed repositories (here their
    # GitHub originals, which this run did not try), and --from
    assert _repo_urls_line(summary) == {"vllm-project/vllm": "https://github.com/vllm-project/vllm.git",
                                        "sgl-project/sglang": "https://github.com/sgl-project/sglang.git"}
    assert "python -m bot sync --from DIR" in summary and "下一步" in summary
    assert "index:" not in out  # nothing synced, nothing re-indexed


async def test_partial_success_is_summarised_and_still_fails(make_settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / "upstream"
    commit = make_repo(work, VLLM_ASCEND_FILES)
    url = make_bare_remote(work, tmp_path / "remotes" / "vllm-ascend.git")
    settings = make_settings(repo_urls={ASCEND: url, "verylucky01/MindIE-LLM": "https://127.0.0.1:1/MindIE-LLM.git"})
    assert await run_sync(settings, [ASCEND, "verylucky01/MindIE-LLM"]) == 1
    out = capsys.readouterr().out
    assert "Summary: 1 of 2 repositories synced, 1 failed." in out
    assert f"  ok      {ASCEND}  cloned at {commit[:12]}" in out
    # the GitCode original is another public home of a repository set to come from elsewhere
    assert _repo_urls_line(out) == {"verylucky01/MindIE-LLM": "https://gitcode.com/Ascend/MindIE-LLM.git"}

    assert await run_sync(settings, [ASCEND]) == 0
    again = capsys.readouterr().out
    assert "Summary: 1 of 1 repositories synced." in again and "Next step" not in again


def test_the_cli_prints_the_summary_and_exits_non_zero_when_nothing_synced(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "REPOS_DIR": str(tmp_path / "repos"), "DATA_DIR": str(tmp_path / "data"),
           "REPO_URLS": json.dumps({"vllm-project/vllm-ascend": "https://127.0.0.1:1/vllm-ascend.git"})}
    done = subprocess.run([sys.executable, "-m", "bot", "sync", ASCEND], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"failed  {ASCEND}  refused: cannot connect to 127.0.0.1" in done.stdout
    assert "python -m bot sync --from DIR" in done.stdout
    assert not (tmp_path / "repos" / "vllm-project" / "vllm-ascend").exists()


@pytest.mark.parametrize("error, host, reason", [
    ("git clone failed: fatal: unable to access 'https://github.com/x/y.git/': Could not resolve host: github.com",
     "github.com", "DNS: github.com does not resolve from here"),
    ("git clone timed out after 900 s", "github.com", "timeout: github.com did not answer"),
    ("fatal: unable to access 'https://github.com/x/': Failed to connect to github.com port 443 after 130001 ms: "
     "Connection timed out", "github.com", "timeout: github.com did not answer"),
    ("fatal: unable to access 'https://gitcode.com/A/b.git/': The requested URL returned error: 403",
     "gitcode.com", "403: gitcode.com refused access"),
    ("fatal: could not read Username for 'https://gitcode.com': terminal prompts disabled",
     "gitcode.com", "auth: gitcode.com asks for a login"),
    ("fatal: Authentication failed for 'https://gitcode.com/A/b.git/'", "gitcode.com", "auth: gitcode.com"),
    ("fatal: repository 'https://github.com/x/y.git/' not found", "github.com", "not found: no repository at github.com"),
    ("fatal: unable to access 'https://h/': SSL certificate problem: self-signed certificate", "h", "TLS: certificate problem"),
    ("fatal: unable to access 'https://h/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
     "127.0.0.1", "refused: cannot connect to 127.0.0.1"),
    ("the directory exists and is not a git clone", "github.com", "the directory exists and is not a git clone"),
])
def test_failure_reasons(error: str, host: str, reason: str) -> None:
    assert failure_reason(error, host).startswith(reason)


def test_git_error_line_picks_the_fatal_line_not_the_advice() -> None:
    stderr = (b"fatal: '/x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n"
              b"Please make sure you have the correct access rights\nand the repository exists.\n")
    assert git_error_line(stderr) == "fatal: '/x' does not appear to be a git repository"
    assert git_error_line(b"warning: something\n") == "warning: something" and git_error_line(b"") == ""


def test_hosts_never_carry_credentials() -> None:
    assert url_host("https://user:token@gitcode.com/Ascend/x.git") == "gitcode.com"
    assert url_host("git@github.com:vllm-project/vllm.git") == "github.com"
    assert url_host("file:///srv/mirrors/vllm.git") == "/srv/mirrors/vllm.git"


def test_suggested_mirrors_avoid_hosts_that_failed() -> None:
    assert suggested_mirror("verylucky01/MindIE-LLM", {}) == "https://github.com/verylucky01/MindIE-LLM.git"
    assert suggested_mirror("verylucky01/MindIE-LLM", {}, {"github.com"}) == "https://<mirror>/verylucky01/MindIE-LLM.git"
    assert suggested_mirror("vllm-project/vllm", {}) == "https://<mirror>/vllm-project/vllm.git"
    failed = [SyncResult("torvalds/linux", "failed", "", error="not an allowlisted repository")]
    assert next_step_lines(failed, {}) == []  # nothing a mirror would fix


def test_from_and_issues_do_not_mix(capsys) -> None:  # type: ignore[no-untyped-def]
    from bot.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["sync", "--issues", "--from", "somewhere"])
    assert stopped.value.code == 2 and "--from adopts repository copies" in capsys.readouterr().err
