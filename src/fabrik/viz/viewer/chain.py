"""The ``chain`` and ``constraints`` scenes: a chain, a draggable target, a method menu, each
solve's iterations, error and time, FABRIK's passes played stage by stage, the Kine snake, for a
chain with limits each joint's limit drawn and the active ones highlighted, and FABRIK's pole
target (a draggable pole) and obstacles (drawn, kept off)."""

from __future__ import annotations

import math
import time

import numpy as np

from fabrik.solvers import registry
from fabrik.viz.viewer.body import Body
from fabrik.viz.viewer.server import (ACTIVE, BACKWARD, FORWARD, LIMIT, ROOT, TARGET, Player, chain_parents,
                                      finite_point, fmt_time, matrix_to_wxyz, safe, to3)


def chain_methods(chain) -> list[str]:
    """The chain methods that can solve ``chain`` (with limits: those that apply them)."""
    from fabrik.solvers import registry

    out = []
    for name in registry.names("chain"):
        try:
            chosen = registry.route(name, "chain", limited=bool(chain.constraints), oriented=False)
        except ValueError:
            continue
        if chosen.name == name:
            out.append(name)
    return out


def _routed(method: str, limited: bool) -> str:
    """The method that solves in ``method``'s place (``fabrik`` on a chain with limits is
    ``fabrik-constrained``); unknown names are returned as they are."""
    from fabrik.solvers import registry

    try:
        return registry.route(method, "chain", limited=limited, oriented=False).name
    except ValueError:
        return method


def demo_limited_chain():
    """The ``constraints`` scene's default: 7 joints along +Y, 1-unit bones, a cone, a hinge, an
    irregular cone with a twist range, and a narrow cone."""
    from fabrik import Chain, Cone, Hinge, Twist

    return Chain.straight(7, 1.0).with_constraints({
        1: Cone.circular(math.radians(40)),
        2: (Hinge((1.0, 0.0, 0.0), math.radians(-10), math.radians(100)),),
        3: (Cone(math.radians(60), math.radians(20), math.radians(45), math.radians(30)),
            Twist(math.radians(-30), math.radians(30))),
        4: Cone.circular(math.radians(25)),
        5: (Hinge((0.0, 0.0, 1.0), math.radians(-80), math.radians(80)),),
    })


class ChainScene:
    """A chain with a draggable target: every drag solves (``fabrik.solve``) from the last answer
    and redraws.

    Args:
        viewer: the ``Viewer``.
        chain: a ``fabrik.Chain`` (2D or 3D); its limits, if any, are drawn.
        method: the first method of the menu's choice.
        tol: solve tolerance in the chain's units.
        snake: the Kine snake of section 5.1: the head follows the target and the body drags its
            root along (a 2D chain makes it planar).
        target: the target's first place (default: the effector's rest place bent a little off the line).
        pole: a pole target (``fabrik.solve(..., pole=)``): its first place, or True for one in
            front of the chain's middle; drawn as a violet ball with a gizmo to drag it.
        pole_joint: the pole joint (default the middle joint).
        obstacles: ``fabrik.obstacles`` solids, drawn and kept off every bone.
    With a pole or obstacles the menu holds FABRIK only (they are its options).
    """

    kind = "chain"

    def __init__(self, viewer, chain, *, method: str = "fabrik", tol: float = 1e-3, snake: bool = False,
                 target=None, pole=None, pole_joint=None, obstacles=None, name: str = "/chain"):
        from fabrik.model.chain import Chain

        if not isinstance(chain, Chain):
            raise ValueError(f"the chain scene needs a fabrik.Chain, got {type(chain).__name__}")
        self.viewer = viewer
        self.chain = chain
        self.limited = bool(chain.constraints)
        self.dim = chain.dim
        self.tol = float(tol)
        self.snake = bool(snake)
        self.methods = chain_methods(chain)
        from fabrik.obstacles import pack

        pack(obstacles)  # (checked before anything is drawn)
        self.obstacles = list(obstacles or ())
        self.pole_joint = pole_joint
        if (pole is not None and pole is not False) or self.obstacles:
            self.methods = [m for m in self.methods if m in ("fabrik", "fabrik-constrained")]
        method = _routed(method, self.limited)
        if method not in self.methods:
            raise ValueError(f"method {method!r} cannot solve this chain; choose one of {', '.join(self.methods)}")
        self.method = method
        self.show_limits = self.limited
        self.size = float(chain.total_length)
        self.positions = np.array(chain.rest_positions, dtype=np.float64)
        self.root = self.positions[0].copy()
        self.last = None
        self.solve_seconds = 0.0
        self.stages = []
        scene, gui = viewer.server.scene, viewer.server.gui
        n = chain.n_joints
        self.body = Body(scene, name, self.positions, chain_parents(n), self.size * 0.4)
        self.root_marker = scene.add_icosphere(f"{name}/root", radius=0.03 * self.size / 2, color=ROOT,
                                               position=tuple(to3(self.positions[0])))
        self.ghost = Body(scene, f"{name}/pass", self.positions, chain_parents(n), self.size * 0.4,
                          color=FORWARD, thickness=0.008, point=0.02, visible=False)
        if target is None:
            reach = self.size
            target = to3(self.positions[0]) + np.array([0.45, 0.55, 0.2 if self.dim == 3 else 0.0]) * reach
        target = to3(np.asarray(target, dtype=np.float64))
        self.target_ball = scene.add_icosphere(f"{name}/target_ball", radius=0.025 * self.size / 2, color=TARGET,
                                               position=tuple(target))
        self.gizmo = scene.add_transform_controls(
            f"{name}/target", scale=0.22 * self.size, disable_rotations=True, position=tuple(target),
            active_axes=(True, True, self.dim == 3), depth_test=False)
        self.gizmo.on_update(safe(lambda _event: self.set_target(self.gizmo.position), "target update"))
        from fabrik.viz.viewer.obstacles import POLE, draw_obstacles

        self.obstacle_nodes = draw_obstacles(scene, name, self.obstacles, self.size)
        self.pole = None
        if pole is not None and pole is not False:
            if pole is True:
                pole = to3(self.positions[0]) + np.array([0.0, 0.5, 0.6] if self.dim == 3 else [0.6, 0.5, 0.0]) * self.size
            self.pole = finite_point(to3(np.asarray(pole, dtype=np.float64)))
            if self.pole is None:
                raise ValueError(f"pole must be a finite point, got {pole!r}")
            self.pole_ball = scene.add_icosphere(f"{name}/pole_ball", radius=0.02 * self.size, color=POLE,
                                                 position=tuple(self.pole))
            self.pole_gizmo = scene.add_transform_controls(
                f"{name}/pole", scale=0.15 * self.size, disable_rotations=True, position=tuple(self.pole),
                active_axes=(True, True, self.dim == 3), depth_test=False)
            self.pole_gizmo.on_update(safe(lambda _event: self.set_pole(self.pole_gizmo.position), "pole update"))
        with gui.add_folder("Solve"):
            self.menu = gui.add_dropdown("Method", tuple(self.methods), initial_value=method)
            self.menu.on_update(safe(lambda _e: self.set_method(self.menu.value), "method change"))
            self.stats = gui.add_markdown("")
            if self.limited:
                self.limits_box = gui.add_checkbox("Limits on", True)
                self.limits_box.on_update(safe(lambda _e: self.set_limits(self.limits_box.value), "limits toggle"))
            self.snake_box = gui.add_checkbox("Kine snake (moving root)", self.snake,
                                              disabled=self.limited)
            self.snake_box.on_update(safe(lambda _e: setattr(self, "snake", self.snake_box.value), "snake toggle"))
        with gui.add_folder("Passes (FABRIK, Fig. 2)"):
            self.pass_box = gui.add_checkbox("Show passes", False)
            self.pass_slider = gui.add_slider("Stage", 0, 1, 1, 0)
            self.pass_play = gui.add_checkbox("Play", False)
            self.pass_text = gui.add_markdown("")
        self.pass_box.on_update(safe(lambda _e: self._show_stage(), "pass toggle"))
        self.pass_slider.on_update(safe(lambda _e: self._show_stage(), "stage change"))
        self.pass_play.on_update(safe(lambda _e: setattr(self.player, "playing", self.pass_play.value), "play"))
        self.player = Player(safe(self._next_stage, "pass playback"), fps=3.0)
        self.limit_nodes = self._add_limits(scene, name) if self.limited else []
        viewer.fit_camera(to3(self.positions[0]) + np.array([0.0, 0.4, 0.0]) * self.size, self.size, planar=self.dim == 2)
        viewer.emit("gizmo", scene="chain", name="target", position=target, scale=0.22 * self.size)
        if self.pole is not None:
            viewer.emit("gizmo", scene="chain", name="pole", position=self.pole, scale=0.15 * self.size)
        self.set_target(target)

    # --- solving ----------------------------------------------------------------------------
    def _model(self):
        if self.limited and not self.show_limits:
            from fabrik.model.chain import Chain

            return Chain.from_positions(self.chain.rest_positions)
        return self.chain

    def set_method(self, method: str) -> None:
        if method not in self.methods:
            raise ValueError(f"unknown method {method!r}; choose one of {', '.join(self.methods)}")
        self.method = method
        self.set_target(self.target)

    def set_pole(self, position) -> object | None:
        """Move the pole (the pole gizmo's drag handler) and solve again from the last answer."""
        p = finite_point(position)
        if p is None or self.pole is None:
            return None
        if self.dim == 2:
            p[2] = 0.0
        self.pole = p
        if not np.allclose(self.pole_gizmo.position, p):
            self.pole_gizmo.position = tuple(p)
        self.pole_ball.position = tuple(p)
        return self.set_target(self.target)

    def _options(self) -> dict:
        """FABRIK's options of this scene for ``fabrik.solve``: the pole and the obstacles."""
        extra = {}
        if self.pole is not None:
            extra["pole"] = self.pole[: self.dim]
            if self.pole_joint is not None:
                extra["pole_joint"] = self.pole_joint
        if self.obstacles:
            extra["obstacles"] = self.obstacles
        return extra

    def set_limits(self, on: bool) -> None:
        self.show_limits = bool(on) and self.limited
        for node in self.limit_nodes:
            node[0].visible = self.show_limits
        self.set_target(self.target)

    def set_target(self, position) -> object | None:
        """Solve for ``position`` (the gizmo's place) from the last answer and redraw; the drag
        handler. Returns the ``Solution`` (None for a point that is not finite 3 numbers)."""
        import fabrik

        p = finite_point(position)
        if p is None:
            return None
        if self.dim == 2:
            p[2] = 0.0
        self.target = p
        if not np.allclose(self.gizmo.position, p):  # set from Python: the gizmo follows
            self.gizmo.position = tuple(p)
        goal = p[: self.dim]
        model = self._model()
        method = self.method
        if model is not self.chain:  # limits off: the same method without them
            unlimited = registry.unlimited_variant(method)
            method = unlimited if registry.get(unlimited).chain is not None else registry.DEFAULT_METHOD
        start = self.positions
        root = None
        if self.snake and not self.limited:
            from fabrik.viz.viewer.passes import follow_the_head

            root = follow_the_head(model.bone_lengths, start, goal)[0]
        extra = self._options()
        t0 = time.perf_counter()
        sol = fabrik.solve(model, goal, method=method, initial=start, root=root, tol=self.tol, **extra)
        self.solve_seconds = time.perf_counter() - t0
        self.last = sol
        self.previous, self.positions = self.positions, sol.positions
        self.root = sol.positions[0]
        self._redraw(sol)
        more = {}
        if self.pole is not None:
            more.update(pole=self.pole, pole_joint=sol.extras["pole_joint"])
        if self.obstacles:
            more.update(clearance=sol.extras["clearance"])
        self.viewer.emit("solve", scene="chain", target=p, effector=to3(sol.positions[-1]), error=sol.error,
                         status=sol.status, method=sol.method, iterations=sol.iterations, tol=self.tol,
                         positions=to3(sol.positions), **more)
        if self.pass_box.value:
            self._compute_stages()
            self._show_stage()
        return sol

    def _redraw(self, sol) -> None:
        with self.viewer.server.atomic():
            self.body.set(sol.positions)
            self.target_ball.position = tuple(self.target)
            self.root_marker.position = tuple(to3(sol.positions[0]))
            extra = ""
            if self.pole is not None:
                extra += f"  \npole joint {sol.extras['pole_joint']} (violet: the pole, drag it)"
            if self.obstacles:
                extra += f"  \nclearance from the obstacles {sol.extras['clearance']:.3g}"
            self.stats.content = (f"**{sol.method}**: {sol.status}  \n{sol.iterations} iterations, error "
                                  f"{sol.error:.3g}, {fmt_time(self.solve_seconds)}{extra}")
            if self.limit_nodes and self.show_limits and "frames" in sol.extras:
                self._place_limits(sol)

    # --- passes -----------------------------------------------------------------------------
    def _compute_stages(self) -> None:
        from fabrik.viz.viewer.passes import fabrik_stages

        model = self._model()
        self.stages = fabrik_stages(model.bone_lengths, self.previous, self.target[: self.dim], root=self.root,
                                    tol=self.tol, max_iter=12)
        self.pass_slider.max = max(1, len(self.stages) - 1)
        self.pass_slider.value = min(self.pass_slider.value, len(self.stages) - 1)

    def _show_stage(self) -> None:
        on = self.pass_box.value
        if on and not self.stages and self.last is not None:
            self._compute_stages()
        self.ghost.visible = on
        if not on or not self.stages:
            self.pass_text.content = ""
            return
        k = int(min(max(self.pass_slider.value, 0), len(self.stages) - 1))
        stage = self.stages[k]
        self.ghost.bones.colors = np.array(FORWARD if stage.kind == "forward" else BACKWARD, dtype=np.uint8)
        self.ghost.set(stage.positions)
        self.pass_text.content = (f"stage {k}/{len(self.stages) - 1}: **{stage.kind}** of iteration "
                                  f"{stage.iteration}, effector {np.linalg.norm(to3(stage.positions)[-1] - self.target):.3g} "
                                  "from the target (a Python re-run of Algorithm 1, for display)")

    def _next_stage(self) -> None:
        if self.pass_box.value and self.stages:
            self.pass_slider.value = (int(self.pass_slider.value) + 1) % len(self.stages)

    # --- limits -----------------------------------------------------------------------------
    def _add_limits(self, scene, name: str) -> list:
        """One scene node per limit, drawn from its ``drawing()`` (``fabrik.limits.base.Drawing``)."""
        nodes = []
        scale = float(np.min(self.chain.bone_lengths)) * 0.6
        for joint, items in sorted(self.chain.constraints.items()):
            for k, item in enumerate(items):
                node = f"{name}/limits/j{joint}_{k}"
                drawing = item.drawing()
                if drawing.segments is not None:
                    h = scene.add_line_segments(node, drawing.segments, LIMIT, thickness=0.04, scale=scale)
                else:
                    h = scene.add_mesh_simple(node, drawing.vertices, drawing.faces, color=LIMIT, opacity=0.45,
                                              side="double", scale=scale, cast_shadow=False, receive_shadow=False)
                nodes.append((h, joint, drawing))
        return nodes

    def _place_limits(self, sol) -> None:
        frames = sol.extras["frames"]
        root_frame = sol.extras["root_frame"]
        active = set(sol.extras["active_constraints"])
        for handle, joint, drawing in self.limit_nodes:
            if drawing.frame == "bone":
                frame = frames[joint]  # (a twist's arc turns about the joint's own bone)
            else:
                frame = root_frame if joint == 0 else frames[joint - 1]
            handle.position = tuple(to3(sol.positions[joint]))
            handle.wxyz = tuple(matrix_to_wxyz(frame))
            colour = ACTIVE if joint in active else LIMIT
            if drawing.segments is not None:
                handle.colors = np.array(colour, dtype=np.uint8)
            else:
                handle.color = colour

    def close(self) -> None:
        self.player.close()
