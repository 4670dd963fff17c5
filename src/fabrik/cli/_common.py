"""Small helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def write_json(path: str | Path, payload: dict) -> Path:
    """Write ``payload`` as indented JSON, creating parent folders; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def show_progress() -> bool:
    """Progress bars only when stderr is a terminal (quiet in CI and pipes)."""
    return sys.stderr.isatty()


def parse_methods(text: str, available: list[str]) -> list[str]:
    """``"all"`` or a comma list of method names, checked against ``available``."""
    if text == "all":
        return available
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in available]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; methods are: {', '.join(available)}, or all")
    return names
