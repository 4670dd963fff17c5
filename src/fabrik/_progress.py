"""The optional progress bar of long runs (benchmarks, reconstructions, takes)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def progress_bar(enabled: bool, total: int, desc: str, unit: str):
    """A tqdm bar over ``total`` units, closed on leaving the block, when ``enabled``; else None.

    tqdm is imported only when a bar is shown. The bar leaves no line behind (``leave=False``),
    so the tables printed after it stay clean.
    """
    if not enabled:
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, leave=False)
    try:
        yield bar
    finally:
        bar.close()
