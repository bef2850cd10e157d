"""Live browser view of a vector env's worlds while a policy runs: ``steel-envs view <ID>``.

Newton's :class:`~newton.viewer.ViewerViser` serves the scene over HTTP and WebSocket (viser, WebGL in the
browser), so nothing needs a display: on a remote machine, forward the port (``ssh -L 8080:localhost:8080 host``)
and open ``http://localhost:8080``. The worlds, which all sit at the origin of the model, are laid out on Newton's
grid of world offsets (``ViewerBase.set_world_offsets``, spacing from the worlds' extents); in scenes with particles
(SolverVBD) they stay overlaid at the origin, because the viewer draws particles without world offsets.

The browser's control panel holds Newton's own ``Simulation`` folder (``Pause``, ``Step`` one control step while
paused, ``Reset`` every world) and ``Visualization`` folder, and this module's ``Run`` folder: the speed (times real
time, or as fast as the machine steps), a world selector (all worlds on the grid, or one world alone, which
Newton's ``set_visible_worlds`` moves to the origin) and the episode returns (the running return and the last
finished episode's return of each shown world, and the number of finished episodes). Newton's ``Plots`` folder
charts the return of every finished episode of the shown worlds.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

__all__ = ["LiveViewer", "view"]

PolicyFn = Callable[[torch.Tensor], torch.Tensor]

_TABLE_ROWS = 16  # worlds listed one per row in the returns table; more are summarised
_GUI_PERIOD = 0.2  # [s] between updates of the returns text (each update is a message to every browser)
_PAUSED_PERIOD = 1.0 / 30.0  # [s] between frames while paused: browser events (Step, world, options) still apply
_ALL = "all"


def _require_viser() -> None:
    if importlib.util.find_spec("viser") is None:
        raise ImportError("the viewer needs viser: pip install -e '.[view]'")


def _checkpoint_env_id(checkpoint: str) -> str:
    """The env ID of a ``steel-envs train`` checkpoint, read from its run's ``train_args.json``.

    Raises:
        FileNotFoundError: If the checkpoint or ``train_args.json`` is missing.
    """
    args_file = os.path.join(os.path.dirname(os.path.abspath(checkpoint)), "train_args.json")
    if not os.path.isfile(checkpoint) or not os.path.isfile(args_file):
        raise FileNotFoundError(f"policy: {checkpoint!r} is not a steel-envs train checkpoint (no train_args.json)")
    with open(args_file) as f:
        return json.load(f)["env_id"]


class LiveViewer:
    """A vector env, a policy and Newton's ``ViewerViser`` serving its worlds; :meth:`run` steps and publishes.

    Args:
        env_id: A registered ID, e.g. ``"steel_envs/AntRun-v0"``; None: the env of the ``steel-envs train``
            checkpoint given as ``policy``.
        policy: Any spec of ``steel-envs evaluate`` (:func:`steel_envs.policies.load_policy_callable`):
            ``"random"`` (uniform, seeded), ``"zero"``, a train checkpoint, an ``.onnx`` / TorchScript file,
            ``module:function``; or a callable, observations (N, obs_dim) float32 -> actions (N, act_dim).
        num_envs: Number of worlds.
        host: Address the web server binds to; ``"127.0.0.1"`` keeps it local (reach it through SSH port
            forwarding), ``"0.0.0.0"`` serves every interface.
        port: Port of the web server; 0: one the OS picks. Viser takes the next free port if it is taken.
        device: Warp device; None: Warp's preferred device.
        seed: Seed of the env and of the random policy.
        speed: Simulated time per wall-clock time (1: real time); ``math.inf``: as fast as the machine steps.
        paused: Start paused (the browser's ``Pause`` box and ``Step`` button advance it).
        env_kwargs: Further keyword arguments of :func:`steel_envs.make_vec`.

    Raises:
        ImportError: If viser is not installed (extra ``view``).
        ValueError: On ``num_envs`` < 1, a port outside [0, 65535], a non-positive speed or an unknown policy.
        gymnasium.error.Error: On an unknown env ID.
    """

    def __init__(
        self,
        env_id: str | None,
        policy: str | PolicyFn = "random",
        *,
        num_envs: int = 4,
        host: str = "127.0.0.1",
        port: int = 8080,
        device: str | None = None,
        seed: int = 0,
        speed: float = 1.0,
        paused: bool = False,
        env_kwargs: dict[str, Any] | None = None,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs: expected an int >= 1, got {num_envs}")
        if not 0 <= port <= 65535:
            raise ValueError(f"port: expected an int in [0, 65535], got {port}")
        if not speed > 0:
            raise ValueError(f"speed: expected a positive number (inf: unthrottled), got {speed}")
        _require_viser()
        import newton.viewer

        from steel_envs.factory import make_vec

        if env_id is None:
            if not isinstance(policy, str):
                raise ValueError("env_id: needed unless the policy is a steel-envs train checkpoint")
            env_id = _checkpoint_env_id(policy)
        self.env_id = env_id
        self.env = make_vec(env_id, num_envs=num_envs, device=device, seed=seed, **(env_kwargs or {}))
        self.viewer: newton.viewer.ViewerViser | None = None
        n, dev = self.env.num_envs, self.env.torch_device
        self.step_count = 0
        """Control steps taken since the start."""
        self.sim_time = 0.0
        """Simulated time since the start [s]."""
        self.returns: list[float] = []
        """Returns of every finished episode, all worlds, in the order they ended."""
        self.lengths: list[int] = []
        """Lengths [control steps] of every finished episode, as :attr:`returns`."""
        self._running = torch.zeros(n, dtype=torch.float64, device=dev)
        self._last = torch.full((n,), float("nan"), dtype=torch.float64, device=dev)
        self._ended = torch.zeros(n, dtype=torch.int64, device=dev)
        self._selected: int | None = None
        self._reset_requested = False
        self._rate = (time.perf_counter(), 0.0)  # wall clock and sim time at the last speed measurement
        self._measured_speed = float("nan")
        self._last_gui = 0.0
        try:
            if callable(policy):
                self.policy_name, self._act = getattr(policy, "__name__", "callable"), policy
            else:
                from steel_envs.policies import load_policy_callable

                try:
                    self.policy_name, self._act = policy, load_policy_callable(policy, self.env, seed)
                except AttributeError as e:  # module:function naming a missing function
                    raise ValueError(f"policy: {e}") from e
            self.viewer = newton.viewer.ViewerViser(host=host, port=port, paused=paused, label=env_id, verbose=False)
            self.viewer.set_model(self.env.model)
            if self.env.model.particle_count:
                # Newton's viewer draws particles (cloth, soft bodies) where they are, without world offsets or the
                # world filter: the worlds stay overlaid at the origin, rigid shapes included, so that they match.
                self.viewer.set_world_offsets((0.0, 0.0, 0.0))
            # Picking forces act through viewer.apply_forces inside a solver loop; the env's step owns that loop.
            self.viewer.picking_enabled = False
            self.viewer.set_reset_callback(self._request_reset)
            self._build_gui(speed)
            self._obs, _ = self.env.reset(seed=seed)
            self._aim_camera()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ public

    @property
    def url(self) -> str:
        """The browser URL of the viewer (``http://<host>:<port>``, the port actually bound)."""
        return self.viewer.url

    def run(
        self,
        steps: int | None = None,
        *,
        episodes: int | None = None,
        on_step: Callable[[LiveViewer], None] | None = None,
    ) -> None:
        """Step the policy and publish every step to the browser until ``steps`` control steps were taken,
        ``episodes`` episodes ended or the viewer closed (None: no such limit).

        Pause, Step, Reset, the speed and the world selection are read from the browser between frames.

        Args:
            steps: Control steps to take (counted from the start, paused time excluded).
            episodes: Stop once this many episodes ended, over all worlds.
            on_step: Called after the frame of the start (``step_count`` 0) and of every step was published,
                with this viewer; the simulation waits for it (a test takes screenshots there).
        """
        self._rate = (time.perf_counter(), self.sim_time)
        self._publish(force_gui=True)
        self._call(on_step)
        while self.viewer.is_running():
            if (steps is not None and self.step_count >= steps) or (
                episodes is not None and len(self.returns) >= episodes
            ):
                break
            start = time.perf_counter()
            changed = self._apply_world_choice()
            stepping = self.viewer.should_step()  # applies the browser's Pause, Step and Reset (our callback)
            changed |= self._apply_reset()
            if stepping:
                self._step()
                # A caller waiting on each step (a screenshot) sees the status of that step.
                self._publish(force_gui=changed or on_step is not None)
                self._call(on_step)
                speed = math.inf if self._unthrottled.value else float(self._speed.value)
                period = self.env.control_dt / speed
            else:
                if changed or start - self._last_gui >= _GUI_PERIOD:
                    self._publish(force_gui=True)  # paused: display options and the selection still apply
                period = _PAUSED_PERIOD
            time.sleep(max(0.0, period - (time.perf_counter() - start)))

    def close(self) -> None:
        """Stop the web server and close the env (idempotent)."""
        if self.viewer is not None:
            self.viewer.close()
            self.viewer = None
        if self.env is not None:
            self.env.close()
            self.env = None

    def summary(self, episodes: int | None = None) -> dict[str, Any]:
        """``env_id``, ``steps``, ``returns`` and ``lengths`` of the finished episodes (the first ``episodes`` of
        them; None: all), their ``mean_return`` and ``mean_length`` (NaN before the first one)."""
        returns, lengths = self.returns[:episodes], self.lengths[:episodes]
        count = len(returns)
        return {
            "env_id": self.env_id,
            "steps": self.step_count,
            "returns": returns,
            "lengths": lengths,
            "mean_return": sum(returns) / count if count else float("nan"),
            "mean_length": sum(lengths) / count if count else float("nan"),
        }

    # ------------------------------------------------------------------ internals

    def _call(self, on_step: Callable[[LiveViewer], None] | None) -> None:
        if on_step is None:
            return
        start = time.perf_counter()
        on_step(self)
        wall, sim = self._rate  # the time the simulation waited for on_step does not count against its speed
        self._rate = (wall + time.perf_counter() - start, sim)

    def _build_gui(self, speed: float) -> None:
        gui = self.viewer.server.gui
        n = self.env.num_envs
        # The controls docked at the right edge: the 3D view takes the rest of the window, so no world is under them.
        gui.main_panel.dock_right()
        with gui.add_folder("Run", order=5.0):
            gui.add_markdown(f"**{self.env_id}**  \npolicy `{self.policy_name}`, {n} worlds")
            self._speed = gui.add_slider(
                "Speed",
                min=min(0.1, speed),
                max=max(10.0, speed) if math.isfinite(speed) else 10.0,
                step=0.01,
                initial_value=speed if math.isfinite(speed) else 1.0,
                hint="simulated time per wall-clock time",
            )
            self._unthrottled = gui.add_checkbox(
                "Max speed", initial_value=math.isinf(speed), hint="step as fast as the machine can"
            )
            overlaid = bool(self.env.model.particle_count) and n > 1
            self._world = gui.add_dropdown(
                "World",
                (_ALL, *(str(w) for w in range(n))),
                initial_value=_ALL,
                disabled=overlaid,
                hint="all worlds, or one alone",
            )
            if overlaid:
                gui.add_markdown("The worlds are overlaid: the viewer draws particles without world offsets.")
            self._status = gui.add_markdown("")

    def _request_reset(self) -> None:
        # ViewerViser calls it on the simulation thread, inside should_step (browser events are applied there).
        self._reset_requested = True

    def _apply_reset(self) -> bool:
        """Reset every world if the browser's Reset was clicked; return whether it was."""
        if not self._reset_requested:
            return False
        self._reset_requested = False
        self._obs, _ = self.env.reset()
        self._running.zero_()
        return True

    def _apply_world_choice(self) -> bool:
        """Show the world chosen in the browser (or all); return whether the choice changed."""
        choice = self._world.value
        selected = None if choice == _ALL else int(choice)
        if selected == self._selected:
            return False
        self._selected = selected
        self.viewer.set_visible_worlds(None if selected is None else [selected])
        self._aim_camera()
        return True

    def _step(self) -> None:
        env = self.env
        with torch.no_grad():
            actions = self._act(self._obs)
        self._obs, reward, _, _, info = env.step(torch.as_tensor(actions, device=env.torch_device).float())
        self.step_count += 1
        self.sim_time += env.control_dt
        self._running += reward.double()
        done = info["_episode"]
        if bool(done.any()):
            episode = info["episode"]
            worlds = torch.nonzero(done).flatten()
            finals = episode["r"][worlds].double()
            self._last[worlds] = finals
            self._ended[worlds] += 1
            self._running[worlds] = 0.0
            self.returns += finals.tolist()
            self.lengths += episode["l"][worlds].tolist()
            shown = [i for i, w in enumerate(worlds.tolist()) if self._selected in (None, w)]
            if shown:
                self.viewer.log_scalar("episode return", float(finals[shown].mean()))

    def _publish(self, force_gui: bool = False) -> None:
        now = time.perf_counter()
        viewer = self.viewer
        viewer.begin_frame(self.sim_time)
        viewer.log_state(self.env.state_0)
        self._log_goals()
        if force_gui or now - self._last_gui >= _GUI_PERIOD:
            self._status.content = self._status_text(now)
            self._last_gui = now
        viewer.end_frame()

    def _log_goals(self) -> None:
        """The task's goals (``goal_positions``) as green points, placed in the worlds' grid as the bodies are."""
        import warp as wp

        from steel_envs.rendering import GOAL_COLOR

        goals = self.env.goal_positions()
        if goals is None:
            return
        points = np.asarray(goals, np.float32).copy()
        offsets = self.viewer.world_offsets
        if offsets is not None:
            points += offsets.numpy()[: len(points), None, :].astype(np.float32)
        if self._selected is not None:
            points = points[self._selected : self._selected + 1]
        points = wp.array(points.reshape(-1, 3), dtype=wp.vec3, device=self.env.wp_device)
        color = tuple(c / 255.0 for c in GOAL_COLOR)
        self.viewer.log_points("goals", points, radii=0.03, colors=color)

    def _status_text(self, now: float) -> str:
        wall0, sim0 = self._rate
        if now - wall0 >= 1.0:
            self._measured_speed = (self.sim_time - sim0) / (now - wall0)
            self._rate = (now, self.sim_time)
        running, last, ended = (t.cpu().numpy() for t in (self._running, self._last, self._ended))
        lengths = self.env.episode_length.cpu().numpy()
        if self.viewer.is_paused():
            state = "paused"
        else:
            state = "-" if math.isnan(self._measured_speed) else f"{self._measured_speed:.2f}x real time"
        lines = [f"step {self.step_count}, sim time {self.sim_time:.2f} s ({state})", ""]
        worlds = range(len(running)) if self._selected is None else [self._selected]
        lines += ["| world | return | step | last episode | ended |", "|---:|---:|---:|---:|---:|"]
        for w in list(worlds)[:_TABLE_ROWS]:
            last_text = "-" if np.isnan(last[w]) else f"{last[w]:.2f}"
            lines.append(f"| {w} | {running[w]:.2f} | {lengths[w]} | {last_text} | {ended[w]} |")
        if self._selected is None and len(running) > _TABLE_ROWS:
            finished = last[~np.isnan(last)]
            mean_last = f"{finished.mean():.2f}" if len(finished) else "-"
            lines += [
                "",
                f"all {len(running)} worlds: return mean {running.mean():.2f} (min {running.min():.2f}, max "
                f"{running.max():.2f}); last episodes mean {mean_last}; {int(ended.sum())} ended",
            ]
        return "\n".join(lines)

    def _aim_camera(self) -> None:
        """Point the browser camera at the shown worlds along the scene's camera direction (``camera_eye`` to
        ``camera_target``), backed off to take in the grid, with the orbit pivot on the target."""
        env, viewer = self.env, self.viewer
        if int(env.model.up_axis) != 2:  # the scenes are z-up; anything else keeps Newton's default camera
            return
        n = self.env.num_envs
        offsets = np.zeros((n, 3)) if viewer.world_offsets is None else viewer.world_offsets.numpy()
        shown = offsets if self._selected is None else offsets[[self._selected]]
        center = shown.mean(axis=0)
        radius = float(np.linalg.norm(shown[:, :2] - center[:2], axis=1).max())
        eye, target = np.asarray(env.camera_eye, np.float64), np.asarray(env.camera_target, np.float64)
        back = eye - target
        distance = float(np.linalg.norm(back)) + 3.0 * radius  # the grid and the worlds on its rim in a 45 deg view
        front = -back / np.linalg.norm(back)
        target = center + target
        # ViewerViser.set_camera keeps the pivot distance of the previous request, measured from the new position.
        # Placing the camera first midway between that pivot and the target, facing the target, moves the pivot
        # onto the target; the second call then keeps the target at the wanted distance.
        pivot = np.asarray(viewer.server.initial_camera.look_at, np.float64)
        if np.linalg.norm(target - pivot) > 1e-3:
            middle = 0.5 * (pivot + target)
            self._set_camera(middle, target - middle)
        self._set_camera(target - front * distance, front)

    def _set_camera(self, position: np.ndarray, direction: np.ndarray) -> None:
        import warp as wp

        d = direction / np.linalg.norm(direction)
        pitch = math.degrees(math.asin(float(np.clip(d[2], -1.0, 1.0))))
        yaw = math.degrees(math.atan2(float(d[1]), float(d[0])))
        self.viewer.set_camera(wp.vec3(*position.astype(np.float32)), pitch, yaw)


def view(
    env_id: str | None,
    policy: str | PolicyFn = "random",
    *,
    num_envs: int = 4,
    host: str = "127.0.0.1",
    port: int = 8080,
    device: str | None = None,
    seed: int = 0,
    speed: float = 1.0,
    paused: bool = False,
    steps: int | None = None,
    episodes: int | None = None,
    on_step: Callable[[LiveViewer], None] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    announce: Callable[[str], None] | None = print,
) -> dict[str, Any]:
    """Show the worlds of ``env_id`` live in a web browser while ``policy`` runs, until ``steps`` control steps,
    ``episodes`` finished episodes or Ctrl-C (None: no limit); return :meth:`LiveViewer.summary` (of the first
    ``episodes`` episodes) and ``interrupted`` (True when Ctrl-C ended the run).

    Arguments as :class:`LiveViewer` and :meth:`LiveViewer.run`; ``announce`` receives the line with the URL
    (None: silent).

    Raises:
        ImportError: If viser is not installed (extra ``view``).
        ValueError: On bad arguments (negative ``steps``, ``episodes`` < 1, see :class:`LiveViewer`) or an unknown
            policy.
        FileNotFoundError: If ``env_id`` is None and ``policy`` is no train checkpoint.
        gymnasium.error.Error: On an unknown env ID.
    """
    if steps is not None and steps < 0:
        raise ValueError(f"steps: expected an int >= 0, got {steps}")
    if episodes is not None and episodes < 1:
        raise ValueError(f"episodes: expected an int >= 1, got {episodes}")
    live = LiveViewer(
        env_id,
        policy,
        num_envs=num_envs,
        host=host,
        port=port,
        device=device,
        seed=seed,
        speed=speed,
        paused=paused,
        env_kwargs=env_kwargs,
    )
    interrupted = False
    try:
        if announce is not None:
            port_bound = live.url.rsplit(":", 1)[-1]
            announce(
                f"viewer: {live.url} ({live.env_id}, {live.env.num_envs} worlds; from another machine: "
                f"ssh -L {port_bound}:localhost:{port_bound} <this host>, then open http://localhost:{port_bound})"
            )
        live.run(steps, episodes=episodes, on_step=on_step)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        summary = live.summary(episodes)
        live.close()
    return {**summary, "interrupted": interrupted}
