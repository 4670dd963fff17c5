"""The ``arm`` scene: a revolute arm (a DH table or a URDF file) with an oriented target gizmo
and its joint angles listed."""

from __future__ import annotations

import time

import numpy as np

from fabrik.viz.viewer.body import Body
from fabrik.viz.viewer.server import angle_deg, chain_parents, finite_point, fmt_time, matrix_to_wxyz, safe, wxyz_to_matrix


class ArmScene:
    """A ``fabrik.Arm`` whose tip follows a draggable, rotatable target.

    Args:
        viewer: the ``Viewer``.
        arm: ``fabrik.models.dhm_arm()``, ``fabrik.load_urdf(path, tip=...)`` or any ``Arm``.
        method: an arm method (``fabrik.methods("arm")``).
        tol: tolerance in the arm's units (default 1e-3 of its reach).
        oriented: solve for the gizmo's rotation too (default), else its position only.
    """

    kind = "arm"

    def __init__(self, viewer, arm, *, method: str = "fabrik", tol: float | None = None, oriented: bool = True,
                 name: str = "/arm"):
        import fabrik
        from fabrik.model.arm import Arm

        if not isinstance(arm, Arm):
            raise ValueError(f"the arm scene needs a fabrik.Arm, got {type(arm).__name__}")
        self.viewer = viewer
        self.arm = arm
        self.methods = fabrik.methods("arm")
        if method not in self.methods:
            raise ValueError(f"method {method!r} is not an arm method; choose one of {', '.join(self.methods)}")
        self.method = method
        self.size = float(arm.reach) or 1.0
        self.tol = 1e-3 * self.size if tol is None else float(tol)
        self.oriented = bool(oriented)
        self.q = arm.clip(np.zeros(arm.n_joints))
        pose = fabrik.forward(arm, self.q)
        self.positions = pose.positions
        self.last = None
        self.solve_seconds = 0.0
        scene, gui = viewer.server.scene, viewer.server.gui
        self.body = Body(scene, name, pose.positions, chain_parents(arm.n_joints + 1), self.size * 0.5)
        self.tip_frame = scene.add_frame(f"{name}/tip", axes_length=0.08 * self.size, axes_radius=0.004 * self.size,
                                         position=tuple(pose.positions[-1]), wxyz=tuple(matrix_to_wxyz(pose.frames[-1])))
        self.gizmo = scene.add_transform_controls(f"{name}/target", scale=0.2 * self.size,
                                                  position=tuple(pose.positions[-1]),
                                                  wxyz=tuple(matrix_to_wxyz(pose.frames[-1])), depth_test=False)
        self.gizmo.on_update(safe(lambda _e: self.set_target(self.gizmo.position, self.gizmo.wxyz), "target update"))
        with gui.add_folder("Solve"):
            self.menu = gui.add_dropdown("Method", tuple(self.methods), initial_value=method)
            self.menu.on_update(safe(lambda _e: self.set_method(self.menu.value), "method change"))
            self.orient_box = gui.add_checkbox("Match the gizmo's rotation", self.oriented)
            self.orient_box.on_update(safe(lambda _e: self.set_oriented(self.orient_box.value), "orientation toggle"))
            self.stats = gui.add_markdown("")
        with gui.add_folder("Joint angles"):
            self.angles = gui.add_markdown("")
        self.target = np.array(pose.positions[-1])
        self.rotation = np.array(pose.frames[-1])
        viewer.fit_camera(pose.positions[0], 1.3 * self.size)  # the sphere the arm reaches
        self._show(None)

    def set_method(self, method: str) -> None:
        if method not in self.methods:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(self.methods)}")
        self.method = method
        self.set_target(self.target, matrix_to_wxyz(self.rotation))

    def set_oriented(self, on: bool) -> None:
        self.oriented = bool(on)
        self.set_target(self.target, matrix_to_wxyz(self.rotation))

    def set_target(self, position, wxyz=None):
        """Solve for the tip at ``position`` (and, when ``oriented``, turned as ``wxyz``); the drag handler."""
        import fabrik

        p = finite_point(position)
        if p is None:
            return None
        if wxyz is not None:
            q = np.asarray(wxyz, dtype=np.float64).reshape(-1)
            if q.shape != (4,) or not np.isfinite(q).all() or np.linalg.norm(q) < 1e-9:
                return None
            self.rotation = wxyz_to_matrix(q / np.linalg.norm(q))
        self.target = p
        if not np.allclose(self.gizmo.position, p):  # set from Python: the gizmo follows
            self.gizmo.position = tuple(p)
        if not np.allclose(self.gizmo.wxyz, matrix_to_wxyz(self.rotation)) and not np.allclose(
                self.gizmo.wxyz, -matrix_to_wxyz(self.rotation)):
            self.gizmo.wxyz = tuple(matrix_to_wxyz(self.rotation))
        goal = (p, self.rotation) if self.oriented else p
        t0 = time.perf_counter()
        sol = fabrik.solve(self.arm, goal, method=self.method, initial=self.q, tol=self.tol)
        self.solve_seconds = time.perf_counter() - t0
        self.last = sol
        self.q = sol.joint_angles
        self.positions = sol.positions
        self._show(sol)
        return sol

    def _show(self, sol) -> None:
        import fabrik

        pose = fabrik.forward(self.arm, self.q)
        with self.viewer.server.atomic():
            self.body.set(pose.positions)
            self.tip_frame.position = tuple(pose.positions[-1])
            self.tip_frame.wxyz = tuple(matrix_to_wxyz(pose.frames[-1]))
            if sol is not None:
                extra = ""
                if self.oriented:
                    from scipy.spatial.transform import Rotation

                    turn = Rotation.from_matrix(self.rotation.T @ pose.frames[-1]).magnitude()
                    extra = f", {turn:.3g} rad off the rotation"
                self.stats.content = (f"**{sol.method}**: {sol.status}  \n{sol.iterations} iterations, error "
                                      f"{sol.error:.3g}{extra}, {fmt_time(self.solve_seconds)}")
            names = self.arm.joint_names
            rows = [f"| {names[k]} | {angle_deg(float(a))} |" for k, a in enumerate(self.q)]
            self.angles.content = "| joint | angle |\n| --- | --- |\n" + "\n".join(rows)
