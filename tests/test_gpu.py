"""What only a CUDA device can show: the captured CUDA graph, stream ordering of the zero-copy views, bitwise
determinism on the GPU, the global overflow flag, autoreset and pixels, each on ``cuda:0``.

Every test is marked ``gpu`` and skipped where Warp or torch sees no CUDA device, so CPU CI skips them; on a GPU
machine: ``python -m pytest -q -m gpu tests/test_gpu.py``. Sizes are small (4-64 worlds, 10-60 steps): most of the
time is Warp's first CUDA compile of each kernel module on a cold kernel cache, so the cart-pole and ant tests
come first and the sweep over every SolverSteel ID (which compiles the other scenes) comes last.
"""

from __future__ import annotations

import pytest
import torch
import warp as wp
from conftest import ANT, CARTPOLE

import steel_envs

DEVICE = "cuda:0"
STEEL_IDS = (
    "steel_envs/CartpoleBalance-v0",
    "steel_envs/CartpoleSwingup-v0",
    "steel_envs/AntRun-v0",
    "steel_envs/QuadrupedVelocity-v0",
    "steel_envs/HumanoidRun-v0",
    "steel_envs/PushCube-v0",
)
"""Every SolverSteel ID (the SolverVBD ones, ClothFold and SoftPush, are not covered here)."""
N = 64
CARTPOLE_RESET_NOISE = 0.05
"""CartpoleBalance starts with x, x_dot, theta, theta_dot each U(-0.05, 0.05) (``reset_noise_scale``)."""


def _cuda_missing() -> str | None:
    if not wp.is_cuda_available():
        return "Warp sees no CUDA device (wp.is_cuda_available() is False)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device (the env hands its Warp buffers to torch zero-copy)"
    return None


_MISSING = _cuda_missing()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")]


@wp.kernel(enable_backward=False)
def _spin(iterations: wp.int32, out: wp.array[wp.float32]):
    """Keep Warp's stream busy for a few milliseconds (one thread, a dependent chain of multiply-adds)."""
    acc = float(0.0)
    for _i in range(iterations):
        acc = acc * 0.999 + 1.0
    out[0] = acc


def _make(env_id: str, num_envs: int = N, **kwargs) -> steel_envs.SteelVectorEnv:
    kwargs.setdefault("device", DEVICE)
    kwargs.setdefault("seed", 0)
    return steel_envs.make_vec(env_id, num_envs=num_envs, **kwargs)


def _actions(env, steps: int, seed: int = 0) -> list[torch.Tensor]:
    """Random actions in [-1, 1], made on the env device."""
    g = torch.Generator(device=env.torch_device).manual_seed(seed)
    shape = (env.num_envs, env.action_dim)
    return [torch.rand(shape, generator=g, device=env.torch_device) * 2 - 1 for _ in range(steps)]


def _sync(env) -> None:
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)


def _outputs(obs, reward, terminated, truncated, info) -> dict[str, torch.Tensor]:
    """Clones of what an RL loop keeps from a step, taken on torch's current stream."""
    return {
        "obs": obs.clone(),
        "reward": reward.clone(),
        "terminated": terminated.clone(),
        "truncated": truncated.clone(),
        "_episode": info["_episode"].clone(),
    }


def _assert_equal_runs(got: list[dict], expected: list[dict], what: str) -> None:
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        for key in e:
            if not torch.equal(g[key], e[key]):
                differ = (g[key] != e[key]).reshape(len(e[key]), -1).any(dim=1).nonzero().flatten()[:8].tolist()
                raise AssertionError(f"{what}: step {k}, {key} differs in world(s) {differ}")


def _delay_warp(device: str, iterations: int = 1_000_000) -> None:
    """Queue a few milliseconds of work on Warp's stream: a view read without ordering would see old values."""
    wp.launch(_spin, 1, inputs=[iterations], outputs=[wp.zeros(1, dtype=wp.float32, device=device)], device=device)


def _delay_torch(device: torch.device) -> None:
    """Queue a few milliseconds of work on torch's current stream: tensors made after it are written late."""
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(10_000_000)  # GPU clock cycles
        return
    x = torch.full((2048, 2048), 1.0e-3, device=device)
    for _ in range(8):
        x = torch.tanh(x @ x)


@pytest.fixture(scope="module")
def cartpoles():
    """Two captured CartpoleBalance envs and one eager one (64 worlds each), shared by the tests below; each test
    first resets them with a seed, which makes a world's state a function of the seed alone (the cart-pole has no
    contacts, so the solver keeps no history). ``nonfinite_actions="end_episode"``: ``step`` makes no host sync,
    which would otherwise order the streams by accident."""
    envs = {
        name: _make(CARTPOLE, graph_capture=capture, nonfinite_actions="end_episode")
        for name, capture in (("a", True), ("b", True), ("eager", False))
    }
    yield envs
    for env in envs.values():
        env.close()


# ---------------------------------------------------------------------------------------------- zero-copy


def test_step_returns_views_ordered_on_torchs_stream(cartpoles):
    """The tensors ``step`` returns are the same storage every step, and a torch kernel reading them right after
    ``step`` (no synchronization) sees this step's values, even when Warp's stream was still busy at the call."""
    env = cartpoles["a"]
    env.reset(seed=0)
    pointers = None
    for k, a in enumerate(_actions(env, 10, seed=2)):
        _delay_warp(env.device)
        obs, reward, terminated, truncated, info = env.step(a)
        read = _outputs(obs, reward, terminated, truncated, info)  # torch's current stream, no sync
        _sync(env)
        after = _outputs(obs, reward, terminated, truncated, info)
        _assert_equal_runs([read], [after], f"read right after step {k} vs after torch.cuda.synchronize()")
        now = [t.data_ptr() for t in (obs, reward, terminated, truncated)]
        assert pointers is None or now == pointers, "step returned new storage instead of the same views"
        pointers = now
        assert obs.device == env.torch_device


@pytest.mark.parametrize("side_stream", [False, True], ids=["default-stream", "side-stream"])
def test_step_follows_torchs_current_stream(cartpoles, side_stream):
    """Stepping while torch works on another stream (``with torch.cuda.stream(s)``), with late actions and a busy
    Warp stream, gives bitwise the results of a plain run on the default stream (the cart-pole is deterministic:
    no contacts, no atomics)."""
    reference, tested = cartpoles["a"], cartpoles["b"]
    dev = tested.torch_device
    actions = _actions(reference, 10, seed=1)
    reference.reset(seed=0)
    expected = [_outputs(*reference.step(a)) for a in actions]
    _sync(reference)

    tested.reset(seed=0)
    stream = torch.cuda.Stream(device=dev) if side_stream else torch.cuda.current_stream(dev)
    stream.wait_stream(torch.cuda.current_stream(dev))  # the actions and the reset were queued on the default stream
    got = []
    with torch.cuda.stream(stream):
        for a in actions:
            _delay_torch(dev)
            late = a + 0.0  # written on this stream after the delay
            _delay_warp(tested.device)
            got.append(_outputs(*tested.step(late)))  # read on this stream right away
    torch.cuda.synchronize(dev)
    where = "a side stream" if side_stream else "the default stream"
    _assert_equal_runs(got, expected, f"steps under {where} vs a plain default-stream run")


# ---------------------------------------------------------------------------------------------- determinism


def _ant_pair() -> tuple:
    """A captured and an eager AntRun in Newton's run-to-run deterministic mode.

    On CUDA, SolverSteel by default (``deterministic=None``, Warp's ``NOT_GUARANTEED``) reserves constraint rows in
    the order GPU threads reach the per-world counters, and the collision pipeline writes contacts in atomic order:
    the last bits of a contact scene can differ between any two runs, captured or not (SolverSteel options page,
    ``deterministic``). Its documented cure is ``deterministic=RUN_TO_RUN`` with ``CollisionPipeline(
    deterministic=True)``: bitwise identical runs, "eagerly and under CUDA graph replay". The env itself sums the
    contact wrenches per body with float atomics (``kernels.body_contact_wrenches``), outside that guarantee, so
    they are left out of the observation and the reward here (``include_cfrc_ext_in_observation=False``,
    ``contact_cost_weight=0``); the physics state is compared in full.
    """
    kwargs = {
        "solver_options": {"deterministic": wp.DeterministicMode.RUN_TO_RUN},
        "collision_options": {"deterministic": True},  # contacts sorted after the narrow phase
        "include_cfrc_ext_in_observation": False,
        "contact_cost_weight": 0.0,
    }
    captured, eager = _make(ANT, graph_capture=True, **kwargs), _make(ANT, graph_capture=False, **kwargs)
    for env in (captured, eager):
        assert env.collision_pipeline.deterministic
        assert env.solver_options.deterministic == wp.DeterministicMode.RUN_TO_RUN
    return captured, eager


@pytest.mark.parametrize("env_id", [CARTPOLE, ANT])
def test_captured_step_is_bitwise_the_eager_step(cartpoles, env_id):
    """The CUDA graph of a step replays exactly the eager launches: 20 steps of the same seed and actions give the
    same obs, reward, terminated and truncated bit for bit (resets included: random actions end episodes)."""
    if env_id == CARTPOLE:
        captured, eager = cartpoles["a"], cartpoles["eager"]
        for env in (captured, eager):
            env.reset(seed=0)
    else:
        captured, eager = _ant_pair()
    try:
        assert captured.graph_captured and not eager.graph_captured
        actions = _actions(captured, 20, seed=3)
        for k, a in enumerate(actions):
            got = _outputs(*captured.step(a))
            expected = _outputs(*eager.step(a))
            _sync(captured)
            state_c = wp.to_torch(captured.state_0.joint_q), wp.to_torch(captured.state_0.joint_qd)
            state_e = wp.to_torch(eager.state_0.joint_q), wp.to_torch(eager.state_0.joint_qd)
            for name, c, e in zip(("joint_q", "joint_qd"), state_c, state_e, strict=True):
                assert torch.equal(c, e), f"{env_id}: step {k}, {name} differs between captured and eager steps"
            _assert_equal_runs([got], [expected], f"{env_id} captured vs eager, step {k}")
    finally:
        if env_id != CARTPOLE:
            captured.close()
            eager.close()


# ---------------------------------------------------------------------------------------------- episode ends


@pytest.mark.filterwarnings("ignore:.*dropped constraint rows:RuntimeWarning")  # the env's one-time advice
def test_a_global_overflow_ends_every_world_once():
    """The final (global) entry of ``constraint_overflow`` ends every world's episode at that step, as a
    truncation, and is cleared by the resets: it does not end the next episodes (autoreset or ``reset``)."""
    env = _make(ANT, 4)
    try:
        zeros = torch.zeros(env.num_envs, env.action_dim, device=env.torch_device)
        flags = wp.to_torch(env.solver.constraint_overflow)
        assert flags.shape == (env.num_envs + 1,)
        flags[-1] = True
        _, _, terminated, truncated, info = env.step(zeros)
        assert info["constraint_overflow"].all(), "the global entry did not flag every world"
        assert truncated.all() and not terminated.any(), "a global overflow should truncate every world"
        assert info["_episode"].all() and info["episode"]["constraint_overflow"].all()

        _, _, terminated, truncated, info = env.step(zeros)  # an ant at rest with zero actions stays healthy
        ended = info["_episode"].nonzero().flatten().tolist()
        assert not ended, f"the global overflow latched: world(s) {ended} ended again on the next step"
        assert not info["constraint_overflow"].any()

        flags[-1] = True
        env.reset(seed=1)
        _, _, _, _, info = env.step(zeros)
        ended = info["_episode"].nonzero().flatten().tolist()
        assert not ended, f"reset(seed=1) left the global overflow set: world(s) {ended} ended at the first step"
    finally:
        env.close()


def test_same_step_autoreset(cartpoles):
    """SAME_STEP autoreset: a world that ended returns its new episode's first obs (inside the initial-state noise)
    and the last obs of the old one in ``info["final_obs"]``, which is past a termination limit when terminated."""
    env = cartpoles["a"]
    env.reset(seed=4)
    limit = CARTPOLE_RESET_NOISE * (1 + 1e-6)
    ended_total = 0
    for k, a in enumerate(_actions(env, 60, seed=4)):
        obs, _, terminated, _, info = env.step(a)
        mask = info["_final_obs"]
        if not mask.any():
            continue
        ended_total += int(mask.sum())
        final, first = info["final_obs"][mask], obs[mask]
        assert (final != first).any(dim=1).all(), f"step {k}: final_obs equals the returned obs of a reset world"
        assert first.abs().max() <= limit, f"step {k}: a reset world's obs is outside U(-0.05, 0.05): {first}"
        fell = info["final_obs"][mask & terminated]
        assert ((fell[:, 2].abs() > 0.2) | (fell[:, 0].abs() > 2.4)).all(), (
            f"step {k}: a terminated world's final_obs is inside the limits: {fell}"
        )
        assert (info["episode"]["l"][mask] >= 1).all()
    assert ended_total > 0, "no episode ended in 60 steps of random actions on 64 cart-poles"


def test_a_cpu_env_returns_cpu_views_under_a_cuda_default_device():
    """A program that sets torch's default device to CUDA (common in GPU RL code) still gets a CPU env's tensors as
    views of its buffers on the CPU, changing every step, not one-off copies on the GPU that never change."""
    cpu, previous = torch.device("cpu"), torch.get_default_device()
    torch.set_default_device(DEVICE)
    try:
        env = steel_envs.make_vec(CARTPOLE, num_envs=2, device="cpu", seed=0, max_episode_steps=2)
        try:
            obs, _ = env.reset(seed=0)
            first = obs.clone()
            actions = torch.full((2, env.action_dim), 0.5, dtype=torch.float32, device="cpu")
            env.step(actions)
            obs_2, reward, terminated, truncated, info = env.step(actions)  # the second step truncates both worlds
            views = {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated}
            views.update({key: info[key] for key in ("final_obs", "reward_alive", "constraint_overflow", "_episode")})
            views["episode.l"] = info["episode"]["l"]
            for name, view in views.items():
                assert view.device == cpu, f"{name} on {view.device}"
            assert obs.data_ptr() == obs_2.data_ptr() and not torch.equal(obs, first)
            assert truncated.all() and info["episode"]["l"].tolist() == [2, 2]
        finally:
            env.close()
    finally:
        torch.set_default_device(None if previous.type == "cpu" else previous)


# ---------------------------------------------------------------------------------------------- pixels


def test_rgb_observations_on_cuda():
    """``obs_mode="rgb"``: (N, H, W, 3) uint8 images on the GPU that show a scene and change as it moves."""
    env = _make(CARTPOLE, 4, obs_mode="rgb", render_size=(32, 24))
    try:
        obs, _ = env.reset(seed=0)
        assert tuple(obs.shape) == (4, 24, 32, 3) and obs.dtype == torch.uint8 and obs.device == env.torch_device
        flat = obs.reshape(4, -1)
        assert (flat.amax(dim=1) > flat.amin(dim=1)).all(), "a world's image is one constant colour"
        first = obs.clone()
        changed = torch.zeros(4, dtype=torch.bool, device=env.torch_device)
        push = torch.ones(4, 1, device=env.torch_device)
        for _ in range(10):
            obs, *_ = env.step(push)
            changed |= (obs != first).reshape(4, -1).any(dim=1)
        assert changed.all(), f"the images of world(s) {(~changed).nonzero().flatten().tolist()} did not change"
    finally:
        env.close()


# ---------------------------------------------------------------------------------------------- every ID


@pytest.mark.parametrize("env_id", STEEL_IDS)
def test_every_steel_id_steps_on_cuda(env_id):
    """Each SolverSteel ID builds on cuda:0 with its step captured (the default), takes random actions made on the
    device and returns finite tensors of the documented shapes on the device; reward == the sum of its terms. The
    penetration end cause is on, so its contact evaluation is part of the captured graph."""
    env = _make(env_id, penetration_limit=0.005)
    try:
        assert env.torch_device == torch.device(DEVICE)
        assert env.graph_captured, "the step is not one captured CUDA graph"
        obs_dim = env.single_observation_space.shape[0]
        for k, a in enumerate(_actions(env, 20)):
            obs, reward, terminated, truncated, info = env.step(a)
            expected = {
                "obs": (obs, (N, obs_dim), torch.float32),
                "reward": (reward, (N,), torch.float32),
                "terminated": (terminated, (N,), torch.bool),
                "truncated": (truncated, (N,), torch.bool),
                **{f"reward_{t}": (info[f"reward_{t}"], (N,), torch.float32) for t in env.reward_terms},
            }
            for name, (t, shape, dtype) in expected.items():
                assert t.device == env.torch_device, f"{name} on {t.device}"
                assert tuple(t.shape) == shape and t.dtype == dtype, f"{name}: {tuple(t.shape)} {t.dtype}"
            for name in ("obs", "reward"):
                t = expected[name][0]
                bad = (~torch.isfinite(t.reshape(N, -1))).any(dim=1).nonzero().flatten()[:8].tolist()
                assert not bad, f"step {k}: non-finite {name} in world(s) {bad}"
            total = info[f"reward_{env.reward_terms[0]}"].clone()
            for t in env.reward_terms[1:]:
                total += info[f"reward_{t}"]  # float32, in term order, as the env adds them
            assert torch.equal(reward, total), f"step {k}: reward != sum of info['reward_<term>']"
    finally:
        env.close()
