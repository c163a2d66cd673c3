"""Named entities settle the product when the question names none (issue 12: lookups before menus)."""
from __future__ import annotations

import pytest

from core.entity_routing import products_of_named_entities
from core.knowledge.loader import load_knowledge_base
from core.knowledge.product_facts import products_of_identifiers
from core.knowledge.schema import Bilingual, ProductFact
from core.router import route

VLLM_ASCEND = "vllm-project/vllm-ascend"


def _fact(fid: str, products: tuple[str, ...], triggers: tuple[str, ...]) -> ProductFact:
    return ProductFact.model_construct(id=fid, products=products, kind="config", triggers=triggers, title=Bilingual("t", "标题"),
                                       text=Bilingual("text", "文本"), source="https://example.invalid/x")


def test_a_plugin_only_env_var_settles_vllm_ascend() -> None:
    decision = route("VLLM_ASCEND_ENABLE_NZ=1 之后精度变差了")
    assert decision.action == "research"
    assert decision.repos == (VLLM_ASCEND,)


def test_a_version_pair_of_the_plugin_matrix_is_answered_not_refused() -> None:
    decision = route("v0.11.0rc1 和 v0.11.0 能配套吗")
    assert decision.action == "research"
    assert VLLM_ASCEND in decision.repos


def test_a_known_broken_combination_settles_its_product() -> None:
    decision = route("MLA only support {32, 64, 128} 报错 deepseek")
    assert decision.action == "research"
    assert decision.repos == (VLLM_ASCEND,)


def test_a_cann_variable_every_product_uses_settles_nothing() -> None:
    kb = load_knowledge_base()
    assert products_of_named_entities("ASCEND_RT_VISIBLE_DEVICES 怎么设置多卡？", kb) == ()
    assert route("ASCEND_RT_VISIBLE_DEVICES 怎么设置多卡？").action == "clarify"


def test_a_bare_version_is_not_a_plugin_release() -> None:
    assert products_of_named_entities("numpy 1.26.4 and 2.0.0", load_knowledge_base()) == ()


def test_identifier_triggers_need_their_capitals_and_skip_plain_words() -> None:
    facts = [_fact("a", ("verylucky01/MindIE-LLM",), ("maxSeqLen", "deploy"))]
    assert products_of_identifiers("maxSeqLen 设成多少", facts) == ("verylucky01/MindIE-LLM",)
    assert products_of_identifiers("the maxseqlen of my keras model", facts) == ()
    assert products_of_identifiers("how do I deploy", facts) == ()


def test_an_identifier_three_products_share_settles_nothing() -> None:
    shared = ("vllm-project/vllm-ascend", "verylucky01/MindIE-LLM", "sgl-project/sglang")
    facts = [_fact(f"f{i}", (p,), ("SOME_SHARED_KNOB",)) for i, p in enumerate(shared)]
    assert products_of_identifiers("SOME_SHARED_KNOB=1", facts) == ()
    assert products_of_identifiers("SOME_SHARED_KNOB=1", facts[:2]) == tuple(sorted(shared[:2]))


def test_runtime_errors_the_caller_marks_shared_settle_nothing() -> None:
    facts = [_fact("a", ("verylucky01/MindIE-Motor",), ("NPU out of memory",))]
    assert products_of_identifiers("NPU out of memory. Tried to allocate", facts) == ("verylucky01/MindIE-Motor",)
    assert products_of_identifiers("NPU out of memory. Tried to allocate", facts, shared=lambda t: "npu" in t.lower()) == ()


def test_hardware_names_never_settle_a_product() -> None:
    facts = [_fact("a", ("verylucky01/MindIE-LLM",), ("Atlas 300I Duo",))]
    assert products_of_identifiers("Atlas 300I Duo 能跑什么", facts) == ()


@pytest.mark.parametrize("session", [("verylucky01/MindStudio-ModelSlim",), ("verylucky01/MindIE-LLM",)])
def test_the_thread_s_product_wins_over_an_entity_in_a_follow_up(session: tuple[str, ...]) -> None:
    assert route("那 VLLM_VERSION 要怎么设？", session_repos=session).repos == session


def test_a_component_s_own_key_settles_a_bare_mindie_question() -> None:
    decision = route("MindIE 的 maxSeqLen 在哪里配")
    assert (decision.action, decision.repos) == ("research", ("verylucky01/MindIE-LLM",))


def test_a_bare_mindie_question_without_such_a_name_still_asks() -> None:
    assert route("MindIE 报 undefined symbol，怎么排查").action == "clarify"
