"""Platform adapters. Each subpackage exposes `create_adapter(deps) -> PlatformAdapter | None`; which
platforms there are, and what the rest of the bot reads about each, is adapters/registry.py."""
