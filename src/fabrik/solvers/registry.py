"""The table of solver methods behind ``fabrik.solve``.

A chain method is a function ``(chain, target, initial, root, tol, max_iter, **options) ->
Solution`` taking checked, C-contiguous float64 arrays, always 3D (2D chains are embedded in the
z = 0 plane by ``solve``, which cuts the result back): ``target`` (3,), ``initial`` (n, 3),
``root`` (3,); ``max_iter`` is None for the method's own default. The method must not write to
its inputs and returns 3D positions. A skeleton method takes ``(skeleton, targets,
initial, root, tol, max_iter, **options)`` where ``targets`` maps joint index -> (3,) position.
Each method module registers itself with ``@register(name, kind)``.
"""

from __future__ import annotations

from typing import Callable

CHAIN_METHODS: dict[str, Callable] = {}
SKELETON_METHODS: dict[str, Callable] = {}


def register(name: str, kind: str = "chain"):
    table = {"chain": CHAIN_METHODS, "skeleton": SKELETON_METHODS}[kind]

    def decorate(fn):
        table[name] = fn
        return fn

    return decorate


def lookup(name: str, kind: str) -> Callable:
    table = CHAIN_METHODS if kind == "chain" else SKELETON_METHODS
    try:
        return table[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name such as a list
        raise ValueError(f"unknown method {name!r} for a {kind}; methods are: {', '.join(sorted(table))}") from None
