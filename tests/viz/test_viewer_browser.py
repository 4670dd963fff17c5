"""``fabrik view`` in a real headless browser (marked ``browser``).

Each test starts ``python -m fabrik view SCENE --echo`` on a free loopback port, opens it in
Debian's headless Chromium driven by playwright, drags a gizmo with the mouse and reads the
server's JSON events (``--echo``) to check that the Python side solved. Skipped with the reason
when no Chromium is installed, unless FABRIK_REQUIRE_BROWSER is set (``.ci/run`` sets it), where
that fails instead.
"""

import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

pytestmark = pytest.mark.browser

BROWSERS = ("chromium-headless-shell", "chromium", "/usr/lib/chromium/chromium-headless-shell",
            "/usr/lib/chromium/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
SRC = Path(__file__).resolve().parents[2] / "src"
WIDTH, HEIGHT = 1000, 700


def _skip_or_fail(reason: str):
    if os.environ.get("FABRIK_REQUIRE_BROWSER"):
        pytest.fail(reason + " (FABRIK_REQUIRE_BROWSER is set: the browser tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    exe = next((shutil.which(b) or (b if os.path.isfile(b) else None) for b in BROWSERS
                if shutil.which(b) or os.path.isfile(b)), None)
    if exe is None:
        _skip_or_fail("no Chromium found (apt-get install chromium-headless-shell; .ci/run installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_or_fail("playwright is not installed (the 'test' extra: pip install -e '.[test]')")
    pytest.importorskip("viser", reason="viser is not installed (the 'view' extra)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=ARGS)
        yield b
        b.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``fabrik view ... --echo`` in a subprocess; its JSON lines collected in ``events``."""

    def __init__(self, *args: str):
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen([sys.executable, "-m", "fabrik", "view", *args, "--port", str(self.port),
                                      "--echo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: queue.Queue = queue.Queue()
        self.events: list[dict] = []
        self.url = None
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.time() + 240  # a first run compiles the numba kernels
        while self.url is None:
            self._drain(0.5)
            if self.proc.poll() is not None:
                raise AssertionError(f"fabrik view exited: {self.proc.stderr.read()}")
            if time.time() > deadline:
                raise AssertionError("fabrik view printed no URL in 240 s")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def _drain(self, wait: float = 0.0) -> None:
        try:
            while True:
                line = self.lines.get(timeout=wait)
                wait = 0.0
                if line.startswith("{"):
                    self.events.append(json.loads(line))
                elif "open http" in line:
                    self.url = line.split("open ", 1)[1].split()[0]
        except queue.Empty:
            pass

    def wait_for(self, event: str, after: int = 0, timeout: float = 30.0, **match) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            self._drain(0.2)
            for e in self.events[after:]:
                if e["event"] == event and all(e.get(k) == v for k, v in match.items()):
                    return e
        raise AssertionError(f"no {event} event {match} in {timeout} s; got {[e['event'] for e in self.events]}")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Camera:
    """The pinhole camera the server put on the client (its ``camera`` event) over the canvas box."""

    def __init__(self, event: dict, box: dict):
        self.eye = np.array(event["position"])
        forward = np.array(event["look_at"]) - self.eye
        self.forward = forward / np.linalg.norm(forward)
        right = np.cross(self.forward, event["up"])
        self.right = right / np.linalg.norm(right)
        self.up = np.cross(self.right, self.forward)
        self.t = np.tan(event["fov"] / 2)
        self.box = box

    def project(self, p) -> tuple[float, float]:
        v = np.asarray(p, dtype=np.float64) - self.eye
        depth = v @ self.forward
        aspect = self.box["width"] / self.box["height"]
        x = (v @ self.right) / (depth * self.t * aspect)
        y = (v @ self.up) / (depth * self.t)
        return (self.box["x"] + (x + 1) / 2 * self.box["width"], self.box["y"] + (1 - y) / 2 * self.box["height"])


def open_scene(browser, server: Server):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(server.url)
    camera = server.wait_for("camera", timeout=60)
    page.wait_for_selector("canvas", timeout=60_000)
    page.wait_for_timeout(2500)  # the scene's first frames
    box = page.locator("canvas").first.bounding_box()
    return page, Camera(camera, box), requests


def drag_arrow(page, camera: Camera, gizmo: dict, server: Server, axis=(1.0, 0.0, 0.0), move: float = 0.35,
               moved=lambda solve: True):
    """Press on the gizmo's ``axis`` arrow and drag along it by ``move`` x its scale, in steps;
    tries points along the arrow until the server reports a solve for which ``moved(solve)`` holds
    (where another gizmo's arrow lies over this one on screen, the press may catch that one)."""
    centre = np.array(gizmo["position"])
    axis = np.asarray(axis, dtype=np.float64)
    for frac in (0.55, 0.7, 0.45, 0.8, 0.35):
        before = len(server.events)
        x0, y0 = camera.project(centre + axis * frac * gizmo["scale"])
        x1, y1 = camera.project(centre + axis * (frac + move) * gizmo["scale"])
        page.mouse.move(x0, y0)
        page.mouse.down()
        for k in range(1, 13):
            page.mouse.move(x0 + (x1 - x0) * k / 12, y0 + (y1 - y0) * k / 12)
            page.wait_for_timeout(40)
        page.mouse.up()
        page.wait_for_timeout(600)
        server._drain(0.5)
        solves = [e for e in server.events[before:] if e["event"] == "solve"]
        if solves and moved(solves[-1]):
            return solves[-1]
    raise AssertionError("no drag on the gizmo reached the server")


BONE = np.array([60, 110, 200])


def bone_pixels_near(image: np.ndarray, points, radius: int = 5) -> int:
    """How many of ``points`` (screen x, y) have a pixel of the viewer's bone colour within ``radius``."""
    near = (np.abs(image.astype(int) - BONE).max(axis=2) < 45)
    hits = 0
    for x, y in points:
        x, y = int(round(x)), int(round(y))
        patch = near[max(0, y - radius):y + radius + 1, max(0, x - radius):x + radius + 1]
        hits += bool(patch.any())
    return hits


def check_drawn(image: np.ndarray, camera: Camera, positions, parents) -> None:
    """The bones' midpoints on screen have bone-coloured pixels; points well away from the body do not."""
    p = np.asarray(positions)
    mids = [camera.project((p[j] + p[parents[j]]) / 2) for j in range(len(p)) if parents[j] >= 0]
    hits = bone_pixels_near(image, mids)
    assert hits >= 0.7 * len(mids), f"only {hits} of {len(mids)} bone midpoints drawn"
    box = camera.box
    corners = [(box["x"] + 15, box["y"] + box["height"] - 15), (box["x"] + box["width"] - 15, box["y"] + box["height"] - 15)]
    assert bone_pixels_near(image, corners) == 0


def screenshot(page, path=None) -> np.ndarray:
    from io import BytesIO

    from PIL import Image

    for attempt in range(3):  # software WebGL on a busy machine can miss a frame
        try:
            data = page.screenshot(path=path, timeout=60_000)
            break
        except Exception:
            if attempt == 2:
                raise
            page.wait_for_timeout(1000)
    return np.asarray(Image.open(BytesIO(data)).convert("RGB"))


def test_dragging_the_target_solves_the_chain(browser, tmp_path):
    server = Server("chain")
    try:
        page, camera, requests = open_scene(browser, server)
        gizmo = server.wait_for("gizmo", scene="chain")
        first = server.wait_for("solve", scene="chain")
        solve = drag_arrow(page, camera, gizmo, server)
        target, effector = np.array(solve["target"]), np.array(solve["effector"])
        assert np.linalg.norm(target - np.array(first["target"])) > 0.05 * gizmo["scale"], "the target moved"
        assert target[0] > np.array(first["target"])[0]  # along +x, as dragged
        assert solve["status"] == "reached" and np.linalg.norm(effector - target) <= solve["tol"]
        page.wait_for_timeout(1000)
        image = screenshot(page, str(tmp_path / "chain.png"))
        last = [e for e in server.events if e["event"] == "solve"][-1]
        check_drawn(image, camera, last["positions"], np.arange(-1, len(last["positions"]) - 1))
    finally:
        server.stop()


def test_skeleton_follows_a_dragged_hand(browser, tmp_path):
    server = Server("skeleton")
    try:
        page, camera, _ = open_scene(browser, server)
        gizmo = server.wait_for("gizmo", scene="skeleton", name="r_wrist")
        first = server.wait_for("solve", scene="skeleton")
        solve = drag_arrow(page, camera, gizmo, server, axis=(0.0, 1.0, 0.0))
        target = np.array(solve["targets"]["r_wrist"])
        assert np.linalg.norm(target - np.array(first["targets"]["r_wrist"])) > 0.05 * gizmo["scale"]
        assert np.linalg.norm(np.array(solve["effectors"]["r_wrist"]) - target) <= solve["tol"]
        page.wait_for_timeout(1000)
        image = screenshot(page, str(tmp_path / "skeleton.png"))
        import fabrik

        last = [e for e in server.events if e["event"] == "solve"][-1]
        check_drawn(image, camera, last["positions"], fabrik.models.humanoid().parents)
    finally:
        server.stop()


def test_no_request_leaves_the_machine(browser):
    server = Server("chain")
    try:
        page, _, requests = open_scene(browser, server)
        page.wait_for_timeout(1500)
        assert requests, "the page made requests"
        for url in requests:
            parts = urlsplit(url)
            assert parts.scheme in ("http", "ws", "data", "blob") and (
                parts.scheme in ("data", "blob") or parts.hostname == "127.0.0.1"), url
    finally:
        server.stop()


def _side(positions, k, pole):
    """The pole joint's offset from the root-effector line along the pole's offset (> 0: on the
    pole's side)."""
    p = np.asarray(positions)
    u = (p[-1] - p[0]) / np.linalg.norm(p[-1] - p[0])
    joint = (p[k] - p[0]) - ((p[k] - p[0]) @ u) * u
    w = (np.asarray(pole) - p[0]) - ((np.asarray(pole) - p[0]) @ u) * u
    return joint @ w


def pixels_of(image: np.ndarray, colour, points, radius: int = 6) -> int:
    """How many of ``points`` have a pixel near ``colour`` within ``radius``."""
    near = np.abs(image.astype(int) - np.array(colour)).max(axis=2) < 50
    hits = 0
    for x, y in points:
        x, y = int(round(x)), int(round(y))
        hits += bool(near[max(0, y - radius):y + radius + 1, max(0, x - radius):x + radius + 1].any())
    return hits


def test_chain_pole_dragged_and_obstacles_kept_off(browser, tmp_path):
    import fabrik
    from fabrik.obstacles import penetration
    from fabrik.viz.viewer.obstacles import demo_obstacles

    server = Server("chain", "--joints", "3", "--pole", "--obstacles", "demo")
    try:
        page, camera, _ = open_scene(browser, server)
        gizmo = server.wait_for("gizmo", scene="chain", name="pole")
        first = server.wait_for("solve", scene="chain")
        assert first["clearance"] >= 0.0 and _side(first["positions"], first["pole_joint"], first["pole"]) > 0
        solve = drag_arrow(page, camera, gizmo, server, axis=(1.0, 0.0, 0.0), move=0.8)
        assert np.linalg.norm(np.array(solve["pole"]) - np.array(gizmo["position"])) > 0.05 * gizmo["scale"]
        assert solve["status"] == "reached"
        assert _side(solve["positions"], solve["pole_joint"], solve["pole"]) > 0  # the elbow followed the pole
        obstacles = demo_obstacles("chain", fabrik.Chain.straight(3, 1.0))
        assert penetration(obstacles, solve["positions"]) == 0.0 and solve["clearance"] >= 0.0
        page.wait_for_timeout(1000)
        image = screenshot(page, str(tmp_path / "chain_pole.png"))
        from fabrik.viz.viewer.obstacles import OBSTACLE, POLE

        last = [e for e in server.events if e["event"] == "solve"][-1]
        assert pixels_of(image, POLE, [camera.project(last["pole"])]) == 1, "the pole is drawn"
        centres = [camera.project(ob.center) for ob in obstacles]
        assert pixels_of(image, (200, 200, 210), centres, radius=10) + pixels_of(image, OBSTACLE, centres, 10) >= 1
    finally:
        server.stop()


def test_skeleton_holds_a_dragged_bar_with_weights_poles_and_obstacles(browser, tmp_path):
    from fabrik.obstacles import penetration
    from fabrik.viz.viewer.obstacles import demo_obstacles

    import fabrik

    body = fabrik.models.humanoid()
    server = Server("skeleton", "--hold", "bar", "--weights", "head=2", "--poles", "l_elbow", "--obstacles", "demo")
    try:
        page, camera, _ = open_scene(browser, server)
        gizmo = server.wait_for("gizmo", scene="skeleton", name="held")
        first = server.wait_for("solve", scene="skeleton")
        assert first["weights"]["head"] == 2.0
        start = np.array(gizmo["position"])
        solve = drag_arrow(page, camera, gizmo, server, axis=(0.0, 0.0, 1.0), move=0.6,
                           moved=lambda e: np.linalg.norm(np.array(e["held"]) - start) > 0.05 * gizmo["scale"])
        held = np.array(solve["held"])
        assert np.linalg.norm(held - np.array(gizmo["position"])) > 0.05 * gizmo["scale"], "the bar moved"
        assert max(solve["loop_errors"]) <= solve["tol"], "both hands hold the bar"
        assert solve["weights"]["head"] == 2.0 and "l_elbow" in solve["poles"]
        p = np.array(solve["positions"])
        assert penetration(demo_obstacles("skeleton", body), p, body.parents) == 0.0
        page.wait_for_timeout(1000)
        image = screenshot(page, str(tmp_path / "skeleton_held.png"))
        last = [e for e in server.events if e["event"] == "solve"][-1]
        check_drawn(image, camera, last["positions"], body.parents)
    finally:
        server.stop()
