"""``fabrik render``: animations without a browser (``fabrik.viz.render``); the output rule of
every ``--out`` (``fabrik._output.prepare_output``).

- ``fabrik render take FILE.bvh|FILE.npz --out walk.gif|mp4 [--method M] [--limits] [--frames A:B:C] [--fps F]``
- ``fabrik render passes --out passes.gif [--joints N] [--target X,Y,Z] [--iterations K]``
"""

from __future__ import annotations

import argparse

from fabrik.io.formats import FILE_KINDS


def add_parser(sub) -> None:
    p = sub.add_parser("render", help="animations (GIF, or MP4 with ffmpeg): a take, or a solve's passes",
                       description="Write an animation with matplotlib: a take (BVH, or joint positions as .npz) "
                                   "beside its reconstruction, or one FABRIK solve stage by stage. .gif always; "
                                   ".mp4 needs ffmpeg on the PATH.")
    p.add_argument("what", choices=("take", "passes"))
    p.add_argument("file", nargs="?", metavar=FILE_KINDS, help="the take, read by suffix (take only)")
    p.add_argument("--out", required=True, metavar="OUT.gif|OUT.mp4")
    p.add_argument("--method", default="fabrik", help="take: the reconstruction's skeleton method (default fabrik)")
    p.add_argument("--limits", action="store_true", help="take: with the humanoid joint limits")
    p.add_argument("--frames", metavar="START:STOP[:STEP]", help="take: frame range (e.g. 0:240:4)")
    p.add_argument("--fps", type=float, default=None,
                   help="frames per second (take: the file's rate; passes: 2 stages a second). The take plays in "
                        "real time, its frames picked by time; a GIF's rate is rounded to 100/k (50, 33.3, 25, ...), "
                        "the frame times GIF can store")
    p.add_argument("--joints", type=int, default=None, help="passes: a straight chain of N joints, 1-unit bones "
                                                            "(default the Table 1 chain)")
    p.add_argument("--target", metavar="X,Y[,Z]", help="passes: the target (default 300,400,250)")
    p.add_argument("--iterations", type=int, default=6, help="passes: at most this many iterations (default 6)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fabrik.cli._common import show_progress
    from fabrik.viz import render

    if args.fps is not None and not args.fps > 0:
        raise ValueError(f"--fps must be > 0, got {args.fps}")
    if args.what == "take":
        if args.file is None:
            raise ValueError(f"render take needs a take: fabrik render take {FILE_KINDS} --out walk.gif")
        made = render.render_take(args.file, args.out, method=args.method, limits=args.limits, frames=args.frames,
                                  fps=args.fps, progress=show_progress())
    else:
        if args.file is not None:
            raise ValueError("render passes takes no file")
        import fabrik

        chain = None
        if args.joints is not None:
            if args.joints < 2:
                raise ValueError(f"--joints must be at least 2, got {args.joints}")
            chain = fabrik.Chain.straight(args.joints, 1.0)
        target = None
        if args.target is not None:
            try:
                target = [float(v) for v in args.target.split(",")]
            except ValueError:
                raise ValueError(f"--target must be numbers separated by commas, got {args.target!r}") from None
            if len(target) == 2:
                target.append(0.0)
        if args.iterations < 1:
            raise ValueError(f"--iterations must be at least 1, got {args.iterations}")
        made = render.render_passes(args.out, chain=chain, target=target, fps=args.fps or 2.0,
                                    max_iter=args.iterations, progress=show_progress())
    print(f"wrote {made.describe()}")
    return 0
