"""Animations without a browser (matplotlib): a take beside its reconstruction, and one chain
solve's FABRIK passes stage by stage. Written as GIF (Pillow, which matplotlib brings) or MP4
(only where an ``ffmpeg`` program is on the PATH; otherwise a ValueError says so)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from fabrik._progress import progress_bar
from fabrik.viz._figures import pyplot

FORMATS = (".gif", ".mp4")


def _writer(path: Path, fps: float):
    from matplotlib import animation

    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"--out must end in .gif or .mp4, got {str(path)!r}")
    if suffix == ".mp4":
        if shutil.which("ffmpeg") is None:
            raise ValueError("writing .mp4 needs the ffmpeg program, which is not on the PATH; install it "
                             "(Debian: apt-get install ffmpeg) or write a .gif")
        return animation.FFMpegWriter(fps=fps)
    return animation.PillowWriter(fps=fps)


def _check_out(out) -> Path:
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"--out {str(out)!r} is a folder; give a file name ending in .gif or .mp4")
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"--out must end in .gif or .mp4, got {str(out)!r}")
    if path.suffix.lower() == ".mp4" and shutil.which("ffmpeg") is None:
        raise ValueError("writing .mp4 needs the ffmpeg program, which is not on the PATH; install it "
                         "(Debian: apt-get install ffmpeg) or write a .gif")
    return path


def _write(fig, draw, n_frames: int, path: Path, fps: float, progress: bool, desc: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = _writer(path, fps)
    with progress_bar(progress, n_frames, desc, "frame") as bar, writer.saving(fig, str(path), dpi=80):
        for k in range(n_frames):
            draw(k)
            writer.grab_frame()
            if bar is not None:
                bar.update(1)
    pyplot().close(fig)
    return path


def _segments(positions: np.ndarray, parents) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(positions[parents[j]], positions[j]) for j in range(len(parents)) if parents[j] >= 0]


def render_take(path, out, *, method: str = "fabrik", limits: bool = False, frames: str | None = None,
                fps: float | None = None, progress: bool = False) -> Path:
    """Animate a BVH take (left, grey) beside its reconstruction from the effectors and root
    (right, joints coloured by their error as in the viewer). ``frames`` is a
    ``"START:STOP[:STEP]"`` range; ``fps`` defaults to the file's rate over the step. Returns the path."""
    import fabrik
    from fabrik.mocap.reconstruct import reconstruct_take
    from fabrik.mocap.takes import parse_frames
    from fabrik.viz.viewer.take import ERROR_SCALE, error_colours

    out = _check_out(out)
    skeleton, motion = fabrik.load_bvh(path)
    start, stop, step = parse_frames(frames, motion.n_frames)
    motion = motion.frames(start, stop, step)
    recorded = motion.world_positions(skeleton)
    rec = reconstruct_take(skeleton, motion, method=method, constraints="humanoid" if limits else None)
    errors = np.linalg.norm(rec.positions - recorded, axis=2)
    height = float(skeleton.height(recorded[0])) or 1.0
    colours = error_colours(errors, ERROR_SCALE * height) / 255.0
    fps = float(fps) if fps else 1.0 / float(motion.frame_time) / max(step, 1)
    plt = pyplot()
    fig = plt.figure(figsize=(8, 4.5))
    axes = [fig.add_subplot(1, 2, k + 1, projection="3d") for k in range(2)]
    half = 0.6 * height  # each view follows the body's root
    parents = skeleton.parents

    def draw(f: int) -> None:
        for ax, pos, title, c in ((axes[0], recorded[f], "recording", None),
                                  (axes[1], rec.positions[f], f"{rec.method} reconstruction", colours[f])):
            ax.cla()
            mid = recorded[f, 0]
            # BVH +Y up drawn as matplotlib's z
            for a, b in _segments(pos, parents):
                ax.plot([a[0], b[0]], [a[2], b[2]], [a[1], b[1]], color="0.5" if c is None else "tab:blue", lw=2)
            ax.scatter(pos[:, 0], pos[:, 2], pos[:, 1], s=8, c="0.2" if c is None else c)
            ax.set_xlim(mid[0] - half, mid[0] + half)
            ax.set_ylim(mid[2] - half, mid[2] + half)
            ax.set_zlim(mid[1] - half, mid[1] + half)
            ax.set_title(f"{title}\nframe {f}" + ("" if c is None else f", largest error {errors[f].max():.3g}"),
                         fontsize=9)
            ax.set_axis_off()

    return _write(fig, draw, recorded.shape[0], out, fps, progress, "render take")


def render_passes(out, *, chain=None, target=None, fps: float = 2.0, max_iter: int = 6, progress: bool = False) -> Path:
    """Animate FABRIK's stages on one solve (the paper's Fig. 2): the start pose (and, from a bent
    one, its turn towards the target, green), then each forward stage (orange, from the effector set on the target) and backward stage (blue, from the
    root set back), ``fabrik.viz.viewer.passes.fabrik_stages``. Default: the Table 1 chain and a
    target at (300, 400, 250). Drawn in the x-y plane (a 3D chain's z is dropped). Returns the path."""
    from fabrik.viz.viewer.passes import fabrik_stages

    out = _check_out(out)
    if chain is None:
        from fabrik_experiments.table1 import benchmark_chain

        chain = benchmark_chain()
    if chain.constraints:
        raise ValueError("render_passes shows plain FABRIK: give a chain without limits")
    target = np.array([300.0, 400.0, 250.0][: chain.dim] if target is None else target, dtype=np.float64)
    if target.shape != (chain.dim,) or not np.isfinite(target).all():
        raise ValueError(f"target must be {chain.dim} finite numbers, got {target!r}")
    stages = fabrik_stages(chain.bone_lengths, chain.rest_positions, target, max_iter=max_iter)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    every = np.concatenate([s.positions[:, :2] for s in stages] + [target[None, :2]])
    lo, hi = every.min(axis=0), every.max(axis=0)
    pad = 0.08 * (hi - lo).max()

    def draw(k: int) -> None:
        ax.cla()
        if k > 0:
            prev = stages[k - 1].positions
            ax.plot(prev[:, 0], prev[:, 1], "-o", color="0.8", ms=3, lw=1)
        s = stages[k]
        colour = {"start": "0.3", "turn": "tab:green", "forward": "tab:orange", "backward": "tab:blue"}[s.kind]
        ax.plot(s.positions[:, 0], s.positions[:, 1], "-o", color=colour, ms=4, lw=2)
        ax.plot(*target[:2], "x", color="tab:red", ms=10, mew=2)
        ax.plot(*s.positions[0, :2], "s", color="tab:green", ms=7)
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
        ax.set_aspect("equal")
        ax.set_title(f"FABRIK stage {k}/{len(stages) - 1}: {s.kind} (iteration {s.iteration}), "
                     f"error {np.linalg.norm(s.positions[-1] - target):.3g}", fontsize=9)

    return _write(fig, draw, len(stages), out, fps, progress, "render passes")
