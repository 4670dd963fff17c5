"""Animations without a browser: a take beside its reconstruction, and one chain solve's FABRIK
passes stage by stage.

Frames are drawn with matplotlib's Agg renderer straight into an RGB buffer: the parts that do
not move are drawn once, and each frame restores them and draws only the moving artists
(blitting). GIF frames are encoded by Pillow (which matplotlib brings) on one fixed palette; MP4
frames are piped to an ``ffmpeg`` program, only where one is on the PATH (otherwise a ValueError
says so before any work).

The animation plays in real time. A GIF stores each frame's delay in hundredths of a second, so
a GIF's frame rate is 100 / k frames per second for a whole k >= 2 (50, 33.3, 25, 20, ...;
browsers slow delays under 2 hundredths down): the requested rate (default the take's) is
rounded to the nearest of these, and the frames shown are picked from the take by time.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fabrik._progress import progress_bar

FORMATS = (".gif", ".mp4")
#: GIF's longest frame delay, seconds (an unsigned 16-bit count of hundredths)
GIF_LONGEST_FRAME = 655.35
#: the most frames an animation may have (a guard against frame rates and frame times that make no sense)
MAX_FRAMES = 1_000_000
DPI = 100


class Animation(NamedTuple):
    """What ``render_take`` and ``render_passes`` wrote."""

    path: Path
    frames: int      # frames in the file
    fps: float       # frames per second it plays at
    seconds: float   # how long it plays: frames / fps
    source_fps: float  # the rate asked for (a take's default: its own)

    def describe(self) -> str:
        """One line: the file, its frames, rate and length, and how the rate was chosen."""
        text = f"{self.path}: {self.frames} frames at {self.fps:.4g} frames/s, {self.seconds:.2f} s"
        if abs(self.fps - self.source_fps) > 1e-9 * self.source_fps:
            text += (f" (GIF stores frame times in hundredths of a second: {self.source_fps:.4g} frames/s "
                     f"shown at {self.fps:.4g}, frames picked by time)")
        return text


def check_out(out) -> Path:
    """The output path, checked before any work: a ``.gif`` or ``.mp4`` file name (``.mp4`` only
    with ffmpeg on the PATH) in a folder that exists or is the only one missing (the ``fabrik``
    command's rule for every output, ``fabrik._output.prepare_output``)."""
    from fabrik._output import prepare_output

    path = Path(out)
    if path.is_dir():
        raise ValueError(f"--out {str(out)!r} is a folder; give a file name ending in .gif or .mp4")
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"--out must end in .gif or .mp4, got {str(out)!r}")
    if path.suffix.lower() == ".mp4" and shutil.which("ffmpeg") is None:
        raise ValueError("writing .mp4 needs the ffmpeg program, which is not on the PATH; install it "
                         "(Debian: apt-get install ffmpeg) or write a .gif")
    prepare_output(path, "--out")
    return path


def playback(n_frames: int, frame_time: float, fps: float | None, suffix: str) -> tuple[float, np.ndarray]:
    """The frame rate an animation of ``n_frames`` frames ``frame_time`` seconds apart is written
    at, and which frame each of its frames shows, so that it plays in real time.

    ``fps`` (default ``1 / frame_time``) is kept for ``.mp4``; for ``.gif`` it becomes the nearest
    rate GIF can store, 100 / k frames per second (module docstring). The animation has
    ``round(duration * rate)`` frames (at least one), the k-th showing the take's frame at time
    k / rate. ValueError when the rate, the frame time or the number of frames makes no sense."""
    if not (math.isfinite(frame_time) and frame_time > 0):
        raise ValueError(f"the take's frame time must be a positive number of seconds, got {frame_time!r}")
    rate = float(fps) if fps is not None else 1.0 / frame_time
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"--fps must be a positive number, got {fps!r}")
    if 1.0 / rate > GIF_LONGEST_FRAME:
        if fps is not None:
            raise ValueError(f"--fps {fps:g} makes each frame last {1.0 / rate:g} s, longer than GIF's limit of "
                             f"{GIF_LONGEST_FRAME} s; give a larger --fps")
        raise ValueError(f"the take's frame time, {frame_time:g} s, is longer than an animation frame can last "
                         f"({GIF_LONGEST_FRAME} s, GIF's limit); give --fps to pick frames by time")
    if suffix == ".gif":
        rate = 100.0 / max(2, round(100.0 / rate))
    duration = n_frames * frame_time
    count = round(duration * rate) if math.isfinite(duration * rate) else math.inf
    if count > MAX_FRAMES:
        raise ValueError(f"the take, {n_frames} frames of {frame_time:g} s, would need more than {MAX_FRAMES:,} "
                         f"frames at {rate:g} frames/s; give a lower --fps or fewer --frames")
    count = max(1, int(count))
    picks = np.floor(np.arange(count) / rate / frame_time + 1e-9).astype(np.int64)
    return rate, np.minimum(picks, n_frames - 1)


def _gif_palette() -> np.ndarray:
    """(256, 3) uint8: 32 greys, then the error colours of ``error_colours`` (green, yellow, red)
    and the bones' blue, each at four strengths over white (anti-aliased edges)."""
    from fabrik.viz.viewer.take import error_colours

    greys = np.repeat(np.linspace(0, 255, 32)[:, None], 3, axis=1)
    hues = np.vstack([error_colours(np.linspace(0.0, 1.0, 51), 1.0), np.array(BONE_RGB)[None]]).astype(np.float64)
    mixes = [hues * s + 255.0 * (1.0 - s) for s in (1.0, 0.75, 0.5, 0.25)]
    palette = np.vstack([greys, *mixes])
    return np.round(palette).astype(np.uint8)


BONE_RGB = (70, 110, 170)


class _Frames:
    """Receives RGB frames (Pillow images) and writes the animation file at ``rate`` frames/s."""

    def __init__(self, path: Path, rate: float, size: tuple[int, int]):
        self.path, self.rate = path, rate
        self.gif = path.suffix.lower() == ".gif"
        if self.gif:
            from PIL import Image

            self._pal = Image.new("P", (1, 1))
            self._pal.putpalette(_gif_palette().ravel().tolist())
            self._frames = []
        else:
            w, h = size
            self._ffmpeg = subprocess.Popen(
                ["ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
                 "-r", str(Fraction(rate).limit_denominator(1001)), "-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "20",
                 "-movflags", "+faststart", str(path)],
                stdin=subprocess.PIPE, stderr=subprocess.PIPE)

    def add(self, image) -> None:
        """Add one frame, a Pillow RGB image of the size given."""
        if self.gif:
            from PIL import Image

            self._frames.append(image.quantize(palette=self._pal, dither=Image.Dither.NONE))
        else:
            self._ffmpeg.stdin.write(image.tobytes())

    def close(self, count: int, source_fps: float) -> Animation:
        if self.gif:
            delay = round(100.0 / self.rate) * 10  # milliseconds, whole hundredths
            first, *rest = self._frames
            first.save(self.path, save_all=True, append_images=rest, duration=delay, loop=0, optimize=False)
        else:
            _, err = self._ffmpeg.communicate()
            if self._ffmpeg.returncode != 0:
                raise OSError(f"ffmpeg failed writing {self.path}: {err.decode(errors='replace').strip()}")
        return Animation(self.path, count, self.rate, count / self.rate, source_fps)


def _canvas(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    return fig, FigureCanvasAgg(fig)


def _size(canvas) -> tuple[int, int]:
    """The frames' size: the canvas's, cut to even numbers (H.264 needs them)."""
    w, h = canvas.get_width_height()
    return w // 2 * 2, h // 2 * 2


def _image(canvas):
    """The drawn canvas as a Pillow RGB image of ``_size``."""
    from PIL import Image

    w, h = canvas.get_width_height()
    image = Image.frombuffer("RGBA", (w, h), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    return image if (w, h) == _size(canvas) else image.crop((0, 0, *_size(canvas)))


def _font(points: float):
    """matplotlib's DejaVu Sans for Pillow, ``points`` at ``DPI`` (text drawn on each frame by
    Pillow costs a fraction of a millisecond; matplotlib's renderer took 20 ms a line)."""
    from matplotlib import font_manager
    from PIL import ImageFont

    return ImageFont.truetype(font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans")),
                              round(points * DPI / 72))


def _view_basis(root: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An orthographic camera for a take (+Y up): three quarters from the front of the root's
    travel, 15 degrees above the ground, the travel running left to right. Returns the screen's
    right and up vectors and the direction towards the camera."""
    up = np.array([0.0, 1.0, 0.0])
    travel = (root[-1] - root[0]) * [1.0, 0.0, 1.0]
    forward = travel / np.linalg.norm(travel) if np.linalg.norm(travel) > 1e-9 else np.array([1.0, 0.0, 0.0])
    side = np.cross(forward, up)
    a, e = np.radians(30.0), np.radians(15.0)
    towards = np.cos(e) * (np.cos(a) * side + np.sin(a) * forward) + np.sin(e) * up
    right = np.cross(up, towards)
    right /= np.linalg.norm(right)
    return right, np.cross(towards, right), towards


def render_take(path, out, *, method: str = "fabrik", limits: bool = False, frames: str | None = None,
                fps: float | None = None, progress: bool = False) -> Animation:
    """Animate a take (``fabrik.load_motion``: ``.bvh``, or an ``.npz`` of joint positions; left,
    grey) beside its reconstruction from the effectors and root
    (right, joints coloured by their error as in the viewer), both seen by one camera that
    follows the recorded root, framed to the body. ``frames`` is a ``"START:STOP[:STEP]"``
    range; the animation plays in real time at ``fps`` frames per second (default the take's
    rate; a GIF's is rounded to one GIF can store, ``playback``). Returns an ``Animation``."""
    from matplotlib.collections import LineCollection
    from PIL import ImageDraw

    import fabrik
    from fabrik.mocap.reconstruct import reconstruct_take
    from fabrik.mocap.takes import parse_frames
    from fabrik.viz.viewer.take import ERROR_SCALE, error_colours

    out = check_out(out)
    skeleton, motion = fabrik.load_motion(path)
    start, stop, step = parse_frames(frames, motion.n_frames)
    motion = motion.frames(start, stop, step)
    rate, picks = playback(motion.n_frames, float(motion.frame_time), fps, out.suffix.lower())
    recorded = motion.world_positions(skeleton)
    rec = reconstruct_take(skeleton, motion, method=method, constraints="humanoid" if limits else None,
                           progress=progress)
    errors = np.linalg.norm(rec.positions - recorded, axis=2)
    height = float(skeleton.height(recorded[0])) or 1.0
    colours = error_colours(errors, ERROR_SCALE * height) / 255.0

    # one camera: screen coordinates relative to the recorded root's place on the screen
    right, up, _ = _view_basis(recorded[:, 0])
    centre = recorded[:, 0] @ right
    floor = float(recorded[..., 1].min())
    both = np.stack([recorded, rec.positions])  # (2, F, n, 3)
    sx = both @ right - centre[None, :, None]
    sy = both @ up
    half = float(np.abs(sx).max()) * 1.08 + 1e-9
    lo, hi = float(sy.min()), float(sy.max())
    pad = 0.06 * (hi - lo) + 1e-9
    lo, hi = lo - pad, hi + pad
    half = max(half, 0.32 * (hi - lo))  # no thinner than about a third of its height
    panel_h = 4.2
    panel_w = panel_h * (2 * half) / (hi - lo)
    fig, canvas = _canvas(2 * panel_w + 0.3, panel_h + 1.0)
    w_frac = panel_w / fig.get_figwidth()
    h_frac = panel_h / fig.get_figheight()
    names = ("recording", f"{rec.method} reconstruction")
    axes = [fig.add_axes((0.1 / fig.get_figwidth() + k * (w_frac + 0.1 / fig.get_figwidth()),
                          0.45 / fig.get_figheight(), w_frac, h_frac)) for k in range(2)]
    parents = np.asarray(skeleton.parents)
    child = np.flatnonzero(parents >= 0)
    grid_step = _nice(height / 2.0)
    artists = []
    for k, ax in enumerate(axes):
        ax.set_xlim(-half, half)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title(names[k], fontsize=10)
        grid = LineCollection([], colors="0.85", linewidths=0.8, animated=True)
        bones = LineCollection([], colors="0.45" if k == 0 else [c / 255 for c in BONE_RGB], linewidths=2.2,
                               capstyle="round", animated=True)
        ax.add_collection(grid)
        ax.add_collection(bones)
        joints = ax.scatter(np.zeros(len(parents)), np.zeros(len(parents)), s=14, c="0.2", zorder=3,
                            animated=True, linewidths=0)
        artists.append((grid, bones, joints))
    fig.text(0.5, 0.05 / fig.get_figheight(), f"joint colour: green 0, yellow {50 * ERROR_SCALE:g}%, red "
             f"{100 * ERROR_SCALE:g}% of the height or more", ha="center", va="bottom", fontsize=8, color="0.3")
    fig.text(0.5, 1 - 0.05 / fig.get_figheight(), Path(path).name, ha="center", va="top", fontsize=10)
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    font = _font(9)
    caption_at = (canvas.get_width_height()[0] / 2, canvas.get_width_height()[1] - 0.2 * DPI)
    writer = _Frames(out, rate, _size(canvas))
    seconds = motion.frame_time
    with progress_bar(progress, len(picks), "render take", "frame") as bar:
        for f in picks:
            canvas.restore_region(background)
            ground = _ground(recorded[f, 0], floor, grid_step, 0.8 * height, right, up, centre[f])
            for k, (grid, bones, joints) in enumerate(artists):
                x, y = sx[k, f], sy[k, f]
                grid.set_segments(ground)
                bones.set_segments(np.stack([np.stack([x[parents[child]], y[parents[child]]], -1),
                                             np.stack([x[child], y[child]], -1)], axis=1))
                joints.set_offsets(np.column_stack([x, y]))
                if k == 1:
                    joints.set_facecolors(colours[f])
                for a in (grid, bones, joints):
                    axes[k].draw_artist(a)
            worst = errors[f].max()
            image = _image(canvas)
            ImageDraw.Draw(image).text(caption_at, f"t = {f * seconds:.2f} s (frame {start + f * step})   "
                                       f"largest joint error {worst:.3g} file units ({100 * worst / height:.1f}% "
                                       f"of the body's {height:.4g}-unit height)", font=font, fill=(0, 0, 0), anchor="ms")
            writer.add(image)
            if bar is not None:
                bar.update(1)
    return writer.close(len(picks), float(fps) if fps else 1.0 / float(motion.frame_time))


def _nice(x: float) -> float:
    """1, 2 or 5 times a power of ten, at most ``x``."""
    p = 10.0 ** math.floor(math.log10(x))
    return max(m * p for m in (1.0, 2.0, 5.0) if m * p <= x)


def _ground(root: np.ndarray, floor: float, step: float, reach: float, right, up, centre: float) -> np.ndarray:
    """Screen segments of a square grid on the floor around ``root`` (lines ``step`` apart, fixed
    in the world, so that they slide by as the camera follows the body)."""
    x0, z0 = math.floor((root[0] - reach) / step) * step, math.floor((root[2] - reach) / step) * step
    ticks_x = x0 + step * np.arange(int(2 * reach / step) + 2)
    ticks_z = z0 + step * np.arange(int(2 * reach / step) + 2)
    a = np.zeros((len(ticks_x) + len(ticks_z), 2, 3))
    a[: len(ticks_x), :, 0] = ticks_x[:, None]
    a[: len(ticks_x), 0, 2], a[: len(ticks_x), 1, 2] = ticks_z[0], ticks_z[-1]
    a[len(ticks_x):, :, 2] = ticks_z[:, None]
    a[len(ticks_x):, 0, 0], a[len(ticks_x):, 1, 0] = ticks_x[0], ticks_x[-1]
    a[..., 1] = floor
    return np.stack([a @ right - centre, a @ up], axis=-1)


def render_passes(out, *, chain=None, target=None, fps: float = 2.0, max_iter: int = 6,
                  progress: bool = False) -> Animation:
    """Animate FABRIK's stages on one solve (the paper's Fig. 2): the start pose (and, from a bent
    one, its turn towards the target, green), then each forward stage (orange, from the effector
    set on the target) and backward stage (blue, from the root set back),
    ``fabrik.viz.viewer.passes.fabrik_stages``, one stage a frame at ``fps`` stages per second (a
    GIF's rounded as ``playback`` says). Default: the Table 1 chain and a target at
    (300, 400, 250). Drawn in the x-y plane (a 3D chain's z is dropped). Returns an ``Animation``."""
    from fabrik.viz.viewer.passes import fabrik_stages

    out = check_out(out)
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    if chain is None:
        from fabrik.models import table1_chain

        chain = table1_chain()
    if chain.constraints:
        raise ValueError("render_passes shows plain FABRIK: give a chain without limits")
    target = np.array([300.0, 400.0, 250.0][: chain.dim] if target is None else target, dtype=np.float64)
    if target.shape != (chain.dim,) or not np.isfinite(target).all():
        raise ValueError(f"target must be {chain.dim} finite numbers, got {target!r}")
    stages = fabrik_stages(chain.bone_lengths, chain.rest_positions, target, max_iter=max_iter)
    rate, picks = playback(len(stages), 1.0 / fps, fps, out.suffix.lower())
    fig, canvas = _canvas(5, 5)
    ax = fig.add_subplot()
    every = np.concatenate([s.positions[:, :2] for s in stages] + [target[None, :2]])
    lo, hi = every.min(axis=0), every.max(axis=0)
    pad = 0.08 * (hi - lo).max()
    writer = _Frames(out, rate, _size(canvas))
    with progress_bar(progress, len(picks), "render passes", "frame") as bar:
        for k in picks:
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
                         f"error {np.linalg.norm(s.positions[-1] - target):.3g} (chain units)", fontsize=9)
            canvas.draw()
            writer.add(_image(canvas))
            if bar is not None:
                bar.update(1)
    return writer.close(len(picks), fps)
