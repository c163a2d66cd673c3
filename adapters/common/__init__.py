"""Helpers shared by several platform adapters."""
