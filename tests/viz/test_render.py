"""``fabrik render`` and ``fabrik.viz.render``: real-time frame picking, GIF frame times, MP4
through ffmpeg, refused outputs and frame times, and frames that are drawn at all."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import fabrik
from fabrik.cli import main
from fabrik.viz.render import GIF_LONGEST_FRAME, MAX_FRAMES, playback, render_passes, render_take
from fabrik.viz.viewer.passes import fabrik_stages

Image = pytest.importorskip("PIL.Image", reason="Pillow comes with matplotlib")


def gif_delays(path) -> list[int]:
    """Each frame's delay in milliseconds, as a GIF player reads them."""
    with Image.open(path) as im:
        out = []
        for k in range(im.n_frames):
            im.seek(k)
            out.append(im.info["duration"])
        return out


def walk_file(tmp_path, n_frames=30, frame_time=None):
    from fabrik_experiments.sample_motion import sample_walk

    skeleton, motion = sample_walk(n_frames=n_frames)
    path = tmp_path / "walk.bvh"
    fabrik.save_bvh(path, skeleton, motion)
    if frame_time is not None:
        text = re.sub(r"Frame Time:.*", f"Frame Time: {frame_time}", path.read_text())
        path.write_text(text)
    return path, motion


@pytest.mark.parametrize("rate, gif_rate", [(120.0, 50.0), (60.0, 50.0), (30.0, 100 / 3), (24.0, 25.0),
                                            (10.0, 10.0), (2.0, 2.0), (0.5, 0.5)])
def test_gif_rates_are_whole_hundredths(rate, gif_rate):
    got, picks = playback(100, 1.0 / rate, None, ".gif")
    assert got == pytest.approx(gif_rate)
    assert (100.0 / got) == pytest.approx(round(100.0 / got))
    # real time: as many frames as the take's duration holds at the GIF's rate, in order
    assert len(picks) == round(100 / rate * gif_rate)
    assert picks[0] == 0 and np.all(np.diff(picks) >= 0) and picks[-1] <= 99
    # frame k shows the take's frame at time k / rate
    k = np.arange(len(picks))
    assert np.all(picks * (1.0 / rate) <= k / got + 1e-9) and np.all(k / got < (picks + 1) / rate + 1e-9)


def test_mp4_keeps_the_rate_and_every_frame():
    rate, picks = playback(994, 1 / 120, None, ".mp4")
    assert rate == 120.0 and np.array_equal(picks, np.arange(994))
    rate, picks = playback(994, 1 / 120, 30.0, ".mp4")
    assert rate == 30.0 and np.array_equal(picks, np.arange(0, 992, 4))  # 8.28 s x 30 = 248.5 frames, rounded to even


def test_nonsense_rates_and_frame_times_are_refused():
    with pytest.raises(ValueError, match="frame time, 1e\\+308 s, is longer than an animation frame"):
        playback(20, 1e308, None, ".gif")
    with pytest.raises(ValueError, match=f"more than {MAX_FRAMES:,} frames"):
        playback(20, 1e308, 10.0, ".gif")
    with pytest.raises(ValueError, match=f"longer than GIF's limit of {GIF_LONGEST_FRAME} s"):
        playback(20, 0.01, 1e-3, ".mp4")
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            playback(20, 0.01, bad, ".gif")
    with pytest.raises(ValueError, match="frame time"):
        playback(20, 0.0, None, ".gif")


def test_render_take_gif_plays_in_real_time(tmp_path):
    path, motion = walk_file(tmp_path, n_frames=30)
    made = render_take(path, tmp_path / "walk.gif")
    duration = motion.n_frames * motion.frame_time
    delays = gif_delays(made.path)
    assert len(delays) == made.frames
    assert all(d == delays[0] and d % 10 == 0 and d >= 20 for d in delays)
    assert sum(delays) / 1000 == pytest.approx(duration, rel=0.02)
    assert made.seconds == pytest.approx(sum(delays) / 1000)


def test_frames_are_drawn(tmp_path):
    """The bodies are on the frames: dark pixels (bones, joints) in both halves, and the right
    half's joints in the error colours."""
    path, _ = walk_file(tmp_path, n_frames=10)
    made = render_take(path, tmp_path / "walk.gif")
    with Image.open(made.path) as im:
        rgb = np.asarray(im.convert("RGB")).astype(int)
    h, w, _ = rgb.shape
    left, right = rgb[: int(0.85 * h), : w // 2], rgb[: int(0.85 * h), w // 2:]
    assert (left.sum(axis=2) < 3 * 150).sum() > 200          # grey bones and joints
    green = (right[..., 1] > 140) & (right[..., 0] < 80) & (right[..., 2] < 100)
    assert green.sum() > 5                                    # joints near the recording
    # the body fills the panel's height: drawn pixels span most of the rows
    rows = np.flatnonzero((left.sum(axis=2) < 3 * 150).any(axis=1))
    assert rows[-1] - rows[0] > 0.6 * h


@pytest.mark.mocap
def test_cmu_walk_gif_lasts_as_long_as_the_take(tmp_path, mocap_files):
    """The issue's take: its 120 frames/s written at 50, the delays summing to its 8.28 s."""
    take = next(p for p in mocap_files if p.name == "cmu_131_01.bvh")
    skeleton, motion = fabrik.load_bvh(take)
    out = tmp_path / "walk.gif"
    assert main(["render", "take", str(take), "--out", str(out)]) == 0
    delays = gif_delays(out)
    assert set(delays) == {20}
    assert sum(delays) / 1000 == pytest.approx(motion.n_frames * motion.frame_time, rel=0.02)


@pytest.mark.mocap
def test_render_take_frame_range(tmp_path, mocap_files):
    made = render_take(mocap_files[0], tmp_path / "walk.gif", frames="0:40:4")
    # 10 frames 4/120 s apart: 0.333 s at 33.3 frames/s
    assert made.fps == pytest.approx(100 / 3) and made.frames == 11
    assert sum(gif_delays(made.path)) == 330


def test_render_passes_gif(tmp_path):
    out = tmp_path / "passes.gif"
    assert main(["render", "passes", "--out", str(out), "--joints", "5", "--target", "1.5,2,1"]) == 0
    chain = fabrik.Chain.straight(5, 1.0)
    stages = fabrik_stages(chain.bone_lengths, chain.rest_positions, [1.5, 2.0, 1.0], max_iter=6)
    delays = gif_delays(out)
    assert len(delays) == len(stages) > 2 and set(delays) == {500}  # 2 stages a second


@pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                    reason="ffmpeg is not on the PATH (Debian: apt-get install ffmpeg; .ci/run installs it)")
def test_mp4_through_ffmpeg(tmp_path):
    path, motion = walk_file(tmp_path, n_frames=24)
    made = render_take(path, tmp_path / "walk.mp4")
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                            "stream=nb_read_frames,r_frame_rate,width,height", "-of", "default=nw=1",
                            str(made.path)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split("=") for line in probe.split())
    assert int(fields["nb_read_frames"]) == motion.n_frames == made.frames
    num, den = map(int, fields["r_frame_rate"].split("/"))
    assert num / den == pytest.approx(1.0 / motion.frame_time)
    assert int(fields["width"]) % 2 == 0 and int(fields["height"]) % 2 == 0


def test_render_refuses_bad_outputs(tmp_path, monkeypatch, capsys):
    assert main(["render", "passes", "--out", str(tmp_path / "x.txt")]) == 2
    assert ".gif or .mp4" in capsys.readouterr().err
    # a missing folder above the last level: refused, nothing created (every --out, --json, --plot)
    assert main(["render", "passes", "--out", str(tmp_path / "no" / "such" / "a.gif")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert main(["render", "passes", "--out", str(tmp_path / "x.mp4")]) == 2
    assert "ffmpeg" in capsys.readouterr().err
    assert not (tmp_path / "x.mp4").exists()


@pytest.mark.parametrize("frame_time, words", [("1e308", "Frame Time"), ("1000", "GIF")])
def test_a_take_with_an_absurd_frame_time_is_one_line(tmp_path, capsys, frame_time, words):
    """Issue 40: ``Frame Time: 1e308`` crashed inside matplotlib with an OverflowError; the reader
    refuses it, and a frame time the reader takes but a GIF cannot hold is refused by render."""
    path, _ = walk_file(tmp_path, n_frames=5, frame_time=frame_time)
    out = tmp_path / "a.gif"
    assert main(["render", "take", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert not out.exists()
