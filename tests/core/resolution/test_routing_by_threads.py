"""When the router would ask "which project?", evidence settles it: a resolved thread with the
question's error signature, the top thread sharing specific words, or every best passage from one
repository. Asking stays the fallback."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from core.conversation import Conversation
from core.index.passage import Passage
from core.messages import InboundMessage, ReplyKind
from core.resolution.answer import dominant_repo
from core.resolution.extract import extract_repository
from core.resolution.memory import ResolutionMemory
from core.session import RedisSessionStore

from tests.core.resolution.conftest import REPO, thread

SIGNATURE_LINE = "RuntimeError: call aclnnMoeGatingTopKSoftmax failed on this socVersion"


def doc(repo: str, score: float, text: str = "x", kind: str = "doc", path: str = "docs/a.md") -> Passage:
    return Passage(repo, path, "t", f"https://example.invalid/{repo}/{path}", kind, 1, 2, score, text)  # type: ignore[arg-type]


class FixedRetriever:
    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = list(passages)

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: str | None = None) -> list[Passage]:
        found = [p for p in self.passages if (not repos or p.repo in repos) and (kind is None or p.kind == kind)]
        return found[:k]


def memory() -> ResolutionMemory:
    return ResolutionMemory(extract_repository([
        thread(7, f"on 300I Duo:\n{SIGNATURE_LINE}", ("maint", "MEMBER", "MoE models are not supported on 310P yet: the kernel is missing.")),
    ]).values())


def ask(text: str) -> InboundMessage:
    return InboundMessage("terminal", "w", "c", text, "u", text, text, text, True)  # one thread per question


@pytest.fixture
def sessions(redis, keys) -> RedisSessionStore:  # type: ignore[no-untyped-def]
    return RedisSessionStore(redis, keys, 600)


async def test_an_error_signature_of_a_resolved_thread_settles_the_product(sessions: RedisSessionStore) -> None:
    bot = Conversation(sessions, retriever=FixedRetriever([]), memory=memory)
    reply = await bot.handle(ask(f"my server fails at startup\n{SIGNATURE_LINE}"))
    assert reply.kind is ReplyKind.ANSWER and reply.repos == (REPO,)
    assert reply.text.startswith("**Resolved before** (vllm-ascend #7")


async def test_all_best_passages_from_one_repository_settle_it_and_a_spread_asks(sessions: RedisSessionStore) -> None:
    one = FixedRetriever([doc(REPO, 10 - i, path=f"docs/{i}.md") for i in range(5)])
    answered = await Conversation(sessions, retriever=one, memory=memory).handle(ask("on our 910B NPU, how do I set kv_block_size for prefix caching?"))
    assert answered.kind is ReplyKind.ANSWER and answered.repos == (REPO,)
    spread = FixedRetriever([doc(REPO, 9), doc("verylucky01/MindIE-LLM", 8), doc(REPO, 7), doc(REPO, 6), doc(REPO, 5)])
    asked = await Conversation(sessions, retriever=spread, memory=memory).handle(ask("on our 910B NPU, how do I set kv_block_size, again?"))
    assert asked.kind is ReplyKind.CLARIFY


async def test_threads_alike_in_words_do_not_settle_a_question_that_names_no_identifier(sessions: RedisSessionStore) -> None:
    # "Does model X run on chip Y" names no flag, key or env var: five passages of one stack say what
    # other users ran, not which stack this user runs, so the products' answers still differ: ask.
    one = FixedRetriever([doc(REPO, 10 - i, path=f"docs/{i}.md") for i in range(5)])
    asked = await Conversation(sessions, retriever=one, memory=memory).handle(ask("Can a 910B4 run Qwen3.5-35B-A3B?"))
    assert asked.kind is ReplyKind.CLARIFY


async def test_a_resolved_thread_that_stands_out_settles_a_question_that_names_no_identifier(sessions: RedisSessionStore) -> None:
    # The same question, but the top thread is resolved and far ahead of the next: a maintainer already
    # answered exactly this, so the answer is that thread's product, not a question back.
    def answered_memory() -> ResolutionMemory:
        return ResolutionMemory(extract_repository([
            thread(9, "Can a 910B4 run Qwen3.5-35B-A3B?", ("maint", "MEMBER", "Yes: dense and MoE variants are both supported now.")),
        ]).values())

    standing = FixedRetriever([doc(REPO, 9.0, "910B4 Qwen3.5", kind="issue", path="issues/9"), doc(REPO, 2.0, "other", kind="issue", path="issues/3")])
    settled = await Conversation(sessions, retriever=standing, memory=answered_memory).handle(ask("Can a 910B4 run Qwen3.5-35B-A3B?"))
    assert settled.kind is ReplyKind.ANSWER and REPO in settled.repos
    tied = FixedRetriever([doc(REPO, 9.0, "910B4 Qwen3.5", kind="issue", path="issues/9"), doc(REPO, 8.5, "other", kind="issue", path="issues/3")])
    asked = await Conversation(sessions, retriever=tied, memory=answered_memory).handle(ask("Will a 910B4 run Qwen3.5-35B-A3B?"))
    assert asked.kind is ReplyKind.CLARIFY  # two threads alike in words: nothing stands out, the question stands


async def test_sibling_components_are_not_settled_by_a_vote(sessions: RedisSessionStore) -> None:
    # The MindIE components share docs: five passages from one of them say nothing about which one.
    one = FixedRetriever([doc("verylucky01/MindIE-LLM", 10 - i, path=f"docs/{i}.md") for i in range(5)])
    asked = await Conversation(sessions, retriever=one, memory=memory).handle(ask("MindIE 报错了，说找不到符号，怎么排查？"))
    assert asked.kind is ReplyKind.CLARIFY


def test_dominant_repo_needs_every_vote() -> None:
    assert dominant_repo([doc(REPO, 5 - i) for i in range(5)]) == REPO
    assert dominant_repo([doc(REPO, 5), doc("sgl-project/sglang", 4), *[doc(REPO, 3 - i) for i in range(3)]]) == ""
    assert dominant_repo([]) == ""


def issue(repo: str, number: int, score: float, text: str) -> Passage:
    return Passage(repo, f"issues/{number}", f"#{number}", f"https://github.com/{repo}/issues/{number}", "issue", 1, 2, score, text)


async def test_a_decline_is_overruled_only_by_a_thread_sharing_rare_identifiers(sessions: RedisSessionStore) -> None:
    rare = "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared at exit of my_offline_script_v2"
    threads = FixedRetriever([issue(REPO, 7, 9.0, f"{rare}\nmaintainer @m:\ncall ray.shutdown() first")])
    # rarity needs a memory of some size: two identifiers no other of 200 threads carries
    many = ResolutionMemory(extract_repository([thread(n, f"report {n}") for n in range(100, 300)]).values())
    answered = await Conversation(sessions, retriever=threads, memory=lambda: many).handle(ask(rare))
    assert answered.kind is ReplyKind.ANSWER and answered.repos == (REPO,)
    plain = FixedRetriever([issue(REPO, 7, 9.0, "what is the weather like")])
    declined = await Conversation(sessions, retriever=plain, memory=lambda: many).handle(ask("what is the weather like in Paris today?"))
    assert declined.kind is ReplyKind.OUT_OF_SCOPE


async def test_a_named_product_is_never_dropped_strong_evidence_only_adds_one(sessions: RedisSessionStore) -> None:
    """vllm-ascend named, the same error resolved in an upstream vLLM thread: the answer covers both."""
    records = extract_repository([
        thread(7, f"fails:\n{SIGNATURE_LINE}", ("maint", "MEMBER", "Fixed upstream: upgrade vLLM to 0.9.2, see the fix.")),
    ]).values()
    moved = ResolutionMemory(replace(r, repo="vllm-project/vllm") for r in records)
    reply = await Conversation(sessions, retriever=FixedRetriever([]), memory=lambda: moved).handle(
        ask(f"vllm-ascend 0.9.1 on 910B fails at startup:\n{SIGNATURE_LINE}"))
    assert reply.kind is ReplyKind.ANSWER and reply.repos == ("vllm-project/vllm-ascend", "vllm-project/vllm")


async def test_a_thread_sharing_rare_words_widens_only_along_the_vllm_line(sessions: RedisSessionStore) -> None:
    rare = "Warmup failed at model_runner_v7.capture_sizes_xq with qk_rope_flag_zz set"
    threads = FixedRetriever([issue(REPO, 7, 9.0, f"{rare}\nmaintainer @m:\nupgrade to the next release")])
    many = ResolutionMemory(extract_repository([thread(n, f"report {n}") for n in range(100, 300)]).values())
    bot = Conversation(sessions, retriever=threads, memory=lambda: many)
    # An upstream vLLM question on an NPU: the plugin's thread joins (it inherits upstream's code).
    upstream = await bot.handle(ask(f"upstream vllm on our 910B: {rare}"))
    assert set(upstream.repos) == {"vllm-project/vllm", REPO}
    # The same without any NPU in the question: the user runs vLLM itself, the plugin's thread is not theirs.
    gpu = await bot.handle(ask(f"upstream vllm: {rare}"))
    assert gpu.repos == ("vllm-project/vllm",)
    # A MindIE question keeps its product: a vllm-ascend thread that shares words is not its advice.
    mindie = await bot.handle(ask(f"MindIE-LLM service: {rare}"))
    assert mindie.repos == ("verylucky01/MindIE-LLM",)


async def test_a_clarification_shows_a_resolved_thread_of_an_offered_product_first(sessions: RedisSessionStore) -> None:
    # Nothing settles the product (two threads alike, a question naming no identifier), but the best one was
    # resolved and shares the model name: its outcome, labelled with its project, comes before the question.
    def answered_memory() -> ResolutionMemory:
        return ResolutionMemory(extract_repository([
            thread(9, "Can a 910B4 run Qwen3.5-35B-A3B?", ("maint", "MEMBER", "Yes: dense and MoE variants are both supported now.")),
        ]).values())

    tied = FixedRetriever([doc(REPO, 9.0, "910B4 Qwen3.5-35B-A3B", kind="issue", path="issues/9"),
                           doc(REPO, 8.5, "other", kind="issue", path="issues/3")])
    asked = await Conversation(sessions, retriever=tied, memory=answered_memory).handle(ask("Will a 910B4 run Qwen3.5-35B-A3B?"))
    assert asked.kind is ReplyKind.CLARIFY
    assert "\n**Possibly related** (vllm-ascend #9, a thread of that project): Resolved there (a maintainer): Yes:" in asked.text
    assert "Which project" in asked.text and any(s.url.endswith("/issues/9") for s in asked.sources)
    # an unresolved best thread adds nothing: the question alone
    bare = FixedRetriever([doc(REPO, 9.0, "910B4 Qwen3.5-35B-A3B", kind="issue", path="issues/3")])
    plain = await Conversation(sessions, retriever=bare, memory=answered_memory).handle(ask("Would a 910B4 run Qwen3.5-35B-A3B?"))
    assert plain.kind is ReplyKind.CLARIFY and "**Possibly related**" not in plain.text


async def test_a_chip_or_a_version_shared_with_a_thread_shows_nothing_before_the_question(sessions: RedisSessionStore) -> None:
    # A 910B thread resolved by "use the fused MoE ops" is about a model, not about every 910B question.
    def chip_memory() -> ResolutionMemory:
        return ResolutionMemory(extract_repository([
            thread(9, "GLM4.5 MoE crashes on 910B in graph mode", ("maint", "MEMBER", "Fix: make GLM4.5 use the fused MoE ops, or upgrade.")),
        ]).values())

    found = FixedRetriever([doc(REPO, 9.0, "GLM4.5 on 910B crashes", kind="issue", path="issues/9")])
    asked = await Conversation(sessions, retriever=found, memory=chip_memory).handle(ask("910B 上开图模式就挂，关了走 eager 很慢"))
    assert asked.kind is ReplyKind.CLARIFY and "**可能相关**" not in asked.text
