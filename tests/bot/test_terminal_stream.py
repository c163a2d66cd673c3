"""The terminal shows status lines and the streamed draft, never the escape sequences in them."""
from __future__ import annotations

import io

from bot.terminal_stream import TerminalProgress
from core.messages import DRAFT_STAGE, Progress

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # would write "evil" into the user's clipboard
RED = "\x1b[31m"


async def test_drafts_print_only_their_new_tail_and_no_escape_sequences() -> None:
    out = io.StringIO()
    terminal = TerminalProgress(out, enabled=True)
    await terminal(Progress(f"Searching {RED}issues", stage="tool"))
    await terminal(Progress("Upgrade", stage=DRAFT_STAGE))
    await terminal(Progress(f"Upgrade CANN{OSC52} first.", stage=DRAFT_STAGE))
    terminal.finish()
    shown = out.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown == "… Searching issues\nUpgrade CANN first.\n\n"


async def test_a_withdrawn_draft_starts_a_fresh_line() -> None:
    out = io.StringIO()
    terminal = TerminalProgress(out, enabled=True)
    await terminal(Progress("Maybe", stage=DRAFT_STAGE))
    await terminal(Progress("", stage=DRAFT_STAGE))  # the turn went on to call tools
    await terminal(Progress("Answer", stage=DRAFT_STAGE))
    assert out.getvalue() == "Maybe\nAnswer"
