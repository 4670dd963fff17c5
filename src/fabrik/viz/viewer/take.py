"""The ``take`` scene: a recording (BVH, or joint positions as ``.npz``: ``fabrik.load_motion``)
played beside its reconstruction from the end effectors and root
(``fabrik.mocap.reconstruct_take``), a method menu, limits on or off, a timeline, and each
reconstructed joint coloured by its distance from the recorded one."""

from __future__ import annotations


import numpy as np

from fabrik.viz.viewer.body import Body
from fabrik.viz.viewer.server import Player, safe

#: Per-joint error drawn fully red at this fraction of the skeleton's height (green at 0).
ERROR_SCALE = 0.05
RECORDED = (120, 120, 120)


def error_colours(errors: np.ndarray, full: float) -> np.ndarray:
    """(..., 3) uint8 from green (0) through yellow to red (``full`` and beyond)."""
    t = np.clip(np.asarray(errors, dtype=np.float64) / full, 0.0, 1.0)[..., None]
    green, yellow, red = np.array([30, 170, 60]), np.array([240, 200, 0]), np.array([220, 30, 30])
    out = np.where(t < 0.5, green + (yellow - green) * (t * 2), yellow + (red - yellow) * (t * 2 - 1))
    return out.astype(np.uint8)


class TakeScene:
    """Playback of a take beside its reconstruction.

    Args:
        viewer: the ``Viewer``.
        path: the take: a ``.bvh`` file or an ``.npz`` of joint positions (``fabrik.load_motion``).
        method: the skeleton method that reconstructs it (the menu changes it).
        limits: reconstruct with the ``"humanoid"`` joint limits (the method's variant with limits).
        frames: a frame range ``"START:STOP[:STEP]"`` (as ``fabrik reconstruct --frames``).
        fps: playback rate (default the file's).
    """

    kind = "take"

    def __init__(self, viewer, path, *, method: str = "fabrik", limits: bool = False, frames: str | None = None,
                 fps: float | None = None, progress: bool = False, name: str = "/take"):
        import fabrik
        from fabrik.mocap.takes import parse_frames

        self.viewer = viewer
        self.path = str(path)
        skeleton, motion = fabrik.load_motion(path)
        start, stop, step = parse_frames(frames, motion.n_frames)
        self.skeleton, self.motion = skeleton, motion.frames(start, stop, step)
        self.recorded = self.motion.world_positions(skeleton)
        self.height = float(skeleton.height(self.recorded[0])) or 1.0
        self.methods = [m for m in fabrik.methods("skeleton") if not fabrik.method(m).limits]
        if method not in self.methods:
            raise ValueError(f"method {method!r}: choose one of {', '.join(self.methods)} (limits come from the "
                             "limits switch)")
        self.method, self.limits, self.progress = method, bool(limits), progress
        self.fps = float(fps) if fps else 1.0 / float(self.motion.frame_time) / max(step, 1)
        self.offset = np.array([0.6 * self.height, 0.0, 0.0])
        self.frame = 0
        self.reconstruct()
        scene, gui = viewer.server.scene, viewer.server.gui
        parents = skeleton.parents
        self.rec_body = Body(scene, f"{name}/recorded", self.recorded[0] - self.offset, parents, self.height * 0.5,
                             color=RECORDED)
        self.sol_body = Body(scene, f"{name}/reconstructed", self.positions[0] + self.offset, parents,
                             self.height * 0.5)
        scene.add_label(f"{name}/recorded/label", "recording", position=tuple(self.recorded[0, 0] - self.offset +
                                                                              [0, 0.6 * self.height, 0]))
        self.label = scene.add_label(f"{name}/reconstructed/label", "reconstruction",
                                     position=tuple(self.positions[0, 0] + self.offset + [0, 0.6 * self.height, 0]))
        n = self.recorded.shape[0]
        with gui.add_folder("Take"):
            self.menu = gui.add_dropdown("Method", tuple(self.methods), initial_value=method)
            self.limits_box = gui.add_checkbox("Humanoid limits", self.limits)
            self.timeline = gui.add_slider("Frame", 0, max(n - 1, 1), 1, 0)
            self.play = gui.add_checkbox("Play", False)
            self.stats = gui.add_markdown("")
        self.menu.on_update(safe(lambda _e: self.set_method(self.menu.value, self.limits_box.value), "method"))
        self.limits_box.on_update(safe(lambda _e: self.set_method(self.menu.value, self.limits_box.value), "limits"))
        self.timeline.on_update(safe(lambda _e: self._from_timeline(), "timeline"))
        self.play.on_update(safe(lambda _e: setattr(self.player, "playing", self.play.value), "play"))
        self.player = Player(self._advance, self.fps)
        viewer.fit_camera(self.recorded[0].mean(axis=0), self.height * 1.6)
        self.show_frame(0)

    def reconstruct(self) -> None:
        from fabrik.mocap.reconstruct import reconstruct_take

        rec = reconstruct_take(self.skeleton, self.motion, method=self.method,
                               constraints="humanoid" if self.limits else None, progress=self.progress)
        self.reconstruction = rec
        self.positions = rec.positions
        self.errors = np.linalg.norm(rec.positions - self.recorded, axis=2)
        self.colours = error_colours(self.errors, ERROR_SCALE * self.height)

    def set_method(self, method: str, limits: bool) -> None:
        if method not in self.methods:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(self.methods)}")
        self.method, self.limits = method, bool(limits)
        self.stats.content = "reconstructing..."
        self.reconstruct()
        self.show_frame(self.frame)

    def show_frame(self, f: int) -> None:
        """Draw frame ``f`` of the recording and of the reconstruction (the playback step)."""
        f = int(min(max(f, 0), self.recorded.shape[0] - 1))
        self.frame = f
        if hasattr(self, "timeline") and int(self.timeline.value) != f:
            self.timeline.value = f
        rec = self.reconstruction
        with self.viewer.server.atomic():
            self.rec_body.set(self.recorded[f] - self.offset)
            self.sol_body.set(self.positions[f] + self.offset, self.colours[f])
            self.label.position = tuple(self.positions[f, 0] + self.offset + [0, 0.6 * self.height, 0])
            self.stats.content = (f"frame {f}/{self.recorded.shape[0] - 1}: **{rec.method}**, largest joint error "
                                  f"{self.errors[f].max():.3g} (mean {self.errors[f].mean():.3g}) in file units, "
                                  f"{int(rec.solution.iterations[min(f, len(rec.solution.iterations) - 1)])} "
                                  f"iterations; colour: green 0 to red {ERROR_SCALE:g} x height")

    def _from_timeline(self) -> None:
        if int(self.timeline.value) != self.frame:  # not the echo of show_frame moving the slider
            self.show_frame(int(self.timeline.value))

    def _advance(self) -> None:
        self.show_frame((self.frame + 1) % self.recorded.shape[0])

    def close(self) -> None:
        self.player.close()
