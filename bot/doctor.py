"""`python -m bot doctor`: what is configured, what is missing, what answers."""
from __future__ import annotations

import httpx
import redis.asyncio as aioredis

from bot.settings import Settings


async def _reachable(url: str) -> str:
    try:
        async with httpx.AsyncClient(timeout=3.0) as client:
            response = await client.get(url)
        return f"reachable (HTTP {response.status_code})"
    except httpx.HTTPError as exc:
        return f"NOT reachable ({type(exc).__name__})"


def _print_platforms(settings: Settings) -> int:
    """Each platform: off (what turns it on), configured in which mode, or the line startup refuses
    with (the same check, bot.wiring.platform_checks). Returns the problems."""
    from adapters.common.config_check import misconfigured_line  # noqa: PLC0415
    from bot.wiring import platform_checks  # noqa: PLC0415

    problems = 0
    for platform, check in platform_checks(settings).items():
        if not check.enabled:
            print(f"[info] {platform}: off ({check.enable_hint})")
        elif check.problems:
            problems += 1
            print(f"[FAIL] {misconfigured_line(platform, check)}")
        else:
            print(f"[ok]   {platform}: configured, {check.mode}")
    return problems


def _print_access(settings: Settings) -> int:
    """Each enabled platform: closed (by which entries), open on purpose (a warning naming what closes it),
    or open without ALLOW_PUBLIC (a problem: serve/web/worker refuse to start). Returns the problems."""
    from bot.access_check import access_policy, doctor_lines  # noqa: PLC0415
    from bot.wiring import enabled_platforms  # noqa: PLC0415

    try:
        access = access_policy(settings)
    except ValueError as exc:
        print(f"[FAIL] {exc}")
        return 1
    lines = doctor_lines(access, enabled_platforms(settings))
    for status, line in lines:
        print({"ok": "[ok]  ", "warn": "[warn]", "fail": "[FAIL]"}[status] + f" access: {line}")
    return sum(status == "fail" for status, _ in lines)


async def run_doctor(settings: Settings) -> int:
    problems = 0
    print("Ascend Inference Copilot: doctor\n")
    if settings.redis_url:
        try:
            client = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=3)
            await client.ping()
            await client.aclose()
            print("[ok]   Redis answers at REDIS_URL")
        except Exception as exc:  # noqa: BLE001 - report, don't crash
            problems += 1
            print(f"[FAIL] Redis at REDIS_URL does not answer ({type(exc).__name__})")
    else:
        print("[info] REDIS_URL unset: `serve`, `web` and `worker` share one embedded redis-server in "
              f"{settings.data_dir / 'redis'} (the first to start starts it); `ask`/`chat` keep memory in process")

    if settings.llm_enabled:
        from bot.model_check import check_model  # noqa: PLC0415

        status, line = await check_model(settings)
        problems += status == "fail"
        print({"ok": "[ok]  ", "warn": "[warn]", "fail": "[FAIL]"}[status] + f" research model: {line}")
    else:
        print("[info] no model configured (ANTHROPIC_API_KEY, or OPENAI_BASE_URL/OPENAI_API_KEY): offline triage only")

    problems += _print_platforms(settings)
    problems += _print_access(settings)

    from bot.index_command import index_status_lines  # noqa: PLC0415

    for line in index_status_lines(settings):
        problems += line.startswith("[FAIL]")
        print(line)
    from core.knowledge.generated.check import doctor_line  # noqa: PLC0415

    print(f"[info] {doctor_line(settings.data_dir)}")
    if settings.llm_enabled:
        print(f"[info] DeepWiki MCP at {settings.deepwiki_mcp_url}: {await _reachable(settings.deepwiki_mcp_url)}")
    print("\n" + ("No problems found." if problems == 0 else f"{problems} problem(s) found."))
    return 0 if problems == 0 else 1
