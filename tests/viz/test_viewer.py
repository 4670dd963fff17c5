"""The viewer without a browser (fabrik.viz.viewer, the fabrik view CLI; renders: test_render.py):
the scenes' drag handlers solve and redraw, bad input is ignored or refused, FABRIK's stages
for display agree with fabrik.solve, malformed client messages leave the server running."""

import math
import socket
import urllib.request

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabrik
from fabrik.viz.viewer.passes import fabrik_stages, follow_the_head, sub_base_estimates

viser = pytest.importorskip("viser", reason="viser is not installed (the 'view' extra: pip install -e '.[view]')")

from fabrik.viz.viewer import Viewer, is_loopback  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def viewer():
    v = Viewer(port=free_port(), verbose=False)
    yield v
    v.stop()


# --- FABRIK's stages for display ----------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.floats(-0.85, 0.85), st.floats(-0.85, 0.85), st.floats(-0.85, 0.85))
def test_stages_end_where_fabrik_solve_ends(x, y, z):
    chain = fabrik.Chain.straight(6, 1.0)
    bent = fabrik.solve(chain, [1.5, 2.5, 1.0]).positions  # off the straight line (no singular start)
    target = np.array([x, y, z]) * 5.0
    stages = fabrik_stages(chain.bone_lengths, bent, target, tol=1e-6, max_iter=1000)
    sol = fabrik.solve(chain, target, initial=bent, tol=1e-6, max_iter=1000)
    last = stages[-1].positions
    if np.linalg.norm(target - bent[0]) > 5.0:
        assert [s.kind for s in stages] == ["start", "backward"]  # stretched at it in one stage
        assert np.allclose(last, sol.positions, atol=1e-6)
    else:
        kinds = [s.kind for s in stages]
        turned = kinds[1] == "turn"  # fabrik.solve's turn_start on the bent start
        assert kinds[1 + turned:3 + turned] == ["forward", "backward"]
    assert np.allclose(np.linalg.norm(np.diff(last, axis=0), axis=1), 1.0)
    assert np.allclose(last[0], bent[0])
    if sol.status == "reached" and stages[-1].error <= 1e-6:
        assert np.allclose(last, sol.positions, atol=1e-5)


def test_stages_out_of_reach_stretch_once():
    stages = fabrik_stages([1.0, 1.0], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], [5.0, 0, 0])
    assert [s.kind for s in stages] == ["start", "backward"]
    assert np.allclose(stages[-1].positions, [[0, 0, 0], [1, 0, 0], [2, 0, 0]])


def test_stages_refuse_wrong_lengths():
    with pytest.raises(ValueError, match="bone_lengths"):
        fabrik_stages([1.0], [[0, 0, 0], [0, 1, 0], [0, 2, 0]], [1.0, 0, 0])


@settings(max_examples=30, deadline=None)
@given(st.floats(-4, 4), st.floats(-4, 4))
def test_snake_keeps_its_bones_and_puts_the_head_on_the_target(x, y):
    chain = fabrik.Chain.straight(6, 1.0, dim=2)
    moved = follow_the_head(chain.bone_lengths, chain.rest_positions, [x, y])
    assert np.allclose(moved[-1], [x, y])
    assert np.allclose(np.linalg.norm(np.diff(moved, axis=0), axis=1), 1.0)


def test_sub_base_estimates_meet_at_a_solved_pose():
    body = fabrik.models.humanoid()
    rest = body.rest_positions()
    est = sub_base_estimates(body, rest, {j: rest[j] for j in body.leaves})
    assert set(est) == set(body.sub_bases)
    for j, rows in est.items():
        assert rows.shape[0] == len(body.children(j))
        assert np.allclose(rows, rest[j])
    est = sub_base_estimates(body, rest, {body.index("r_wrist"): rest[body.index("r_wrist")] + [0.3, 0, 0]})
    assert not np.allclose(est[1].mean(axis=0), rest[1])  # the neck's branches disagree: the centroid moves


# --- the server ---------------------------------------------------------------------------------
def test_loopback_names():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.3.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")


def test_viewer_binds_loopback_by_default(viewer):
    assert viewer.host == "127.0.0.1" and viewer.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(viewer.url, timeout=10) as response:
        page = response.read().decode()
    assert response.status == 200 and "<html" in page.lower()


def test_other_host_warns(monkeypatch, capsys):
    calls = {}

    class FakeServer:  # never bind a public address in a test
        def __init__(self, host, port, verbose):
            calls["host"] = host
            self.gui = self.scene = self

        def __getattr__(self, name):
            return lambda *a, **k: None

    monkeypatch.setattr(viser, "ViserServer", FakeServer)
    Viewer("0.0.0.0", 8080, verbose=False)
    assert calls["host"] == "0.0.0.0"
    assert "WARNING" in capsys.readouterr().err
    Viewer("127.0.0.1", 8080, verbose=False)
    assert "WARNING" not in capsys.readouterr().err


@pytest.mark.parametrize("port", [0, -1, 70000, 1.5, "80", True])
def test_bad_port(port):
    with pytest.raises(ValueError, match="port"):
        Viewer(port=port, verbose=False)


def test_bad_model(viewer):
    with pytest.raises(ValueError, match="model must be"):
        viewer.add(np.zeros(3))
    with pytest.raises(ValueError, match="kind must be"):
        viewer.add(kind="movie")


# --- scenes -------------------------------------------------------------------------------------
def test_chain_scene_follows_the_target(viewer):
    scene = viewer.add(kind="chain")
    assert scene.chain.n_joints == 10 and scene.size == 900.0  # the Table 1 chain
    target = np.array([250.0, 500.0, -120.0])
    sol = scene.set_target(target)
    assert sol.status == "reached" and np.linalg.norm(sol.positions[-1] - target) <= scene.tol
    assert np.allclose(scene.body.joints.points, sol.positions, atol=1e-3)
    assert "iterations" in scene.stats.content and sol.method in scene.stats.content
    for method in ("ccd", "jacobian-dls"):
        scene.set_method(method)
        assert scene.last.method == method
    with pytest.raises(ValueError, match="choose one of"):
        scene.set_method("magic")


@pytest.mark.parametrize("bad", [[np.nan, 0, 0], [np.inf, 1, 2], [1, 2], "abc", None, [1e300, 0, 0]])
def test_chain_scene_ignores_bad_points(viewer, bad):
    scene = viewer.add(kind="chain")
    before = scene.positions.copy()
    assert scene.set_target(bad) is None
    assert np.array_equal(scene.positions, before)


def test_chain_scene_passes(viewer):
    scene = viewer.add(fabrik.Chain.straight(5, 1.0))
    scene.set_target([1.0, 2.0, 1.0])
    scene.pass_box.value = True
    scene.set_target([-1.5, 1.5, 0.5])
    kinds = [s.kind for s in scene.stages]
    # from the last (bent) answer: turned towards the new target first, as fabrik.solve does
    assert kinds[:4] == ["start", "turn", "forward", "backward"]
    scene.pass_slider.value = 2
    scene._show_stage()
    assert np.allclose(scene.ghost.positions, scene.stages[2].positions)
    assert "forward" in scene.pass_text.content


def test_snake_scene_moves_its_root(viewer):
    scene = viewer.add(fabrik.Chain.straight(6, 1.0, dim=2), snake=True)
    root = scene.positions[0].copy()
    sol = scene.set_target([4.0, 5.5, 0.0])
    assert sol.positions.shape == (6, 2)
    assert np.linalg.norm(sol.positions[-1] - [4.0, 5.5]) <= scene.tol
    assert not np.allclose(sol.positions[0], root)  # the tail was dragged along
    assert np.allclose(np.linalg.norm(np.diff(sol.positions, axis=0), axis=1), 1.0)


def test_constraints_scene_draws_every_limit(viewer):
    scene = viewer.add(kind="constraints")
    items = sum(len(v) for v in scene.chain.constraints.values())
    assert len(scene.limit_nodes) == items
    sol = scene.set_target([2.0, 3.0, 2.0])
    assert sol.method == "fabrik-constrained"
    frames = sol.extras["frames"]
    for handle, joint, _ in scene.limit_nodes:
        assert np.allclose(handle.position, sol.positions[joint], atol=1e-5)
    active = set(sol.extras["active_constraints"])
    assert active, "this target pushes some limit to its edge"
    for handle, joint, drawing in scene.limit_nodes:
        colour = np.asarray(handle.colors if drawing.segments is not None else handle.color).reshape(-1)[:3]
        assert tuple(colour) == ((230, 30, 30) if joint in active else (120, 200, 120))
    assert frames.shape == (7, 3, 3)
    scene.set_limits(False)
    assert scene.last.method == "fabrik" and not scene.limit_nodes[0][0].visible


def test_skeleton_scene_follows_a_dragged_hand(viewer):
    scene = viewer.add(fabrik.models.humanoid())
    hand = scene.targets[scene.skeleton.index("r_wrist")] + np.array([0.1, 0.25, 0.15])
    sol = scene.move_target("r_wrist", hand)
    assert np.linalg.norm(sol.positions[scene.skeleton.index("r_wrist")] - hand) <= scene.tol
    assert scene.sub_marks.points.shape == (len(scene.sub_bases), 3)
    sol = scene.move_root(scene.root + [0.0, -0.05, 0.05])
    assert np.allclose(sol.positions[0], scene.root)
    with pytest.raises(ValueError, match="has no target"):
        scene.move_target("pelvis", [0, 0, 0])
    assert scene.move_target("r_wrist", [np.nan, 0, 0]) is None


def test_arm_scene_reaches_an_oriented_target(viewer):
    arm = fabrik.models.dhm_arm()
    scene = viewer.add(arm)
    pose = fabrik.forward(arm, arm.random_angles(3))
    from fabrik.viz.viewer.server import matrix_to_wxyz

    sol = scene.set_target(pose.positions[-1], matrix_to_wxyz(pose.frames[-1]))
    assert sol.status == "reached", sol
    assert np.linalg.norm(sol.positions[-1] - pose.positions[-1]) <= scene.tol
    assert arm.joint_names[0] in scene.angles.content and "deg" in scene.angles.content
    assert scene.set_target([0, 0, 0], [0, 0, 0, 0]) is None  # not a rotation: ignored


@pytest.mark.mocap
def test_take_scene_plays_a_cmu_take(viewer, mocap_files):
    scene = viewer.add(mocap_files[0], kind="take", frames="0:60")
    assert scene.recorded.shape == scene.positions.shape and scene.recorded.shape[0] == 60
    scene.show_frame(30)
    assert scene.frame == 30 and scene.timeline.value == 30  # the timeline follows
    scene.timeline.value = 12  # as a drag of the slider does
    scene._from_timeline()
    assert scene.frame == 12
    scene._advance()
    assert scene.frame == 13 and scene.timeline.value == 13
    scene.show_frame(30)
    assert np.allclose(scene.sol_body.positions, scene.positions[30] + scene.offset)
    assert np.array_equal(scene.sol_body.joints.colors, scene.colours[30])
    scene.set_method("ccd", False)
    assert scene.reconstruction.method == "ccd"
    scene.show_frame(10_000)
    assert scene.frame == 59


def test_malformed_client_messages_do_not_stop_the_server(viewer):
    """Garbage, unknown message types and gizmo updates with NaN or wrong types over a real
    websocket (with viser's subprotocol, so that they reach the handlers); then a good update
    still moves the target and solves."""
    import time

    import msgspec
    from websockets.sync.client import connect

    scene = viewer.add(fabrik.Chain.straight(4, 1.0))
    before = scene.target.copy()
    url = f"ws://127.0.0.1:{viewer.port}"
    protocol = ["viser-v" + viser.__version__]

    def update(position, name="/chain/target", wxyz=(1, 0, 0, 0)):
        return msgspec.msgpack.encode({"type": "TransformControlsUpdateMessage", "name": name, "wxyz": list(wxyz),
                                       "position": position, "owner": ""})

    bad = [b"\x00\xffnot msgpack", msgspec.msgpack.encode({"type": "NoSuchMessage"}), msgspec.msgpack.encode([1, 2, 3]),
           update([float("nan"), 0.0, 0.0]), update([float("inf"), 1.0, 1.0]), update([1e300, 0.0, 0.0]),
           update([1.0, 2.0, 3.0], name="/no/such/gizmo"), update("xyz"), update([1.0, 2.0])]
    for payload in bad:
        try:
            with connect(url, open_timeout=10, subprotocols=protocol) as ws:
                ws.send(payload)
                time.sleep(0.2)
        except Exception:
            pass  # the server may close this client: that is all it may do
    assert np.array_equal(scene.target, before)
    with urllib.request.urlopen(viewer.url, timeout=10) as response:
        assert response.status == 200
    with connect(url, open_timeout=10, subprotocols=protocol) as ws:
        ws.send(update([1.0, 1.5, 0.5]))
        deadline = time.time() + 10
        while not np.allclose(scene.target, [1.0, 1.5, 0.5]) and time.time() < deadline:
            time.sleep(0.05)
    assert np.allclose(scene.target, [1.0, 1.5, 0.5]), "a good update reaches the scene"
    assert scene.last.status == "reached" and np.linalg.norm(scene.last.positions[-1] - [1.0, 1.5, 0.5]) <= scene.tol


def malformed_messages(count: int, seed: int = 0) -> list:
    """``count`` malformed client messages: random bytes, text frames, msgpack that is not an
    object, and viser message types with missing fields or fields of the wrong types."""
    import random

    import msgspec
    from viser.infra._messages import Message

    rng = random.Random(seed)
    types = sorted(c.__name__ for c in Message.get_subclasses()) + ["TransformControlsUpdateMessage"] * 20
    fields = ("name", "wxyz", "position", "owner", "id", "updates", "value", "client_id", "props", "look_at", "fov")

    def junk(depth=0):
        pick = rng.randrange(8 if depth < 2 else 6)
        return [lambda: None, lambda: True, lambda: rng.random() * 10.0 ** rng.randrange(-5, 300),
                lambda: rng.randrange(-2 ** 63, 2 ** 63), lambda: "x" * rng.randrange(5), lambda: float("nan"),
                lambda: [junk(depth + 1) for _ in range(rng.randrange(4))],
                lambda: {str(rng.randrange(9)): junk(depth + 1)}][pick]()

    out = []
    for k in range(count):
        kind = k % 5
        if kind == 0:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))
        elif kind == 1:
            out.append(f"a text frame {k}")
        elif kind == 2:
            out.append(msgspec.msgpack.encode(junk()))
        else:
            message = {"type": rng.choice(types), **{f: junk() for f in fields if rng.random() < 0.5}}
            if kind == 4:
                message["name"] = "/chain/target"
            out.append(msgspec.msgpack.encode(message))
    return out


def test_malformed_client_messages_cost_one_line_each_and_no_traceback():
    """Issue 40: `fabrik view` printed 110 tracebacks for 500 malformed messages (viser failing to
    read a message closes that client's connection, and websockets logged each with a traceback)."""
    import os
    import subprocess
    import sys
    import threading
    import time

    import msgspec
    from websockets.sync.client import connect

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "FABRIK_VIEW_DEBUG"}
    proc = subprocess.Popen([sys.executable, "-m", "fabrik", "view", "chain", "--joints", "4", "--port", str(port), "--echo"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    errors: list[str] = []  # read as it comes: a full pipe would block the server
    reader = threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.time() + 240  # a first run compiles the numba kernels
        while "open http" not in proc.stdout.readline():
            assert proc.poll() is None and time.time() < deadline, "".join(errors)
        url, protocol = f"ws://127.0.0.1:{port}", ["viser-v" + viser.__version__]
        messages = malformed_messages(200)
        ws = None
        for message in messages:
            for _ in range(3):  # a message viser cannot read closes the connection: open another
                try:
                    ws = ws or connect(url, open_timeout=10, subprotocols=protocol)
                    ws.send(message)
                    time.sleep(0.002)
                    break
                except Exception:  # noqa: BLE001 - the server closed this client
                    ws = None
        good = msgspec.msgpack.encode({"type": "TransformControlsUpdateMessage", "name": "/chain/target",
                                       "wxyz": [1, 0, 0, 0], "position": [1.0, 1.5, 0.5], "owner": ""})
        with connect(url, open_timeout=10, subprotocols=protocol) as fresh:
            fresh.send(good)
            deadline = time.time() + 30
            while '"event": "solve"' not in proc.stdout.readline():
                assert time.time() < deadline, "a good update after the malformed ones was not solved"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=30)
    err = "".join(errors)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert all(line.startswith(("fabrik view: ", "fabrik: compiling")) for line in lines), lines[:5]
    assert 0 < len(lines) <= len(messages) + 1


# --- CLI and renders ----------------------------------------------------------------------------
def test_cli_view_arguments():
    from fabrik.cli import build_parser
    from fabrik.cli.view import build_scene_args

    parse = build_parser().parse_args
    model, kind, options = build_scene_args(parse(["view", "chain", "--snake"]))
    assert kind == "chain" and model.dim == 2 and model.n_joints == 6 and options["snake"]
    model, kind, _ = build_scene_args(parse(["view", "skeleton", "--model", "hand"]))
    assert model.n_joints == 26
    with pytest.raises(ValueError, match=r"needs a take: fabrik view take FILE.bvh\|FILE.npz"):
        build_scene_args(parse(["view", "take"]))
    with pytest.raises(ValueError, match="only taken by the take scene"):
        build_scene_args(parse(["view", "chain", "x.bvh"]))
    with pytest.raises(ValueError, match="--tip"):
        build_scene_args(parse(["view", "arm", "--urdf", "x.urdf"]))


def test_cli_view_errors_exit_2(capsys):
    from fabrik.cli import main

    assert main(["view", "take"]) == 2
    assert "needs a take: fabrik view take FILE.bvh|FILE.npz" in capsys.readouterr().err


def test_a_scene_refuses_options_it_does_not_take(viewer, tmp_path, capsys):
    """Found by benchmarks/fuzz_cli.py: `fabrik view take FILE --tol X` raised TypeError out of the CLI."""
    from fabrik.cli import main
    from fabrik.io.bvh import save_bvh
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk(n_frames=3)
    take = tmp_path / "walk.bvh"
    save_bvh(take, skeleton, motion)
    with pytest.raises(ValueError, match="the take scene takes no option tol; it takes method, limits"):
        viewer.add(str(take), "take", tol=0.1)
    with pytest.raises(ValueError, match="the chain scene takes no option limits"):
        viewer.add(fabrik.Chain.straight(3), limits=True)
    assert main(["view", "take", str(take), "--tol", "0.1", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "fabrik view: error: the take scene takes no option tol" in err


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.05, 1.45), min_size=4, max_size=4))
def test_cone_drawing_lies_on_the_limit(angles):
    """The drawn edge of an irregular cone is the edge the solvers apply: every sampled direction
    is on the boundary (inside to 1e-9, and 1e-4 rad further out along its meridian is 1e-4 rad
    outside), the four axis directions at the four angles."""
    from fabrik.constraints import Cone

    cone = Cone(*angles)
    drawing = cone.drawing(samples=48)
    ring = drawing.vertices[1:].astype(np.float64)
    assert drawing.frame == "reference" and drawing.faces.max() == 48
    for d in cone.boundary(samples=48):
        assert cone.violation(d) < 1e-9
        polar, azimuth = math.atan2(math.hypot(d[0], d[2]), d[1]), math.atan2(d[2], d[0])
        out = np.array([math.sin(polar + 1e-4) * math.cos(azimuth), math.cos(polar + 1e-4),
                        math.sin(polar + 1e-4) * math.sin(azimuth)])
        assert cone.violation(out) == pytest.approx(1e-4, rel=1e-3)
    tilt = [math.atan2(math.hypot(d[0], d[2]), d[1]) for d in ring[::12]]  # +X, +Z, -X, -Z
    assert np.allclose(tilt, [cone.right, cone.up, cone.left, cone.down], atol=1e-6)


def test_hinge_and_twist_drawings_span_their_ranges():
    from fabrik.constraints import Hinge, Twist
    from fabrik.model.constraints import hinge_angle

    hinge = Hinge((1.0, 0.0, 0.0), -0.3, 1.2)
    drawing = hinge.drawing(samples=16)
    vertices, faces = drawing.vertices, drawing.faces
    seen = [hinge_angle(np.array(hinge.axis), np.array([0.0, 1.0, 0.0]), v) for v in vertices[1:]]
    assert np.allclose([seen[0], seen[-1]], [-0.3, 1.2], atol=1e-6)
    assert faces.max() == len(vertices) - 1 and drawing.frame == "reference"
    drawing = Twist(-0.5, 0.25).drawing(samples=8)
    arc = drawing.segments
    assert drawing.frame == "bone" and arc.shape == (7, 2, 3)
    start, end = arc[0, 0], arc[-1, 1]
    assert np.isclose(math.atan2(start[0], start[2]), -0.5) and np.isclose(math.atan2(end[0], end[2]), 0.25)


def test_fabrik_view_from_python_without_blocking(capsys):
    v = fabrik.view(fabrik.Chain.straight(3, 1.0), port=free_port(), block=False)
    try:
        assert f"open {v.url}" in capsys.readouterr().out
        sol = v.scenes[0].set_target([0.5, 1.5, 0.3])
        assert sol.status == "reached"
    finally:
        v.stop()


def test_echo_keeps_one_event_per_line_across_threads(monkeypatch):
    """viser runs connect and drag callbacks on its own threads: events emitted at once stay whole lines."""
    import json
    import threading
    import time

    class SlowStream:  # a pipe that yields the thread on every write, as a busy one does
        def __init__(self):
            self.parts = []

        def write(self, text):
            time.sleep(0.0005)
            self.parts.append(text)
            return len(text)

        def flush(self):
            pass

    stream = SlowStream()
    v = Viewer(port=free_port(), verbose=False, echo=True)
    try:
        monkeypatch.setattr("sys.stdout", stream)
        threads = [threading.Thread(target=lambda i=i: [v.emit("probe", thread=i, n=n) for n in range(20)])
                   for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        monkeypatch.undo()
        v.stop()
    events = [json.loads(line) for line in "".join(stream.parts).splitlines()]
    assert sorted((e["thread"], e["n"]) for e in events) == [(i, n) for i in range(6) for n in range(20)]
