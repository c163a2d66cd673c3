"""/admin in a real headless Chromium: the page the server sends renders to a non-trivial screenshot.

Chromium cannot send an Authorization header from its command line, so the test fetches /admin
with the token and has Chromium render exactly those bytes (the page carries its own CSP, so the
file is as locked down as the response). CI installs Debian's chromium (.ci/run).
"""
from __future__ import annotations

import shutil
import subprocess

import httpx
import pytest

from tests.bot.test_admin_page import OPERATOR_TOKEN, admin_settings, bearer, fill
from tests.support.png import pixels
from tests.support.stack import running_bot

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed here (CI installs it in .ci/run: apt-get install chromium)"
)


def screenshot(page: str, tmp_path) -> bytes:
    html, png = tmp_path / "admin.html", tmp_path / "admin.png"
    html.write_text(page, encoding="utf-8")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--force-device-scale-factor=0.5", "--hide-scrollbars",
         "--window-size=960,2400", f"--screenshot={png}", html.as_uri()],
        capture_output=True, timeout=120,
    )
    assert done.returncode == 0 and png.exists(), done.stderr.decode(errors="replace")[-2000:]
    return png.read_bytes()


async def test_the_admin_page_renders_in_headless_chromium(make_settings, tmp_path):
    async with running_bot(admin_settings(make_settings), worker=False) as stack:
        await fill(stack.components)
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            page = await http.get("/admin", headers=bearer(OPERATOR_TOKEN))
    assert page.status_code == 200
    data = screenshot(page.text, tmp_path)
    width, height, rgb = pixels(data)
    assert (width, height) == (480, 1200)
    assert len(data) > 15_000  # a blank page of this size compresses to a few hundred bytes
    inked = sum(1 for p in rgb if p != (255, 255, 255))
    colours = {p for p in rgb[:: 7]}
    assert inked / len(rgb) > 0.03, "the page rendered (nearly) blank"
    # the charts' colours, not only black text on white: the SVGs were drawn
    assert any(abs(r - 0x3B) < 24 and abs(g - 0x6F) < 24 and abs(b - 0xD6) < 24 for r, g, b in colours)
    assert len(colours) > 20
