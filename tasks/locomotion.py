"""Terms shared by the locomotion tasks (AntRun, HumanoidRun)."""

from __future__ import annotations

import warp as wp

__all__ = ["healthy_z_terminations"]


@wp.kernel(enable_backward=False)
def healthy_z_terminations(
    coord_world_start: wp.array[wp.int32],
    joint_q: wp.array[wp.float32],
    z_min: wp.float32,
    z_max: wp.float32,
    inclusive: wp.bool,
    terminate_when_unhealthy: wp.bool,
    healthy: wp.array[wp.bool],
    terminated: wp.array[wp.bool],
    truncated: wp.array[wp.bool],
):
    """Healthy while the floating base's z (coordinate 2 of the world) is in [z_min, z_max] (``inclusive``, as
    Gymnasium Ant-v5) or (z_min, z_max) (Humanoid-v5); an unhealthy world terminates if asked."""
    w = wp.tid()
    z = joint_q[coord_world_start[w] + 2]
    ok = z > z_min and z < z_max
    if inclusive:
        ok = z >= z_min and z <= z_max
    healthy[w] = ok
    terminated[w] = terminate_when_unhealthy and not ok
    truncated[w] = False
