"""The package itself: importing it stays cheap, and the first compile is announced once."""

import subprocess
import sys


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)


def test_import_loads_neither_numba_nor_scipy_nor_matplotlib():
    out = run("import sys, fabrik; fabrik.Chain.straight(3); "
              "print(sorted(m for m in ('numba', 'scipy', 'matplotlib', 'tqdm') if m in sys.modules))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_lazy_names_resolve():
    out = run("import fabrik; print(fabrik.solve.__name__, fabrik.Motion.__name__, fabrik.models.humanoid().n_joints, "
              "len(fabrik.methods('skeleton')) > 5)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["solve", "Motion", "13", "True"]
    out = run("import fabrik; fabrik.nope")
    assert "has no attribute 'nope'" in out.stderr


def test_compile_notice_appears_once_when_a_kernel_is_not_cached(tmp_path):
    # numba's cache lives beside the sources; a fresh NUMBA_CACHE_DIR cannot redirect an
    # installed package's existing cache, so a kernel with no compiled version is faked instead
    code = ("import sys, fabrik\n"
            "from fabrik.kernels._cache_guard import announce_compile\n"
            "class Fresh:\n    overloads = {}\n    _cache = None\n"
            "announce_compile(Fresh()); announce_compile(Fresh())\n"
            "fabrik.solve(fabrik.Chain.straight(3), [1.0, 1.0, 0.0])\n")
    out = run(code)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("fabrik: compiling the numba kernels") == 1


def test_complex_boolean_and_object_inputs_are_refused_by_name():
    import numpy as np
    import pytest

    import fabrik

    two = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    for bad, word in ((two + 1j, "complex"), (two.astype(object), "object"), (two > 0.5, "boolean")):
        with pytest.raises(ValueError, match=f"points must be real numbers.*{word}"):
            fabrik.Chain.from_positions(bad)
    chain = fabrik.Chain.straight(3)
    with pytest.raises(ValueError, match="target must be real numbers.*complex"):
        fabrik.solve(chain, np.array([1.0, 1.0, 0.0]) + 1j)
    with pytest.raises(ValueError, match="initial must be real numbers.*boolean"):
        fabrik.solve(chain, [1.0, 1.0, 0.0], initial=np.ones((3, 3), dtype=bool))
    body = fabrik.models.humanoid()
    with pytest.raises(ValueError, match="targets.*real numbers.*complex"):
        fabrik.solve(body, targets={"l_wrist": np.array([0.3, 1.2, 0.4]) + 1j})
    with pytest.raises(ValueError, match=r"targets\['l_wrist'\] must be real numbers"):
        fabrik.solve_sequence(body, {"l_wrist": np.zeros((2, 3), dtype=complex)})


def test_the_library_stands_apart_from_its_experiments_and_has_one_module_per_method():
    # issue 39: only the CLI imports fabrik_experiments; a method with and without limits is one
    # module (no "-constrained" twin modules among the solvers)
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "fabrik"
    importers = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                       if re.search(r"^\s*(from|import) fabrik_experiments", p.read_text(), re.M))
    assert importers and all(p.startswith("cli/") for p in importers), importers
    assert sorted(p.name for p in (src / "solvers").glob("*_constrained.py")) == []


#: The layers of ``src/fabrik``, lowest first: a module may import its own layer and those below
#: it, never one above (the README's Layout). Top-level modules are placed by what they hold.
LAYERS = (
    ("_validation", "_progress", "_lazy", "_output"),  # checks and plumbing, no fabrik imports
    ("kernels",),  # compiled arithmetic on arrays
    ("limits",),  # one class per limit type, packed for the kernels
    ("model", "models", "obstacles"),  # chains, skeletons, arms, rigs, obstacle shapes
    ("solvers", "loops", "io"),  # every method behind fabrik.solve; file formats
    ("mocap", "constraints"),  # takes: prepare, reconstruct, write
    ("viz",),  # plots, animations, the viewer
    ("cli", "__init__", "__main__"),
)


def _imports(path):
    """The ``fabrik.X`` first components every import statement of ``path`` names (function-level
    imports included), with their line numbers."""
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "fabrik" and len(parts) > 1:
                yield parts[1], node.lineno


def test_every_import_points_down_the_layers():
    # issue 39, item 4: each stage calls only downward (viz once imported the CLI, io the mocap layer)
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "fabrik"
    rank = {name: k for k, names in enumerate(LAYERS) for name in names}
    placed = {p.name.removesuffix(".py") for p in src.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert placed - set(rank) == set(), f"place these in LAYERS: {sorted(placed - set(rank))}"
    upward = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        own = rel.parts[0].removesuffix(".py")
        for target, line in _imports(path):
            if rank.get(target, -1) > rank[own]:
                upward.append(f"{rel}:{line} imports fabrik.{target}")
    assert upward == [], "imports pointing up a layer:\n" + "\n".join(upward)
