"""The `search_docs` research tool over a real index: passages with permalinks that count as citable."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.keys import Keys
from core.research.cache import ToolCache
from core.research.citations import Evidence, verify_answer
from core.research.model import ToolUse
from core.research.redact import Redactor
from core.research.tools.base import input_schema
from core.research.tools.docs import SearchDocs
from core.research.tools.registry import ToolRegistry
from tests.fixtures.index_repos import make_index_repos

ASCEND = "vllm-project/vllm-ascend"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeIndex:
    root = tmp_path_factory.mktemp("index-tool")
    make_index_repos(root / "repos")
    build_index(root / "index", [
        RepoSource(ASCEND, root / "repos" / ASCEND, "https://github.com/vllm-project/vllm-ascend"),
        RepoSource("verylucky01/MindIE-LLM", root / "repos" / "verylucky01/MindIE-LLM", "https://gitcode.com/Ascend/MindIE-LLM"),
    ])
    return KnowledgeIndex(root / "index")


def registry(index: KnowledgeIndex) -> ToolRegistry:
    return ToolRegistry([SearchDocs(index, 0, 10.0)], ToolCache(None, Keys("unused")), Redactor([]), 12_000)


async def test_passages_come_back_wrapped_with_permalinks_that_verify(index: KnowledgeIndex) -> None:
    evidence = Evidence()
    run = await registry(index).run(ToolUse("t1", "search_docs", {"query": "libfoo.so cannot open shared object", "repo": ASCEND}), evidence, 10)
    assert not run.is_error
    assert run.content.startswith('<tool_output tool="search_docs" trust="untrusted">')
    assert "docs/source/faqs.md L5-8" in run.content and "5| ### 1. How to fix" in run.content
    url = index.search("libfoo.so cannot open shared object", [ASCEND], k=1)[0].url
    assert url in run.content
    answer = verify_answer(f"Load the toolkit first ([FAQ]({url})).", evidence, "en")
    assert answer.removed_urls == 0 and [s.url for s in answer.sources] == [url]


async def test_kind_filter_and_no_result(index: KnowledgeIndex) -> None:
    run = await registry(index).run(ToolUse("t2", "search_docs", {"query": "port max_model_len", "kind": "config"}), Evidence(), 10)
    assert "configs/serve.yaml" in run.content and "faqs.md" not in run.content
    none = await registry(index).run(ToolUse("t3", "search_docs", {"query": "zebra quokka"}), Evidence(), 10)
    assert not none.is_error and "no passage is relevant enough" in none.content


@pytest.mark.parametrize(
    "arguments",
    [{"query": ""}, {"query": "x", "repo": "evil/repo"}, {"query": "x", "kind": "binary"}, {"query": "x", "extra": 1}],
)
async def test_bad_arguments_are_a_readable_failure(index: KnowledgeIndex, arguments: dict) -> None:  # type: ignore[type-arg]
    run = await registry(index).run(ToolUse("t4", "search_docs", arguments), Evidence(), 10)
    assert run.is_error and "Invalid arguments for search_docs" in run.content


def test_schema_offers_the_allowlisted_repositories() -> None:
    schema = input_schema(SearchDocs.Args)
    repo = schema["properties"]["repo"]
    options = [o for o in repo.get("anyOf", [repo]) if o.get("type") == "string"]
    assert ASCEND in options[0]["enum"]
    assert set(schema["properties"]) == {"query", "repo", "kind"}
