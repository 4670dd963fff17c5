"""Lazy attributes for the package namespaces: ``import fabrik`` loads numpy and the model types
only; numba, scipy and the solvers load with the first attribute that needs them."""

from __future__ import annotations

import importlib


def lazy_attributes(namespace: dict, table: dict[str, str]):
    """(``__getattr__``, ``__dir__``) for a module whose attribute ``name`` lives in module
    ``table[name]`` (a module itself where the table maps the name to ``""``: ``fabrik.models``).
    The first access imports it and keeps it in ``namespace``."""
    package = namespace["__name__"]

    def __getattr__(name: str):
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = importlib.import_module(f"{package}.{name}") if where == "" else \
            getattr(importlib.import_module(where), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
