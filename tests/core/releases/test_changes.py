"""What changed since the user's release: renamed and removed names, newer fixes and features."""
from __future__ import annotations

from pathlib import Path

from core.releases.changes import fix_predates, parse_release_notes, what_changed
from core.releases.tags import ReleaseChoice, tag_commit
from tests.core.releases.conftest import NOTES, REPO


def _choice(clone: Path, tag: str, asked: str | None = None) -> ReleaseChoice:
    return ReleaseChoice(REPO, asked or tag.lstrip("v"), tag, tag_commit(clone, tag))


def test_a_renamed_env_var_is_named_both_ways(repos_dir: Path) -> None:
    clone = repos_dir / "vllm-project" / "vllm-ascend"
    lines = what_changed(clone, _choice(clone, "v0.9.1"), "VLLM_LLMDD_RPC_PORT is ignored", "en")
    assert lines[0] == ("`VLLM_LLMDD_RPC_PORT` exists in v0.9.1; renamed to `VLLM_ASCEND_LLMDD_RPC_PORT` "
                        "in v0.10.0rc1 (#2450)")
    assert not any("#2450" in line for line in lines[1:])  # the bullet is not repeated
    newer = what_changed(clone, _choice(clone, "v0.9.1"), "设置 VLLM_ASCEND_LLMDD_RPC_PORT 无效", "zh")
    assert newer[0] == "`VLLM_ASCEND_LLMDD_RPC_PORT` 是 v0.9.1 之后才有的（v0.9.1 中叫 `VLLM_LLMDD_RPC_PORT`）"


def test_a_removed_config_key_and_a_newer_fix(repos_dir: Path) -> None:
    clone = repos_dir / "vllm-project" / "vllm-ascend"
    lines = what_changed(clone, _choice(clone, "v0.9.1"), "enable_graph_mode hangs with torchair_graph_config and max_num_seqs 128",
                         "en")
    assert lines[0].startswith("`additional_config.torchair_graph_config` exists in v0.9.1; the newest release no longer has it")
    assert "fixed in v0.10.0rc1 by #250: Fixed the hang of `enable_graph_mode`" in "\n".join(lines)
    # a user already on the release with the fix hears nothing about it
    assert not any("#250" in line for line in what_changed(clone, _choice(clone, "v0.10.0rc1"), "enable_graph_mode hangs", "en"))


def test_added_in_a_later_release_needs_a_shared_name(repos_dir: Path) -> None:
    clone = repos_dir / "vllm-project" / "vllm-ascend"
    assert "added in v0.11.0 (#300)" in "\n".join(what_changed(clone, _choice(clone, "v0.9.1"), "does --async-scheduling work?", "en"))
    assert what_changed(clone, _choice(clone, "v0.9.1"), "how fast is it?", "en") == []


def test_release_notes_bullets_carry_release_section_and_prs_without_urls() -> None:
    bullets = parse_release_notes(NOTES)
    assert [(b.release, b.prs) for b in bullets][:2] == [("v0.11.0", (300,)), ("v0.11.0", (301,))]
    assert all("http" not in b.text for b in bullets)


def test_fix_predates_only_when_the_users_release_is_older() -> None:
    old = ReleaseChoice(REPO, "0.9.1", "v0.9.1", "a" * 40)
    assert fix_predates("v0.10.0rc1", 250, old, "en") == "Fixed in v0.10.0rc1 by #250; your v0.9.1 predates it: upgrade to v0.10.0rc1 or later."
    assert fix_predates("v0.9.1", 250, old, "en") == ""
    assert fix_predates("v0.10.0rc1", 250, old, "zh").startswith("已在 v0.10.0rc1 修复（#250）")
