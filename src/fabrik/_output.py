"""Output paths checked before long work: shared by the CLI and ``fabrik.viz.render``."""

from __future__ import annotations

from pathlib import Path


def prepare_output(path: str | Path | None, option: str, *, folder: bool = False) -> None:
    """Make ``path``'s folder (or, with ``folder``, ``path`` itself) before any long run, so that a
    path that cannot be written fails at once, naming ``option``, not after minutes of solving.

    Only the last folder level is created: ``--out new/rec.bvh`` makes ``new`` in an existing
    folder, but a path whose parent folders are missing too (``/nonexistent/dir/rec.bvh``, often
    a typo) is refused with a ValueError naming the first missing folder."""
    if path is None:
        return
    path = Path(path)
    target = path if folder else path.parent
    if not folder and path.is_dir():
        raise ValueError(f"{option} {str(path)!r} is a folder; give a file name")
    try:
        target.mkdir(exist_ok=True)
    except FileExistsError:
        raise ValueError(f"{option} {str(path)!r}: {str(target)!r} is a file, not a folder") from None
    except FileNotFoundError:
        missing = target.parent
        while not missing.parent.exists():
            missing = missing.parent
        raise ValueError(f"{option} {str(path)!r}: the folder {str(missing)!r} does not exist (only the last "
                         f"folder level, {str(target.name)!r}, is created; make the others first)") from None
