"""Terms shared by the locomotion tasks (AntRun, HumanoidRun)."""

from __future__ import annotations

import warp as wp

from steel_envs.spec import EpisodeMetric, ObservationBlock

__all__ = [
    "action_sq_norm",
    "distance_metric",
    "floating_base_blocks",
    "healthy_z_terminations",
    "world_wrench_sq_norm",
    "x_displacement",
]


def distance_metric(point: str) -> EpisodeMetric:
    """``distance_x`` [m]: how far ``point`` moved in +x over the episode (an early end counts the distance
    reached); the sum of the steps' displacements (:func:`x_displacement`)."""
    return EpisodeMetric("distance_x", "sum", "m", f"distance the {point} travelled in +x over the episode")


@wp.kernel(enable_backward=False)
def healthy_z_terminations(
    coord_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    z_min: wp.float32,
    z_max: wp.float32,
    inclusive: wp.bool,
    terminate_when_unhealthy: wp.bool,
    healthy: wp.array[wp.bool],
    flags: wp.array2d[wp.bool],
):
    """Healthy while the floating base's z (coordinate 2 of the world) is in [z_min, z_max] (``inclusive``, as
    Gymnasium Ant-v5) or (z_min, z_max) (Humanoid-v5); an unhealthy world terminates if asked: termination term 0
    (``unhealthy``) of ``flags`` (term, world)."""
    w = wp.tid()
    z = joint_q[coord_world_start[w] + 2]
    ok = z > z_min and z < z_max
    if inclusive:
        ok = z >= z_min and z <= z_max
    healthy[w] = ok
    flags[0, w] = terminate_when_unhealthy and not ok


@wp.kernel(enable_backward=False)
def x_displacement(x_before: wp.array[wp.float32], x_after: wp.array[wp.float32], values: wp.array2d[wp.float32]):
    """Metric 0 (``distance_x``, summed over the episode): the step's displacement in x [m]."""
    w = wp.tid()
    values[0, w] = x_after[w] - x_before[w]


@wp.func
def action_sq_norm(actions: wp.array2d[wp.float32], w: int):
    """``sum(a**2)`` of world ``w``'s actions: the control cost of Gymnasium's locomotion tasks."""
    total = float(0.0)
    for j in range(actions.shape[1]):
        total += actions[w, j] * actions[w, j]
    return total


@wp.func
def world_wrench_sq_norm(
    body_world_start: wp.array[wp.int32], wrench: wp.array[wp.spatial_vector], w: int, clip: float
):
    """``sum(clip(wrench, -clip, clip)**2)`` over the bodies of world ``w``: the contact cost of Gymnasium's
    locomotion tasks (``cfrc_ext``); ``clip = inf`` leaves the wrench as it is."""
    total = float(0.0)
    for b in range(body_world_start[w], body_world_start[w + 1]):
        f = wrench[b]
        for j in range(6):
            c = wp.clamp(f[j], -clip, clip)
            total += c * c
    return total


def floating_base_blocks(hinges: int) -> tuple[ObservationBlock, ...]:
    """The observation blocks Gymnasium's Ant-v5 and Humanoid-v5 start with (after the excluded torso x, y): torso
    height and orientation, hinge angles, torso velocities, hinge velocities."""
    return (
        ObservationBlock("torso_z", 1, "torso z", "m"),
        ObservationBlock("torso_quat", 4, "torso orientation quaternion (x, y, z, w)", "1"),
        ObservationBlock("joint_pos", hinges, "hinge angles (action order)", "rad"),
        ObservationBlock("torso_lin_vel", 3, "torso centre-of-mass velocity, world frame", "m/s"),
        ObservationBlock("torso_ang_vel", 3, "torso angular velocity, world frame", "rad/s"),
        ObservationBlock("joint_vel", hinges, "hinge angular velocities", "rad/s"),
    )
