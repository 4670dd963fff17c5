"""The compiled entry points take a few named records (``fabrik.kernels.records``), not long
positional lists: no compiled function that Python code calls takes more than
``MAX_ARGUMENTS`` arguments.

An *entry point* is a numba-compiled function under ``src/fabrik`` that is named anywhere outside a
compiled function's body and its imports (called from a solver, stored in a table, passed on): the boundary
between the Python that checks input and the kernels that trust it. Compiled helpers called only
from other compiled functions are the kernels' own business and not listed.
"""

import ast
from pathlib import Path

import fabrik

MAX_ARGUMENTS = 10
SOURCE = Path(fabrik.__file__).parent


def _is_compiled(function):
    return any("njit" in ast.unparse(d) or ast.unparse(d).split("(")[0] in ("jit", "numba.jit")
               for d in function.decorator_list)


def compiled_functions():
    """{(module path, name): argument count} of every compiled top-level function."""
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and _is_compiled(node):
                found[(path.relative_to(SOURCE).as_posix(), node.name)] = len(node.args.args)
    return found


def names_outside_kernels(names):
    """The subset of ``names`` mentioned anywhere under ``src/fabrik`` outside a compiled body."""
    seen = set()

    def visit(node, in_kernel):
        if isinstance(node, ast.FunctionDef):
            in_kernel = in_kernel or _is_compiled(node)
        if not in_kernel:
            if isinstance(node, ast.Name) and node.id in names:
                seen.add(node.id)
            elif isinstance(node, ast.Attribute) and node.attr in names:
                seen.add(node.attr)
        for child in ast.iter_child_nodes(node):
            visit(child, in_kernel)

    for path in SOURCE.rglob("*.py"):
        visit(ast.parse(path.read_text()), False)
    return seen


def entry_points():
    compiled = compiled_functions()
    called = names_outside_kernels({name for _, name in compiled})
    return {key: count for key, count in compiled.items() if key[1] in called}


def test_the_listing_finds_the_entry_points():
    # the check below would pass vacuously if the walk found nothing
    entries = entry_points()
    names = {name for _, name in entries}
    assert {"fabrik_tree", "fabrik_tree_frames", "batch_tree", "srs_solve", "jacobian_chain"} <= names, sorted(names)
    assert len(entries) >= 30


def test_no_entry_point_takes_more_than_ten_arguments():
    too_long = sorted(f"{module}:{name} takes {count}" for (module, name), count in entry_points().items()
                      if count > MAX_ARGUMENTS)
    assert not too_long, "compiled entry points with more than 10 arguments:\n" + "\n".join(too_long)
