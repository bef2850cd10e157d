"""Warp kernels of the vector-env core: actions, dones, rewards, episode statistics and resets.

Every kernel runs over worlds on the simulation device and reads or writes only the entries of its own
world, so one world's values never reach another's. Per-world layouts follow ``newton.Model``:
``joint_coord_world_start`` / ``joint_dof_world_start`` give the slice of world ``w`` in ``joint_q`` /
``joint_qd``.
"""

from __future__ import annotations

from typing import Any

import warp as wp

NOISE_UNIFORM = wp.constant(0)
"""Noise kind: ``U(-scale, scale)``."""
NOISE_GAUSSIAN = wp.constant(1)
"""Noise kind: ``scale * N(0, 1)``."""


@wp.kernel(enable_backward=False)
def prepare_actions(
    actions_in: wp.array2d[wp.float32],
    low: wp.float32,
    high: wp.float32,
    actions_out: wp.array2d[wp.float32],
    nonfinite_action: wp.array[wp.bool],
):
    """Clip the actions (num_envs, act_dim) to ``[low, high]`` into the env's own buffer; a world with a
    NaN or infinite entry gets 0 there and is flagged in ``nonfinite_action``."""
    w = wp.tid()
    bad = bool(False)
    for j in range(actions_in.shape[1]):
        v = actions_in[w, j]
        if not wp.isfinite(v):
            v = 0.0
            bad = True
        actions_out[w, j] = wp.clamp(v, low, high)
    nonfinite_action[w] = bad


@wp.kernel(enable_backward=False)
def seed_rng(seed: wp.int32, world_offset: wp.int32, rng_state: wp.array[wp.uint32]):
    """Start the random stream of world ``w`` at ``rand_init(seed, world_offset + w)``."""
    w = wp.tid()
    rng_state[w] = wp.rand_init(seed, world_offset + w)


@wp.kernel(enable_backward=False)
def world_mask_to_articulation_mask(
    world_mask: wp.array[wp.bool],
    articulation_world: wp.array[wp.int32],
    world_count: wp.int32,
    articulation_mask: wp.array[wp.bool],
):
    """Select the articulations of the selected worlds; global articulations follow the final entry."""
    a = wp.tid()
    world = articulation_world[a]
    if world < 0:
        world = world_count
    articulation_mask[a] = world_mask[world]


@wp.kernel(enable_backward=False)
def reset_joint_state(
    world_mask: wp.array[wp.bool],
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    default_q: wp.array[wp.float32],
    default_qd: wp.array[wp.float32],
    q_noise: wp.array[wp.float32],
    qd_noise: wp.array[wp.float32],
    q_noise_kind: wp.int32,
    qd_noise_kind: wp.int32,
    quat_coord: wp.int32,
    rng_state: wp.array[wp.uint32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
):
    """Write the initial joint state of each selected world: default plus per-coordinate noise.

    ``default_q`` / ``q_noise`` have one entry per coordinate of one world, ``default_qd`` / ``qd_noise``
    one per DOF. ``quat_coord >= 0`` is the world-local index of a free joint's quaternion (x, y, z, w),
    renormalized after the noise. Draws advance the world's random stream, so a world's initial states
    depend only on the seed and on how many times that world was reset.
    """
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    q0 = coord_world_start[w]
    coord_count = coord_world_start[w + 1] - q0
    for i in range(coord_count):
        n = wp.randn(rng) if q_noise_kind == NOISE_GAUSSIAN else 2.0 * wp.randf(rng) - 1.0
        joint_q[q0 + i] = default_q[i] + q_noise[i] * n
    d0 = dof_world_start[w]
    dof_count = dof_world_start[w + 1] - d0
    for i in range(dof_count):
        n = wp.randn(rng) if qd_noise_kind == NOISE_GAUSSIAN else 2.0 * wp.randf(rng) - 1.0
        joint_qd[d0 + i] = default_qd[i] + qd_noise[i] * n
    if quat_coord >= 0:
        k = q0 + quat_coord
        q = wp.normalize(wp.quat(joint_q[k], joint_q[k + 1], joint_q[k + 2], joint_q[k + 3]))
        joint_q[k] = q[0]
        joint_q[k + 1] = q[1]
        joint_q[k + 2] = q[2]
        joint_q[k + 3] = q[3]
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def find_nonfinite_worlds(
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
    nonfinite: wp.array[wp.bool],
):
    """Flag each world whose joint coordinates or velocities hold a NaN or an infinity."""
    w = wp.tid()
    bad = bool(False)
    for i in range(coord_world_start[w], coord_world_start[w + 1]):
        if not wp.isfinite(joint_q[i]):
            bad = True
    for i in range(dof_world_start[w], dof_world_start[w + 1]):
        if not wp.isfinite(joint_qd[i]):
            bad = True
    nonfinite[w] = bad


@wp.kernel(enable_backward=False)
def finalize_dones(
    constraint_overflow: wp.array[wp.bool],
    nonfinite: wp.array[wp.bool],
    skip: wp.array[wp.bool],
    world_count: wp.int32,
    max_episode_steps: wp.int32,
    overflow_is_terminal: wp.bool,
    penetration_is_terminal: wp.bool,
    episode_length: wp.array[wp.int32],
    terminated: wp.array[wp.bool],
    truncated: wp.array[wp.bool],
    overflow: wp.array[wp.bool],
    nonfinite_action: wp.array[wp.bool],
    penetration: wp.array2d[wp.bool],
    overflow_seen: wp.array[wp.int32],
):
    """Combine the task's dones with the core's terms: constraint overflow, non-finite state and action,
    penetration (``penetration[0]``, written by :func:`flag_penetration`), time limit.

    On entry ``terminated`` / ``truncated`` hold the task's terms; on exit they are the step's dones. A
    non-finite state terminates; a non-finite action (replaced by 0) truncates. The final (global) entry
    of ``constraint_overflow`` flags every world. Worlds in ``skip`` were reset during this step
    (NEXT_STEP autoreset) and report no done.
    """
    w = wp.tid()
    if skip[w]:
        terminated[w] = False
        truncated[w] = False
        overflow[w] = False
        nonfinite_action[w] = False
        penetration[0, w] = False
        return
    length = episode_length[w] + 1
    episode_length[w] = length
    flagged = constraint_overflow[w] or constraint_overflow[world_count]
    overflow[w] = flagged
    term = terminated[w] or nonfinite[w]
    trunc = truncated[w] or length >= max_episode_steps or nonfinite_action[w]
    if flagged:
        wp.atomic_add(overflow_seen, 0, 1)
        if overflow_is_terminal:
            term = True
        else:
            trunc = True
    if penetration[0, w]:
        if penetration_is_terminal:
            term = True
        else:
            trunc = True
    terminated[w] = term
    truncated[w] = trunc


@wp.kernel(enable_backward=False)
def accumulate_rewards(
    term_count: wp.int32,
    weights: wp.array[wp.float32],
    skip: wp.array[wp.bool],
    terminated: wp.array[wp.bool],
    truncated: wp.array[wp.bool],
    overflow: wp.array[wp.bool],
    episode_length: wp.array[wp.int32],
    reward_terms: wp.array2d[wp.float32],
    reward: wp.array[wp.float32],
    episode_return: wp.array[wp.float32],
    episode_term_sums: wp.array2d[wp.float32],
    done_mask: wp.array[wp.bool],
    final_return: wp.array[wp.float32],
    final_length: wp.array[wp.int32],
    final_term_sums: wp.array2d[wp.float32],
    final_overflow: wp.array[wp.bool],
    nonfinite: wp.array[wp.bool],
):
    """Weight the reward terms in place (shape (term_count, num_envs), unweighted as the task wrote them, times
    ``weights`` (term_count,)) and sum them into the reward and the episode statistics.

    Non-finite terms are replaced by 0, so the reward is always the float32 sum of the reported terms, added in
    term order; a world with a non-finite term (a state so far out that a distance overflows, even when every
    state entry is finite) is ended as a non-finite state: ``nonfinite`` and ``terminated`` are set, never
    scored 0 and continued. Ended worlds copy their episode statistics to the ``final_*`` buffers and are
    marked in ``done_mask``.
    """
    w = wp.tid()
    if skip[w]:
        for t in range(term_count):
            reward_terms[t, w] = 0.0
        reward[w] = 0.0
        done_mask[w] = False
        return
    r = float(0.0)
    bad = bool(False)
    for t in range(term_count):
        v = reward_terms[t, w] * weights[t]
        reward_terms[t, w] = v
        if not wp.isfinite(v):
            v = 0.0
            reward_terms[t, w] = v
            bad = True
        r = r + v
        episode_term_sums[t, w] = episode_term_sums[t, w] + v
    if bad:
        nonfinite[w] = True
        terminated[w] = True
    reward[w] = r
    episode_return[w] = episode_return[w] + r
    done = terminated[w] or truncated[w]
    done_mask[w] = done
    if done:
        final_return[w] = episode_return[w]
        final_length[w] = episode_length[w]
        final_overflow[w] = overflow[w]
        for t in range(term_count):
            final_term_sums[t, w] = episode_term_sums[t, w]


@wp.kernel(enable_backward=False)
def accumulate_metrics(
    metric_count: wp.int32,
    aggregates: wp.array[wp.int32],
    lost_rows: wp.array[wp.int32],
    max_steps: wp.int32,
    skip: wp.array[wp.bool],
    done_mask: wp.array[wp.bool],
    episode_length: wp.array[wp.int32],
    values: wp.array2d[wp.float32],
    sums: wp.array2d[wp.float32],
    final: wp.array2d[wp.float32],
):
    """Add this step's metric values (metric_count, num_envs) to the episode sums; an ended world reduces them into
    ``final``: the sum (aggregate 0), the mean over the episode's steps (1), the root of that mean (2, RMS) or the
    last step's value (3). A metric with a lost-step charge (``values[lost_rows[m], w]``, row -1: none) adds it
    for each step the episode lacked to ``max_steps`` and takes the mean over ``max_steps`` steps."""
    w = wp.tid()
    if skip[w]:
        return
    lived = wp.max(episode_length[w], 1)
    for m in range(metric_count):
        total = sums[m, w] + values[m, w]
        sums[m, w] = total
        if done_mask[w]:
            kind = aggregates[m]
            steps = float(lived)
            row = lost_rows[m]
            if row >= 0:
                total += float(wp.max(max_steps - lived, 0)) * values[row, w]
                steps = float(wp.max(max_steps, lived))
            if kind == 0:
                final[m, w] = total
            elif kind == 1:
                final[m, w] = total / steps
            elif kind == 2:
                final[m, w] = wp.sqrt(wp.max(total, 0.0) / steps)
            else:
                final[m, w] = values[m, w]


@wp.kernel(enable_backward=False)
def reset_episode_statistics(
    world_mask: wp.array[wp.bool],
    term_count: wp.int32,
    metric_count: wp.int32,
    episode_length: wp.array[wp.int32],
    episode_return: wp.array[wp.float32],
    episode_term_sums: wp.array2d[wp.float32],
    metric_sums: wp.array2d[wp.float32],
):
    """Zero the running episode statistics of the selected worlds: length, return, reward-term and metric sums."""
    w = wp.tid()
    if not world_mask[w]:
        return
    episode_length[w] = 0
    episode_return[w] = 0.0
    for t in range(term_count):
        episode_term_sums[t, w] = 0.0
    for m in range(metric_count):
        metric_sums[m, w] = 0.0


@wp.kernel(enable_backward=False)
def assemble_critic_observations(
    obs: wp.array2d[wp.float32], privileged: wp.array2d[wp.float32], critic: wp.array2d[wp.float32]
):
    """The critic group's row: the (noise-free) policy observations, then the privileged blocks."""
    w, i = wp.tid()
    d = obs.shape[1]
    if i < d:
        critic[w, i] = obs[w, i]
    else:
        critic[w, i] = privileged[w, i - d]


@wp.kernel(enable_backward=False)
def shift_observation_history(history: wp.array2d[wp.int32], obs: wp.array2d[wp.float32]):
    """Move every frame of each block with history one frame older (the oldest drops out), before the newest frame
    is written; ``history`` rows are (first entry, size, frames) of such a block."""
    w = wp.tid()
    for b in range(history.shape[0]):
        start = history[b, 0]
        for i in range(history[b, 1] * (history[b, 2] - 1)):
            obs[w, start + i] = obs[w, start + history[b, 1] + i]


@wp.kernel(enable_backward=False)
def fill_observation_history(world_mask: wp.array[wp.bool], history: wp.array2d[wp.int32], obs: wp.array2d[wp.float32]):
    """In the worlds of ``world_mask``: every older frame of each block with history becomes its newest frame (a
    reset world's history holds its first observation)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for b in range(history.shape[0]):
        start, size, frames = history[b, 0], history[b, 1], history[b, 2]
        newest = start + size * (frames - 1)
        for i in range(size * (frames - 1)):
            obs[w, start + i] = obs[w, newest + i % size]


@wp.kernel(enable_backward=False)
def sanitize_observations(bound: wp.float32, obs: wp.array2d[wp.float32]):
    """Replace non-finite observations by 0 and clip the rest to ``[-bound, bound]``."""
    w, i = wp.tid()
    v = obs[w, i]
    if not wp.isfinite(v):
        v = 0.0
    obs[w, i] = wp.clamp(v, -bound, bound)


@wp.kernel(enable_backward=False)
def body_contact_wrenches(
    contact_count: wp.array[wp.int32],
    contact_shape0: wp.array[wp.int32],
    contact_shape1: wp.array[wp.int32],
    contact_point0: wp.array[wp.vec3],
    contact_point1: wp.array[wp.vec3],
    contact_f: wp.array[wp.spatial_vector],
    shape_body: wp.array[wp.int32],
    body_q: wp.array[wp.transform],
    body_com: wp.array[wp.vec3],
    wrench: wp.array[wp.spatial_vector],
):
    """Sum Steel's per-contact forces into the external contact wrench of each body.

    ``contact_f[i]`` is the force [N] on shape 0's body in world frame (SolverSteel's ``contact_f``
    observable); shape 1's body receives its opposite. The wrench is (force [N], torque [N m] about the
    body's centre of mass), world frame: MuJoCo's ``cfrc_ext`` up to the order and reference point.
    ``wrench`` must be zeroed before the launch.
    """
    i = wp.tid()
    if i >= contact_count[0]:
        return
    f = wp.spatial_top(contact_f[i])
    if wp.length_sq(f) == 0.0:
        return
    s0 = contact_shape0[i]
    s1 = contact_shape1[i]
    if s0 >= 0:
        b0 = shape_body[s0]
        if b0 >= 0:
            x = body_q[b0]
            r = wp.transform_point(x, contact_point0[i]) - wp.transform_point(x, body_com[b0])
            wp.atomic_add(wrench, b0, wp.spatial_vector(f, wp.cross(r, f)))
    if s1 >= 0:
        b1 = shape_body[s1]
        if b1 >= 0:
            x = body_q[b1]
            r = wp.transform_point(x, contact_point1[i]) - wp.transform_point(x, body_com[b1])
            wp.atomic_add(wrench, b1, wp.spatial_vector(-f, wp.cross(r, -f)))


@wp.kernel(enable_backward=False)
def zero_world_body_wrenches(
    world_mask: wp.array[wp.bool],
    body_world_start: wp.array[wp.int32],
    wrench: wp.array[wp.spatial_vector],
):
    """Zero the body wrenches of the selected worlds (a reset world has felt no contact yet)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for b in range(body_world_start[w], body_world_start[w + 1]):
        wrench[b] = wp.spatial_vector()


@wp.kernel(enable_backward=False)
def scale_shape_friction(
    shape_world: wp.array[wp.int32],
    nominal_mu: wp.array[wp.float32],
    world_scale: wp.array[wp.float32],
    mu: wp.array[wp.float32],
):
    """``mu = nominal_mu * scale[world]`` for every shape of a world; global shapes keep their value."""
    s = wp.tid()
    w = shape_world[s]
    if w >= 0:
        mu[s] = nominal_mu[s] * world_scale[w]


@wp.kernel(enable_backward=False)
def scale_body_mass(
    body_world: wp.array[wp.int32],
    nominal_mass: wp.array[wp.float32],
    nominal_inertia: wp.array[wp.mat33],
    world_scale: wp.array[wp.float32],
    mass: wp.array[wp.float32],
    inv_mass: wp.array[wp.float32],
    inertia: wp.array[wp.mat33],
    inv_inertia: wp.array[wp.mat33],
):
    """Scale a body's mass and inertia by its world's factor (the centre of mass stays)."""
    b = wp.tid()
    w = body_world[b]
    if w < 0:
        return
    k = world_scale[w]
    m = nominal_mass[b] * k
    mass[b] = m
    inv_mass[b] = wp.where(m > 0.0, 1.0 / m, 0.0)
    inertia[b] = nominal_inertia[b] * k
    inv_inertia[b] = wp.where(m > 0.0, wp.inverse(nominal_inertia[b] * k), wp.mat33(0.0))


@wp.kernel(enable_backward=False)
def zero_world_dofs(world_mask: wp.array[wp.bool], dof_world_start: wp.array[wp.int32], values: wp.array[wp.float32]):
    """Zero a per-DOF array (e.g. the control's ``joint_f``) in the selected worlds."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for i in range(dof_world_start[w], dof_world_start[w + 1]):
        values[i] = 0.0


@wp.kernel(enable_backward=False)
def draw_world_scales(
    world_mask: wp.array[wp.bool],
    low: wp.float32,
    high: wp.float32,
    rng_state: wp.array[wp.uint32],
    scale: wp.array[wp.float32],
):
    """Draw ``scale[w] ~ U(low, high)`` from the world's random stream for each selected world."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    scale[w] = low + (high - low) * wp.randf(rng)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def push_roots(
    episode_length: wp.array[wp.int32],
    interval: wp.int32,
    max_speed: wp.float32,
    dof_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    joint_qd: wp.array[wp.float32],
):
    """Every ``interval`` steps of an episode, add U(-max_speed, max_speed) [m/s] to the horizontal velocity of
    the world's floating base (its first DOFs: a free joint's linear velocity)."""
    w = wp.tid()
    n = episode_length[w]
    if n == 0 or n % interval != 0:
        return
    rng = rng_state[w]
    d = dof_world_start[w]
    joint_qd[d] = joint_qd[d] + max_speed * (2.0 * wp.randf(rng) - 1.0)
    joint_qd[d + 1] = joint_qd[d + 1] + max_speed * (2.0 * wp.randf(rng) - 1.0)
    rng_state[w] = rng


@wp.kernel(enable_backward=False)
def add_observation_noise(
    std: wp.array[wp.float32],
    redraw: wp.array[wp.bool],
    redraw_all: wp.bool,
    rng_state: wp.array[wp.uint32],
    noise: wp.array2d[wp.float32],
    obs: wp.array2d[wp.float32],
):
    """Add the world's observation noise ``noise[w, i] = std[i] * N(0, 1)`` to observation entry ``i``.

    The noise of world ``w`` is drawn anew from its noise stream only when ``redraw_all`` or ``redraw[w]``;
    otherwise the last draw is added again. So recomputing the observations of every world after some worlds
    were reset gives the other worlds exactly the observation they had, whichever worlds were reset.
    """
    w = wp.tid()
    if redraw_all or redraw[w]:
        rng = rng_state[w]
        for i in range(obs.shape[1]):
            noise[w, i] = std[i] * wp.randn(rng)
        rng_state[w] = rng
    for i in range(obs.shape[1]):
        obs[w, i] = obs[w, i] + noise[w, i]


@wp.kernel(enable_backward=False)
def flag_any_world(world_mask: wp.array[wp.bool], any_selected: wp.array[wp.int32]):
    """Set ``any_selected[0] = 1`` when world ``w`` is selected (the flag is zeroed before the launch)."""
    w = wp.tid()
    if world_mask[w]:
        any_selected[0] = 1


@wp.kernel(enable_backward=False)
def clear_global_entry(overflow_flags: wp.array[wp.bool], world_count: wp.int32):
    """Clear the global capacity-loss flag once the step has ended every world for it (one thread).

    The flag latches until a reset selects the final entry (SolverSteel's ``reset``); it has been reported, so
    clearing it here ends every world once, whatever the autoreset mode and however the worlds are reset later.
    """
    overflow_flags[world_count] = False


@wp.kernel(enable_backward=False)
def delay_actions(history: wp.array3d[wp.float32], actions: wp.array2d[wp.float32]):
    """Push this step's actions into ``history`` (delay + 1, num_envs, act_dim) and apply the oldest ones."""
    w = wp.tid()
    depth = history.shape[0]
    for j in range(actions.shape[1]):
        for k in range(depth - 1, 0, -1):
            history[k, w, j] = history[k - 1, w, j]
        history[0, w, j] = actions[w, j]
        actions[w, j] = history[depth - 1, w, j]


@wp.kernel(enable_backward=False)
def zero_world_history(world_mask: wp.array[wp.bool], history: wp.array3d[wp.float32]):
    """Forget the delayed actions of the selected worlds (a new episode starts with zero actions)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for k in range(history.shape[0]):
        for j in range(history.shape[2]):
            history[k, w, j] = 0.0


@wp.kernel(enable_backward=False)
def zero_world_rows(world_mask: wp.array[wp.bool], values: wp.array2d[wp.float32]):
    """Zero the rows (worlds) of a (num_envs, k) array selected by the mask."""
    w = wp.tid()
    if not world_mask[w]:
        return
    for j in range(values.shape[1]):
        values[w, j] = 0.0


@wp.kernel(enable_backward=False)
def scale_world_drive_gains(
    dof_world_start: wp.array[wp.int32],
    nominal_ke: wp.array[wp.float32],
    nominal_kd: wp.array[wp.float32],
    world_scale: wp.array[wp.float32],
    ke: wp.array[wp.float32],
    kd: wp.array[wp.float32],
):
    """Scale the drive stiffness and damping of every DOF of a world by its factor."""
    w = wp.tid()
    for i in range(dof_world_start[w], dof_world_start[w + 1]):
        ke[i] = nominal_ke[i] * world_scale[w]
        kd[i] = nominal_kd[i] * world_scale[w]


@wp.kernel(enable_backward=False)
def scaled_dof_targets(
    actions: wp.array2d[wp.float32],
    scale: wp.float32,
    dof_world_start: wp.array[wp.int32],
    targets: wp.array[wp.float32],
):
    """Write ``actions[w, j] * scale`` to the first ``action_dim`` DOF targets of world ``w`` (a 2-D launch over
    (num_envs, action_dim)), e.g. velocity targets ``joint_target_qd`` [m/s] of a gantry."""
    w, j = wp.tid()
    targets[dof_world_start[w] + j] = actions[w, j] * scale


@wp.kernel(enable_backward=False)
def no_task_terminations(terminated: wp.array[wp.bool], truncated: wp.array[wp.bool]):
    """The terms of a task that never ends an episode itself (the core's time limit and its overflow and
    non-finite terms still do): both False in every world."""
    w = wp.tid()
    terminated[w] = False
    truncated[w] = False


@wp.kernel(enable_backward=False)
def combine_termination_terms(
    term_count: wp.int32,
    time_out: wp.array[wp.bool],
    skip: wp.array[wp.bool],
    flags: wp.array2d[wp.bool],
    terminated: wp.array[wp.bool],
    truncated: wp.array[wp.bool],
):
    """OR the task's termination terms (``flags`` (term_count, num_envs)) into ``terminated``, or ``truncated``
    where ``time_out`` (term_count,) marks a time-out term. Worlds in ``skip`` (reset during this step, NEXT_STEP
    autoreset) report no term."""
    w = wp.tid()
    term = bool(False)
    trunc = bool(False)
    for t in range(term_count):
        if skip[w]:
            flags[t, w] = False
        if flags[t, w]:
            if time_out[t]:
                trunc = True
            else:
                term = True
    terminated[w] = term
    truncated[w] = trunc


@wp.kernel(enable_backward=False)
def copy_final_flags(
    count: wp.int32, done_mask: wp.array[wp.bool], flags: wp.array2d[wp.bool], final_flags: wp.array2d[wp.bool]
):
    """Keep each ended world's flags (count, num_envs) as its episode's, for ``info["episode"]``."""
    w = wp.tid()
    if done_mask[w]:
        for t in range(count):
            final_flags[t, w] = flags[t, w]


@wp.kernel(enable_backward=False)
def deepest_rigid_contact(
    contact_count: wp.array[wp.int32],
    shape0: wp.array[wp.int32],
    shape1: wp.array[wp.int32],
    distance: wp.array[wp.float32],
    shape_margin: wp.array[wp.float32],
    shape_world: wp.array[wp.int32],
    depth: wp.array[wp.float32],
):
    """Per world, the deepest penetration of a rigid contact [m]: ``-(distance) - margin0 - margin1`` (the signed
    distance of ``newton.eval_rigid_contact_kinematics`` is measured between the margin-inflated surfaces), into
    ``depth`` (num_envs,) by atomic max; a contact belongs to the world of its first shape that has one."""
    i = wp.tid()
    if i >= contact_count[0]:
        return
    s0 = shape0[i]
    s1 = shape1[i]
    if s0 < 0 or s1 < 0:
        return
    world = shape_world[s0]
    if world < 0:
        world = shape_world[s1]
    if world < 0 or world >= depth.shape[0]:
        return
    d = -distance[i] - shape_margin[s0] - shape_margin[s1]
    if wp.isfinite(d) and d > 0.0:
        wp.atomic_max(depth, world, d)


@wp.kernel(enable_backward=False)
def flag_penetration(
    depth: wp.array[wp.float32],
    limit: wp.float32,
    particles: wp.bool,
    particle_world_start: wp.array[wp.int32],
    particle_q: wp.array[wp.vec3],
    penetration: wp.array2d[wp.bool],
):
    """``penetration[0, w]``: world ``w``'s deepest rigid contact exceeds ``limit`` [m], or (``particles``) one of its
    particle centres is below the ground plane z = 0."""
    w = wp.tid()
    flagged = depth[w] > limit
    if particles:
        for i in range(particle_world_start[w], particle_world_start[w + 1]):
            if particle_q[i][2] < 0.0:
                flagged = True
    penetration[0, w] = flagged


@wp.kernel(enable_backward=False)
def joint_position_targets(
    actions: wp.array2d[wp.float32],
    default_pose: wp.array[wp.float32],
    action_scale: wp.array[wp.float32],
    coord_world_start: wp.array[wp.int32],
    first_coord: wp.int32,
    joint_target_q: wp.array[wp.float32],
):
    """Joint position targets around a pose: ``default_pose[j] + action_scale[j] * actions[w, j]`` [rad] for actuated
    joint j of world w. Targets have the coordinate layout of ``joint_q``; the actuated joints start ``first_coord``
    coordinates into each world (7 after a free root)."""
    w, j = wp.tid()
    joint_target_q[coord_world_start[w] + first_coord + j] = default_pose[j] + action_scale[j] * actions[w, j]


def apply_joint_position_targets(env: Any, pose: wp.array, scale: wp.array, first_coord: int) -> None:
    """Launch :func:`joint_position_targets` over ``env``'s worlds and actuated joints: ``env.actions`` around
    ``pose`` [rad] times ``scale`` [rad] into ``env.control.joint_target_q`` (the joint-position scenes' action)."""
    wp.launch(
        joint_position_targets,
        (env.num_envs, env.action_dim),
        inputs=[env.actions, pose, scale, env.model.joint_coord_world_start, first_coord],
        outputs=[env.control.joint_target_q],
        device=env.wp_device,
    )
