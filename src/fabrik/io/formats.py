"""Motion files by suffix: ``load_motion(path) -> (Skeleton, Motion)`` and ``save_motion(path,
skeleton, motion, **options)`` pick the reader and writer from the file's suffix (any case).

========  ===================================================  ==========================================
suffix    format                                               reader / writer (options)
========  ===================================================  ==========================================
``.bvh``  Biovision Hierarchy (``fabrik.io.bvh``)              ``load_bvh`` / ``save_bvh`` (``layout``,
                                                               ``decimals``)
``.npz``  joint positions over time (``fabrik.io.positions``)  ``load_positions`` / ``save_positions``
                                                               (``units``)
========  ===================================================  ==========================================

A ``.npy`` file holds one array, the positions alone, without the parents and names a skeleton
needs: it is refused with a ``PositionsError`` saying what an ``.npz`` holds. Any other suffix
raises ``UnknownFormatError`` (a ``ValueError``) naming the suffixes known. The readers raise
their own errors for a malformed file (``BVHError``, ``PositionsError``, both ``ValueError``)
and ``OSError`` for one that cannot be opened.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path


class UnknownFormatError(ValueError):
    """A motion file whose suffix names no format fabrik reads or writes."""


@dataclass(frozen=True)
class MotionFormat:
    """One format of ``FORMATS``: its ``name``, the ``suffixes`` it is chosen for (lower case, with
    the dot), and the functions of ``module`` that read (``reader(path) -> (Skeleton, Motion)``)
    and write (``writer(path, skeleton, motion, **options)``) it."""

    name: str
    suffixes: tuple[str, ...]
    module: str
    reader: str
    writer: str

    def _function(self, name: str):
        return getattr(importlib.import_module(self.module), name)

    def load(self, path):
        """``(skeleton, motion)`` read from ``path``."""
        return self._function(self.reader)(path)

    def options(self) -> tuple[str, ...]:
        """The keyword options the writer takes."""
        return tuple(name for name, p in inspect.signature(self._function(self.writer)).parameters.items()
                     if p.kind == p.KEYWORD_ONLY)

    def save(self, path, skeleton, motion, **options) -> None:
        """Write ``motion`` on ``skeleton`` to ``path``; ValueError for an option the writer does not take."""
        unknown = sorted(set(options) - set(self.options()))
        if unknown:
            takes = ", ".join(self.options()) or "none"
            raise ValueError(f"the {self.name} writer ({', '.join(self.suffixes)}) takes no option "
                             f"{', '.join(unknown)}; its options: {takes}")
        self._function(self.writer)(path, skeleton, motion, **options)


#: The formats, in the order the errors list them.
FORMATS = (
    MotionFormat("BVH", (".bvh",), "fabrik.io.bvh", "load_bvh", "save_bvh"),
    MotionFormat("joint positions", (".npz",), "fabrik.io.positions", "load_positions", "save_positions"),
)
#: Every suffix a format is chosen for.
SUFFIXES = tuple(s for f in FORMATS for s in f.suffixes)
#: How the errors and the command line name the files they take.
FILE_KINDS = "|".join(f"FILE{s}" for s in SUFFIXES)


def _known() -> str:
    return ", ".join(f"{s} ({f.name})" for f in FORMATS for s in f.suffixes)


def motion_format(path) -> MotionFormat:
    """The format ``path``'s suffix names (any case).

    Raises:
        PositionsError: a ``.npy`` file (module docstring).
        UnknownFormatError: any other suffix, or none; the message lists the suffixes known.
    """
    suffix = Path(path).suffix.lower()
    for fmt in FORMATS:
        if suffix in fmt.suffixes:
            return fmt
    if suffix == ".npy":
        from fabrik.io.positions import PositionsError

        raise PositionsError("a .npy file holds one array, the positions alone; a skeleton also needs each joint's "
                             "parent and name: save an .npz archive instead, np.savez('take.npz', positions=positions "
                             "(F, n, 3), parents=parents (n,), names=names (n,), fps=fps)", str(path))
    what = f"the suffix {suffix!r}" if suffix else "no suffix"
    raise UnknownFormatError(f"{str(path)!r} has {what}; motion files are {_known()}")


def load_motion(path):
    """Read a motion file as ``(skeleton, motion)``, the format chosen by the suffix (module
    docstring): ``.bvh`` with ``fabrik.load_bvh``, ``.npz`` joint positions with
    ``fabrik.io.positions.load_positions`` (rotations fitted to the positions).

    Raises:
        UnknownFormatError: a suffix no format has; PositionsError: a ``.npy`` file; the
        format's own error (``BVHError``, ``PositionsError``; all ``ValueError``) for a malformed
        file; OSError for one that cannot be opened.
    """
    return motion_format(path).load(path)


def save_motion(path, skeleton, motion, **options) -> None:
    """Write ``motion`` on ``skeleton``, the format chosen by ``path``'s suffix (module docstring);
    ``options`` go to the format's writer (``.bvh``: ``layout``, ``decimals``; ``.npz``: ``units``).

    Raises:
        UnknownFormatError: a suffix no format has; PositionsError: a ``.npy`` path; ValueError
        for an option the writer does not take, or what the writer refuses; OSError (such as
        FileNotFoundError for a missing folder) when the file cannot be written.
    """
    motion_format(path).save(path, skeleton, motion, **options)


__all__ = ["UnknownFormatError", "MotionFormat", "FORMATS", "SUFFIXES", "FILE_KINDS", "motion_format", "load_motion",
           "save_motion"]
