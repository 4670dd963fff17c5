"""The viewer's server: a viser server bound to loopback unless told otherwise, and the
helpers every scene shares (colours, bones as segments, safe callbacks, fitting the camera).

A malformed message from a client (not msgpack, an unknown type, missing or mistyped fields) is
reported in one line on stderr, whether viser fails to read it (the client's connection closes)
or a scene's callback refuses it (``safe``); the server goes on. ``FABRIK_VIEW_DEBUG=1`` prints
the tracebacks.

viser serves its web client from files inside its own wheel; the page loads nothing from
anywhere else (``tests/viz/test_viewer_browser.py`` checks the browser's request log).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import sys
import threading
import time
import traceback
import warnings
from typing import Callable

import numpy as np

#: The address the viewer binds to unless ``host`` says otherwise.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
#: The camera's vertical field of view (radians) set on every client.
CAMERA_FOV = 0.9

BONE = (60, 110, 200)
JOINT = (30, 30, 30)
ROOT = (20, 160, 60)
TARGET = (220, 40, 40)
SUB_BASE = (240, 190, 0)
FORWARD = (240, 140, 0)
BACKWARD = (0, 150, 220)
ACTIVE = (230, 30, 30)
LIMIT = (120, 200, 120)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_port(port) -> int:
    if isinstance(port, bool) or not isinstance(port, (int, np.integer)) or not 0 < int(port) < 65536:
        raise ValueError(f"port must be an integer in 1..65535, got {port!r}")
    return int(port)


def safe(callback: Callable, what: str) -> Callable:
    """``callback`` wrapped so that an exception (bad numbers from a client, a failed solve) is
    reported on stderr and the server goes on."""

    def wrapped(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a client must never stop the server
            print(f"fabrik view: {what} ignored: {type(exc).__name__}: {exc}", file=sys.stderr)
            if os.environ.get("FABRIK_VIEW_DEBUG"):  # the whole traceback
                traceback.print_exc()
            return None

    return wrapped


class _OneLinePerClientError(logging.Filter):
    """On the ``websockets.server`` logger: a client connection whose handler failed (viser could
    not read a message from it: not msgpack, an unknown type, missing or mistyped fields) is
    reported in one line on stderr instead of a traceback; the connection closes and the server
    goes on (``FABRIK_VIEW_DEBUG=1`` keeps the traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() != "connection handler failed" or not record.exc_info or \
                os.environ.get("FABRIK_VIEW_DEBUG"):
            return True
        exc = record.exc_info[1]
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        print(f"fabrik view: a malformed client message ignored (its connection closed): {text[:200]}",
              file=sys.stderr)
        return False


_CLIENT_ERRORS = _OneLinePerClientError()


def finite_point(value, dim: int = 3) -> np.ndarray | None:
    """``value`` as a finite float64 (dim,) array, or None when it is not one."""
    try:
        p = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return None
    if p.shape != (3,) or not np.isfinite(p).all() or np.abs(p).max() > 1e12:
        return None
    return p


def bone_segments(positions: np.ndarray, parents) -> np.ndarray:
    """(k, 2, 3) float32 segments from each joint's parent to it (joints with a parent only)."""
    p = np.asarray(positions, dtype=np.float64)
    if p.shape[1] == 2:
        p = np.column_stack([p, np.zeros(len(p))])
    parents = np.asarray(parents)
    child = np.flatnonzero(parents >= 0)
    return np.stack([p[parents[child]], p[child]], axis=1).astype(np.float32)


def chain_parents(n: int) -> np.ndarray:
    return np.arange(-1, n - 1)


def to3(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.shape[-1] == 2:
        pad = np.zeros(p.shape[:-1] + (1,))
        return np.concatenate([p, pad], axis=-1)
    return p


def matrix_to_wxyz(matrix) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(np.asarray(matrix, dtype=np.float64)).as_quat()
    return np.array([w, x, y, z])


def wxyz_to_matrix(wxyz) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    w, x, y, z = np.asarray(wxyz, dtype=np.float64)
    return Rotation.from_quat([x, y, z, w]).as_matrix()


class Viewer:
    """A browser viewer: one viser server that shows scenes (``add``) at ``url``.

    ``Viewer()`` binds to 127.0.0.1; another ``host`` prints a warning, since anyone who can reach
    that address can then see and drive the scene. ``port`` (default 8080) is taken as given; when
    it is busy viser tries the next ones, and ``port``/``url`` say which one it got.

    Use: ``v = Viewer(); scene = v.add(fabrik.models.humanoid()); v.wait()`` (``stop()`` ends it).
    """

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, verbose: bool = True,
                 echo: bool = False):
        if not isinstance(host, str) or not host:
            raise ValueError(f"host must be a host name or address, got {host!r}")
        port = check_port(port)
        import viser

        if not is_loopback(host):
            print(f"fabrik view: WARNING: serving on {host}, not loopback: anyone who can reach this address "
                  "can see and drive the scene", file=sys.stderr)
        self.host = host
        self.echo = bool(echo)
        self._echo_lock = threading.Lock()  # connect and drag callbacks run on viser's threads
        logger = logging.getLogger("websockets.server")
        if _CLIENT_ERRORS not in logger.filters:
            logger.addFilter(_CLIENT_ERRORS)
        # viser warns (two lines) about a client message whose field has another type than its
        # annotation, then reads it anyway: what fails afterwards is reported in one line
        warnings.filterwarnings("ignore", message=r"\[viser\] .* does not match annotation", category=UserWarning,
                                module=r"viser\.")
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.server.gui.configure_theme(control_layout="fixed", show_logo=False, dark_mode=False)
        self.server.scene.set_up_direction("+y")
        self.scenes: list = []
        self._camera = None
        self.server.on_client_connect(safe(self._on_connect, "client connect"))
        if verbose:
            print(f"fabrik view: open {self.url}  (Ctrl-C to stop)", flush=True)

    @property
    def port(self) -> int:
        return int(self.server.get_port())

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def add(self, model=None, kind: str | None = None, **options):
        """Show ``model`` (a ``fabrik.Chain``, ``Skeleton`` or ``Arm``; a ``kind`` of ``"take"`` takes a
        ``.bvh`` or ``.npz`` path) with the matching scene; ``options`` go to the scene (see each scene class).
        Returns the scene."""
        from fabrik.viz.viewer import scenes

        scene = scenes.make(self, model, kind, **options)
        self.scenes.append(scene)
        return scene

    def fit_camera(self, center, size: float, planar: bool = False) -> None:
        """Point every client's camera (and those that connect later) at a box of ``size`` around ``center``."""
        center = np.asarray(center, dtype=np.float64)
        size = float(size) if size > 0 else 1.0
        offset = np.array([0.0, 0.0, 2.0]) if planar else np.array([0.9, 0.6, 1.5])
        self._camera = (center + offset * size, center, size)
        for client in self.server.get_clients().values():
            self._place(client)

    def _place(self, client) -> None:
        if self._camera is None:
            return
        position, look_at, size = self._camera
        client.camera.up_direction = (0.0, 1.0, 0.0)
        client.camera.fov = CAMERA_FOV
        client.camera.near = 0.005 * size  # the clipping planes scale with the model (a 900-unit chain, a 0.2 m hand)
        client.camera.far = 50.0 * size
        client.camera.position = tuple(position)
        client.camera.look_at = tuple(look_at)
        self.emit("camera", position=position, look_at=look_at, fov=CAMERA_FOV, up=(0.0, 1.0, 0.0))

    def emit(self, event: str, **data) -> None:
        """With ``echo``, print one JSON line ``{"event": event, ...}`` on stdout (arrays as lists):
        what a script or a test reads to follow the scene (``fabrik view --echo``)."""
        if not self.echo:
            return
        import json

        def plain(v):
            if isinstance(v, dict):
                return {str(k): plain(x) for k, x in v.items()}
            if isinstance(v, (np.ndarray, tuple, list)):
                return np.asarray(v, dtype=np.float64).tolist()
            if isinstance(v, (np.floating, np.integer)):
                return v.item()
            return v

        line = json.dumps({"event": event, **{k: plain(v) for k, v in data.items()}}) + "\n"
        # One write per line under a lock: print() writes text and newline separately, so two
        # threads emitting at once could join two events on one line.
        with self._echo_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def _on_connect(self, client) -> None:
        self._place(client)

    def wait(self) -> None:
        """Serve until Ctrl-C."""
        try:
            while True:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        for scene in self.scenes:
            stop = getattr(scene, "close", None)
            if stop:
                stop()
        self.server.stop()


def view(model=None, *, kind: str | None = None, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
         block: bool = True, **options):
    """Show ``model`` in a browser viewer (docs/viewer.md): a ``fabrik.Chain``, ``Skeleton`` or
    ``Arm``, or ``kind="take"`` with a take's path (``.bvh``, or ``.npz`` joint positions) as
    ``model``. Prints the URL. With ``block=True``
    (default) serves until Ctrl-C; else returns the ``Viewer`` (``viewer.scenes[0]`` is the scene)."""
    viewer = Viewer(host, port, echo=options.pop("echo", False))
    viewer.add(model, kind, **options)
    if block:
        viewer.wait()
    return viewer


class Player:
    """A background loop that calls ``step()`` ``fps`` times a second while ``playing``."""

    def __init__(self, step: Callable[[], None], fps: float):
        self.step = step
        self.fps = fps
        self.playing = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        step = safe(self.step, "playback")
        while not self._stop.is_set():
            t0 = time.perf_counter()
            if self.playing:
                step()
            self._stop.wait(max(0.0, 1.0 / max(self.fps, 1e-3) - (time.perf_counter() - t0)))

    def close(self) -> None:
        self._stop.set()


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    return f"{seconds * 1e3:.2f} ms"


def angle_deg(a: float) -> str:
    return f"{a:+.3f} rad ({math.degrees(a):+.1f} deg)"
