"""Knowledge-base facts found by meaning (core/facts_index.py), in offline answers and in the index.

The questions are our own paraphrases of what new users asked (issue 22, item 5): none of them
holds a trigger phrase of the fact it needs. They are not from eval/eval_set.jsonl (held out).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from core.facts_index import FactDocument, fact_documents, fact_id_of, select_product_facts
from core.index.builder import build_index
from core.index.search import KnowledgeIndex
from core.knowledge.loader import load_product_facts
from core.knowledge.product_facts import match_product_facts
from core.triage import triage

MODELSLIM = "verylucky01/MindStudio-ModelSlim"
SGLANG = "sgl-project/sglang"
MINDIE_LLM = "verylucky01/MindIE-LLM"
ASCEND = "vllm-project/vllm-ascend"
SD = "verylucky01/MindIE-SD"


def ids(text: str, repos: tuple[str, ...]) -> list[str]:
    return [f.id for f in select_product_facts(text, repos)]


# (question, routed products, facts of which at least one must be shown)
PARAPHRASES = [
    # msModelSlim W8A8, without the word W8A8
    ("I want 8-bit weights and 8-bit activations for my Qwen2.5 checkpoint using modelslim, what do I run?",
     (MODELSLIM,), {"msmodelslim-quant-types", "msmodelslim-one-click-quant", "msmodelslim-v0-script-params"}),
    ("用 modelslim 把千问模型做成权重8bit激活8bit的量化，命令怎么写？",
     (MODELSLIM,), {"msmodelslim-quant-types", "msmodelslim-one-click-quant", "msmodelslim-v0-script-params"}),
    # SGLang on Ascend: how to launch
    ("How do I bring up an sglang server on our 910B box, which flags does the NPU need?",
     (SGLANG,), {"sglang-npu-attention-backend", "sglang-npu-docker", "sglang-npu-install"}),
    ("sglang 在昇腾 NPU 上怎么拉起服务，需要加哪些启动参数？",
     (SGLANG,), {"sglang-npu-attention-backend", "sglang-npu-docker", "sglang-npu-install"}),
    # MindIE "Failed to init endpoint" with more cards configured than the container has
    ("mindie service dies with 'Failed to init endpoint'; my config.json lists 8 devices but the container only has 4 NPUs",
     (MINDIE_LLM,), {"mindie-motor-worldsize-devices"}),
    # the bot's own `help` example (core/texts.py)
    ("How do I quantize Qwen3 to W8A8 with msModelSlim and serve it with vllm-ascend?",
     (MODELSLIM, ASCEND), {"msmodelslim-serve-with-vllm-ascend", "vllm-ascend-quantize-with-modelslim"}),
]


@pytest.mark.parametrize(("question", "repos", "wanted"), PARAPHRASES)
def test_a_question_in_other_words_gets_the_fact(question: str, repos: tuple[str, ...], wanted: set[str]) -> None:
    shown = ids(question, repos)
    assert wanted & set(shown), shown
    assert len(shown) <= 3


@pytest.mark.parametrize(("question", "repos", "wanted"), PARAPHRASES)
def test_the_trigger_rules_alone_missed_them(question: str, repos: tuple[str, ...], wanted: set[str]) -> None:
    # What this change is for: the old exact-phrase matching found none of these facts.
    assert not wanted & {f.id for f in match_product_facts(question, repos)}


def test_the_help_example_keeps_its_exact_facts_and_gains_the_serving_one() -> None:
    shown = ids("如何用 msModelSlim 把 Qwen3 量化成 W8A8 并用 vllm-ascend 部署？", (MODELSLIM, ASCEND))
    assert {"msmodelslim-quant-types", "vllm-ascend-quant-methods"} <= set(shown)
    english = ids("How do I quantize Qwen3 to W8A8 with msModelSlim and serve it with vllm-ascend?", (MODELSLIM, ASCEND))
    assert "msmodelslim-serve-with-vllm-ascend" in english


@pytest.mark.parametrize("question", [
    "what is the weather in Paris tomorrow and how do I bake bread",
    "明天北京会下雨吗？推荐一家好吃的餐厅",
    "Can you recommend a good laptop for gaming under 1000 dollars?",
])
def test_an_unrelated_question_gets_no_fact(question: str) -> None:
    for repos in [(MODELSLIM,), (SGLANG,), (MINDIE_LLM,), (ASCEND,), (SD,)]:
        assert ids(question, repos) == [], repos


def test_facts_of_another_product_are_not_shown_when_routing_chose_one() -> None:
    question = "How do I bring up an sglang server on our 910B box, which flags does the NPU need?"
    facts = {f.id: f for f in load_product_facts()}
    for repos in [(SGLANG,), (MINDIE_LLM,), (ASCEND,)]:
        for fact_id in ids(question, repos):
            assert set(facts[fact_id].products) & set(repos), (repos, fact_id)
    # the W8A8 question routed to vllm-ascend alone never gets msModelSlim's own facts
    shown = ids("I want 8-bit weights and 8-bit activations for my Qwen2.5 checkpoint, what do I run?", (ASCEND,))
    assert all(ASCEND in facts[i].products for i in shown), shown


def test_an_exact_identifier_still_wins_and_the_answer_stays_short() -> None:
    shown = ids("VLLM_ASCEND_ENABLE_NZ=2 是什么意思？跟 0 和 1 有啥区别", (ASCEND,))
    assert shown[0] == "vllm-ascend-enable-nz"
    assert len(shown) <= 3


def test_triage_shows_the_fact_found_by_meaning_with_its_own_source() -> None:
    question = "mindie service dies with 'Failed to init endpoint'; my config.json lists 8 devices but the container only has 4 NPUs"
    result = triage(question, (MINDIE_LLM,), "en")
    fact = next(f for f in load_product_facts() if f.id == "mindie-motor-worldsize-devices")
    assert fact.title.en in result.text
    assert fact.citation().url in {s.url for s in result.sources}


def test_fact_documents_carry_both_languages_keywords_products_and_a_source_link() -> None:
    documents = {d.id: d for d in fact_documents()}
    doc = documents["mindie-motor-worldsize-devices"]
    assert doc.kind == "fact" and MINDIE_LLM in doc.products
    assert "worldSize" in doc.text and "卡数" in doc.text and "keywords:" in doc.text
    assert doc.citation.url.startswith("https://") and doc.citation.url != doc.text
    assert doc.path(MINDIE_LLM) == "kb/mindie-llm/mindie-motor-worldsize-devices"
    assert fact_id_of(doc.path(MINDIE_LLM)) == "mindie-motor-worldsize-devices"
    assert any(d.kind == "pattern" for d in documents.values())  # problem patterns are documents too


def test_bot_index_writes_every_fact_as_a_unit_of_its_products(tmp_path: Path) -> None:
    from core.index.builder import RepoSource  # noqa: PLC0415

    sources = [RepoSource(MINDIE_LLM, tmp_path / "no-clone", "https://gitcode.com/Ascend/MindIE-LLM"),
               RepoSource(SGLANG, tmp_path / "no-clone-2", "https://github.com/sgl-project/sglang")]
    build_index(tmp_path / "index", sources)
    index = KnowledgeIndex(tmp_path / "index")
    found = index.search("how many cards does worldSize mean and what goes in npuDeviceIds", [MINDIE_LLM], k=3)
    assert found and found[0].path == "kb/mindie-llm/mindie-motor-worldsize-devices"
    assert found[0].url == next(d for d in fact_documents() if d.id == "mindie-motor-worldsize-devices").citation.url
    launch = index.search("sglang 在 NPU 上启动要加哪些 attention backend 参数", [SGLANG], k=3)
    assert any(p.path == "kb/sglang/sglang-npu-attention-backend" for p in launch)
    # a product without a source in this index gets no units of its facts
    assert all(p.repo in {MINDIE_LLM, SGLANG} for p in index.search("msmodelslim quant w8a8", k=5))


def test_triage_shows_an_indexed_fact_as_a_fact_not_as_a_passage(tmp_path: Path) -> None:
    from core.index.builder import RepoSource  # noqa: PLC0415

    build_index(tmp_path / "index", [RepoSource(MINDIE_LLM, tmp_path / "none", "https://gitcode.com/Ascend/MindIE-LLM")])
    question = "the service reads which config.json? I set MIES_CONFIG_JSON_PATH but it seems ignored"
    passages = KnowledgeIndex(tmp_path / "index").search(question, [MINDIE_LLM], k=3)
    assert any(p.path.startswith("kb/") for p in passages)
    result = triage(question, (MINDIE_LLM,), "en", passages=passages)
    assert "kb/mindie-llm" not in result.text  # not quoted as a passage ...
    assert "Which config.json the server reads" in result.text  # ... but shown once, as the fact


def test_documents_are_built_from_given_facts_only() -> None:
    doc = fact_documents(facts=[])
    assert all(isinstance(d, FactDocument) and d.kind == "pattern" for d in doc)


def test_a_long_identifier_keyword_is_not_met_by_its_parts() -> None:
    # `enable_transpose_kv_cache_by_block` (a keyword of the env-to-additional-config fact) splits into
    # "enable", "kv", "cache", "block": a prefix-caching question says all four and is not about it.
    shown = ids("Before I add `--enable-prefix-caching` on vllm-ascend: is there any constraint on the KV block size on NPU?", (ASCEND,))
    assert "vllm-ascend-env-to-additional-config" not in shown
    # the identifier itself still finds it
    assert "vllm-ascend-env-to-additional-config" in ids("what does enable_transpose_kv_cache_by_block do?", (ASCEND,))
