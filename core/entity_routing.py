"""Which product a question is about when it names no product but names something only one has.

An env var, a config key, a CLI tool or an error sentence that the knowledge base
ties to one product (or two) settles the route; so does a known-broken feature
combination (MLA head counts in graph mode) and a vllm-ascend release
version (an RC or post release listed in its compatibility matrix). The router
asks this only when the text alone would get the "which project?" menu or an
out-of-scope note: a product named in the text always wins.
"""
from __future__ import annotations

from collections.abc import Callable

from core.knowledge.base import KnowledgeBase
from core.knowledge.product_facts import products_of_identifiers
from core.signals import extract_signals, find_env_names, find_versions

VLLM_ASCEND = "vllm-project/vllm-ascend"


def products_of_named_entities(
    text: str, kb: KnowledgeBase, runtime_error: Callable[[str], bool] = lambda _t: False
) -> tuple[str, ...]:
    """Products settled by named entities in `text`, most evidence first; () when none.

    `runtime_error` tells an error every product on Ascend can raise (an ACL code, "NPU out
    of memory"): a product's fact that quotes one does not make the question that product's.
    """
    env_names = set(find_env_names(text))
    # CANN/torch_npu variables (ASCEND_RT_VISIBLE_DEVICES, HCCL_*) belong to every product on
    # Ascend: a product's fact that mentions one says nothing about which product is meant.
    shared = {v.name for v in kb.env_vars if len(v.products) > 2}
    found: list[str] = list(products_of_identifiers(text, shared=runtime_error)) if not env_names & shared else []
    for var in kb.env_vars:
        if var.name in env_names and 0 < len(var.products) <= 2:
            found.extend(var.products)
    features = set(extract_signals(text).features)
    for combo in kb.incompatibilities:
        if 0 < len(combo.products) <= 2 and set(combo.requires_all) <= features and (
            not combo.requires_any or features & set(combo.requires_any)
        ):
            found.extend(combo.products)
    if names_a_vllm_ascend_release(text, kb):
        found.append(VLLM_ASCEND)
    return tuple(dict.fromkeys(found))


def names_a_vllm_ascend_release(text: str, kb: KnowledgeBase) -> bool:
    # A bare 0.11.0 could be any package; an rc/post release that is a row of the plugin's
    # matrix is the plugin's own version string.
    releases = {row.vllm_ascend for row in kb.matrix.rows}
    return any(v in releases and ("rc" in v or "post" in v) for v in find_versions(text))
