"""Lazy attributes for the package namespaces: ``import fabrik`` loads numpy and the model types
only; numba, scipy and the solvers load with the first attribute that needs them.

``FIRST_USE`` is the one lock of the package's first-use preparations (these imports, the method
registry, compiling the chain entry, the first-compile notice, building the Warp kernel): each
checks whether it is done, and if not does it under the lock and checks again, so that threads
making their first solves at once neither see a half-made preparation nor make it twice. It is
re-entrant (one preparation may start another) and is never taken on a path that runs after the
first use. No module takes it while it is being imported.
"""

from __future__ import annotations

import importlib
import threading

#: held around every first-use preparation (module docstring)
FIRST_USE = threading.RLock()


def lazy_attributes(namespace: dict, table: dict[str, str]):
    """(``__getattr__``, ``__dir__``) for a module whose attribute ``name`` lives in module
    ``table[name]`` (a module itself where the table maps the name to ``""``: ``fabrik.models``).
    The first access imports it and keeps it in ``namespace``."""
    package = namespace["__name__"]

    def __getattr__(name: str):
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        with FIRST_USE:  # two threads importing modules that import each other could see one half-made
            value = importlib.import_module(f"{package}.{name}") if where == "" else \
                getattr(importlib.import_module(where), name)
            namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
