"""bot/ is the only composition root: core/ imports no platform and nothing from bot/, and
adapters/ import nothing from bot/ or from each other (so a fix in one place stays in one place)."""
from __future__ import annotations

import ast
from pathlib import Path

from adapters import registry

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = (*(p.name for p in registry.platforms()), "terminal")
PLATFORM_SDKS = tuple(name for p in registry.platforms() for name in p.sdk_loggers)  # each one's SDK packages


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, including lazy imports inside functions and TYPE_CHECKING blocks."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(ROOT)} imports {name}")
    return found


def test_core_imports_neither_bot_nor_any_platform() -> None:
    forbidden = ("bot", "adapters", *PLATFORM_SDKS)
    assert offenders("core", forbidden) == []


def test_adapters_import_nothing_from_bot() -> None:
    assert offenders("adapters", ("bot",)) == []


def test_no_adapter_imports_another_platform() -> None:
    found = []
    for platform in PLATFORMS:
        others = tuple(f"adapters.{p}" for p in PLATFORMS if p != platform)
        found += offenders(f"adapters/{platform}", others)
    assert found == []


def test_the_check_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    # The scan must not miss the forms that hid bot.settings imports before.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bot.settings import Settings\n"
        "def f():\n    import bot.wiring\n",
        encoding="utf-8",
    )
    assert {"bot.settings", "bot.wiring"} <= imported_modules(sample)


def test_reading_settings_loads_no_model_or_platform_sdk() -> None:
    # Every process (and every CLI call) reads settings; the settings models live beside the code
    # that uses them, so importing them must not drag in that code's SDKs (4 s of start-up each).
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    heavy = ("anthropic", "openai", "mcp", "telegram", "slack_sdk", "slack_bolt", "lark_oapi")
    probe = f"import sys, bot.settings; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
