"""Small helpers shared by the subcommands."""

from __future__ import annotations

import json
from pathlib import Path


def write_json(path: str | Path, payload: dict) -> Path:
    """Write ``payload`` as indented JSON, creating its folder if only that last level is missing
    (``fabrik._output.prepare_output``'s rule); returns the path."""
    path = Path(path)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def check_count(value: int, option: str, bytes_each: float, minimum: int = 1) -> int:
    """``value`` of a size option (targets, steps), checked before any work: at least ``minimum``,
    and needing no more memory than is available at about ``bytes_each`` bytes apiece
    (``fabrik._validation.check_memory``: ``InsufficientMemoryError``, a ValueError)."""
    from fabrik._validation import check_memory

    if value < minimum:
        raise ValueError(f"{option} must be >= {minimum}, got {value}")
    check_memory(value * bytes_each, f"{option} {value:,}")
    return value


def show_progress() -> bool:
    """Whether the commands show the progress of long runs: always, on stderr; a bar on a
    terminal, elsewhere (pipes, logs, CI) a line every few seconds for runs that last that long
    (``fabrik._progress``)."""
    return True


def parse_methods(text: str, available: list[str]) -> list[str]:
    """``"all"`` or a comma list of method names, checked against ``available``."""
    if text == "all":
        return available
    names = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))  # each once, in order
    unknown = [m for m in names if m not in available]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; methods are: {', '.join(available)}, or all")
    return names


def parse_method_options(items: list[str] | None) -> dict[str, dict]:
    """``["jacobian-dls:damping=0.02", ...]`` -> ``{"jacobian-dls": {"damping": 0.02}}``.

    Values are numbers (``inf`` allowed), ``true`` / ``false`` or ``none`` for None; the method
    checks the names."""
    out: dict[str, dict] = {}
    for item in items or ():
        method, sep, rest = item.partition(":")
        name, eq, text = rest.partition("=")
        if not (sep and eq and method.strip() and name.strip() and text.strip()):
            raise ValueError(f"--option must look like METHOD:NAME=VALUE (e.g. jacobian-dls:damping=0.02), got {item!r}")
        text = text.strip()
        words = {"none": None, "true": True, "false": False}
        if text.lower() in words:
            value = words[text.lower()]
        else:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"--option {item!r}: the value must be a number, true, false or none, "
                                 f"got {text!r}") from None
        out.setdefault(method.strip(), {})[name.strip()] = value
    return out
