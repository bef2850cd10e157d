"""``steel-envs view``: the worlds in a real browser (headless Chromium, software WebGL), the run loop against a twin
env stepped by hand, ``play --viewer`` and the command line's answers to bad input.

Without Chromium or viser these tests skip, saying which is missing; with ``CI=true`` they fail instead, so CI
cannot pass without having looked at the page.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import importlib.util
import io
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from steel_envs.cli import main

SWINGUP = "steel_envs/CartpoleSwingup-v0"
BALANCE = "steel_envs/CartpoleBalance-v0"
VIEWPORT = (1000, 700)  # browser viewport [CSS px = screenshot px]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the viewer must be tested in a browser)")
    pytest.skip(reason)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    _missing("no Chromium on PATH (apt-get install chromium)")
    raise AssertionError  # unreachable: _missing skips or fails


def _require_viser() -> None:
    if importlib.util.find_spec("viser") is None:
        _missing("viser is not installed (pip install -e '.[view]')")


class Chromium:
    """Headless Chromium with software WebGL (SwiftShader) showing one page, driven through the DevTools protocol
    on a pipe (``--remote-debugging-pipe``: commands on fd 3, replies on fd 4, NUL-separated JSON): no port, no
    client library. The page stays open, so it follows the viewer live."""

    def __init__(self, executable: str, url: str, profile: Path):
        low_r, self._commands = os.pipe()
        self._replies, low_w = os.pipe()
        # The child's ends moved above fd 9, so putting them on fds 3 and 4 cannot overwrite one with the other.
        commands_r, replies_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (low_r, low_w))
        os.close(low_r)
        os.close(low_w)
        args = [
            executable,
            "--headless",
            "--no-sandbox",  # CI containers run as root
            "--disable-dev-shm-usage",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            url,
        ]
        # A Python trampoline puts the pipe ends on fds 3 and 4 and execs Chromium (no preexec_fn: the viewer's server
        # threads are running).
        trampoline = (
            "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
            "os.execv(sys.argv[3], sys.argv[3:])"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", trampoline, str(commands_r), str(replies_w), *args],
            pass_fds=(commands_r, replies_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_r)
        os.close(replies_w)
        self._buffer, self._id = b"", 0
        try:
            page = next(t for t in self._call("Target.getTargets")["targetInfos"] if t["type"] == "page")
            self._session = self._call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
            self._call(
                "Emulation.setDeviceMetricsOverride",
                session=True,
                width=VIEWPORT[0],
                height=VIEWPORT[1],
                deviceScaleFactor=1,
                mobile=False,
            )
        except BaseException:
            self.close()
            raise

    def _call(self, method: str, *, session: bool = False, timeout: float = 30.0, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:  # anything else is an event
                    if "error" in reply:
                        raise RuntimeError(f"Chromium: {method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer {method} within {timeout} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited (code {self.process.poll()})")
            self._buffer += chunk

    def evaluate(self, expression: str):
        """The value of a JavaScript expression on the page (promises awaited)."""
        result = self._call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True
        )
        return result["result"].get("value")

    def screenshot(self) -> np.ndarray:
        """The viewport, (H, W, 3) uint8."""
        from PIL import Image

        data = self._call("Page.captureScreenshot", session=True, format="png")["data"]
        return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))

    def wait_for_text(self, text: str, timeout: float = 60.0) -> str:
        """Wait until the page shows ``text``, then two animation frames (the scene of the same message is drawn);
        return the page's text."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.evaluate("document.body ? document.body.innerText : ''") or ""
            if text in shown:
                self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(0))))")
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"the page did not show {text!r} within {timeout} s; it shows: {shown[:500]!r}")
            time.sleep(0.2)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call("Browser.close", timeout=5.0)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._commands)
        os.close(self._replies)


# The largest canvas (viser's 3D view) as [left, top, width, height] in CSS px.
_VIEW_RECT = """(() => {
  const c = [...document.querySelectorAll('canvas')].sort((a, b) => b.width * b.height - a.width * a.height)[0];
  if (!c) return null;
  const r = c.getBoundingClientRect();
  return [r.left, r.top, r.width, r.height];
})()"""
# Viser's notifications (here: "Software WebGL rendering detected") float over the 3D view; hidden for the pixel
# statistics, which are about what WebGL draws.
_HIDE_NOTIFICATIONS = "document.querySelectorAll('.mantine-Notifications-root').forEach(e => e.style.display = 'none')"


def _view_pixels(image: np.ndarray, rect: list[float]) -> np.ndarray:
    """The 3D view's pixels, without the axes gizmo in its lower-left corner (drawn even with an empty scene)."""
    left, top, width, height = (round(v) for v in rect)
    return image[top : top + height - 90, left : left + width]


def _stats(view: np.ndarray) -> tuple[int, float]:
    """Distinct colours, and the share of pixels that differ from the commonest (background) colour."""
    pixels = view.reshape(-1, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    return len(colours), 1.0 - counts.max() / len(pixels)


def test_the_browser_draws_the_worlds_and_the_picture_follows_the_simulation(tmp_path):
    _require_viser()
    executable = _chromium()
    from steel_envs.viewer import view

    browser: list[Chromium] = []
    shots: dict[int, tuple[np.ndarray, str, list[float]]] = {}

    def look(live) -> None:  # the simulation waits here, so the page settles on exactly this step
        if live.step_count == 0:
            browser.append(Chromium(executable, live.url, tmp_path / "profile"))
        if live.step_count in (0, 25):
            page = browser[0]
            text = page.wait_for_text(f"step {live.step_count}, sim time {live.sim_time:.2f} s")
            page.evaluate(_HIDE_NOTIFICATIONS)
            shots[live.step_count] = (page.screenshot(), text, page.evaluate(_VIEW_RECT))

    def push_right(obs: torch.Tensor) -> torch.Tensor:  # the carts run right, the hanging poles swing back
        return torch.ones(obs.shape[0], 1)

    try:
        r = view(SWINGUP, push_right, num_envs=4, port=0, speed=float("inf"), steps=25, on_step=look, announce=None)
    finally:
        for page in browser:
            page.close()
    assert r["steps"] == 25 and set(shots) == {0, 25}

    for step, (image, text, rect) in shots.items():
        # Viser's page, connected to the viewer: its control panel shows the env and the run's status and returns.
        assert image.shape == (VIEWPORT[1], VIEWPORT[0], 3)
        assert SWINGUP in text and "last episode" in text
        assert rect is not None and rect[2] > 0.5 * VIEWPORT[0], f"no 3D view on the page: canvas {rect}"
        colours, drawn = _stats(_view_pixels(image, rect))
        # Measured: about 200 to 300 colours, and rails, carts and poles cover about 3 % of the view; an empty view
        # (WebGL failed, or no scene arrived) is one colour, 0 %.
        assert colours > 50, f"step {step}: the 3D view has {colours} colours: nothing drawn"
        assert drawn > 0.01, f"step {step}: only {drawn:.2%} of the 3D view differs from the background"

    before, after = (_view_pixels(shots[s][0], shots[s][2]).astype(np.int16) for s in (0, 25))
    moved = int((np.abs(after - before).sum(axis=-1) > 30).sum())
    # Measured: about 3200 pixels change in these 0.5 s of simulated time (about 550 with zero force: the poles
    # swing a little); a frozen view changes none.
    assert moved > 1000, f"only {moved} pixels of the 3D view changed between steps 0 and 25"


def test_the_viewer_runs_the_policy_as_a_twin_env_stepped_by_hand():
    _require_viser()
    import steel_envs
    from steel_envs.policies import load_policy_callable
    from steel_envs.viewer import view

    steps, seed = 60, 5
    r = view(BALANCE, "random", num_envs=3, port=0, seed=seed, speed=float("inf"), steps=steps, announce=None)

    twin = steel_envs.make_vec(BALANCE, num_envs=3, device=None, seed=seed)
    act = load_policy_callable("random", twin, seed)
    obs, _ = twin.reset(seed=seed)
    returns, lengths = [], []
    for _ in range(steps):
        obs, _, _, _, info = twin.step(act(obs).float())
        ended = info["_episode"]
        returns += info["episode"]["r"][ended].tolist()
        lengths += info["episode"]["l"][ended].tolist()
    twin.close()
    assert r["steps"] == steps
    assert len(returns) >= 3, "the random policy should end several cart-pole episodes in 60 steps"
    assert r["returns"] == returns and r["lengths"] == lengths


def test_view_stops_after_the_requested_episodes():
    _require_viser()
    from steel_envs.viewer import view

    r = view(BALANCE, "random", num_envs=2, port=0, speed=float("inf"), episodes=3, announce=None)
    assert len(r["returns"]) == len(r["lengths"]) == 3
    assert r["mean_length"] == pytest.approx(sum(r["lengths"]) / 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["view", "steel_envs/NoSuchEnv-v0"], "NoSuchEnv"),
        (["view", BALANCE, "--num-envs", "0"], "num_envs"),
        (["view", BALANCE, "--port", "70000"], "port"),
        (["view", BALANCE, "--speed", "0"], "speed"),
        (["view", BALANCE, "--steps", "-1"], "steps"),
        (["view", BALANCE, "--policy", "nonsense"], "policy"),
    ],
)
def test_view_rejects_bad_input_with_one_line_and_exit_2(argv, message, capsys):
    _require_viser()
    assert main(argv) == 2  # each is refused before the web server starts
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("steel-envs view:") and message in err, err


def test_play_viewer_shows_the_run_and_reports_its_episodes(capsys):
    _require_viser()
    from steel_envs.training.policy import main_play

    argv = ["--policy", "random", "--env", BALANCE, "--episodes", "2", "--num-envs", "2", "--viewer", "0"]
    assert main_play(argv) == 0
    out = capsys.readouterr().out
    assert f"{BALANCE}: 2 episodes, mean return" in out
    assert "viewer: http://127.0.0.1:" in out


def test_choosing_one_world_shows_it_alone_at_the_origin_with_the_camera_on_it():
    _require_viser()
    from steel_envs.viewer import LiveViewer

    live = LiveViewer(BALANCE, "zero", num_envs=4, port=0, speed=float("inf"))
    try:
        camera = live.viewer.server.initial_camera
        target = np.asarray(live.env.camera_target)
        grid = live.viewer.world_offsets.numpy()
        assert len({tuple(o) for o in grid}) == 4, "Newton's grid gives every world its own place"
        # The orbit pivot is on the scene's camera target, at the grid's centre.
        np.testing.assert_allclose(camera.look_at, grid.mean(axis=0) + target, atol=1e-3)
        far = np.linalg.norm(np.asarray(camera.position) - camera.look_at)

        live._world.value = "2"  # as the browser's world selector does
        live.run(steps=1)
        np.testing.assert_allclose(live.viewer.world_offsets.numpy()[2], 0.0, atol=1e-6)
        np.testing.assert_allclose(camera.look_at, target, atol=1e-3)
        near = np.linalg.norm(np.asarray(camera.position) - camera.look_at)
        # One world: the scene's own camera distance (that of rgb_array rendering); the grid was seen from further.
        assert near == pytest.approx(np.linalg.norm(np.subtract(live.env.camera_eye, target)), rel=1e-3)
        assert far > 1.5 * near
    finally:
        live.close()


def test_speed_half_takes_twice_the_simulated_time():
    _require_viser()
    from steel_envs.viewer import LiveViewer

    live = LiveViewer(BALANCE, "zero", num_envs=1, port=0, speed=0.5)
    try:
        start = time.perf_counter()
        live.run(steps=10)
        seconds = time.perf_counter() - start
    finally:
        live.close()
    # 10 control steps of 0.02 s at half speed: at least 0.4 s (unthrottled, they take a few milliseconds).
    assert live.step_count == 10 and seconds >= 0.38, seconds
