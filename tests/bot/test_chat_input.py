"""`chat` takes a multi-line paste as one message: the reader on real pipes, and the command on a real pty."""
from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.chat_input import PASTE_END, PASTE_START, MessageReader

ROOT = Path(__file__).resolve().parents[2]

LOG = [
    "vllm-ascend 0.9.1 with vllm 0.11.0 on Atlas 800I A2 fails at startup:",
    "Traceback (most recent call last):",
    '  File "worker.py", line 10, in init_device',
    "RuntimeError: ACL stream synchronize failed",
    "EL0004: error code 507015",
]


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass  # the test closed it to signal the end of input


def _write_later(fd: int, chunks: list[tuple[float, str]]) -> threading.Thread:
    """Writes each chunk after its delay, as a person or a terminal would, then closes the pipe."""

    def run() -> None:
        for delay, text in chunks:
            time.sleep(delay)
            os.write(fd, text.encode())
        os.close(fd)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _all_messages(reader: MessageReader) -> list[str]:
    messages = []
    while (message := reader.read_message()) is not None:
        messages.append(message)
    return messages


def test_a_five_line_paste_at_a_terminal_is_one_message_sent_by_the_blank_line(pipe):
    read_end, write_end = pipe
    hints = io.StringIO()
    # the paste arrives at once; the person presses Enter on an empty line a moment later
    writer = _write_later(write_end, [(0, "\n".join(LOG) + "\n"), (0.4, "\n"), (0.4, "and on A3?\n")])
    reader = MessageReader(read_end, hints=hints)
    assert _all_messages(reader) == ["\n".join(LOG), "and on A3?"]
    writer.join()
    assert "5 lines pasted" in hints.getvalue()


def test_typed_lines_are_sent_one_by_one_as_before(pipe):
    read_end, write_end = pipe
    writer = _write_later(write_end, [(0, "MindIE fails with 507015\n"), (0.4, "1\n"), (0.4, "\n"), (0.4, "帮助\n")])
    assert _all_messages(MessageReader(read_end, hints=io.StringIO())) == ["MindIE fails with 507015", "1", "帮助"]
    writer.join()


def test_lines_typed_after_an_unmarked_paste_join_it_until_the_blank_line(pipe):
    read_end, write_end = pipe
    hints = io.StringIO()
    # a blank line inside the paste belongs to it; the one typed afterwards sends
    paste = "Traceback (most recent call last):\n\nRuntimeError: boom\n"
    writer = _write_later(write_end, [(0, paste), (0.4, "why?\n"), (0.4, "\n")])
    assert _all_messages(MessageReader(read_end, hints=hints)) == [
        "Traceback (most recent call last):\n\nRuntimeError: boom\nwhy?"
    ]
    writer.join()
    assert hints.getvalue().count("pasted") == 1


def test_a_bracketed_paste_is_one_message_blank_lines_included_and_enter_sends_it(pipe):
    read_end, write_end = pipe
    paste = PASTE_START + "\n".join(LOG[:2]) + "\n\n" + "\n".join(LOG[2:]) + "\n" + PASTE_END
    # the terminal delivers the end marker with the Enter that follows the paste
    writer = _write_later(write_end, [(0, paste), (0.3, "\n"), (0.4, "reset\n")])
    assert _all_messages(MessageReader(read_end, hints=io.StringIO())) == [
        "\n".join(LOG[:2]) + "\n\n" + "\n".join(LOG[2:]),
        "reset",
    ]
    writer.join()


def test_text_typed_around_a_bracketed_paste_stays_with_it(pipe):
    read_end, write_end = pipe
    line = f"why does {PASTE_START}RuntimeError: a\nRuntimeError: b{PASTE_END} happen?\n"
    writer = _write_later(write_end, [(0, line)])
    assert _all_messages(MessageReader(read_end, hints=io.StringIO())) == ["why does RuntimeError: a\nRuntimeError: b happen?"]
    writer.join()


def test_piped_messages_are_separated_by_blank_lines_and_end_of_input_sends_the_last(pipe):
    read_end, write_end = pipe
    script = "\n\n" + "\n".join(LOG) + "\n\n1\n\n帮助"  # no newline at the very end
    writer = _write_later(write_end, [(0, script)])
    assert _all_messages(MessageReader(read_end, hints=None)) == ["\n".join(LOG), "1", "帮助"]
    writer.join()


def test_bad_bytes_and_a_character_split_across_reads_decode_cleanly(pipe):
    read_end, write_end = pipe
    text = "昇腾 507015".encode()
    os.write(write_end, text[:2])  # half of the first character
    writer = threading.Thread(target=lambda: (time.sleep(0.05), os.write(write_end, text[2:] + b"\n\xff\xfe\n"), os.close(write_end)))
    writer.start()
    assert _all_messages(MessageReader(read_end, hints=None)) == ["昇腾 507015\n\ufffd\ufffd"]
    writer.join()


def _read_until(fd: int, needle: bytes, seen: bytearray, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {needle!r} in {bytes(seen)[-2000:]!r}")
        if select.select([fd], [], [], left)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"terminal closed before {needle!r}: {bytes(seen)[-2000:]!r}")
            seen += chunk


@pytest.mark.parametrize("bracketed", [True, False], ids=["terminal-marks-pastes", "unmarked-paste"])
def test_chat_on_a_real_terminal_answers_a_pasted_log_once(bracketed: bool):
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "SLACK_", "TELEGRAM_", "FEISHU_", "WECOM_"))}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "bot", "chat", "--offline"], cwd=ROOT, env=env,
                            stdin=terminal, stdout=terminal, stderr=terminal, close_fds=True)
    os.close(terminal)
    seen = bytearray()
    try:
        _read_until(controller, b"you> ", seen, 60)
        assert b"\x1b[?2004h" in seen  # chat asked the terminal to mark pastes
        paste = "\n".join(LOG) + "\n"
        os.write(controller, (PASTE_START + paste + PASTE_END).encode() if bracketed else paste.encode())
        time.sleep(0.5)
        while select.select([controller], [], [], 0.2)[0]:
            seen += os.read(controller, 65536)  # the terminal's echo of the paste
        assert b"you> " not in seen.split(b"you> ", 1)[1]  # nothing was answered before Enter
        os.write(controller, b"\n")  # Enter sends it (a blank line, after an unmarked paste)
        answered = bytearray()
        _read_until(controller, b"you> ", answered, 60)
        time.sleep(1.0)  # a second answer, if the lines were taken one by one, would arrive now
        while select.select([controller], [], [], 0.2)[0]:
            answered += os.read(controller, 65536)
        os.write(controller, b"\x04")  # Ctrl-D ends the chat
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)
    output = bytes(answered).decode(errors="replace")
    assert output.count("you> ") == 1, output  # one answer, then one prompt
    assert "0.11.0" in output and "507015" in output  # the answer read the first and the last line of the paste
