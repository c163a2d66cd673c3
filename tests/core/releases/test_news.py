"""What the user's release means for the question: fixes they lack, known issues of their release,
names renamed or removed between releases, and releases on another line than theirs."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.releases.changes import NoteBullet, parse_release_notes
from core.releases.news import (
    CARRIER_BULLETS,
    ReleaseNews,
    _env_vars,
    _names,
    bullet_kind,
    release_news,
    relation,
    shared_names,
    thread_fix_line,
)
from core.releases.notes import NotesIndex, build_index
from core.releases.tags import ReleaseChoice, tag_commit
from tests.core.releases.notes_fixture import NOTES, build

REPO = "vllm-project/vllm-ascend"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("notes") / "vllm-ascend")


def at(clone: Path, tag: str) -> ReleaseChoice:
    return ReleaseChoice(REPO, tag.lstrip("v"), tag, tag_commit(clone, tag))


def everything(news: ReleaseNews) -> str:
    return "\n".join((*news.lead, *news.lines))


def test_a_fix_their_release_predates_leads_with_the_release_and_the_pr(clone: Path) -> None:
    news = release_news(clone, at(clone, "v0.10.0rc1"), "v0.10.0rc1 跑 Gemma3-27B，精度明显不对", "zh")
    fix = next(line for line in news.lead if "#2528" in line)
    assert fix.startswith("vllm-ascend v0.10.1rc1 已修复（#2528）：Support Sliding Window Attention")
    assert "请升级到 v0.10.1rc1 或更高版本" in fix
    # their own release's known issue about the same thing leads beside it
    assert any(line.startswith("vllm-ascend v0.10.0rc1 的已知问题") for line in news.lead)
    english = release_news(clone, at(clone, "v0.10.0rc1"), "Gemma3 accuracy is wrong on my v0.10.0rc1", "en")
    fix = next(line for line in english.lead if "#2528" in line)
    assert fix.startswith("Fixed in vllm-ascend v0.10.1rc1 by #2528:")
    assert "Your v0.10.0rc1 predates it: upgrade to v0.10.1rc1 or later." in fix


def test_on_or_after_the_fix_the_answer_says_their_release_has_it(clone: Path) -> None:
    later = everything(release_news(clone, at(clone, "v0.11.0"), "Gemma3 accuracy is wrong", "en"))
    assert "Already fixed in vllm-ascend v0.10.1rc1 (#2528), which your v0.11.0 includes" in later
    assert "upgrade to v0.10.1rc1" not in later
    same = everything(release_news(clone, at(clone, "v0.10.1rc1"), "Gemma3 accuracy is wrong", "en"))
    assert "your release, vllm-ascend v0.10.1rc1 (#2528)" in same


def test_a_known_issue_of_their_release_and_the_release_that_lifts_it(clone: Path) -> None:
    news = release_news(clone, at(clone, "v0.9.1rc2"), "v0.9.1rc2 上 V1 引擎开 pipeline parallel 报不支持", "zh")
    text = everything(news)
    assert "vllm-ascend v0.9.1rc2 的已知问题（见其发布说明）：Pipeline parallelism is not supported" in text
    assert "vllm-ascend v0.10.0rc1 新增（#1800）" in text


def test_a_chinese_question_meets_a_bullet_through_its_translation(clone: Path) -> None:
    # No English word of the bullet in the question: only the .po translation (流水线并行) links them.
    news = release_news(clone, at(clone, "v0.9.1rc2"), "我们的版本里流水线并行能用吗", "zh")
    assert "Pipeline parallelism is not supported" in everything(news)


def test_a_question_that_shares_nothing_specific_gets_no_release_lines(clone: Path) -> None:
    assert not release_news(clone, at(clone, "v0.10.0rc1"), "how fast is it on my machine?", "en")


def test_a_release_on_another_line_counts_only_when_its_pr_is_in_theirs(clone: Path) -> None:
    bullets = {b.prs[0]: b for b in parse_release_notes(NOTES.replace("{filler}", "")) if b.prs}
    fix = bullets[2478]  # v0.9.1rc3, on releases/v0.9.1, cut before v0.10.0rc1
    assert relation(clone, fix, at(clone, "v0.9.1rc2")) == "newer"
    assert relation(clone, fix, at(clone, "v0.10.0rc1")) == ""  # 0.9.1rc3 < 0.10.0rc1, yet not in it
    assert relation(clone, bullets[1800], at(clone, "v0.11.0")) == "included"
    assert "#2478" not in everything(release_news(clone, at(clone, "v0.10.0rc1"), "qwen3 moe aclgraph fails", "en"))
    assert "Fixed in vllm-ascend v0.9.1rc3 by #2478" in everything(
        release_news(clone, at(clone, "v0.9.1rc2"), "qwen3 moe aclgraph fails", "en"))


def test_kinds_come_from_the_section_and_the_first_words() -> None:
    kinds = {b.prs[0] if b.prs else b.text[:8]: bullet_kind(b) for b in parse_release_notes(NOTES.replace("{filler}", ""))}
    assert kinds[301] == "removed" and kinds[2478] == "fix" and kinds[1800] == "added" and kinds["Pipeline"] == "known"


def test_a_matched_threads_fix_against_their_release(clone: Path) -> None:
    assert thread_fix_line(clone, "v0.10.1rc1", 2528, at(clone, "v0.10.0rc1"), "en") == (
        "Fixed in vllm-ascend v0.10.1rc1 by #2528; your v0.10.0rc1 predates it: upgrade to v0.10.1rc1 or later.")
    assert thread_fix_line(clone, "v0.10.1rc1", 2528, at(clone, "v0.11.0"), "en") == (
        "Fixed in vllm-ascend v0.10.1rc1 by #2528, which your v0.11.0 already includes.")
    assert thread_fix_line(clone, "v0.10.1rc1", 2528, at(clone, "v0.10.0rc1"), "zh").startswith("vllm-ascend v0.10.1rc1 已修复（#2528）")


def test_an_env_var_newer_than_their_release_is_named_with_the_one_they_have(clone: Path) -> None:
    news = release_news(clone, at(clone, "v0.9.1rc2"), "教程写的是 VLLM_ASCEND_ENABLE_FLASHCOMM1=1，我这个版本能用吗", "zh")
    assert news.lead[0] == ("您的 v0.9.1rc2 中没有 `VLLM_ASCEND_ENABLE_FLASHCOMM1`：它从 v0.10.0rc1 才有；"
                            "v0.9.1rc2 中对应的是 `VLLM_ASCEND_ENABLE_FLASHCOMM`"
                            "（最新版本中为 `additional_config.enable_flashcomm1`）。")


def test_a_name_their_release_has_and_a_later_one_renamed(clone: Path) -> None:
    news = release_news(clone, at(clone, "v0.9.1rc2"), "VLLM_LLMDD_RPC_PORT is ignored", "en")
    assert news.lead[0] == "`VLLM_LLMDD_RPC_PORT` exists in your v0.9.1rc2; removed in v0.10.0rc1, replaced by `VLLM_ASCEND_LLMDD_RPC_PORT`."


def test_a_config_key_removed_before_their_release(clone: Path) -> None:
    news = release_news(clone, at(clone, "v0.11.0"), "is torchair_graph_config still honoured?", "en")
    assert news.lead[0].startswith("`additional_config.torchair_graph_config` was removed in v0.11.0 "
                                   "(it existed from v0.9.1rc2 to v0.10.1rc1); your v0.11.0 does not have it")
    assert "Changed in your release, vllm-ascend v0.11.0 (#301): Torchair graph mode is removed." in everything(news)


def test_with_the_release_unknown_no_release_note_bullet_is_shown_only_name_histories(clone: Path) -> None:
    # "Fixed in v0.10.1rc1: upgrade" cannot be said rightly without their release, and bullets matched
    # in words read as a diagnosis of something else: only the exact name histories remain.
    news = release_news(clone, None, "Gemma3 accuracy is wrong on my machine", "en", REPO)
    assert not news.lead and not news.lines and not news.general
    assert release_news(clone, at(clone, "v0.10.0rc1"), "Gemma3 accuracy is wrong on my machine", "en").lead  # with it: shown
    names = release_news(clone, None, "VLLM_LLMDD_RPC_PORT is ignored", "en", REPO).general
    assert names[0] == "`VLLM_LLMDD_RPC_PORT` exists from v0.9.1rc2; removed in v0.10.0rc1, replaced by `VLLM_ASCEND_LLMDD_RPC_PORT`."



def test_a_fix_they_lack_leads_only_when_it_names_what_they_named(clone: Path) -> None:
    # Sliding-window words alone match the Gemma3 fix: "upgrade to v0.10.1rc1" would sell an
    # unrelated fix as the way out. Named, it is the answer.
    vague = release_news(clone, at(clone, "v0.10.0rc1"), "sliding window attention accuracy is wrong on long prompts", "en")
    assert not any("#2528" in line for line in (*vague.lead, *vague.lines))
    named = release_news(clone, at(clone, "v0.10.0rc1"), "Gemma3 accuracy is wrong on long prompts", "en")
    assert any("#2528" in line for line in named.lead)


def test_a_version_between_tags_is_named_as_theirs_and_keeps_what_it_has(clone: Path) -> None:
    # 0.10.0rc2 has no tag: the nearest one below (v0.10.0rc1) is read, but the answer speaks of their
    # version, and what v0.10.0rc1 added is something they have, not "added in your release".
    choice = ReleaseChoice(REPO, "0.10.0rc2", "v0.10.0rc1", tag_commit(clone, "v0.10.0rc1"))
    text = everything(release_news(clone, choice, "Gemma3 accuracy is wrong; is pipeline parallelism supported in V1?", "en"))
    assert "Your v0.10.0rc2 predates it: upgrade to v0.10.1rc1 or later." in text
    assert "Available since vllm-ascend v0.10.0rc1 (#1800), which your v0.10.0rc2 includes" in text
    assert "your release" not in text.lower() and "v0.10.0rc1 predates" not in text
    assert thread_fix_line(clone, "v0.10.0rc1", 1800, choice, "en").endswith("which your v0.10.0rc2 already includes.")


def test_a_bare_number_is_not_a_shared_name() -> None:
    from core.releases.news import _names
    assert "4.7" not in _names("GLM-4.7 function calls time out on 0.13.0rc1")
    assert "qwen2.5" in _names("Qwen2.5 fails")


def test_another_product_named_on_both_sides_is_a_shared_name() -> None:
    from core.releases.news import _names
    asked = _names("vllm-ascend 0.9.1 装了 mindie-turbo 吞吐没变化", REPO)
    assert asked & _names("Mindie Turbo is not needed with this release.", REPO)
    # the notes' own product is no shared name: every bullet of vllm-ascend's notes is about vllm-ascend
    assert not _names("vllm-ascend on 910B is slow", REPO) & _names("vLLM Ascend now supports Qwen3", REPO)


def test_an_added_feature_is_offered_to_a_failure_only_when_named_the_same_way(clone: Path) -> None:
    # "Pipeline parallelism" in the report and in the bullet: the upgrade is the way out.
    named = everything(release_news(clone, at(clone, "v0.9.1rc2"), "V1 engine with pipeline parallelism crashes on v0.9.1rc2", "en"))
    assert "Added in vllm-ascend v0.10.0rc1 (#1800)" in named
    # The same words in another order ("model len max", "auto length"): not the flag they did not use.
    alike = everything(release_news(clone, at(clone, "v0.10.1rc1"), "Qwen3 auto length is wrong on v0.10.1rc1, model len max", "en"))
    assert "#300" not in alike
    assert "#300" in everything(release_news(clone, at(clone, "v0.10.1rc1"), "max model len auto crashes on v0.10.1rc1", "en"))


def test_identifiers_and_word_pairs() -> None:
    from core.releases.news import _identifiers, _word_pairs
    assert _identifiers({"glm-4.7", "qwen3.5", "--enable-expert-parallel", "tool_calls", "engine.py"}) == \
        {"--enable-expert-parallel", "tool_calls", "engine.py"}
    assert ("sleep", "mode") in _word_pairs("Sleep mode works with the V1 engine") and ("the", "v1") not in _word_pairs("the v1")


def test_a_feature_their_release_already_has_answers_is_it_there_not_a_failure(clone: Path) -> None:
    # v0.11.0 includes pipeline parallelism (#1800, v0.10.0rc1): news for "is it supported?", not an
    # explanation of a hang they see with it
    asked = everything(release_news(clone, at(clone, "v0.11.0"), "Is pipeline parallelism supported on v0.11.0 with V1?", "en"))
    assert "Available since vllm-ascend v0.10.0rc1 (#1800), which your v0.11.0 includes" in asked
    failing = everything(release_news(clone, at(clone, "v0.11.0"), "pipeline parallelism with V1 hangs at the first request", "en"))
    assert "#1800" not in failing


def test_a_later_change_must_change_a_name_they_use(clone: Path) -> None:
    uses_it = everything(release_news(clone, at(clone, "v0.10.0rc1"), "my torchair_graph_config graph mode crashes", "en"))
    assert "Changed in vllm-ascend v0.11.0 (#301), after your v0.10.0rc1: Torchair graph mode is removed" in uses_it
    # the same words without the key: a later removal says nothing about their crash
    words_only = everything(release_news(clone, at(clone, "v0.10.0rc1"), "torchair graph mode crashes with aclgraph", "en"))
    assert "#301" not in words_only


def _index_of(texts: list[str]) -> NotesIndex:
    filler = [f"Improve the {w} path for {v}." for w in ("widget", "gadget", "sprocket") for v in ("decode", "prefill")]
    return build_index([NoteBullet("v0.1.0", "Core", text, ()) for text in texts + filler])


def test_an_env_var_is_the_same_name_only_when_written_as_one() -> None:
    bullet = "Add a `VLLM_VERSION` environment to make the vLLM version configurable."
    index = _index_of([bullet])
    traceback = "vllm_version = vllm.__version__\nAttributeError: module 'vllm' has no attribute '__version__'"
    assert shared_names(_names(traceback, REPO), _env_vars(traceback), bullet, REPO, index) == set()
    asked = "Do I need VLLM_VERSION=0.9.1 with a source build?"
    assert shared_names(_names(asked, REPO), _env_vars(asked), bullet, REPO, index) == {"vllm_version"}


def test_a_name_many_bullets_carry_does_not_make_a_bullet_theirs() -> None:
    carriers = [f"`additional_config` option number {n} is tuned for {m}." for n, m in enumerate("abcdefghij")]
    removed = 'Ascend scheduler is removed. `--additional-config {"ascend_scheduler": {"enabled": true}}` does not work.'
    index = _index_of([*carriers, removed])
    assert index.bullets_naming("--additional-config") >= CARRIER_BULLETS  # both spellings are one name
    theirs = """--additional-config '{"ascend_turbo_graph_config": {"enabled": true}}' is slow"""
    assert shared_names(_names(theirs, REPO), _env_vars(theirs), removed, REPO, index) == set()
    uses_it = """--additional-config '{"ascend_scheduler": {"enabled": true}}' is ignored"""
    assert "ascend_scheduler" in shared_names(_names(uses_it, REPO), _env_vars(uses_it), removed, REPO, index)


def test_a_fix_for_one_device_is_offered_only_to_users_of_that_device(clone: Path) -> None:
    on_310p = everything(release_news(clone, at(clone, "v0.10.0rc1"), "Qwen3-VL rotary embedding crashes on my 310P", "en"))
    assert "Fixed in vllm-ascend v0.11.0 by #302" in on_310p
    for question in ("Qwen3-VL rotary embedding crashes", "Qwen3-VL rotary embedding crashes on 910B"):
        assert "#302" not in everything(release_news(clone, at(clone, "v0.10.0rc1"), question, "en"))


def test_how_to_in_their_release_keeps_what_their_release_added(clone: Path) -> None:
    # "how do I turn it on in my release?" is answered by what their release has; a failure with the same
    # words is not explained by it
    how_to = everything(release_news(clone, at(clone, "v0.11.0"), "how do I run pipeline parallelism with V1 on v0.11.0?", "en"))
    assert "#1800" in how_to
    for report in ("pipeline parallelism with V1 fails on v0.11.0", "pipeline parallelism with V1 made throughput worse"):
        assert "#1800" not in everything(release_news(clone, at(clone, "v0.11.0"), report, "en"))


def test_a_fix_in_one_setup_is_offered_only_to_users_of_that_setup(clone: Path) -> None:
    # #2478 fixes qwen3 moe *with aclgraph*: a qwen3 moe failure that names no graph mode is not shown it
    assert "#2478" in everything(release_news(clone, at(clone, "v0.9.1rc2"), "qwen3 moe with aclgraph fails", "en"))
    assert "#2478" not in everything(release_news(clone, at(clone, "v0.9.1rc2"), "qwen3 moe fails at the first request", "en"))
