"""``fabrik view SCENE``: the browser viewer (docs/viewer.md).

- ``fabrik view chain [--joints N] [--dim 2] [--snake] [--pole [--pole-joint K]] [--obstacles demo]``: the
  Table 1 chain (10 joints, 100-unit bones) or a straight chain of N joints; a draggable target, a
  method menu, the passes; a draggable pole target and obstacles.
- ``fabrik view constraints [--constraints FILE.json]``: a chain with joint limits drawn.
- ``fabrik view skeleton [--model humanoid|hand|y_shape] [--weights J=W,...] [--poles J,...] [--obstacles demo]
  [--hold bar]``: draggable effector targets and root, effector weights, poles, obstacles, a held bar.
- ``fabrik view arm [--urdf FILE --tip LINK]``: the DHM arm or a URDF arm with an oriented gizmo.
- ``fabrik view take FILE.bvh|FILE.npz [--method M] [--limits] [--frames A:B:C]``: playback and reconstruction.

Loopback (127.0.0.1) unless ``--host`` says otherwise, with a warning.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from fabrik.io.formats import FILE_KINDS
from fabrik.viz.viewer.scenes import SCENES


def add_parser(sub) -> None:
    p = sub.add_parser("view", help="a browser viewer: drag targets, watch solves, play takes",
                       description="Serve an interactive scene in the browser (viser): " + ", ".join(SCENES) +
                                   ". Prints the URL; Ctrl-C stops it.")
    p.add_argument("scene", choices=SCENES)
    p.add_argument("file", nargs="?", metavar=FILE_KINDS,
                   help="the take to play (take scene only): BVH, or joint positions as .npz, read by suffix")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1, this machine only; anything else is reachable by "
                        "others and prints a warning)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if busy)")
    p.add_argument("--echo", action="store_true",
                   help="print one JSON line per event on stdout (camera, gizmo, every solve), for scripts and tests")
    p.add_argument("--method", default=None, help="the first method of the menu (default fabrik)")
    p.add_argument("--tol", type=float, default=None, help="solve tolerance in model units")
    p.add_argument("--joints", type=int, default=None, help="chain: a straight chain of N joints with 1-unit bones "
                                                             "instead of the Table 1 chain")
    p.add_argument("--dim", type=int, choices=(2, 3), default=3, help="chain: 2 for a planar chain")
    p.add_argument("--snake", action="store_true", help="chain: the Kine snake of section 5.1 (2D, 6 joints unless "
                                                        "--joints; the root moves with the body)")
    p.add_argument("--constraints", metavar="FILE.json", help="constraints: a chain limits file "
                                                              "(fabrik.constraints.load_constraints)")
    p.add_argument("--model", choices=("humanoid", "hand", "y_shape"), default="humanoid", help="skeleton: which model")
    p.add_argument("--pole", action="store_true", help="chain: a pole (bend) target to drag (fabrik.solve(..., pole=))")
    p.add_argument("--pole-joint", type=int, default=None, help="chain: the pole joint (default the middle joint)")
    p.add_argument("--poles", metavar="JOINTS", help="skeleton: comma-separated joints with a pole to drag, placed "
                                                     "in front of each (fabrik.solve(..., poles=))")
    p.add_argument("--weights", metavar="J=W,...", help="skeleton: effector weights (a slider per effector sets them "
                                                        "too)")
    p.add_argument("--obstacles", choices=("demo",), help="chain, skeleton: a ball and a box (chain) or a ball and a "
                                                          "floor (skeleton) kept off every bone")
    p.add_argument("--hold", choices=("bar",), help="skeleton (humanoid): a bar held in both hands, its pose dragged "
                                                    "(a closed loop)")
    p.add_argument("--urdf", metavar="FILE.urdf", help="arm: a URDF arm instead of the DHM arm (needs --tip)")
    p.add_argument("--tip", metavar="LINK", help="arm: the URDF link the arm ends at")
    p.add_argument("--limits", action="store_true", help="take: reconstruct with the humanoid joint limits")
    p.add_argument("--frames", metavar="START:STOP[:STEP]", help="take: frame range")
    p.set_defaults(func=run)


def build_scene_args(args: argparse.Namespace):
    """(model, kind, options) for ``Viewer.add`` from the parsed arguments (ValueError for a bad mix)."""
    import fabrik

    if args.file is not None and args.scene != "take":
        raise ValueError(f"a file is only taken by the take scene, not {args.scene}")
    options = {}
    if args.method is not None:
        options["method"] = args.method
    if args.tol is not None:
        options["tol"] = args.tol
    model = None
    chain_only = {"--pole": args.pole, "--pole-joint": args.pole_joint is not None}
    skeleton_only = {"--poles": args.poles, "--weights": args.weights, "--hold": args.hold}
    for flag, given in {**chain_only, **skeleton_only, "--obstacles": args.obstacles}.items():
        allowed = ("chain",) if flag in chain_only else ("skeleton",) if flag in skeleton_only else ("chain", "skeleton")
        if given and args.scene not in allowed:
            raise ValueError(f"{flag} is for the {' and '.join(allowed)} scene{'s' if len(allowed) > 1 else ''}, "
                             f"not {args.scene}")
    if args.scene == "chain":
        if args.snake or args.dim == 2 or args.joints is not None:
            n = args.joints if args.joints is not None else (6 if args.snake else 10)
            if n < 2:
                raise ValueError(f"--joints must be at least 2, got {n}")
            model = fabrik.Chain.straight(n, 1.0, dim=2 if (args.snake or args.dim == 2) else 3)
        options["snake"] = args.snake
        if args.pole_joint is not None and not args.pole:
            raise ValueError("--pole-joint needs --pole")
        if args.pole:
            options["pole"] = True
            options["pole_joint"] = args.pole_joint
        if args.obstacles:
            from fabrik.viz.viewer.obstacles import demo_obstacles
            from fabrik_experiments.table1 import benchmark_chain

            options["obstacles"] = demo_obstacles("chain", model if model is not None else benchmark_chain())
    elif args.scene == "constraints":
        if args.constraints:
            from fabrik.io.limits_file import load_constraints
            from fabrik.viz.viewer.chain import demo_limited_chain

            base = demo_limited_chain()
            model = fabrik.Chain.from_positions(base.rest_positions).with_constraints(
                load_constraints(args.constraints))
    elif args.scene == "skeleton":
        model = getattr(fabrik.models, args.model)()
        if args.weights:
            options["weights"] = _weights(args.weights, model)
        if args.poles:
            rest = model.rest_positions()
            height = float(np.ptp(rest[:, 1])) or 1.0
            options["poles"] = {j: rest[model.index(j)] + [0.0, 0.0, 0.4 * height] for j in _joints(args.poles, model)}
        if args.obstacles:
            from fabrik.viz.viewer.obstacles import demo_obstacles

            options["obstacles"] = demo_obstacles("skeleton", model)
        if args.hold:
            options["hold"] = args.hold
    elif args.scene == "arm":
        if args.urdf:
            if not args.tip:
                raise ValueError("--urdf needs --tip LINK (the link the arm ends at)")
            model = fabrik.load_urdf(args.urdf, tip=args.tip)
    else:
        if args.file is None:
            raise ValueError(f"the take scene needs a take: fabrik view take {FILE_KINDS}")
        model = args.file
        from fabrik.cli._common import show_progress

        options.update(limits=args.limits, frames=args.frames, progress=show_progress())
    return model, args.scene, options


def _joints(text: str, skeleton) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    for name in names:
        if name not in skeleton.names:
            raise ValueError(f"unknown joint {name!r}; joints are: {', '.join(skeleton.names)}")
    return names


def _weights(text: str, skeleton) -> dict:
    """``--weights l_wrist=4,r_wrist=1`` as ``{joint: weight}``."""
    out = {}
    for part in (t.strip() for t in text.split(",") if t.strip()):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"--weights takes JOINT=WEIGHT,...; got {part!r}")
        joint = _joints(name, skeleton)[0]
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not (0.0 <= weight < math.inf):
            raise ValueError(f"--weights: the weight of {joint} must be a number >= 0, got {value!r}")
        out[joint] = weight
    return out


def run(args: argparse.Namespace) -> int:
    from fabrik.viz.viewer import Viewer

    model, kind, options = build_scene_args(args)
    viewer = Viewer(args.host, args.port, echo=args.echo)
    try:
        viewer.add(model, kind, **options)
    except BaseException:
        viewer.stop()
        raise
    viewer.wait()
    return 0
