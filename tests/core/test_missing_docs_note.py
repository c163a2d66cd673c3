"""An answer about a product whose docs the index lacks says so and how to add them (issue 22 item 4)."""
from __future__ import annotations

from collections.abc import Sequence

from bot.index_command import index_status_lines
from core.conversation import Conversation
from core.messages import InboundMessage, ReplyKind
from core.session import RedisSessionStore


class Index:
    """A retriever with nothing relevant to say, holding the docs of `with_files` only."""

    def __init__(self, with_files: set[str]) -> None:
        self.with_files = with_files

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: object = None) -> list:
        return []

    def repos_with_files(self) -> set[str]:
        return self.with_files


def _ask(conversation: Conversation, text: str, thread: str):  # type: ignore[no-untyped-def]
    return conversation.handle(InboundMessage("terminal", "w", "c", thread, "u", text, thread, thread, True))


async def test_an_upstream_vllm_answer_without_its_clone_says_how_to_add_it(redis, keys) -> None:
    conversation = Conversation(RedisSessionStore(redis, keys, 600), retriever=Index({"vllm-project/vllm-ascend"}))
    reply = await _ask(conversation, "What is PagedAttention and why does it help LLM inference?", "a")
    assert reply.kind is ReplyKind.ANSWER and reply.repos == ("vllm-project/vllm",)
    assert "python -m bot sync vllm-project/vllm" in reply.text
    zh = await _ask(conversation, "大模型推理时 KV cache 的量化有什么好处？", "b")
    assert "本地没有 vLLM 的文档" in zh.text


async def test_no_note_when_the_docs_are_indexed(redis, keys) -> None:
    conversation = Conversation(RedisSessionStore(redis, keys, 600), retriever=Index({"vllm-project/vllm"}))
    reply = await _ask(conversation, "What is PagedAttention and why does it help LLM inference?", "c")
    assert reply.kind is ReplyKind.ANSWER and "bot sync" not in reply.text


def test_doctor_names_every_repository_indexed_without_its_clone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from bot.settings import Settings

    gen = tmp_path / "index" / "gen-1"
    gen.mkdir(parents=True)
    (tmp_path / "index" / "CURRENT").write_text("gen-1", encoding="utf-8")
    manifest = {"created_at": "2026-12-03T00:00:00Z", "units": 5,
                "repos": {"vllm-project/vllm": {"units": 0, "issues": 30}, "vllm-project/vllm-ascend": {"units": 5}}}
    (gen / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = index_status_lines(Settings(_env_file=None, INDEX_DIR=str(tmp_path / "index"),  # type: ignore[call-arg]
                                        REPOS_DIR=str(tmp_path / "repos")))
    vllm = [line for line in lines if line.startswith("[info]   vllm-project/vllm: ")]
    assert vllm == ["[info]   vllm-project/vllm: not cloned, 30 issues indexed, no docs or code (`python -m bot sync "
                    "vllm-project/vllm`, or `python -m bot sync --from DIR` with a copy made elsewhere)"]
    assert "[info]   vllm-project/vllm-ascend: not cloned, indexed at -: 5 units (from an earlier clone) (" in "\n".join(lines)
    assert sum("answers about it quote no docs or code" in line for line in lines) == 7  # the seven never indexed
