"""The ``skeleton`` scene: a multi-effector body (the humanoid or the hand of section 5.2) with a
draggable target per end effector and a movable root; sub-bases marked, with where each branch
would put them in one forward stage and the centroid of those (section 4.1); FABRIK's effector
weights (a slider per effector), pole targets (draggable), obstacles (drawn, kept off) and a bar
held in both hands (a closed loop, its pose dragged)."""

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
        weights: ``{joint: weight}`` of the effectors (default 1 each; a slider per effector sets
            them live, ``fabrik.solve(..., weights=)``).
        poles: ``{joint: xyz}`` pole targets (``poles=``), each with a gizmo to drag it.
        obstacles: ``fabrik.obstacles`` solids, drawn and kept off every bone.
        hold: a ``fabrik.loops.HeldObject`` held by its grip joints (without a pose: placed where
            they hold it at rest), or ``"bar"``: a bar between the wrists of ``models.humanoid``;
            its pose is a gizmo to drag (and turn), the grip joints take no targets of their own.
    """

    kind = "skeleton"

    def __init__(self, viewer, skeleton, *, method: str = "fabrik", tol: float | None = None, effectors=None,
                 weights=None, poles=None, obstacles=None, hold=None, name: str = "/skeleton"):
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
        from fabrik.obstacles import pack

        pack(obstacles)  # (checked before anything is drawn)
        self.obstacles = list(obstacles or ())
        self.hold = _held_object(skeleton, hold)
        held = set()
        if self.hold is not None:
            held = {skeleton.index(j) if isinstance(j, str) else int(j) for j in self.hold.grips}
            self.effectors = [e for e in self.effectors if e not in held]
        self.weights = {names[e]: 1.0 for e in self.effectors}
        for key, w in (weights or {}).items():
            j = skeleton.index(key) if isinstance(key, str) else int(key)
            if j not in self.effectors:
                raise ValueError(f"weights: {key!r} is not an effector of the scene")
            self.weights[names[j]] = float(w)
        self.poles = {names[skeleton.index(k) if isinstance(k, str) else int(k)]: np.array(v, dtype=np.float64)
                      for k, v in (poles or {}).items()}
        if self.poles or self.obstacles or self.hold is not None:
            self.methods = [m for m in self.methods if m in ("fabrik", "fabrik-constrained")]
            if method not in self.methods:
                raise ValueError(f"poles, obstacles and held objects are FABRIK's options; method {method!r} does "
                                 f"not take them")
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
        from fabrik.viz.viewer.obstacles import HELD, POLE, capsule_mesh, draw_obstacles

        self.obstacle_nodes = draw_obstacles(scene, name, self.obstacles, self.size)
        self.pole_gizmos = {}
        for joint, point in self.poles.items():
            ball = scene.add_icosphere(f"{name}/poles/{joint}_ball", radius=r, color=POLE, position=tuple(point))
            g = scene.add_transform_controls(f"{name}/poles/{joint}", scale=0.1 * self.size, disable_rotations=True,
                                             position=tuple(point), depth_test=False)
            g.on_update(safe(lambda _ev, j=joint, g=g: self.move_pole(j, g.position), "pole update"))
            self.pole_gizmos[joint] = (g, ball)
            viewer.emit("gizmo", scene="skeleton", name=f"pole:{joint}", position=point, scale=0.1 * self.size)
        self._capsule_mesh = capsule_mesh
        if self.hold is not None:
            centre, R = self.hold.pose
            self.held_node = None
            self.hold_gizmo = scene.add_transform_controls(f"{name}/held", scale=0.15 * self.size, position=tuple(centre),
                                                           wxyz=tuple(_wxyz(R)), depth_test=False)
            self.hold_gizmo.on_update(safe(lambda _ev: self.move_held(self.hold_gizmo.position, self.hold_gizmo.wxyz),
                                           "held object update"))
            self._held_colour = HELD
            viewer.emit("gizmo", scene="skeleton", name="held", position=centre, scale=0.15 * self.size)
        with gui.add_folder("Solve"):
            self.menu = gui.add_dropdown("Method", tuple(self.methods), initial_value=method)
            self.menu.on_update(safe(lambda _e: self.set_method(self.menu.value), "method change"))
            self.stats = gui.add_markdown("")
            gui.add_markdown("yellow: sub-bases; violet: centroid of their branches' estimates in one forward "
                             "stage (section 4.1); green: the root (drag it)")
        with gui.add_folder("Effector weights"):
            self.weight_sliders = {}
            for joint in self.weights:
                slider = gui.add_slider(joint, 0.0, 5.0, 0.1, self.weights[joint])
                slider.on_update(safe(lambda _e, j=joint, sl=slider: self.set_weight(j, sl.value), "weight change"))
                self.weight_sliders[joint] = slider
        viewer.fit_camera(rest.mean(axis=0), self.size)
        self.solve()

    def set_weight(self, joint: str, weight: float):
        """Set one effector's weight (its slider's handler) and solve."""
        if joint not in self.weights:
            raise ValueError(f"{joint!r} is not an effector of the scene; effectors: {', '.join(self.weights)}")
        w = float(weight)
        if not (w >= 0.0 and np.isfinite(w)):
            return None
        self.weights[joint] = w
        return self.solve()

    def move_pole(self, joint: str, position):
        """Move the pole of ``joint`` (its gizmo's handler) and solve."""
        p = finite_point(position)
        if p is None or joint not in self.poles:
            return None
        self.poles[joint] = p
        g, ball = self.pole_gizmos[joint]
        if not np.allclose(g.position, p):
            g.position = tuple(p)
        ball.position = tuple(p)
        return self.solve()

    def move_held(self, position, wxyz=None):
        """Place the held object (its gizmo's handler: position and, given, rotation) and solve."""
        from fabrik.loops import HeldObject
        from fabrik.viz.viewer.server import wxyz_to_matrix

        p = finite_point(position)
        if p is None or self.hold is None:
            return None
        R = self.hold.pose[1]
        if wxyz is not None:
            q = np.asarray(wxyz, dtype=np.float64).reshape(-1)
            if q.shape != (4,) or not np.isfinite(q).all() or np.linalg.norm(q) < 1e-9:
                return None
            R = wxyz_to_matrix(q / np.linalg.norm(q))
        self.hold = HeldObject(dict(self.hold.grips), pose=(p, R))
        if not np.allclose(self.hold_gizmo.position, p):
            self.hold_gizmo.position = tuple(p)
        return self.solve()

    def _options(self) -> dict:
        """FABRIK's options of this scene for ``fabrik.solve``."""
        extra = {}
        if any(w != 1.0 for w in self.weights.values()):
            extra["weights"] = dict(self.weights)
        if self.poles:
            extra["poles"] = dict(self.poles)
        if self.obstacles:
            extra["obstacles"] = self.obstacles
        if self.hold is not None:
            extra["loops"] = [self.hold]
        return extra

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

        extra = self._options()
        t0 = time.perf_counter()
        sol = fabrik.solve(self.skeleton, targets=dict(self.targets), method=self.method, initial=self.positions,
                           root=self.root, tol=self.tol, **extra)
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
            more = ""
            if "loop_errors" in sol.extras:
                more += f"  \nheld object: loop error {float(sol.extras['loop_errors'].max()):.3g}"
                self._draw_held(sol)
            if self.obstacles:
                more += f"  \nclearance from the obstacles {sol.extras['clearance']:.3g}"
            self.stats.content = (f"**{sol.method}**: {sol.status}  \n{sol.iterations} iterations, largest error "
                                  f"{sol.error:.3g}, {fmt_time(self.solve_seconds)}{more}")
        names = self.skeleton.names
        events = {}
        if extra:
            events["weights"] = dict(self.weights)
            events["poles"] = dict(self.poles)
            if "clearance" in sol.extras:
                events["clearance"] = sol.extras["clearance"]
            if "loop_errors" in sol.extras:
                events["loop_errors"] = sol.extras["loop_errors"]
                events["held"] = self.hold.pose[0]
        self.viewer.emit("solve", scene="skeleton", targets={names[e]: self.targets[e] for e in self.effectors},
                         effectors={names[e]: sol.positions[e] for e in self.effectors},
                         errors=dict(sol.effector_errors), error=sol.error, status=sol.status, method=sol.method,
                         tol=self.tol, positions=sol.positions, **events)
        return sol

    def _draw_held(self, sol) -> None:
        """The held object as a capsule through its grip points where the solve holds it."""
        centre, R = sol.extras["objects"][0]
        grips = [centre + R @ np.asarray(g) for g in self.hold.grips.values()]
        v, f = self._capsule_mesh(grips[0], grips[-1], 0.012 * self.size)
        if self.held_node is None:
            self.held_node = self.viewer.server.scene.add_mesh_simple("/skeleton/held_object", v, f,
                                                                      color=self._held_colour)
        else:
            self.held_node.vertices = v


def _wxyz(R):
    from fabrik.viz.viewer.server import matrix_to_wxyz

    return matrix_to_wxyz(R)


def _held_object(skeleton, hold):
    """``hold`` as a placed ``fabrik.loops.HeldObject`` (None for none): ``"bar"`` a bar as long as
    the rest wrists (``l_wrist``, ``r_wrist``) are apart, held in front of the body; an object
    without a pose placed where its grip joints hold it at rest."""
    from fabrik.loops import HeldObject, fit_object

    if hold is None:
        return None
    rest = skeleton.rest_positions()
    if isinstance(hold, str):
        if hold != "bar" or "l_wrist" not in skeleton.names or "r_wrist" not in skeleton.names:
            raise ValueError(f"hold must be a fabrik.loops.HeldObject, or 'bar' on a skeleton with l_wrist and "
                             f"r_wrist, got {hold!r}")
        left, right = rest[skeleton.index("l_wrist")], rest[skeleton.index("r_wrist")]
        half = 0.5 * float(np.linalg.norm(left - right))
        # held in front of the body (the humanoid faces +Z), its gizmo clear of the root's
        reach = float(np.linalg.norm(left - rest[skeleton.parents[skeleton.index("l_wrist")]]))
        centre = 0.5 * (left + right) + np.array([0.0, 0.5, 1.0]) * reach
        hold = HeldObject({"l_wrist": [half, 0.0, 0.0], "r_wrist": [-half, 0.0, 0.0]}, pose=(centre, None))
    if not isinstance(hold, HeldObject):
        raise ValueError(f"hold must be a fabrik.loops.HeldObject or 'bar', got {type(hold).__name__}")
    if hold.pose is None:
        held = rest[[skeleton.index(j) if isinstance(j, str) else int(j) for j in hold.grips]]
        hold = HeldObject(dict(hold.grips), pose=fit_object(hold, held))
    return hold
