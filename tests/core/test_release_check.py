"""The environment against its release's matrix row, and what the offline answer says about it."""
from __future__ import annotations

from pathlib import Path

from core.conversation import Conversation
from core.environment import read_environment
from core.knowledge.loader import load_knowledge_base
from core.messages import InboundMessage, ReplyKind
from core.release_check import check_release
from core.session import RedisSessionStore
from core.triage import triage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "environment"
VA = "vllm-project/vllm-ascend"


def _check(text: str, *, on_main: bool = False):  # noqa: ANN202 - a test helper
    return check_release(read_environment(text), load_knowledge_base(), on_main=on_main)


def test_a_mismatch_names_exactly_the_fields_and_the_row_to_move_to() -> None:
    check = _check("vllm-ascend 0.9.1, vllm 0.9.1, CANN 8.1.RC1, torch 2.5.1, torch_npu 2.5.1.post1.dev20250528, python 3.10")
    assert check.kind == "row" and check.row is not None and check.row.vllm_ascend == "0.9.1"
    assert check.differs == ("cann", "torch_npu")
    assert check.move_to is not None and check.move_to.vllm_ascend == "0.9.1rc1"  # every other version fits that row
    text = triage("vllm-ascend 0.9.1, vllm 0.9.1, CANN 8.1.RC1, torch_npu 2.5.1.post1.dev20250528 fails", (VA,), "en").text
    assert "**Differs from the v0.9.1 row:** CANN; torch_npu." in text
    assert "move vllm-ascend to v0.9.1rc1, or move CANN; torch_npu to the v0.9.1 row" in text


def test_staying_on_the_release_names_the_values_to_change() -> None:
    check = _check((FIXTURES / "collect_env_910b.txt").read_text(encoding="utf-8"))
    assert check.differs == ("cann",) and check.move_to is None
    text = triage((FIXTURES / "collect_env_910b.txt").read_text(encoding="utf-8"), (VA,), "en").text
    assert "To stay on the v0.9.1 row, move to CANN 8.2.RC1." in text
    assert "read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1" in text
    assert "3.31.2" not in text and "11.4.0" not in text  # CMake and GCC from the paste are not looked up as releases


def test_every_column_is_checked_triton_ascend_and_mooncake_too() -> None:
    check = _check("vllm-ascend 0.23.0 with vllm 0.23.0, triton-ascend 3.2.1, mooncake-transfer-engine 0.3.9, python 3.12.3")
    statuses = {v.component: v.status for v in check.verdicts}
    assert statuses == {"vllm": "match", "python": "match", "triton-ascend": "mismatch", "mooncake": "mismatch"}
    assert check.move_to is not None and check.move_to.vllm_ascend == "0.23.0rc1"
    zh = triage("vllm-ascend 0.23.0，vllm 0.23.0，triton-ascend 3.2.1，mooncake 0.3.9", (VA,), "zh").text
    assert "**与 v0.23.0 这一行不一致：**Triton Ascend；Mooncake。" in zh
    assert "已读取：vllm-ascend 0.23.0，vLLM 0.23.0" in zh


def test_a_release_without_a_row_says_so_and_where_the_matrix_was_read() -> None:
    check = _check("vllm-ascend 0.31.0 with CANN 9.1.0")
    assert check.kind == "no_row" and check.row is None and check.verdicts[0].status == "unknown"
    text = triage("vllm-ascend 0.31.0 with CANN 9.1.0 crashes", (VA,), "en").text
    assert "no documented row" in text and "read from the built-in copy" in text
    line = triage("vllm-ascend 0.9.2rc2 crashes", (VA,), "en").text
    assert "v0.9.2rc1" in line  # the rows of that release line


def test_a_post_release_takes_its_release_row() -> None:
    check = _check("vllm-ascend 0.9.1.post1, CANN 8.1.RC1")
    assert check.kind == "post" and check.row is not None and check.row.vllm_ascend == "0.9.1" and check.differs == ("cann",)
    assert "is a post release of v0.9.1: the v0.9.1 row holds" in triage("vllm-ascend 0.9.1.post1 with CANN 8.1.RC1", (VA,), "en").text


def test_dev_builds_and_main_say_what_holds() -> None:
    dev = _check("vLLM Ascend Version: 0.9.2.dev45+g1a2b3c4\ntorch-npu==2.5.1")
    assert dev.kind == "dev" and dev.row is not None and dev.row.vllm_ascend == "0.9.2rc1" and dev.differs == ("torch_npu",)
    newest = _check("vllm_ascend 0.30.1.dev7+gabcdef1\nCANN 9.1.0")
    assert newest.kind == "dev" and newest.row is not None and newest.row.vllm_ascend == "main" and newest.differs == ()
    main = _check("we build vllm-ascend from main with CANN 8.5.1 and torch_npu 2.10.0.post4, vllm 0.23.0", on_main=True)
    assert main.kind == "main" and main.differs == ("cann",)
    assert {v.component: v.status for v in main.verdicts}["vllm"] == "info"  # a vLLM release is not main's verified commit
    text = triage("vllm-ascend main branch with CANN 8.5.1 and torch_npu 2.10.0.post4 fails to build", (VA,), "en").text
    assert "main has no release row" in text and "CANN 8.5.1 differs from **9.1.0**" in text


def test_hardware_support_of_the_release() -> None:
    a3 = _check("vllm-ascend 0.9.1 on Atlas 800I A3")
    (chip,) = [v for v in a3.verdicts if v.component == "chip"]
    assert chip.status == "mismatch" and chip.expected.startswith("v0.10.0rc1+")
    text = triage("vllm-ascend 0.9.1 on Atlas 800I A3 crashes at startup", (VA,), "en").text
    assert text.startswith("**Conclusion:** vllm-ascend 0.9.1 does not support your hardware (910C")
    duo = _check("vllm-ascend 0.9.1rc3 on 300I Duo")
    assert [v.component for v in duo.verdicts if v.status == "mismatch"] == ["chip"]  # the v0.9.1 line left Atlas 300I out
    assert not [v for v in _check("vllm-ascend 0.10.0rc1 on 300I Duo").verdicts if v.component == "chip"]


def test_an_image_built_for_another_chip() -> None:
    text = triage((FIXTURES / "image_and_words.txt").read_text(encoding="utf-8"), (VA,), "en").text
    assert "yours needs quay.io/ascend/vllm-ascend:v0.10.0rc1." in text
    a3 = _check("docker run quay.io/ascend/vllm-ascend:v0.11.0rc1 on an A3 node (910C)")
    (image,) = [v for v in a3.verdicts if v.component == "image"]
    assert image.expected == "quay.io/ascend/vllm-ascend:v0.11.0rc1-a3"
    # a release that does not support the chip has no image for it: the range is named, not "v0.7.3-a3"
    old = _check("docker run quay.io/ascend/vllm-ascend:v0.7.3 on a 910C node")
    (image,) = [v for v in old.verdicts if v.component == "image"]
    assert image.expected == "quay.io/ascend/vllm-ascend:<v0.10.0rc1+>-a3"


def test_conflicting_versions_the_answer_says_which_it_used() -> None:
    text = triage("vllm-ascend 0.9.1 with vllm 0.9.1 ... later pip list shows:\nvllm 0.9.2\nvllm_ascend 0.9.1\nit fails", (VA,), "en").text
    assert "vLLM 0.9.2 (the message also says 0.9.1; the last one is used)" in text
    assert "**Mismatch:** vllm-ascend 0.9.1 pairs with vLLM **0.9.1**, you have vLLM **0.9.2**" in text


def test_a_chip_question_alone_gets_no_read_line() -> None:
    assert "read:" not in triage("does 910B support w8a8?", (VA,), "en").text


# ------------------------------------------------------------------ in a thread


def _message(text: str) -> InboundMessage:
    return InboundMessage("terminal", "w", "c", "env-thread", "u", text, text[:20], text[:20], True)


async def test_the_environment_is_kept_and_corrected_in_the_thread(redis, keys) -> None:
    sessions = RedisSessionStore(redis, keys, 600)
    conversation = Conversation(sessions)
    paste = (FIXTURES / "collect_env_910b.txt").read_text(encoding="utf-8")
    first = await conversation.handle(_message(f"vllm-ascend fails to start, here is my env:\n{paste}"))
    assert first.kind is ReplyKind.ANSWER and "read: vllm-ascend 0.9.1, vLLM 0.9.1, CANN 8.1.RC1" in first.text
    assert "To stay on the v0.9.1 row, move to CANN 8.2.RC1." in first.text
    fixed = await conversation.handle(_message("sorry, actually CANN 8.2.RC1"))
    assert "CANN 8.2.RC1 (was 8.1.RC1)" in fixed.text
    assert "CANN 8.2.RC1 matches the row of vllm-ascend 0.9.1" in fixed.text and "Differs" not in fixed.text
    stored = await sessions.load(_message("x").conversation_key)
    assert stored.env["cann"] == "8.2.RC1" and stored.env["vllm-ascend"] == "0.9.1" and stored.env["chip"] == "910B"
    later = await conversation.handle(_message("不是 910B，是 910C"))
    assert "已读取" in later.text and "910C（之前为 910B）" in later.text
    assert "vllm-ascend 0.9.1 不支持你的硬件（910C" in later.text  # A3 needs v0.10.0rc1 or later
    assert (await sessions.load(_message("x").conversation_key)).env["chip"] == "910C"


def test_a_python_outside_the_row_names_the_release_that_takes_it() -> None:
    kb = load_knowledge_base()
    newer = check_release(read_environment("vllm-ascend 0.20.2rc1 with python 3.12"), kb)
    assert newer.python_row is not None and newer.python_newer
    assert newer.python_row.vllm_ascend == min(
        (r for r in kb.matrix.rows if (0, 20, 2) < tuple(int(x) for x in r.vllm_ascend.split("rc")[0].split(".")[:3])
         and r.python_max_exclusive == "3.13"), key=lambda r: tuple(int(x) for x in r.vllm_ascend.split("rc")[0].split(".")[:3])).vllm_ascend
    older = check_release(read_environment("vllm-ascend 0.12.0rc1 with python 3.9"), kb)
    assert older.python_row is not None and not older.python_newer and older.python_row.python_min == "3.9"
    assert check_release(read_environment("vllm-ascend 0.12.0rc1 with python 3.11"), kb).python_row is None
    text = triage("vllm-ascend 0.20.2rc1, python 3.12: does it work?", ["vllm-project/vllm-ascend"], "en").text
    assert f"Python 3.12 is supported from vllm-ascend **v{newer.python_row.vllm_ascend}** on" in text
