"""A command the user's problem report already ran, with the same value, is not suggested again."""
from __future__ import annotations

from core.release_matrix import current_knowledge
from core.triage import diagnose, triage
from core.triage.advice import _already_tried, _commands

SPEC = "vllm serve <model> --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}'"


def test_a_setting_already_in_the_report_with_its_value_counts_as_tried() -> None:
    assert _already_tried(SPEC, 'i set "method": "mtp" in --speculative-config and get notimplementederror')
    assert not _already_tried(SPEC, "draft acceptance rate stays at 0%")
    assert _already_tried("export VLLM_USE_V1=0", "with vllm_use_v1=0 it still fails")
    assert _already_tried("vllm serve m --max-model-len 4096", "--max-model-len 4096 crashes")
    assert not _already_tried("export HCCL_CONNECT_TIMEOUT=<seconds>", "hccl_connect_timeout=1200 did not help")  # a placeholder


def test_the_mtp_advice_does_not_repeat_the_failing_config() -> None:
    pattern = next(p for p in current_knowledge().patterns if any("--speculative-config" in c.run for c in p.commands))
    asked = ('MTP draft model acceptance rate is 0%; with --speculative-config \'{"method": "mtp", "num_speculative_tokens": 1}\' '
             "startup raises NotImplementedError")
    tried = _commands(pattern.commands, diagnose(asked, repos=("vllm-project/vllm-ascend",)))
    assert not any('"method": "mtp"' in run for run in tried)
    fresh = _commands(pattern.commands, diagnose("MTP draft model acceptance rate is 0% and startup fails with an error",
                                                 repos=("vllm-project/vllm-ascend",)))
    assert any("--speculative-config" in run for run in fresh)  # without the user's own setting it is still offered


def test_a_pattern_matched_on_words_only_offers_no_command() -> None:
    out = triage("MTP draft model acceptance rate is 0% and startup fails with an error", ["vllm-project/vllm-ascend"], "en")
    assert out.text.startswith("**Possibly related:**") and "```" not in out.text


def test_a_flag_the_user_plans_to_set_gets_no_troubleshooting_step() -> None:
    def noted(question: str) -> bool:
        return any(flag == "--max-model-len" for flag, _, _ in diagnose(question, repos=("vllm-project/vllm-ascend",)).flag_notes)

    assert not noted("Can I raise --max-model-len 131072 with YaRN rope scaling on vllm-ascend?")
    assert noted("What does --max-model-len do on vllm-ascend?")  # named without a value: explained
