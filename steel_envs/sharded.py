"""One vector env over several CPU processes: worlds sharded across cores behind the same API.

Warp's CPU kernels run on one thread, so one :class:`~steel_envs.SteelVectorEnv` uses one core. A
:class:`ShardedVectorEnv` splits ``num_envs`` worlds into ``num_shards`` contiguous blocks, each stepped by a
worker process with its own ``SteelVectorEnv``; actions and every output live in shared-memory torch tensors,
so the parent's returned tensors are views as in the single-process env. Shard ``k`` is built with
``world_offset`` = its first world, so every world draws the same random stream as in one big env and the
trajectories are bitwise equal to the unsharded env's.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import wait
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from .arguments import check_actions, check_episode_lengths, check_reset_options, check_world_factors
from .sharding import REPORT_ENV, ShardError, check_worker_timeout, refuse_in_a_spawning_worker

__all__ = ["ShardedVectorEnv"]

_FLAGS = ("constraint_overflow", "nonfinite_state", "nonfinite_action", "penetration")


def _describe(e: BaseException) -> str:
    """``Type: message`` of ``e`` with the place it was raised (the innermost frame of its traceback)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return f"{type(e).__name__}: {e}{where}"


def _exit_with_parent(parent_pid: int) -> None:
    """End this worker within a second of its parent's death, even a SIGKILL's, however busy the worker is: a
    thread polls the parent pid (an orphan is adopted by another process). The pipe's end-of-file also ends an idle
    worker, but a worker inside a long step or an import reads no pipe."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="steel-envs-parent-watch", daemon=True).start()


class _Shard:
    """One worker process's env and the rows of the shared tensors it writes."""

    def __init__(self, env: Any, shared: dict[str, torch.Tensor], offset: int, count: int):
        self.env, self.shared, self.offset = env, shared, offset
        self.rows = slice(offset, offset + count)
        self.critic = env.observation_groups["critic"]

    def publish(self, obs: torch.Tensor, info: dict[str, Any]) -> None:
        """Copy what both ``reset`` and ``step`` return into the shared tensors."""
        env, shared, rows = self.env, self.shared, self.rows
        shared["obs"][rows] = obs
        if "critic" in shared:
            shared["critic"][rows] = self.critic
        shared["episode_length"][rows] = env.episode_length
        for i, name in enumerate(_FLAGS):
            shared["flags"][i, rows] = info[name]
        for i, term in enumerate(env.terminations):
            shared["term_flags"][i, rows] = info[term.name]

    def step(self) -> None:
        env, shared, rows = self.env, self.shared, self.rows
        obs, reward, terminated, truncated, info = env.step(shared["actions"][rows])
        shared["reward"][rows] = reward
        shared["terminated"][rows] = terminated
        shared["truncated"][rows] = truncated
        for i, term in enumerate(env.reward_terms):
            shared["reward_terms"][i, rows] = info[f"reward_{term}"]
        for key in env.task_info:
            shared[f"task_{key}"][rows] = info[key]
        episode = info["episode"]
        for i, term in enumerate(env.terminations):
            shared["ep_term_flags"][i, rows] = episode[term.name]
        for i, metric in enumerate(env.metrics):
            shared["ep_metrics"][i, rows] = episode[metric.name]
        shared["done"][rows] = info["_episode"]
        shared["ep_r"][rows] = episode["r"]
        shared["ep_l"][rows] = episode["l"]
        shared["ep_overflow"][rows] = episode["constraint_overflow"]
        shared["ep_penetration"][rows] = episode["penetration"]
        for i, term in enumerate(env.reward_terms):
            shared["ep_terms"][i, rows] = episode[f"reward_{term}"]
        if "final_obs" in info:
            shared["final_obs"][rows] = info["final_obs"]
        self.publish(obs, info)

    def answer(self, command: str, arg: Any) -> tuple[str, Any]:
        """Run ``command``; the reply to send."""
        env, rows = self.env, self.rows
        if command == "step":
            self.step()
        elif command == "reset":
            seed, mask, world_options = arg
            options = {name: values[rows] for name, values in world_options.items()}
            if mask is not None:
                options["reset_mask"] = mask[rows]
            obs, info = env.reset(seed=seed, options=options or None)
            self.publish(obs, info)
            self.shared["done"][rows] = False
        elif command == "set_episode_length":
            env.set_episode_length(arg[rows])
            self.shared["episode_length"][rows] = env.episode_length
        elif command == "set_world_parameters":
            env.set_world_parameters(**{k: None if v is None else v[rows] for k, v in arg.items()})
        elif command == "render":
            return "ok", env.render() if self.offset == 0 else None  # the rendered worlds are shard 0's
        elif command == "close":
            env.close()
        return "ok", None


def _worker(env_id: str, kwargs: dict, offset: int, count: int, conn, parent_pid: int) -> None:
    """Own one shard's env; answer ``step`` / ``reset`` / ``close`` commands over ``conn``. The shared tensors come
    over ``conn`` once the env is built (the parent allocates them while the workers import). An exception ends the
    worker (its env's state is then unknown) after it sent the parent ``("fatal", description)``."""
    from .registration import task_class
    from .runtime import init_warp

    _exit_with_parent(parent_pid)
    # Ctrl-C in a terminal reaches the whole process group: the parent decides (and closes the shards), so a worker
    # never dies mid-step with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init_warp()  # Warp's "no CUDA driver" notice from every worker would break the parent's progress bar
    torch.set_num_threads(1)
    try:
        task_class(env_id)  # loads the task's module
        env = gym.make_vec(
            env_id, count, vectorization_mode="vector_entry_point", device="cpu", world_offset=offset, **kwargs
        ).unwrapped
    except Exception as e:  # reported to the parent, which raises it
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    try:
        shared = conn.recv()
    except (EOFError, OSError):  # the parent is gone, or failed before it sent them
        return
    conn.send(("ready", None))
    shard = _Shard(env, shared, offset, count)
    while True:
        try:
            command, arg = conn.recv()
        except (EOFError, OSError):  # the parent is gone (dropped without close): stop quietly
            env.close()
            return
        try:
            reply = shard.answer(command, arg)
        except Exception as e:
            conn.send(("fatal", _describe(e)))
            _exit(1)
        conn.send(reply)
        if command == "close":
            _exit(0)


def _exit(code: int) -> None:
    """End the worker now, skipping the interpreter's teardown (seconds with torch and Warp loaded): its env is
    closed or broken, and the shared tensors are the parent's."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _start_ignoring_sigint(proc: Any, report: str) -> None:
    """Start ``proc`` with SIGINT ignored from its first instruction (a spawned process inherits the ignored signal,
    and Python then installs no KeyboardInterrupt handler), so that Ctrl-C while a worker still imports torch prints
    no traceback from it. The parent ignores SIGINT only while it forks. The worker's environment names ``report``,
    the file it writes when it fails before it reads its pipe."""
    os.environ[REPORT_ENV] = report
    try:
        if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
            proc.start()
            return
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            proc.start()
        finally:
            signal.signal(signal.SIGINT, previous)
    finally:
        del os.environ[REPORT_ENV]


def _check_counts(num_envs: Any, num_shards: Any, worker_timeout: Any, kwargs: dict[str, Any]) -> None:
    """Raise ValueError on a bad count or timeout, a device other than the CPU or a non-state observation mode."""
    if kwargs.pop("device", "cpu") not in ("cpu", None):
        raise ValueError("device: a ShardedVectorEnv runs on the CPU")
    if kwargs.get("obs_mode", "state") != "state":
        raise ValueError(f"obs_mode: a ShardedVectorEnv returns state observations only, got {kwargs['obs_mode']!r}")
    if isinstance(num_shards, bool) or not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError(f"num_shards: expected an int >= 1, got {num_shards!r}")
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < num_shards:
        raise ValueError(f"num_envs: expected an int >= num_shards={num_shards}, got {num_envs!r}")
    check_worker_timeout(worker_timeout)


class ShardedVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` worlds of ``env_id`` stepped by ``num_shards`` CPU processes, one vector env to the caller.

    The API (:class:`~steel_envs.VectorEnvProtocol`), the info keys and the semantics are those of the
    single-process env (CPU only); returned tensors are views of shared memory, overwritten by the next call.
    ``config``, ``solver_options``, ``spec`` and the observation layout are those of every shard's env (read from a
    one-world probe built in the parent).

    Workers are spawned processes: a script that builds a sharded env must do it under
    ``if __name__ == "__main__":``. A worker that dies, fails or stops answering for ``worker_timeout`` seconds
    makes the call raise :class:`~steel_envs.ShardError`, and the other workers are shut down; workers end with
    their parent, even when it is killed with SIGKILL.

    Args:
        env_id: A registered ID.
        num_envs: Total worlds, >= ``num_shards``.
        num_shards: Worker processes; one per core is the useful maximum.
        seed: Seed of the first reset.
        worker_timeout: Longest wait for a worker's answer [s], its start (imports, kernel compilation) included.
        **kwargs: Keyword arguments of the env (``autoreset_mode``, ``max_episode_steps``, ``solver_options``,
            ``nonfinite_actions``, task config fields); ``device`` must be ``"cpu"`` or absent.

    Raises:
        ValueError: On bad counts or timeout, or a non-CPU device; a worker's construction error is re-raised here.
        RuntimeError: When built by a worker importing a main script without a ``__main__`` guard.
        ShardError: From any call, when a worker died, failed or did not answer in time.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        num_shards: int,
        *,
        seed: int | None = None,
        worker_timeout: float = 600.0,
        **kwargs: Any,
    ):
        from .registration import task_class

        self._conns, self._procs, self._reports = [], [], None
        refuse_in_a_spawning_worker()
        _check_counts(num_envs, num_shards, worker_timeout, kwargs)
        self.num_envs = num_envs
        self.num_shards = num_shards
        self.worker_timeout = check_worker_timeout(worker_timeout)
        self._bounds = np.linspace(0, num_envs, num_shards + 1).astype(int)
        render_num_worlds = kwargs.get("render_num_worlds", 1)
        bad = isinstance(render_num_worlds, bool) or not isinstance(render_num_worlds, int)
        if bad or not 1 <= render_num_worlds <= self._bounds[1]:
            raise ValueError(
                f"render_num_worlds: expected an int in [1, {self._bounds[1]}] (the worlds of the first shard, which "
                f"renders), got {render_num_worlds!r}"
            )
        if seed is None:  # one seed for every shard, so the population is one random stream as in a single env
            seed = int(np.random.SeedSequence().entropy % 2**63)
        try:
            # The workers start first: their imports and env builds (seconds each) overlap the parent's probe.
            self._start_workers(env_id, {**kwargs, "seed": seed})
            task_class(env_id)  # an unknown ID raises here, naming the closest registered ones
            # The probe has one world: it checks every other argument; render_num_worlds was checked above.
            probe_kwargs = {k: v for k, v in kwargs.items() if k != "render_num_worlds"}
            probe = gym.make_vec(env_id, 1, vectorization_mode="vector_entry_point", device="cpu", **probe_kwargs)
            probe = probe.unwrapped
            self._copy_probe(probe)
            task_info = {key: view.dtype for key, view in probe.task_info.items()}
            self._shared = self._allocate(probe, task_info)
            probe.close()
            for conn in self._conns:
                with contextlib.suppress(BrokenPipeError, OSError):  # a worker that failed: _gather says why
                    conn.send(self._shared)
            self._gather("start")
        except BaseException:  # a bad argument, or Ctrl-C: no worker outlives the constructor
            self._shut_down(kill=True)
            raise
        self._info_views = self._views(task_info)
        self.reset(seed=seed)

    def _start_workers(self, env_id: str, kwargs: dict[str, Any]) -> None:
        """Spawn one worker per shard, each with its pipe and its failure report file."""
        import tempfile

        context = mp.get_context("spawn")
        self._reports = tempfile.TemporaryDirectory(prefix="steel-envs-shards-")
        self.closed = False
        for k in range(self.num_shards):
            parent, child = context.Pipe()
            offset, count = int(self._bounds[k]), int(self._bounds[k + 1] - self._bounds[k])
            worker_args = (env_id, kwargs, offset, count, child, os.getpid())
            proc = context.Process(target=_worker, args=worker_args, daemon=True)
            _start_ignoring_sigint(proc, os.path.join(self._reports.name, str(k)))
            child.close()  # the worker holds the other end alone: its death is an end-of-file here
            self._conns.append(parent)
            self._procs.append(proc)

    def _copy_probe(self, probe: Any) -> None:
        """The attributes every shard's env shares, read from the one-world ``probe``."""
        self.device = "cpu"
        self.torch_device = torch.device("cpu")
        self.action_dim = probe.action_dim
        self.reward_terms = probe.reward_terms
        self.terminations = probe.terminations
        self.metrics = probe.metrics
        self._task = type(probe)  # its per-world reset options and their check
        self.decimation = probe.decimation
        self.control_dt = probe.control_dt
        self.max_episode_steps = probe.max_episode_steps
        self.autoreset_mode = probe.autoreset_mode
        self.nonfinite_actions = probe.nonfinite_actions
        self.metadata = dict(probe.metadata)
        self.spec = probe.spec
        # What the workers' envs were built with (the same in every shard), for the adapters and run logs.
        self.config = probe.config
        self.solver_options = probe.solver_options
        self.render_mode = probe.render_mode
        self._supports_world_parameters = probe.backend.supports_world_parameters
        self._solver_name = probe.backend.name
        self.single_observation_space = probe.single_observation_space
        from .deployment import contract_of

        # The deployment hooks live on the workers' envs; a policy's contract is the probe's (same ID and config).
        self.deployment_contract = contract_of(probe)
        self.single_action_space = probe.single_action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.observation_layout = probe.observation_layout
        self._observation_blocks = probe.observation_blocks()

    def _allocate(self, probe: Any, task_info: dict[str, torch.dtype]) -> dict[str, torch.Tensor]:
        """The shared-memory tensors the workers write, by name (rows = worlds)."""

        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros(shape, dtype=dtype, device="cpu").share_memory_()

        n, obs_dim, terms = self.num_envs, probe.single_observation_space.shape[0], len(probe.reward_terms)
        groups = probe.observation_groups
        critic_dim = groups["critic"].shape[1] if groups["critic"] is not groups["policy"] else 0
        return {
            "actions": zeros(n, self.action_dim),
            "obs": zeros(n, obs_dim),
            **({"critic": zeros(n, critic_dim)} if critic_dim else {}),
            "episode_length": zeros(n, dtype=torch.int32),
            "final_obs": zeros(n, obs_dim),
            "reward": zeros(n),
            "terminated": zeros(n, dtype=torch.bool),
            "truncated": zeros(n, dtype=torch.bool),
            "reward_terms": zeros(terms, n),
            "flags": zeros(len(_FLAGS), n, dtype=torch.bool),
            "done": zeros(n, dtype=torch.bool),
            "ep_r": zeros(n),
            "ep_l": zeros(n, dtype=torch.int32),
            "ep_overflow": zeros(n, dtype=torch.bool),
            "ep_penetration": zeros(n, dtype=torch.bool),
            "ep_terms": zeros(terms, n),
            "term_flags": zeros(len(self.terminations), n, dtype=torch.bool),
            "ep_term_flags": zeros(len(self.terminations), n, dtype=torch.bool),
            "ep_metrics": zeros(len(self.metrics), n),
            **{f"task_{key}": zeros(n, dtype=dtype) for key, dtype in task_info.items()},
        }

    def _views(self, task_info: dict[str, torch.dtype]) -> dict[str, Any]:
        """The info dict ``step`` returns: views of the shared tensors, keyed as the single-process env's."""
        sh = self._shared
        return {
            **{f"reward_{t}": sh["reward_terms"][i] for i, t in enumerate(self.reward_terms)},
            **{name: sh["flags"][i] for i, name in enumerate(_FLAGS)},
            **{t.name: sh["term_flags"][i] for i, t in enumerate(self.terminations)},
            "episode": {
                "r": sh["ep_r"],
                "l": sh["ep_l"],
                "constraint_overflow": sh["ep_overflow"],
                "penetration": sh["ep_penetration"],
                **{f"reward_{t}": sh["ep_terms"][i] for i, t in enumerate(self.reward_terms)},
                **{t.name: sh["ep_term_flags"][i] for i, t in enumerate(self.terminations)},
                **{m.name: sh["ep_metrics"][i] for i, m in enumerate(self.metrics)},
            },
            "_episode": sh["done"],
            **{key: sh[f"task_{key}"] for key in task_info},
        }

    def _gather(self, command: str) -> list[Any]:
        """Every worker's answer to ``command``, in shard order.

        Raises:
            ShardError: When a worker died, reported a fatal exception or did not answer within ``worker_timeout``
                (the env is then closed).
            RuntimeError: When a worker failed to build its env (the message of each that did).
        """
        replies: list[Any] = [None] * self.num_shards
        pending = set(range(self.num_shards))
        deadline = time.monotonic() + self.worker_timeout
        while pending:
            waiting = [self._conns[k] for k in pending] + [self._procs[k].sentinel for k in pending]
            ready = wait(waiting, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                k = min(pending)
                self._fail(k, f"did not answer {command!r} within worker_timeout={self.worker_timeout:g} s (killed)")
            for k in sorted(pending):
                conn = self._conns[k]
                if conn in ready or conn.poll():  # its answer first: a failing worker sends why, then exits
                    try:
                        replies[k] = conn.recv()
                    except (EOFError, OSError):
                        self._fail(k, self._death(k, command))
                    pending.discard(k)
                    if replies[k][0] == "fatal":
                        self._fail(k, self._death(k, command, replies[k][1]))
                elif self._procs[k].sentinel in ready:
                    self._fail(k, self._death(k, command))
        errors = [f"shard {k}: {message}" for k, (status, message) in enumerate(replies) if status == "error"]
        if errors:
            self.close()
            raise RuntimeError("; ".join(errors))
        return replies

    def _death(self, k: int, command: str, exception: str | None = None) -> str:
        """How worker ``k`` ended while answering ``command``: its exit code or signal and its last exception."""
        proc = self._procs[k]
        proc.join(timeout=5)  # a worker that sent its exception is exiting
        code = proc.exitcode
        if code is None:
            how = "stopped answering"
        elif code < 0:
            how = f"was killed by signal {signal.Signals(-code).name}"
        else:
            how = f"exited with code {code}"
        if exception is None:
            with contextlib.suppress(OSError), open(os.path.join(self._reports.name, str(k))) as f:
                exception = f.read()
        last = f"its last exception: {exception}" if exception else "it reported no exception"
        return f"{how} during {command!r}; {last}"

    def _fail(self, k: int, what: str) -> None:
        """Shut every worker down and raise :class:`~steel_envs.ShardError` about shard ``k``."""
        pid = self._procs[k].pid
        first, last = int(self._bounds[k]), int(self._bounds[k + 1]) - 1
        self._shut_down(kill=True)
        raise ShardError(
            f"shard {k} of {self.num_shards} (pid {pid}, worlds {first}-{last}) {what}; the other shards were shut "
            "down and the env is closed"
        ) from None

    def _send(self, command: str, arg: Any = None) -> list[Any]:
        if self.closed:
            raise RuntimeError("ShardedVectorEnv is closed")
        for conn in self._conns:
            try:
                conn.send((command, arg))
            except (BrokenPipeError, OSError):  # the worker is gone: _gather says how
                break
        return self._gather(command)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset all worlds or ``options["reset_mask"]``; see :meth:`steel_envs.NewtonVectorEnv.reset`."""
        mask, world_options = check_reset_options(options, self.num_envs, self.torch_device, self._task)
        if seed is not None:
            super().reset(seed=seed)
        self._send("reset", (seed, mask, world_options))
        sh = self._shared
        return sh["obs"], {
            **{name: sh["flags"][i] for i, name in enumerate(_FLAGS)},
            **{t.name: sh["term_flags"][i] for i, t in enumerate(self.terminations)},
        }

    def step(self, actions: torch.Tensor | np.ndarray):
        """Step every shard; see :meth:`steel_envs.NewtonVectorEnv.step` for the arguments, outputs and errors."""
        actions = check_actions(actions, (self.num_envs, self.action_dim), self.torch_device, self.nonfinite_actions)
        self._shared["actions"].copy_(actions)
        self._send("step")
        sh = self._shared
        info = dict(self._info_views)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            info["final_obs"], info["_final_obs"] = sh["final_obs"], sh["done"]
        return sh["obs"], sh["reward"], sh["terminated"], sh["truncated"], info

    def observation_blocks(self) -> tuple[Any, ...]:
        """The task's observation blocks (see :meth:`steel_envs.hooks.TaskHooks.observation_blocks`)."""
        return self._observation_blocks

    @property
    def observation_groups(self) -> dict[str, torch.Tensor]:
        """``policy`` and ``critic`` observation groups, as the single-process env's (shared-memory views)."""
        obs = self._shared["obs"]
        return {"policy": obs, "critic": self._shared.get("critic", obs)}

    @property
    def episode_length(self) -> torch.Tensor:
        """Control steps of each world's current episode, (num_envs,) int32: a read-only copy of the workers'
        counters, refreshed every step (writing it does not reach the workers: :meth:`set_episode_length` does)."""
        return self._shared["episode_length"]

    def set_episode_length(self, lengths: torch.Tensor | np.ndarray | Sequence[int]) -> None:
        """Set every world's step counter of its current episode in the workers, as
        :meth:`steel_envs.NewtonVectorEnv.set_episode_length` does in one process: world i's time limit then ends
        it after ``max_episode_steps - lengths[i]`` more steps (rsl_rl's ``init_at_random_ep_len``, through the
        rsl_rl adapter).

        Args:
            lengths: (num_envs,) integers in [0, max_episode_steps) [control steps].

        Raises:
            ValueError: On another shape, a non-integer dtype or a count outside [0, max_episode_steps).
        """
        self._send("set_episode_length", check_episode_lengths(lengths, self.num_envs, self.max_episode_steps))

    def set_world_parameters(
        self,
        *,
        friction_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
        mass_scale: torch.Tensor | np.ndarray | Sequence[float] | None = None,
    ) -> None:
        """Scale friction and masses per world; see :meth:`steel_envs.NewtonVectorEnv.set_world_parameters`. Every
        factor is checked here before any shard changes.

        Raises:
            ValueError: As the single-process env (bad factors, or a solver without per-world model updates).
        """
        if not self._supports_world_parameters:
            raise ValueError(f"ShardedVectorEnv.set_world_parameters: not supported on {self._solver_name} scenes")
        factors = {
            "friction_scale": check_world_factors("friction_scale", friction_scale, self.num_envs),
            "mass_scale": check_world_factors("mass_scale", mass_scale, self.num_envs),
        }
        self._send("set_world_parameters", factors)

    def render(self) -> np.ndarray | None:
        """Shard 0's frame of its first ``render_num_worlds`` worlds (the first worlds of the population); None
        without ``render_mode``. See :meth:`steel_envs.NewtonVectorEnv.render`."""
        if self.render_mode is None:
            return None
        replies = self._send("render")
        return replies[0][1]

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the worker processes."""
        self._shut_down(kill=False)

    def _shut_down(self, kill: bool) -> None:
        """Ask every live worker to close, or with ``kill`` end them at once (SIGKILL: a stopped or stuck process
        ignores SIGTERM); end those still running after a grace time."""
        self.closed = True
        for conn, proc in zip(self._conns, self._procs, strict=True):
            if kill:
                if proc.is_alive():
                    proc.kill()
                continue
            with contextlib.suppress(BrokenPipeError, EOFError, OSError):
                conn.send(("close", None))
                if conn.poll(10):
                    conn.recv()
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        for conn in self._conns:
            conn.close()
        if self._reports is not None:
            self._reports.cleanup()
