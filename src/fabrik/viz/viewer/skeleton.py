"""The ``skeleton`` scene: a multi-effector body (the humanoid or the hand of section 5.2) with a
draggable target per end effector and a movable root; sub-bases marked, with where each branch
would put them in one forward stage and the centroid of those (section 4.1)."""

from __future__ import annotations

import time

import numpy as np

from fabrik.viz.viewer.body import Body
from fabrik.viz.viewer.server import ROOT, SUB_BASE, TARGET, finite_point, fmt_time, safe


class SkeletonScene:
    """A ``fabrik.Skeleton`` whose end effectors follow draggable targets.

    Args:
        viewer: the ``Viewer``.
        skeleton: the model (``fabrik.models.humanoid()``, ``hand()``, ``y_shape()`` or any skeleton).
        method: a skeleton method (``fabrik.methods("skeleton")``).
        tol: tolerance in the skeleton's units (default 1e-3 of its height).
        effectors: joint names to give targets (default every leaf).
    """

    kind = "skeleton"

    def __init__(self, viewer, skeleton, *, method: str = "fabrik", tol: float | None = None, effectors=None,
                 name: str = "/skeleton"):
        import fabrik
        from fabrik.model.skeleton import Skeleton

        if not isinstance(skeleton, Skeleton):
            raise ValueError(f"the skeleton scene needs a fabrik.Skeleton, got {type(skeleton).__name__}")
        self.viewer = viewer
        self.skeleton = skeleton
        rest = skeleton.rest_positions()
        self.size = float(skeleton.height()) or float(np.ptp(rest, axis=0).max()) or 1.0
        self.tol = 1e-3 * self.size if tol is None else float(tol)
        # the methods that apply limits for a skeleton with them, the others for one without
        self.methods = [m for m in fabrik.methods("skeleton") if fabrik.method(m).limits == bool(skeleton.constraints)]
        if method not in self.methods:
            raise ValueError(f"method {method!r} cannot solve this skeleton; choose one of {', '.join(self.methods)}")
        self.method = method
        names = list(skeleton.names)
        eff = list(skeleton.leaves) if effectors is None else [
            names.index(e) if isinstance(e, str) and e in names else e for e in effectors]
        for e in eff:
            if not isinstance(e, (int, np.integer)) or not 0 <= e < skeleton.n_joints:
                raise ValueError(f"effectors: unknown joint {e!r}; joints are {', '.join(names)}")
        self.effectors = [int(e) for e in eff]
        self.positions = rest.copy()
        self.targets = {e: rest[e].copy() for e in self.effectors}
        self.root = rest[0].copy()
        self.last = None
        self.solve_seconds = 0.0
        scene, gui = viewer.server.scene, viewer.server.gui
        self.body = Body(scene, name, rest, skeleton.parents, self.size * 0.5)
        self.sub_bases = [int(j) for j in skeleton.sub_bases]
        r = 0.012 * self.size
        self.sub_marks = scene.add_point_cloud(f"{name}/sub_bases", rest[self.sub_bases].astype(np.float32), SUB_BASE,
                                               point_size=0.035 * self.size, point_shape="circle", precision="float32")
        self.centroid_marks = scene.add_point_cloud(f"{name}/centroids", rest[self.sub_bases].astype(np.float32),
                                                    (160, 60, 200), point_size=0.02 * self.size,
                                                    point_shape="diamond", precision="float32")
        self.gizmos = {}
        self.balls = {}
        for e in self.effectors:
            self.balls[e] = scene.add_icosphere(f"{name}/targets/{names[e]}_ball", radius=r, color=TARGET,
                                                position=tuple(rest[e]))
            g = scene.add_transform_controls(f"{name}/targets/{names[e]}", scale=0.12 * self.size,
                                             disable_rotations=True, position=tuple(rest[e]), depth_test=False)
            g.on_update(safe(lambda _ev, e=e, g=g: self.move_target(names[e], g.position), "target update"))
            self.gizmos[e] = g
            viewer.emit("gizmo", scene="skeleton", name=names[e], position=rest[e], scale=0.12 * self.size)
        self.root_gizmo = scene.add_transform_controls(f"{name}/root", scale=0.16 * self.size, disable_rotations=True,
                                                       position=tuple(rest[0]), depth_test=False)
        self.root_gizmo.on_update(safe(lambda _ev: self.move_root(self.root_gizmo.position), "root update"))
        scene.add_icosphere(f"{name}/root/ball", radius=r, color=ROOT)
        with gui.add_folder("Solve"):
            self.menu = gui.add_dropdown("Method", tuple(self.methods), initial_value=method)
            self.menu.on_update(safe(lambda _e: self.set_method(self.menu.value), "method change"))
            self.stats = gui.add_markdown("")
            gui.add_markdown("yellow: sub-bases; violet: centroid of their branches' estimates in one forward "
                             "stage (section 4.1); green: the root (drag it)")
        viewer.fit_camera(rest.mean(axis=0), self.size)
        self.solve()

    def set_method(self, method: str) -> None:
        if method not in self.methods:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(self.methods)}")
        self.method = method
        self.solve()

    def move_target(self, joint, position):
        """Move one effector's target (a joint name or index) and solve; the drag handler."""
        j = self.skeleton.index(joint) if isinstance(joint, str) else int(joint)
        if j not in self.targets:
            raise ValueError(f"joint {joint!r} has no target; targets are on "
                             f"{', '.join(self.skeleton.names[e] for e in self.effectors)}")
        p = finite_point(position)
        if p is None:
            return None
        self.targets[j] = p
        if not np.allclose(self.gizmos[j].position, p):  # set from Python: the gizmo follows
            self.gizmos[j].position = tuple(p)
        return self.solve()

    def move_root(self, position):
        p = finite_point(position)
        if p is None:
            return None
        self.root = p
        if not np.allclose(self.root_gizmo.position, p):
            self.root_gizmo.position = tuple(p)
        return self.solve()

    def solve(self):
        import fabrik

        from fabrik.viz.viewer.passes import sub_base_estimates

        t0 = time.perf_counter()
        sol = fabrik.solve(self.skeleton, targets=dict(self.targets), method=self.method, initial=self.positions,
                           root=self.root, tol=self.tol)
        self.solve_seconds = time.perf_counter() - t0
        self.last = sol
        self.positions = sol.positions
        est = sub_base_estimates(self.skeleton, sol.positions, self.targets)
        centroids = np.array([est[j].mean(axis=0) if j in est else sol.positions[j] for j in self.sub_bases])
        with self.viewer.server.atomic():
            self.body.set(sol.positions)
            for e, ball in self.balls.items():
                ball.position = tuple(self.targets[e])
            self.sub_marks.points = sol.positions[self.sub_bases].astype(np.float32)
            self.centroid_marks.points = centroids.astype(np.float32)
            self.stats.content = (f"**{sol.method}**: {sol.status}  \n{sol.iterations} iterations, largest error "
                                  f"{sol.error:.3g}, {fmt_time(self.solve_seconds)}")
        names = self.skeleton.names
        self.viewer.emit("solve", scene="skeleton", targets={names[e]: self.targets[e] for e in self.effectors},
                         effectors={names[e]: sol.positions[e] for e in self.effectors}, error=sol.error,
                         status=sol.status, method=sol.method, tol=self.tol, positions=sol.positions)
        return sol
