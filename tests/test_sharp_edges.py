"""Issue 28, items 3-6: sharp edges a new user hits."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import fabrik
from fabrik.constraints import Cone, Hinge
from fabrik.model.constraints import hinge_angle


def limits_hold(chain, sol, slack=1e-9):
    """Every cone and hinge of a chain holds in a solution (measured from its frames)."""
    frames = sol.extras["frames"]
    parent = sol.extras["root_frame"]
    for i in range(chain.n_joints - 1):
        for c in chain.constraints.get(i, ()):
            local = parent.T @ frames[i][:, 1]
            if isinstance(c, Cone) and chain.dim == 3:
                assert c.violation(local) <= slack, (i, c)
            if isinstance(c, Hinge):
                a = hinge_angle(c.axis, np.array([0.0, 1.0, 0.0]), local)
                assert c.min - slack <= a <= c.max + slack, (i, c, a)
        parent = frames[i]


# --- item 4: limited chains end near the best pose the limits allow ---------------------------

def test_issue_example_ends_at_the_best_the_limits_allow():
    """2D, 5 joints, 30-degree cones, target (-2, 2): FABRIK stalled at 1.04 before; CCD and a
    brute-force search (every joint's bend on a 1.5-degree grid) give 0.5176."""
    chain = fabrik.Chain.straight(5, dim=2).with_constraints({i: Cone.circular(math.radians(30)) for i in range(4)})
    sol = fabrik.solve(chain, [-2.0, 2.0])
    steps = np.radians(np.linspace(-30.0, 30.0, 41))
    bends = np.stack(np.meshgrid(steps, steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 4)
    headings = np.cumsum(bends, axis=1)  # each bone's angle from +Y, turning left
    effector = np.stack([-np.sin(headings).sum(axis=1), np.cos(headings).sum(axis=1)], axis=1)
    best = float(np.linalg.norm(effector - [-2.0, 2.0], axis=1).min())
    assert best == pytest.approx(0.5176, abs=2e-3)
    assert sol.error <= best + 1e-3
    assert sol.status == "stalled"
    assert sol.extras["polish_sweeps"] >= 1
    np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-9)
    limits_hold(chain, sol)


#: (seed, target, best error of the multi-start search) of cases of benchmarks/limited_best.py
#: (fabrik_experiments.limited_best.random_case; values from benchmarks/results/limited_best.json):
#: the 12 first where FABRIK alone ended more than 10% above the best, and 8 where it did not.
LIMITED_SAMPLE = (
    (0, [-3.34801139, 5.36027772], 1.766635479),
    (1, [0.032160929, -1.088608312, 5.111443302], 5.268028737),
    (2, [-2.459732107, -3.33482475], 1.56378359),
    (3, [-1.66646144, -4.649230015, 3.01275823], 2.663221823),
    (4, [5.258992126, 2.787986065], 1.776535977),
    (5, [-3.269577205, -1.008972423, 3.299339786], 1.658799123),
    (6, [0.676865758, -3.468031532], 1.322852251),
    (7, [-5.528629802, -1.283674316, -1.353834499], 0.318463247),
    (15, [0.854479542, 0.354519852, -1.114076954], 0.116653168),
    (19, [-0.660217554, 0.211722337, 0.208523141], 0.265531404),
    (26, [1.34725823, 0.844131702], 0.340454927),
    (32, [-0.737185573, 1.371335931], 0.210232121),
    (39, [0.427335124, -3.618725243, -3.000229152], 2.340499983),
    (58, [0.0501835, 0.902692385], 0.151652433),
    (68, [1.679435739, 0.473976964], 0.417755918),
    (70, [-0.772636403, 1.082117466], 1.688348418),
    (72, [-0.085761044, 0.92338276], 0.639569705),
    (83, [1.61014182, -3.568893758, 0.60056338], 1.19670883),
    (85, [-0.325082027, 0.981990465, -0.437009755], 1.740231711),
    (101, [-0.346995907, -1.371592418, -0.087554726], 1.341733418),
)


def test_limited_sample_ends_near_the_best():
    """fabrik.solve on the sample ends within 10% (or 1e-3 of the reach) of the search's best,
    inside the limits; FABRIK alone (no CCD sweeps, no restarts) misses 12 of them."""
    from fabrik.kernels.fabrik_constrained import fabrik_constrained_search
    from fabrik_experiments.limited_best import is_near, kernel_args, random_chain

    alone_near = 0
    for seed, target, best in LIMITED_SAMPLE:
        chain = random_chain(np.random.default_rng(seed), 2 if seed % 2 == 0 else 3)
        reach = float(chain.bone_lengths.sum())
        sol = fabrik.solve(chain, target)
        assert is_near(sol.error, best, reach), (seed, sol.error, best)
        assert sol.error >= best - 1e-6 * reach or sol.status != "reached"
        limits_hold(chain, sol, slack=1e-7)
        np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), chain.bone_lengths,
                                   rtol=1e-9)
        lengths, t, root, limits, frame, ident, oriented, planar = kernel_args(chain, target)
        alone = fabrik_constrained_search(chain._kernel_rest, lengths, t, root, limits, frame, ident, oriented, planar,
                                          fabrik.DEFAULT_TOL, 1e-3, 1000)[4]
        alone_near += is_near(alone, best, reach)
    assert alone_near == 8


def test_reachable_targets_get_no_search():
    chain = fabrik.Chain.straight(5, dim=3).with_constraints({i: Cone.circular(math.radians(40)) for i in range(4)})
    sol = fabrik.solve(chain, [0.5, 3.5, 0.3])
    assert sol.status == "reached"
    assert sol.extras["polish_sweeps"] == 0 and sol.extras["restarts"] == 0


def test_the_search_stays_within_max_iter():
    chain = fabrik.Chain.straight(5, dim=2).with_constraints({i: Cone.circular(math.radians(30)) for i in range(4)})
    for cap in (0, 1, 5, 150, 250, 400):
        sol = fabrik.solve(chain, [-2.0, 2.0], max_iter=cap)
        assert sol.iterations <= cap
        limits_hold(chain, sol)


# --- item 5: CCD with an oriented target on a straight chain ----------------------------------

@pytest.mark.parametrize("n, height", [(5, 2.5), (4, 1.5), (8, 4.0)])
def test_ccd_oriented_target_on_a_straight_chain(n, height):
    """The aim point (the target less the last bone along the target's +Y) lies on the straight
    chain's line: the singularity rule folds the chain instead of stalling (at 0.5 for n = 5)."""
    chain = fabrik.Chain.straight(n)
    rot = Rotation.from_euler("x", 90, degrees=True)
    target = [0.0, height, 1.0]
    sol = fabrik.solve(chain, (target, rot), method="ccd")
    assert sol.method == "ccd-constrained"
    assert sol.status == "reached", (sol.status, sol.error, sol.iterations)
    assert sol.error <= 1e-3 and sol.extras["orientation_error"] <= 1e-3
    np.testing.assert_allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0, atol=1e-9)


def test_ccd_limited_chain_off_the_line_is_not_folded():
    """A stall away from the line is left as it is (no fold, the same answer as before)."""
    chain = fabrik.Chain.straight(5, dim=2).with_constraints({i: Cone.circular(math.radians(30)) for i in range(4)})
    sol = fabrik.solve(chain, [-2.0, 2.0], method="ccd")
    assert sol.status == "stalled"
    assert sol.error == pytest.approx(0.5176, abs=1e-4)


# --- item 6: the smaller items ------------------------------------------------------------------

def test_two_roots_are_named():
    with pytest.raises(ValueError, match=r"2 roots: joint 0 \('a'\), joint 1 \('b'\)"):
        fabrik.Skeleton.from_parents(["a", "b", "c"], [-1, -1, 0], np.ones((3, 3)))


def test_unknown_option_message():
    with pytest.raises(ValueError, match=r"^method 'fabrik' for chains takes no option 'bogus'; it takes turn_start$"):
        fabrik.solve(fabrik.Chain.straight(3), [0.5, 1.0, 0.0], bogus=1)
    sk = fabrik.models.humanoid()
    with pytest.raises(ValueError, match=r"takes no options 'a', 'b'; it takes rigid_sub_bases, swing_limbs, "
                                         r"turn_search, initial_frames, root_rotation$"):
        fabrik.solve(sk, targets={"head": [0.0, 1.8, 0.0]}, a=1, b=2)


def test_cli_option_message(tmp_path, capsys):
    from fabrik.cli import main
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk()
    src = tmp_path / "walk.bvh"
    fabrik.save_bvh(src, skeleton, motion)
    assert main(["reconstruct", str(src), "--frames", "0:2", "--option", "fabrik:bogus=1"]) == 2
    err = capsys.readouterr().err
    assert "method 'fabrik' for skeletons takes no option 'bogus'; it takes rigid_sub_bases, swing_limbs, turn_search, initial_frames, root_rotation" in err


def test_save_bvh_into_a_missing_folder(tmp_path):
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk()
    missing = tmp_path / "not_here"
    with pytest.raises(FileNotFoundError, match="the folder .*not_here.* does not exist"):
        fabrik.save_bvh(missing / "walk.bvh", skeleton, motion)
    assert not missing.exists()
    fabrik.save_bvh(tmp_path / "walk.bvh", skeleton, motion)
    assert (tmp_path / "walk.bvh").exists()


def test_cli_out_creates_only_the_last_folder_level(tmp_path):
    from fabrik.cli._common import prepare_output

    prepare_output(tmp_path / "new" / "rec.bvh", "--out")
    assert (tmp_path / "new").is_dir()
    with pytest.raises(ValueError, match=r"the folder '.*deep' does not exist"):
        prepare_output(tmp_path / "deep" / "er" / "rec.bvh", "--out")
    assert not (tmp_path / "deep").exists()
    with pytest.raises(ValueError, match=r"--out '/nonexistent/dir/x.bvh': the folder '/nonexistent' does not exist"):
        prepare_output("/nonexistent/dir/x.bvh", "--out")
    assert not Path("/nonexistent").exists()
    prepare_output(tmp_path / "figs", "--plot", folder=True)
    assert (tmp_path / "figs").is_dir()
    with pytest.raises(ValueError, match="does not exist"):
        prepare_output(tmp_path / "a" / "b", "--plot", folder=True)


def test_cli_out_refuses_a_missing_parent(tmp_path, capsys):
    from fabrik.cli import main

    assert main(["bench", "chain", "--targets", "2", "--json", str(tmp_path / "x" / "y" / "t.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_fig18_writes_outside_the_docs_by_default():
    import runpy

    example = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "fig18_constraints.py"),
                             run_name="fig18")
    assert example["output_path"]([]) == Path("fabrik-out") / "constrained_vs_unconstrained.png"
    assert example["output_path"](["x.png"]) == Path("x.png")
    docs = example["output_path"](["--docs"])
    assert docs.parts[-3:] == ("docs", "img", "constrained_vs_unconstrained.png")


def test_methods_say_which_kinds():
    chain = fabrik.methods()
    assert "chain methods" in repr(chain) and "fabrik.methods('skeleton')" in repr(chain)
    assert chain == fabrik.methods("chain") and "triangulation" in chain
    every = fabrik.methods("all")
    assert every["triangulation"] == ("chain",)
    assert set(every["fabrik"]) == {"chain", "skeleton", "arm"}
    assert "triangulation" not in fabrik.methods("skeleton")
    with pytest.raises(ValueError, match="kind must be one of chain, skeleton, arm or all"):
        fabrik.methods("tree")


def test_models_expose_only_models():
    import fabrik.models as models

    public = {k for k, v in vars(models).items() if not k.startswith("_") and not isinstance(v, type(math))}
    assert {"np", "math", "check_positive"}.isdisjoint(public) and "np" not in vars(models)
    assert public - {"Skeleton"} == set(models.__all__)


def test_chain_picture_has_equal_axis_scales(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from fabrik.viz import chains

    grabbed = {}

    def keep(fig, path):
        grabbed["fig"] = fig
        return Path(path)

    monkeypatch.setattr(chains, "save", keep)
    chain = fabrik.Chain.straight(4)
    sols = [fabrik.solve(chain, [2.0, 0.5, 0.0])]
    chains.plot_chain_solutions(chain.rest_positions, sols, [np.array([2.0, 0.5, 0.0])], tmp_path / "c.png")
    ax3 = [ax for ax in grabbed["fig"].axes if ax.name == "3d"][0]
    spans = [np.diff(lim)[0] for lim in (ax3.get_xlim(), ax3.get_ylim(), ax3.get_zlim())]
    np.testing.assert_allclose(spans, spans[0], rtol=1e-9)
    assert spans[0] >= 3.0  # the chain's 3-unit height fits
    assert chains.cube_limits(np.array([[0.0, 0, 0], [1, 2, 4]]), margin=0.0) == [(-1.5, 2.5), (-1.0, 3.0), (0.0, 4.0)]


def test_demo_table_legend_explains_the_headers():
    from fabrik_experiments.table1 import TABLE_LEGEND, format_table

    header = format_table([]).splitlines()[0]
    for column in ("mean iter", "median us", "p90 us", "us/iter", "iter/s", "success", "mean error", "excess err",
                   "len drift"):
        assert column in header and f"{column}:" in TABLE_LEGEND.replace("median us, p90 us:", "median us: p90 us:")


# --- item 3: default skeleton solves can be written as joint rotations ----------------------------

from hypothesis import HealthCheck, assume, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def nested_rigid_centre(parents, offsets, eps):
    """True when a joint with two or more children at a distance is itself such a child of a joint
    that has two or more (a rigid group's centre held as a member of its parent's group)."""
    lengths = np.linalg.norm(offsets, axis=1)
    n = len(parents)
    counts = np.zeros(n, dtype=int)
    for j in range(1, n):
        if lengths[j] > eps:
            counts[parents[j]] += 1
    return any(counts[j] >= 2 and lengths[j] > eps and counts[parents[j]] >= 2 for j in range(1, n))


@st.composite
def trees_and_targets(draw):
    n = draw(st.integers(3, 14))
    parents = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    offsets = np.array([[0.0, 0.0, 0.0]] + [
        [0.0, 0.0, 0.0] if draw(st.integers(0, 6)) == 0 else
        [draw(st.floats(-1.0, 1.0)), draw(st.floats(-1.0, 1.0)), draw(st.floats(-1.0, 1.0))]
        for _ in range(1, n)])
    sk = fabrik.Skeleton.from_parents([f"j{i}" for i in range(n)], parents, offsets)
    joints = draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=min(4, n - 1), unique=True))
    rest = sk.rest_positions()
    reach = float(np.linalg.norm(offsets, axis=1).sum())
    targets = {sk.names[j]: rest[j] + np.array([draw(st.floats(-0.5, 0.5)) for _ in range(3)]) * reach
               for j in joints}
    return sk, targets


def _near_line_root():
    """Found by a random draw: the root's two children 6e-8 off one line (a 180-degree turn of
    the root's group); fitting them as collinear left the turn about the line 6e-8 wrong."""
    offsets = np.zeros((9, 3))
    offsets[1] = [0.0, 0.0, -0.5]
    offsets[8] = [0.0, 5.960464477539041e-08, 1.0]
    sk = fabrik.Skeleton.from_parents([f"j{i}" for i in range(9)], [-1] + [0] * 8, offsets)
    return sk, {"j1": np.array([0.0, 0.0, 0.25])}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_and_targets())
@example(_near_line_root())
def test_default_skeleton_solves_are_joint_rotations(case):
    """``rotations_from_positions`` reproduces every default skeleton solve to 1e-9 of the height.

    Trees where a rigid group's centre is itself held in its parent's group are left out: there
    the two groups' fits converge together, about tenfold an iteration, and a solve that stops
    early leaves them apart by up to ~1e-6 of the height (2 of 60 random trees; issue 28)."""
    from fabrik.model.motion import rotations_from_positions

    sk, targets = case
    scale = max(sk.height(), float(np.max(sk.bone_lengths)))
    assume(scale > 1e-3)
    assume(not nested_rigid_centre(sk.parents, sk.offsets, 1e-9 * scale))
    sol = fabrik.solve(sk, targets=targets)
    back = rotations_from_positions(sk, sol.positions).world_positions(sk)[0]
    assert np.abs(back - sol.positions).max() <= 1e-9 * scale, sol.status


def test_default_humanoid_solve_writes_as_rotations(tmp_path):
    """The issue's case: l_wrist and r_ankle targets on models.humanoid(); 0.069 m off before."""
    from fabrik.model.motion import rotations_from_positions

    body = fabrik.models.humanoid()
    rest = body.rest_positions()
    targets = {"l_wrist": rest[body.index("l_wrist")] + [0.2, 0.3, 0.1],
               "r_ankle": rest[body.index("r_ankle")] + [0.1, 0.2, 0.2]}
    sol = fabrik.solve(body, targets=targets)
    assert sol.status == "reached"
    back = rotations_from_positions(body, sol.positions).world_positions(body)[0]
    assert np.abs(back - sol.positions).max() <= 1e-9 * body.height()
    paper = fabrik.solve(body, targets=targets, rigid_sub_bases=False, swing_limbs=False)
    back = rotations_from_positions(body, paper.positions).world_positions(body)[0]
    assert np.abs(back - paper.positions).max() > 1e-3  # the paper's sub-bases: opting out is possible


def test_library_and_cli_defaults_agree():
    from fabrik.cli import reconstruct as cli
    from fabrik.solvers.skeleton_fabrik import DEFAULT_RIGID_SUB_BASES, DEFAULT_SWING_LIMBS, TrackingOptions
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cli.add_parser(sub)
    args = parser.parse_args(["reconstruct", "x.bvh"])
    assert args.rigid_sub_bases == DEFAULT_RIGID_SUB_BASES == TrackingOptions().rigid_sub_bases
    assert (not args.no_limb_swing) == DEFAULT_SWING_LIMBS == TrackingOptions().swing_limbs
    assert vars(fabrik.method("fabrik").skeleton.defaults) == vars(TrackingOptions())
