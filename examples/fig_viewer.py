"""Screenshots of every ``fabrik view`` scene for docs/viewer.md, taken in headless Chromium.

    .venv/bin/python examples/fig_viewer.py [OUT_DIR] [--bvh ../shared/data/mocap/cmu_131_01.bvh]

Needs viser (the 'view' extra), playwright (the 'test' extra) and Debian's chromium-headless-shell.
Each scene is set up in this process (a target moved, the passes shown, a frame chosen), then the
browser opens it and the picture is written as OUT_DIR/view_<scene>.png (default fabrik-out, under
the current folder; ``make figures`` writes the documentation's into docs/img).
"""

import argparse
import shutil
import socket
import sys
from pathlib import Path

import numpy as np

import fabrik
from fabrik.viz.viewer import Viewer

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chain(v):
    s = v.add(kind="chain")
    s.set_target([-300.0, 450.0, 350.0])
    s.pass_box.value = True
    s.set_target([350.0, 300.0, 250.0])
    s.pass_slider.value = 1
    s._show_stage()


def snake(v):
    s = v.add(fabrik.Chain.straight(6, 1.0, dim=2), snake=True)
    for t in np.linspace(0, 1, 30):
        s.set_target([3.0 * t, 5.0 + 1.5 * np.sin(4 * t), 0.0])


def constraints(v):
    s = v.add(kind="constraints")
    s.set_target([2.0, 3.0, 2.0])


def skeleton(v):
    s = v.add(fabrik.models.humanoid())
    s.move_target("r_wrist", s.targets[s.skeleton.index("r_wrist")] + [-0.15, 0.55, 0.25])
    s.move_target("l_ankle", s.targets[s.skeleton.index("l_ankle")] + [0.1, 0.3, 0.3])


def hand(v):
    s = v.add(fabrik.models.hand())
    s.move_target("index_tip", s.targets[s.skeleton.index("index_tip")] + [0.0, -0.015, -0.025])
    s.move_target("thumb_tip", s.targets[s.skeleton.index("thumb_tip")] + [-0.01, 0.005, -0.015])


def arm(v):
    a = fabrik.models.dhm_arm()
    s = v.add(a)
    pose = fabrik.forward(a, a.random_angles(7))
    from fabrik.viz.viewer.server import matrix_to_wxyz

    s.set_target(pose.positions[-1], matrix_to_wxyz(pose.frames[-1]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?", default="fabrik-out")
    parser.add_argument("--bvh", default="../shared/data/mocap/cmu_131_01.bvh")
    parser.add_argument("--only", help="comma-separated scene names")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if exe is None:
        sys.exit("no Chromium found: apt-get install chromium-headless-shell")
    scenes = {"chain": chain, "snake": snake, "constraints": constraints, "skeleton": skeleton, "hand": hand,
              "arm": arm}
    if Path(args.bvh).is_file():
        scenes["take"] = lambda v: v.add(args.bvh, kind="take").show_frame(300)
    if args.only:
        scenes = {k: v for k, v in scenes.items() if k in args.only.split(",")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        for name, setup in scenes.items():
            v = Viewer(port=_port(), verbose=False)
            try:
                setup(v)
                page = browser.new_page(viewport={"width": 1100, "height": 700})
                page.goto(v.url)
                page.wait_for_selector("canvas", timeout=60_000)
                page.wait_for_timeout(2500)
                # headless has no GPU: hide viser's "Software WebGL rendering detected" notice
                page.add_style_tag(content=".mantine-Notification-root { display: none !important; }")
                page.wait_for_timeout(300)
                for attempt in range(3):  # software WebGL on a busy machine can miss a frame
                    try:
                        page.screenshot(path=str(out / f"view_{name}.png"), timeout=60_000)
                        break
                    except Exception:
                        if attempt == 2:
                            raise
                        page.mouse.move(5, 5)  # a pointer event wakes the client's render loop
                        page.wait_for_timeout(1000)
                page.close()
                print(f"wrote {out / f'view_{name}.png'}", flush=True)
            finally:
                v.stop()
        browser.close()


if __name__ == "__main__":
    main()
