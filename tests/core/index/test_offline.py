"""Offline answers quote the best passage of the knowledge index and cite its permalink."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.conversation import Conversation
from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.messages import InboundMessage, ReplyKind
from core.session import MemorySessionStore
from tests.fixtures.index_repos import make_index_repos

ASCEND = "vllm-project/vllm-ascend"


def message(text: str) -> InboundMessage:
    return InboundMessage("terminal", "w", "c", "thread-1", "u", text, "m1", "m1", True)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeIndex:
    root = tmp_path_factory.mktemp("index-offline")
    make_index_repos(root / "repos")
    build_index(root / "index", [RepoSource(ASCEND, root / "repos" / ASCEND, "https://github.com/vllm-project/vllm-ascend")])
    return KnowledgeIndex(root / "index")


async def test_offline_answer_quotes_the_passage_and_cites_its_permalink(index: KnowledgeIndex) -> None:
    question = "vllm-ascend fails at start: ImportError libfoo.so: cannot open shared object file"
    url = index.search(question, [ASCEND], k=1)[0].url
    reply = await Conversation(MemorySessionStore(), retriever=index).handle(message(question))
    assert reply.kind == ReplyKind.ANSWER
    assert url in [s.url for s in reply.sources]
    assert "set_env.sh" in reply.text or "libfoo.so" in reply.text.split("faqs.md", 1)[-1]  # a quoted line of the FAQ entry


async def test_without_an_index_or_with_a_broken_one_the_answer_still_comes(index: KnowledgeIndex) -> None:
    class Broken:
        def search(self, *args: object, **kwargs: object) -> list:  # type: ignore[type-arg]
            raise OSError("index files vanished")

    question = "vllm-ascend fails at start: ImportError libfoo.so: cannot open shared object file"
    plain = await Conversation(MemorySessionStore()).handle(message(question))
    broken = await Conversation(MemorySessionStore(), retriever=Broken()).handle(message(question))
    assert plain.kind == broken.kind == ReplyKind.ANSWER
    url = index.search(question, [ASCEND], k=1)[0].url
    assert url not in [s.url for s in plain.sources + broken.sources]


async def test_the_search_runs_with_the_routed_repositories(index: KnowledgeIndex) -> None:
    seen: list[tuple[str, tuple[str, ...], int]] = []

    class Spy:
        def search(self, query: str, repos=(), k: int = 5, kind=None) -> list:  # type: ignore[no-untyped-def,type-arg]
            seen.append((query, tuple(repos), k))
            return []

    await Conversation(MemorySessionStore(), retriever=Spy()).handle(message("vllm-ascend: how do I install it?"))
    assert seen and seen[0][1] == (ASCEND,) and seen[0][2] == 3


async def test_a_fallback_passage_of_another_product_is_not_quoted() -> None:
    from core.index.passage import Passage

    def passage(repo: str, path: str) -> Passage:
        return Passage(repo, path, "Graph mode", f"https://github.com/{repo}/blob/abc/{path}#L1-L3", "doc", 1, 3, 0.9,
                       "Enable graph mode with the documented switch.")

    class Fallback:  # what the index returns when the routed repository had nothing good
        def search(self, query: str, repos=(), k: int = 5, kind=None) -> list:  # type: ignore[no-untyped-def,type-arg]
            return [passage("verylucky01/MindIE-LLM", "docs/graph.md"), passage(ASCEND, "docs/source/graph.md")]

    reply = await Conversation(MemorySessionStore(), retriever=Fallback()).handle(message("vllm-ascend: how do I enable graph mode?"))
    urls = [s.url for s in reply.sources]
    assert any("vllm-ascend/blob/abc/docs/source/graph.md" in u for u in urls)
    assert not any("MindIE-LLM/blob/abc" in u for u in urls) and "MindIE-LLM" not in reply.text
