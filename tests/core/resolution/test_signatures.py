"""Error signatures: decisive lines found in pastes, normalised so two reports of one failure meet."""
from __future__ import annotations

import time

from core.resolution.focus import focus
from core.resolution.signatures import decisive, error_lines, normalise

TRACEBACK = """\
INFO 05-01 10:00:00 [core.py:12] starting engine
[rank0]: Traceback (most recent call last):
[rank0]:   File "/usr/local/lib/python3.10/site-packages/vllm_ascend/worker.py", line 164, in init_device
[rank0]:     import numpy as np
[rank0]: AttributeError: module 'numpy' has no attribute 'float'
(EngineCore_DP0 pid=1234) ERROR 05-01 10:00:01 [core.py:700] RuntimeError: Engine core initialization failed. See root cause above.
"""


def test_the_last_specific_exception_is_decisive_not_the_wrapper() -> None:
    (line,) = decisive(error_lines(TRACEBACK))
    assert line.signature == "AttributeError: module 'numpy' has no attribute 'float'"
    assert line.line.startswith("AttributeError")  # prefixes ([rank0]:, pid, level, time) are gone


def test_two_machines_give_one_signature() -> None:
    a = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 29.50 GiB total) at /home/a/x.py:12 0x7ffe12"
    b = "RuntimeError: NPU out of memory. Tried to allocate 512.00 GiB (NPU 7; 61.00 GiB total) at /opt/b/y.py:99 0xdeadbeef"
    assert error_lines(a)[0].signature == error_lines(b)[0].signature


def test_codes_and_call_style_exceptions() -> None:
    found = {e.signature for e in error_lines("ACL stream synchronize failed, error code:507014\nEZ9999: Inner Error!\nE39999 x")}
    assert {"code 507014", "EZ9999", "E39999"} <= found
    (imp,) = error_lines("Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file')")
    assert imp.signature == "ImportError: libcudart.so.12: cannot open shared object file"  # a library name stays whole
    assert error_lines("^[[36m(TaskRunner pid=1)^[[0m ValueError: Unsupported soc_version: Ascend910") [0].signature == (
        "ValueError: Unsupported soc_version: Ascend910")  # a chip name is part of the failure


def test_prose_about_errors_is_not_an_error_line() -> None:
    assert error_lines("ValueErrors are bad and ## Error headings too") == ()
    assert normalise("  file '/a/b/c.py' line 12 0xFF  ") == "file <path> line <n> <hex>"


def test_a_paste_is_searched_by_its_decisive_lines() -> None:
    seen = focus("my server dies after the upgrade\n```\n" + TRACEBACK + "```\nvllm serve /models/qwen --tensor-parallel-size 2")
    assert seen.is_paste and seen.command.startswith("vllm serve")
    assert "starting engine" not in seen.query() and "AttributeError" in seen.query()
    assert seen.keyed_on.startswith("AttributeError: module 'numpy'")
    plain = focus("How do I enable prefix caching?")
    assert not plain.is_paste and plain.query() == "How do I enable prefix caching?"


def test_hostile_input_stays_linear() -> None:
    for hostile in ("a" * 200_000, ("Error: " + "[" * 500 + "\n") * 400, ("x." * 30_000) + "Error", "/" * 200_000, "(pid=" * 40_000):
        started = time.process_time()
        focus(hostile)
        assert time.process_time() - started < 5  # generous: catastrophic backtracking takes minutes
