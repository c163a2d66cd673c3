"""A command the user's problem report already ran, with the same value, is not suggested again."""
from __future__ import annotations

from core.triage import _already_tried, triage

SPEC = "vllm serve <model> --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'"


def test_a_setting_already_in_the_report_with_its_value_counts_as_tried() -> None:
    assert _already_tried(SPEC, 'i set "method": "mtp" in --speculative-config and get notimplementederror')
    assert not _already_tried(SPEC, "draft acceptance rate stays at 0%")
    assert _already_tried("export VLLM_USE_V1=0", "with vllm_use_v1=0 it still fails")
    assert _already_tried("vllm serve m --max-model-len 4096", "--max-model-len 4096 crashes")
    assert not _already_tried("export HCCL_CONNECT_TIMEOUT=<seconds>", "hccl_connect_timeout=1200 did not help")  # a placeholder


def test_the_mtp_advice_does_not_repeat_the_failing_config() -> None:
    asked = ('MTP draft model acceptance rate is 0%; with --speculative-config \'{"method": "mtp", "num_speculative_tokens": 1}\' '
             "startup raises NotImplementedError")
    out = triage(asked, ["vllm-project/vllm-ascend"], "en")
    assert '"method": "mtp"' not in out.text.replace(asked, "")
    plain = triage("MTP draft model acceptance rate is 0% and startup fails with an error", ["vllm-project/vllm-ascend"], "en")
    assert "--speculative-config" in plain.text  # without the user's own setting the command is still offered
