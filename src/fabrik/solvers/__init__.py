"""Solvers: FABRIK and the comparison methods of section 5, behind one ``solve`` entry point
(``fabrik.solvers.api``); each method is a ``Method`` in ``fabrik.solvers.registry``."""

from fabrik._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(globals(), {
    "solve": "fabrik.solvers.api", "methods": "fabrik.solvers.api", "method": "fabrik.solvers.api",
    "DEFAULT_TOL": "fabrik.solvers.api", "Solution": "fabrik.solvers.result", "STATUSES": "fabrik.solvers.result",
    "SequenceSolution": "fabrik.solvers.result", "solve_sequence": "fabrik.solvers.sequence",
})

__all__ = ["solve", "methods", "method", "solve_sequence", "Solution", "SequenceSolution", "STATUSES", "DEFAULT_TOL"]
