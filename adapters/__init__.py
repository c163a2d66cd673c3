"""Platform adapters. Each subpackage exposes `create_adapter(deps) -> PlatformAdapter | None`."""

PLATFORMS: tuple[str, ...] = ("slack", "telegram", "feishu", "wecom")
