"""An answer reads at the user's release: offline passages, the research tools and the pins they see."""
from __future__ import annotations

from pathlib import Path

from core.conversation import Conversation
from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.messages import InboundMessage
from core.releases.index import ReleaseAwareRetriever, ReleaseIndexes
from core.releases.pinning import ReleasePinner, current_pins, reading_at
from core.releases.reading import ReleaseReading
from core.releases.tags import ReleaseChoice, tag_commit
from core.research.tools.code import LocalRepos, ReadFile, SearchCode
from core.session import RedisSessionStore
from tests.core.releases.conftest import REPO

BASE = "https://github.com/vllm-project/vllm-ascend"


def message(text: str, event: str) -> InboundMessage:
    return InboundMessage("terminal", "w", "c", "t1", "u", text, event, event, True)


def _conversation(redis, keys, repos_dir: Path, tmp_path: Path, researcher=None) -> Conversation:  # type: ignore[no-untyped-def]
    index_dir = tmp_path / "index"
    build_index(index_dir, [RepoSource(REPO, repos_dir / "vllm-project" / "vllm-ascend", BASE)], facts=())
    releases = ReleaseIndexes(index_dir, ReleasePinner(repos_dir), lambda _r, _c: BASE)
    return Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher,
                        retriever=ReleaseAwareRetriever(KnowledgeIndex(index_dir), releases),
                        releases=ReleaseReading(repos_dir))


async def test_an_offline_answer_quotes_the_users_release_and_says_what_changed(redis, keys, repos_dir: Path,
                                                                                tmp_path: Path) -> None:
    conversation = _conversation(redis, keys, repos_dir, tmp_path)
    reply = await conversation.handle(message("vllm-ascend 0.9.1: how do I turn on graph mode? torchair_graph_config?", "e1"))
    assert "(vllm-project/vllm-ascend: `vllm_ascend/ascend_config.py`, as of v0.9.1)" in reply.text
    # what their release means for the question leads the answer: the key they name is gone later
    assert reply.text.startswith("**For your release:**\n- `additional_config.torchair_graph_config` exists in your v0.9.1; "
                                 "removed in v0.11.0.")
    commit = tag_commit(repos_dir / "vllm-project" / "vllm-ascend", "v0.9.1")
    assert any(s.url.startswith(f"{BASE}/blob/{commit}/vllm_ascend/ascend_config.py") for s in reply.sources)
    # a follow-up without a version still reads at the release the thread named, and quotes that release's FAQ
    again = await conversation.handle(message("vllm-ascend: how do I turn on graph mode?", "e2"))
    assert "(vllm-project/vllm-ascend: `docs/source/faqs.md`, as of v0.9.1)" in again.text
    assert "off by default in this release" in again.text
    assert any(s.url.startswith(f"{BASE}/blob/{commit}/docs/source/faqs.md") for s in again.sources)


async def test_without_a_version_the_answer_reads_main_and_claims_no_release(redis, keys, repos_dir: Path,
                                                                             tmp_path: Path) -> None:
    conversation = _conversation(redis, keys, repos_dir, tmp_path)
    reply = await conversation.handle(message("vllm-ascend: how do I turn on graph mode?", "e1"))
    assert "on by default" in reply.text and "as of v" not in reply.text and "Since your release" not in reply.text


async def test_a_chinese_answer_says_which_release_it_read(redis, keys, repos_dir: Path, tmp_path: Path) -> None:
    conversation = _conversation(redis, keys, repos_dir, tmp_path)
    reply = await conversation.handle(message("vllm-ascend 0.9.1 的 torchair_graph_config 怎么配置？", "e1"))
    assert "以 v0.9.1 为准" in reply.text and reply.text.startswith("**就您的版本而言：**")


async def test_the_research_agent_answers_under_the_users_pins(redis, keys, repos_dir: Path, tmp_path: Path) -> None:
    seen: list[dict] = []

    class Researcher:
        async def answer(self, request, progress):  # type: ignore[no-untyped-def]
            seen.append(dict(current_pins()))
            from core.research.agent import ResearchOutcome  # noqa: PLC0415

            return ResearchOutcome(ok=False, text="", error="offline")

    conversation = _conversation(redis, keys, repos_dir, tmp_path, researcher=Researcher())
    await conversation.handle(message("vllm-ascend 0.10.0 graph mode question", "e1"))
    assert [{r: c.tag for r, c in pins.items()} for pins in seen] == [{REPO: "v0.10.0rc1"}]  # the nearest at or below
    assert current_pins() == {}  # nothing leaks out of the answer


async def test_search_code_and_read_file_default_to_the_pinned_release(repos_dir: Path) -> None:
    local = LocalRepos(repos_dir, {})
    search, read = SearchCode(local, 0, 10), ReadFile(local, 0, 10)
    clone = repos_dir / "vllm-project" / "vllm-ascend"
    choice = ReleaseChoice(REPO, "0.9.1", "v0.9.1", tag_commit(clone, "v0.9.1"))
    with reading_at({REPO: choice}):
        args = SearchCode.Args.model_validate({"repo": REPO, "query": "LLMDD_RPC_PORT"})
        assert args.model_dump(exclude_none=True)["ref"] == "v0.9.1"  # the research cache keys it by the release
        found = await search.run(args)
        page = await read.run(ReadFile.Args.model_validate({"repo": REPO, "path": "vllm_ascend/envs.py"}))
        chosen = await read.run(ReadFile.Args.model_validate({"repo": REPO, "path": "vllm_ascend/envs.py", "ref": "main"}))
    assert "as of v0.9.1 (the user's release)" in found.text and '"VLLM_LLMDD_RPC_PORT"' in found.text
    assert found.sources[0].url.startswith(f"{BASE}/blob/{choice.commit}/vllm_ascend/envs.py")
    assert "as of v0.9.1" in page.text and '"VLLM_LLMDD_RPC_PORT"' in page.text
    assert "VLLM_ASCEND_LLMDD_RPC_PORT" in chosen.text and "as of" not in chosen.text  # an explicit ref wins
    unpinned = await search.run(SearchCode.Args.model_validate({"repo": REPO, "query": "LLMDD_RPC_PORT"}))
    assert "VLLM_ASCEND_LLMDD_RPC_PORT" in unpinned.text and "as of" not in unpinned.text


async def test_without_a_version_no_release_note_says_upgrade(redis, keys, repos_dir: Path, tmp_path: Path) -> None:
    # Without their release, "fixed in v0.10.0rc1: upgrade" may be wrong (they may have it): not said.
    conversation = _conversation(redis, keys, repos_dir, tmp_path)
    reply = await conversation.handle(message("vllm-ascend: enable_graph_mode hangs with DeepSeek when max_num_seqs is 128", "e1"))
    assert "by #250" not in reply.text and "upgrade to v0.10.0rc1" not in reply.text and "For your release" not in reply.text
    pinned = await conversation.handle(message("vllm-ascend 0.9.1: enable_graph_mode hangs with DeepSeek when max_num_seqs is 128", "e2"))
    assert "Fixed in vllm-ascend v0.10.0rc1 by #250" in pinned.text
