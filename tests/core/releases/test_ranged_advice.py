"""Offline answers keep to the advice that holds on the user's release (the ranges in core/knowledge/)."""
from __future__ import annotations

from core.triage import triage

VA = ("vllm-project/vllm-ascend",)


def test_graph_mode_steps_that_need_a_newer_release_are_left_out() -> None:
    old = triage("vllm-ascend 0.9.1: graph capture fails with aclgraph, FULL_DECODE_ONLY error", VA, "en").text
    new = triage("vllm-ascend 0.13.0: graph capture fails with aclgraph, FULL_DECODE_ONLY error", VA, "en").text
    assert "cudagraph_mode" not in old and "--enforce-eager" in old  # the capture check holds everywhere
    assert "switch cudagraph_mode" in new


def test_the_default_of_a_variable_follows_the_release() -> None:
    before = triage("vllm-ascend 0.13.0: VLLM_ASCEND_ENABLE_MLAPO default?", VA, "en").text
    after = triage("vllm-ascend 0.18.0: VLLM_ASCEND_ENABLE_MLAPO default?", VA, "en").text
    assert "off by default (0)" in before and "on by default (1)" not in before
    assert "on by default (1)" in after and "off by default (0)" not in after
    unknown = triage("VLLM_ASCEND_ENABLE_MLAPO default on vllm-ascend?", VA, "en").text
    assert "(v0.11.0rc0 up to, not including, v0.14.0rc1)" in unknown and "(v0.14.0rc1 or later)" in unknown


def test_a_variable_newer_than_the_users_release_says_what_it_needs() -> None:
    text = triage("vllm-ascend 0.10.0rc1 上 VLLM_ASCEND_ENABLE_MLAPO 怎么用", VA, "zh").text
    assert "`VLLM_ASCEND_ENABLE_MLAPO`" in text and "（需要 v0.11.0rc0 或更高版本）" in text
