"""Per-product facts: loading, validation of bad files, trigger matching, and per-product reach."""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.knowledge.loader import ProductFactError, load_knowledge_base, load_product_facts
from core.knowledge.product_facts import match_product_facts, trigger_weight
from core.knowledge.schema import KINDS, MAX_TEXT, Bilingual, ProductFact

LLM = "verylucky01/MindIE-LLM"
MOTOR = "verylucky01/MindIE-Motor"
PYMOTOR = "verylucky01/MindIE-PyMotor"
SD = "verylucky01/MindIE-SD"
SLIM = "verylucky01/MindStudio-ModelSlim"
TURBO = "verylucky01/MindIE-Turbo"
VLLM = "vllm-project/vllm"
ASCEND = "vllm-project/vllm-ascend"
SGLANG = "sgl-project/sglang"
CLONED = (ASCEND, LLM, SD, MOTOR, PYMOTOR, SLIM)


def _clones_dir() -> Path | None:
    for candidate in (os.environ.get("REPOS_DIR"), "/work/repos"):
        if candidate and any((Path(candidate) / repo).is_dir() for repo in CLONED):
            return Path(candidate)
    return None


# ------------------------------------------------------------------ fixtures


def _fact(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "sample-fact",
        "products": [LLM],
        "kind": "error",
        "triggers": ["SAMPLE_ERROR_X", "样例错误"],
        "title_en": "Sample",
        "title_zh": "样例",
        "text_en": "A sample fact.",
        "text_zh": "一个样例事实。",
        "source": f"{LLM}:docs/zh/faq/faq.md",
    }
    base.update(overrides)
    return base


def _write(directory: Path, name: str, facts: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    body = facts if isinstance(facts, str) else json.dumps({"facts": facts}, ensure_ascii=False)
    (directory / name).write_text(body, encoding="utf-8")
    return directory


def _sample(id: str, products: tuple[str, ...], triggers: tuple[str, ...]) -> ProductFact:
    return ProductFact.model_construct(  # an in-memory sample: file rules (id format, Chinese text) do not apply
        id=id,
        products=products,
        kind="faq",
        triggers=triggers,
        title=Bilingual(id, id),
        text=Bilingual(id, "样例"),
        commands=(),
        source=f"{LLM}:README.md",
    )


# ------------------------------------------------------------------- loading


def test_real_facts_load_with_enough_facts_per_product() -> None:
    facts = load_product_facts()
    per_product = Counter(p for f in facts for p in f.products)
    for repo in CLONED:
        assert per_product[repo] >= 15, (repo, per_product[repo])
    for repo in (VLLM, SGLANG, TURBO):
        assert per_product[repo] >= 8, (repo, per_product[repo])
    known = {r.repo for r in load_knowledge_base().repositories}
    assert set(per_product) == known  # every one of the nine products has facts, and no others
    assert len({f.id for f in facts}) == len(facts)


def test_real_facts_are_short_bilingual_and_cite_a_resolvable_source() -> None:
    for f in load_product_facts():
        assert f.kind in KINDS
        assert 0 < len(f.text.en) <= MAX_TEXT and 0 < len(f.text.zh) <= MAX_TEXT
        assert any("\u4e00" <= ch <= "\u9fff" for ch in f.text.zh), f.id
        assert f.source_url.startswith("https://"), f.id
        if ":" in f.source and not f.source.startswith("https://"):
            repo, path = f.source.split(":", 1)
            assert f.source_url.endswith("/" + path) and repo in f.source_url


def test_cloned_products_cite_their_own_clone_and_the_paths_exist() -> None:
    clones = _clones_dir()
    if clones is None:
        pytest.skip("no clones under REPOS_DIR or /work/repos")
    load_product_facts(repos_dir=clones)  # raises if any cited path is missing from its clone
    checked = 0
    for f in load_product_facts():
        if f.source.startswith("https://"):
            continue
        repo, path = f.source.split(":", 1)
        if (clones / repo).is_dir():
            assert (clones / repo / path).exists(), f.source
            checked += 1
    assert checked >= 90


def test_docs_tables_match_the_files() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "knowledge.md").read_text(encoding="utf-8")
    products_dir = Path(__file__).resolve().parents[2] / "core" / "knowledge" / "products"
    for path in sorted(products_dir.glob("*.json")):
        count = len(json.loads(path.read_text(encoding="utf-8"))["facts"])
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{path.name}` |")), None)
        assert row is not None, path.name
        assert row.split("|")[3].strip() == str(count), (path.name, count)
    for repo, count in Counter(p for f in load_product_facts() for p in f.products).items():
        assert f"| {repo} | {count} |" in doc, (repo, count)


def test_load_is_cached() -> None:
    assert load_product_facts() is load_product_facts()


def test_a_valid_fixture_loads_with_placeholders_and_lower_bounds(tmp_path: Path) -> None:
    d = _write(tmp_path / "p", "x.json", [_fact(commands=["export VLLM_VERSION=<vllm-version>", 'pip install "pydantic>=2.10.1"'])])
    (fact,) = load_product_facts(d)
    assert fact.commands[0].endswith("<vllm-version>")
    assert fact.source_url == f"https://github.com/{LLM}/blob/HEAD/docs/zh/faq/faq.md"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"products": ["someone/unknown"]}, "unknown product"),
        ({"products": []}, "'products' must not be empty"),
        ({"text_en": "   "}, "'text_en' must be a non-empty string"),
        ({"text_zh": None}, "'text_zh' must be a non-empty string"),
        ({"title_zh": ""}, "'title_zh' must be a non-empty string"),
        ({"text_zh": "English only, no Chinese."}, "text_zh must be written in Chinese"),
        ({"text_en": "x" * (MAX_TEXT + 1)}, "at most 350"),
        ({"kind": "rumour"}, "kind 'rumour'"),
        ({"triggers": []}, "'triggers' must not be empty"),
        ({"triggers": ["C8"]}, "too short"),
        ({"triggers": ["库"]}, "too short"),
        ({"triggers": ["MindIE-Motor"]}, "is a product name"),
        ({"triggers": ["mindie turbo"]}, "is a product name"),
        ({"id": "Bad Id"}, "id must be lowercase"),
        ({"source": "not a ref"}, "neither an https URL"),
        ({"source": "http://example.com/page"}, "neither an https URL"),
        ({"source": "someone/else:README.md"}, "not in repositories.json"),
        ({"source": f"{LLM}:../outside.md"}, "leaves its repository"),
        ({"source": f"{LLM}:/etc/hostname"}, "leaves its repository"),
        ({"commands": ["export VLLM_VERSION=0.11.0"]}, "literal version"),
        ({"commands": ["pip install vllm-ascend==v0.9.1rc1"]}, "literal version"),
        ({"commands": ["pip install torch_npu==2.10.0.post4"]}, "literal version"),
        ({"commands": ["docker pull quay.io/ascend/cann:8.2.RC1-910b"]}, "literal version"),
    ],
)
def test_bad_fact_is_rejected_with_file_and_id(tmp_path: Path, overrides: dict[str, Any], message: str) -> None:
    d = _write(tmp_path / "p", "bad.json", [_fact(**overrides)])
    with pytest.raises(ProductFactError) as err:
        load_product_facts(d)
    assert message in str(err.value)
    assert str(err.value).startswith("bad.json:")


def test_duplicate_id_across_files_is_rejected(tmp_path: Path) -> None:
    d = tmp_path / "p"
    _write(d, "a.json", [_fact()])
    _write(d, "b.json", [_fact(products=[MOTOR])])
    with pytest.raises(ProductFactError, match="duplicate id 'sample-fact'"):
        load_product_facts(d)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"facts": []}), "non-empty 'facts' list"),
        (json.dumps([1, 2]), "non-empty 'facts' list"),
        (json.dumps({"facts": ["text"]}), "expected an object"),
    ],
)
def test_malformed_file_is_rejected(tmp_path: Path, body: str, message: str) -> None:
    d = _write(tmp_path / "p", "broken.json", body)
    with pytest.raises(ProductFactError, match=message):
        load_product_facts(d)


def test_missing_or_empty_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ProductFactError, match="not found"):
        load_product_facts(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProductFactError, match="no product fact files"):
        load_product_facts(tmp_path / "empty")


def test_source_path_missing_from_a_clone_is_rejected(tmp_path: Path) -> None:
    clones = tmp_path / "repos"
    (clones / LLM / "docs").mkdir(parents=True)
    (clones / LLM / "docs" / "present.md").write_text("x", encoding="utf-8")
    good = _write(tmp_path / "good", "x.json", [_fact(source=f"{LLM}:docs/present.md")])
    assert load_product_facts(good, repos_dir=clones)
    bad = _write(tmp_path / "bad", "x.json", [_fact(source=f"{LLM}:docs/gone.md")])
    with pytest.raises(ProductFactError, match="does not exist in the clone"):
        load_product_facts(bad, repos_dir=clones)
    # A repository that has no clone there is not checked.
    other = _write(tmp_path / "other", "x.json", [_fact(source=f"{MOTOR}:docs/gone.md", products=[MOTOR])])
    assert load_product_facts(other, repos_dir=clones)
    # Without repos_dir the path is not checked at all (the bot runs without clones).
    assert load_product_facts(bad)


# ------------------------------------------------------------------ matching


def test_english_and_chinese_triggers_match_case_insensitively() -> None:
    pool = [_sample("a", (LLM,), ("need block", "显存不足"))]
    assert [f.id for f in match_product_facts("Error: Out Of Memory, NEED BLOCK", [], facts=pool)] == ["a"]
    assert [f.id for f in match_product_facts("推理时显存不足怎么办", [], facts=pool)] == ["a"]
    assert match_product_facts("nothing relevant here", [], facts=pool) == []


def test_ascii_triggers_respect_word_boundaries() -> None:
    pool = [_sample("oom", (LLM,), ("OOM",)), _sample("soc", (ASCEND,), ("SOC_VERSION",))]
    assert match_product_facts("ZOOM meeting", [], facts=pool) == []
    assert match_product_facts("SOC_VERSIONS are listed", [], facts=pool) == []
    assert match_product_facts("MY_SOC_VERSION=1", [], facts=pool) == []
    assert [f.id for f in match_product_facts("got an OOM.", [], facts=pool)] == ["oom"]
    assert [f.id for f in match_product_facts("export SOC_VERSION=x", [], facts=pool)] == ["soc"]
    # A trigger that starts with a non-word character still matches after a space or '='.
    flags = [_sample("eager", (VLLM,), ("--enforce-eager",))]
    assert match_product_facts("vllm serve m --enforce-eager", [], facts=flags)[0].id == "eager"


def test_chinese_triggers_match_inside_running_text() -> None:
    pool = [_sample("scale", (PYMOTOR,), ("扩缩容",))]
    assert match_product_facts("请问怎么做手动扩缩容呀", [], facts=pool)[0].id == "scale"


def test_identifier_outranks_generic_phrase() -> None:
    generic = _sample("generic", (ASCEND,), ("out of memory", "memory"))
    specific = _sample("specific", (ASCEND,), ("PYTORCH_NPU_ALLOC_CONF",))
    ranked = match_product_facts("out of memory even with PYTORCH_NPU_ALLOC_CONF set; memory full", [], facts=[generic, specific])
    assert [f.id for f in ranked] == ["specific", "generic"]
    assert trigger_weight("PYTORCH_NPU_ALLOC_CONF") > trigger_weight("out of memory") > trigger_weight("memory")
    assert trigger_weight("NPUModelRunner") == trigger_weight("--enforce-eager") == 3
    assert trigger_weight("Failed to infer device type") == 3  # an error sentence is specific too
    assert trigger_weight("安装") < trigger_weight("扩缩容") == trigger_weight("显存不足") < trigger_weight("KV cache传输超时")


def test_more_hits_rank_higher_and_limit_applies() -> None:
    one = _sample("one", (SD,), ("DiTCache",))
    two = _sample("two", (SD,), ("DiTCache", "CacheConfig"))
    text = "DiTCache with CacheConfig"
    assert [f.id for f in match_product_facts(text, [], facts=[one, two])] == ["two", "one"]
    assert [f.id for f in match_product_facts(text, [], limit=1, facts=[one, two])] == ["two"]
    assert match_product_facts(text, [], limit=0, facts=[one, two]) == []
    assert match_product_facts("", [], facts=[one, two]) == []


def test_phrase_inside_a_longer_matched_trigger_is_not_evidence() -> None:
    specific = _sample("need-block", (LLM,), ("out of memory, need block",))
    generic = _sample("generic-oom", (SD,), ("out of memory",))
    assert [f.id for f in match_product_facts("error: out of memory, need block", [], facts=[specific, generic])] == ["need-block"]
    # When the generic phrase also occurs on its own, it counts again.
    both = "out of memory, need block; later plain out of memory"
    assert [f.id for f in match_product_facts(both, [], facts=[specific, generic])] == ["need-block", "generic-oom"]


def test_single_plain_word_needs_a_routed_repository() -> None:
    install = _sample("install", (SD,), ("install", "安装"))
    assert match_product_facts("how do I install it? 怎么安装", [], facts=[install]) == []
    assert [f.id for f in match_product_facts("how do I install it?", [SD], facts=[install])] == ["install"]
    # A phrase of several words is evidence on its own.
    phrase = _sample("phrase", (SD,), ("install mindiesd",))
    assert [f.id for f in match_product_facts("how to install mindiesd", [], facts=[phrase])] == ["phrase"]


def test_repo_restriction_and_empty_means_all() -> None:
    a = _sample("a", (LLM,), ("shared_trigger",))
    b = _sample("b", (MOTOR, LLM), ("shared_trigger",))
    c = _sample("c", (SD,), ("shared_trigger",))
    pool = [a, b, c]
    assert {f.id for f in match_product_facts("shared_trigger", [MOTOR], facts=pool)} == {"b"}
    assert {f.id for f in match_product_facts("shared_trigger", [SD, MOTOR], facts=pool)} == {"b", "c"}
    assert {f.id for f in match_product_facts("shared_trigger", [], facts=pool)} == {"a", "b", "c"}
    assert match_product_facts("shared_trigger", ["sgl-project/sglang"], facts=pool) == []


def test_matching_is_linear_on_adversarial_text() -> None:
    # Long runs of near-misses must not blow up: every check is a plain substring scan.
    pool = [_sample("x", (LLM,), ("a" * 30 + "b", "aaaa_aaaa"))]
    text = "a" * 200_000
    assert match_product_facts(text, [], facts=pool) == []


# ------------------------------------------------- one realistic question per product and language

QUESTIONS = {
    ASCEND: (
        "After pip install -e of vLLM from source, vllm-ascend fails with InvalidVersion. What should VLLM_VERSION be?",
        "DeepSeek-V2-Lite 开启图模式报错 MLA only support {32, 64, 128}，怎么办？",
    ),
    VLLM: (
        "vLLM refuses to start: User-specified max_model_len is greater than the derived max_model_len. Can I force it?",
        "用 vllm serve 启动后输出质量变差了，是不是 generation_config.json 里的默认采样参数导致的？",
    ),
    SGLANG: (
        "How do I set ASCEND_MF_STORE_URL for prefill and decode servers when running PD disaggregation on Atlas A2?",
        "SGLANG_USE_FIA_NZ 打开后没有效果，需要和什么一起开启？",
    ),
    LLM: (
        "Pure model inference fails with 'out of memory, need block' when I feed a large image",
        "多卡服务化时报缺少环境变量 MASTER_ADDR，怎么设置？",
    ),
    MOTOR: (
        "Requests are rejected by the coordinator under load; what do max_requests and single_node_max_requests default to?",
        "Controller 的 default_p_rate 和 default_d_rate 怎么配置 PD 比例？",
    ),
    PYMOTOR: (
        "How do I scale out decode instances with deploy.py --update_instance_num?",
        "show_log.sh 执行后报错 failed to create fsnotify watcher: too many open files",
    ),
    SD: (
        "Which is better for Wan2.1 acceleration, DiTCache or AttentionCache?",
        "Ulysses 序列并行的并行度有什么约束？",
    ),
    TURBO: (
        "What does VLLM_OPTIMIZATION_LEVEL=3 do?",
        "日志里出现 vLLM Turbo initialization failed. Running without optimizations 是什么原因",
    ),
    SLIM: (
        "Quantizing on Atlas 300I Duo fails with 'The param dtype not implemented for DT_BFLOAT16'",
        "用 msmodelslim quant 做一键量化时 --model_type 应该怎么写？",
    ),
}


@pytest.mark.parametrize("repo", sorted(QUESTIONS))
@pytest.mark.parametrize("language", [0, 1], ids=["en", "zh"])
def test_a_realistic_question_reaches_its_product_only(repo: str, language: int) -> None:
    question = QUESTIONS[repo][language]
    found = match_product_facts(question, [])  # no routing hint: the triggers alone must settle it
    assert found, question
    assert all(repo in f.products for f in found), [f.id for f in found]
    # With the repository routed, the same fact comes first.
    assert match_product_facts(question, [repo])[0] == found[0]
