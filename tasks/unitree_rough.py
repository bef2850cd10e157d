"""``steel_envs/Go1VelocityRough-v0``: the flat velocity task (:mod:`steel_envs.tasks.unitree_velocity`) on rough
ground: a terrain grid of difficulty levels (:mod:`steel_envs.envs.terrain`), a terrain curriculum and a height scan,
mjlab 1.6.0's rough velocity configuration (``mjlab/tasks/velocity/velocity_env_cfg.py``, ``config/go1/
env_cfgs.py``; line numbers below are those files').
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import warp as wp
from steel_envs.envs.terrain import TERRAIN_TYPES, Terrain, TerrainConfig, generate_terrain
from steel_envs.tasks.terms import legged
from steel_envs.tasks.unitree_velocity import Go1VelocityConfig, Go1VelocityEnv

from steel_envs.ranges import at_least, between, declare
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, TerminationTerm

__all__ = ["SCAN_POINTS", "Go1VelocityRoughConfig", "Go1VelocityRoughEnv", "Go1VelocityRoughSingleEnv"]

_SCAN_X = np.round(np.arange(-0.8, 0.8 + 1e-6, 0.1), 6)
_SCAN_Y = np.round(np.arange(-0.5, 0.5 + 1e-6, 0.1), 6)
SCAN_POINTS = np.stack(np.meshgrid(_SCAN_X, _SCAN_Y), axis=-1).reshape(-1, 2).astype(np.float32)
"""(187, 2): the height scan's points in the base's yaw frame [m], mjlab's ``GridPatternCfg(size=(1.6, 1.0),
resolution=0.1)`` (velocity_env_cfg.py:46-55): x (forward) from -0.8 to 0.8 m varying fastest, then y (left) from
-0.5 to 0.5 m."""

# mjlab's rough set (ROUGH_TERRAINS_CFG, mjlab/terrains/config.py): flat 0.2, stairs up and down 0.2 each, slopes up
# and down 0.1 each, random rough 0.1, waves 0.1 (here discrete obstacles), in TERRAIN_TYPES order.
_PROPORTIONS = (0.2, 0.1, 0.1, 0.1, 0.2, 0.2, 0.1)


@dataclass(kw_only=True)
class Go1VelocityRoughConfig(Go1VelocityConfig):
    """The flat recipe plus the terrain's, the curriculum's and the height scan's fields."""

    terrain_level: int | None = None
    """None: the terrain curriculum moves each world between levels; a level in [0, levels - 1]: every world starts on
    it, curriculum off (evaluation)."""
    init_terrain_level_max: int = 4
    """With the curriculum, a world's first level is drawn uniformly in [0, this] (legged_gym's
    ``max_init_terrain_level = 5``, exclusive)."""
    terrain_proportions: tuple[float, ...] = _PROPORTIONS
    """Probability of each terrain type (``TERRAIN_TYPES`` order) at a world's reset (mjlab's proportions)."""
    terrain_seed: int = 0
    """Seed of the terrain's random patches (the same terrain for every world and every env with this seed)."""
    terrain_geometry: str = "heightfield"
    """``"heightfield"`` or ``"mesh"``: the same triangles as one ``newton.Heightfield`` or ``newton.Mesh``."""
    height_scan_noise: float = 0.1
    """Bound of mjlab's uniform noise on the height scan [m] (velocity_env_cfg.py:108); with ``randomize`` the
    observation gets Gaussian noise of its standard deviation, bound / sqrt(3)."""
    terrain_margin: float = 1.0
    """``out_of_terrain`` ends an episode when the base comes this close to the terrain's edge [m]."""

    field_ranges = declare(
        terrain_level=between(0, TerrainConfig().levels - 1, "a level of the terrain grid", integer=True),
        init_terrain_level_max=between(0, TerrainConfig().levels - 1, "a level of the terrain grid", integer=True),
        terrain_proportions=at_least(0.0, "one weight per terrain type"),
        terrain_seed=at_least(0, "a seed", integer=True),
        height_scan_noise=at_least(0.0, "a noise bound [m]"),
        terrain_margin=at_least(0.0, "a distance [m]"),
    )

    def __post_init__(self) -> None:
        p = self.terrain_proportions
        # Each weight's sign is its declared range's to check.
        if len(p) != len(TERRAIN_TYPES) or not sum(p) > 0:
            raise ValueError(
                f"terrain_proportions: expected {len(TERRAIN_TYPES)} weights >= 0 (some > 0), one per type of "
                f"{TERRAIN_TYPES}, got {p!r}"
            )
        if self.terrain_geometry not in ("heightfield", "mesh"):
            raise ValueError(f"terrain_geometry: expected 'heightfield' or 'mesh', got {self.terrain_geometry!r}")
        explicit_noise = self.obs_noise_std is not None
        super().__post_init__()
        if not explicit_noise and self.randomize:
            scan = self.height_scan_noise / math.sqrt(3.0)
            self.obs_noise_std = (*self.obs_noise_std, *(scan,) * len(SCAN_POINTS))


@wp.kernel(enable_backward=False)
def update_terrain_levels(
    world_mask: wp.array[wp.bool],
    fixed_level: wp.int32,
    forced_level: wp.array[wp.int32],
    init_level_max: wp.int32,
    levels: wp.int32,
    patch_size: wp.float32,
    command_time: wp.float32,
    cumulative: wp.array[wp.float32],
    spawn: wp.array2d[wp.vec3],
    episode_length: wp.array[wp.int32],
    s: legged.LeggedState,
    rng_state: wp.array[wp.uint32],
    origin: wp.array[wp.vec3],
    level_f: wp.array[wp.float32],
):
    """At a world's reset, before its new initial state: legged_gym's / mjlab's ``terrain_levels_vel``. A world that
    walked more than half a patch from its spawn point moves up a level, one that walked less than half its commanded
    distance (|cmd_xy| times the time limit) moves down; one that passes the top level gets a uniform level; the first
    reset (an episode of 0 steps) draws a level in [0, init_level_max]; ``fixed_level`` >= 0 (the config's) or the
    world's ``forced_level`` >= 0 (a reset option, used once: it is cleared here) overrides all of it. The world then
    gets a terrain type by the cumulative proportions and its spawn point."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    level = int(level_f[w])
    if forced_level[w] >= 0:
        level = forced_level[w]
        forced_level[w] = -1
    elif fixed_level >= 0:
        level = fixed_level
    elif episode_length[w] == 0:
        level = int(wp.randi(rng, 0, init_level_max + 1))
    else:
        p = wp.transform_get_translation(s.body_q[s.body_world_start[w] + s.base])
        dx = p[0] - origin[w][0]
        dy = p[1] - origin[w][1]
        walked = wp.sqrt(dx * dx + dy * dy)
        commanded = wp.sqrt(s.commands[w, 0] * s.commands[w, 0] + s.commands[w, 1] * s.commands[w, 1])
        if walked > patch_size / 2.0:
            level = level + 1
        elif walked < commanded * command_time * 0.5:
            level = level - 1
        if level >= levels:
            level = int(wp.randi(rng, 0, levels))
        level = wp.max(level, 0)
    u = wp.randf(rng) * cumulative[cumulative.shape[0] - 1]
    column = int(0)
    while column < cumulative.shape[0] - 1 and u >= cumulative[column]:
        column += 1
    rng_state[w] = rng
    level_f[w] = float(level)
    origin[w] = spawn[level, column]


@wp.kernel(enable_backward=False)
def place_on_terrain(
    world_mask: wp.array[wp.bool],
    origin: wp.array[wp.vec3],
    coord_world_start: wp.array[wp.int32],
    dof_world_start: wp.array[wp.int32],
    rng_state: wp.array[wp.uint32],
    joint_q: wp.array[wp.float32],
    joint_qd: wp.array[wp.float32],
):
    """Move a reset world's robot, drawn at the origin, onto its spawn point with a heading U(-pi, pi): its free root
    joint's coordinates and velocities, rotated about z and shifted (the bodies follow by forward kinematics)."""
    w = wp.tid()
    if not world_mask[w]:
        return
    rng = rng_state[w]
    yaw = (2.0 * wp.randf(rng) - 1.0) * wp.pi
    rng_state[w] = rng
    turn = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw)
    c = coord_world_start[w]
    d = dof_world_start[w]
    root = wp.transform_multiply(
        wp.transform(origin[w], turn),
        wp.transform(
            wp.vec3(joint_q[c], joint_q[c + 1], joint_q[c + 2]),
            wp.quat(joint_q[c + 3], joint_q[c + 4], joint_q[c + 5], joint_q[c + 6]),
        ),
    )
    for k in range(3):
        joint_q[c + k] = wp.transform_get_translation(root)[k]
    for k in range(4):
        joint_q[c + 3 + k] = wp.transform_get_rotation(root)[k]
    v = wp.quat_rotate(turn, wp.vec3(joint_qd[d], joint_qd[d + 1], joint_qd[d + 2]))
    omega = wp.quat_rotate(turn, wp.vec3(joint_qd[d + 3], joint_qd[d + 4], joint_qd[d + 5]))
    for k in range(3):
        joint_qd[d + k] = v[k]
        joint_qd[d + 3 + k] = omega[k]


class Go1VelocityRoughEnv(Go1VelocityEnv):
    """Track a commanded base velocity with the Unitree Go1 on rough ground, mjlab's
    ``Mjlab-Velocity-Rough-Unitree-Go1`` recipe (``unitree_go1_rough_env_cfg``) on SolverSteel: the flat task
    (:class:`steel_envs.tasks.unitree_velocity.Go1VelocityEnv`) on a terrain grid, with a terrain curriculum and a
    height scan.

    ## Action space
    As :class:`steel_envs.tasks.unitree_velocity.Go1VelocityEnv`: 12 joint position offsets in [-1, 1] around the
    standing pose, action 1 mjlab's action 4.

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-2 | base linear velocity, base frame | m/s |
    | 3-5 | base angular velocity, base frame | rad/s |
    | 6-8 | gravity direction in the base frame | 1 |
    | 9-20 | joint angles minus the standing pose, plus the encoder bias | rad |
    | 21-32 | joint velocities | rad/s |
    | 33-44 | the last applied actions (0 after a reset) | 1 |
    | 45-47 | command (vx, vy, yaw rate) | m/s, rad/s |
    | 48-234 | base height above the ground at 187 points of a yaw-aligned 1.6 m x 1.0 m grid | m |

    The height scan's points (``SCAN_POINTS``) are 0.1 m apart, x (forward) from -0.8 to 0.8 m varying fastest, then
    y (left) from -0.5 to 0.5 m, around the trunk, turned by its heading; each is the trunk's height above the ground
    there, read from the terrain's heights (never the robot's own shapes; mjlab casts rays against the terrain only,
    velocity_env_cfg.py:46-55; unscaled here, mjlab divides by 5 m). With ``randomize`` (the default), the flat
    task's Gaussian noise plus 0.058 m on the scan (mjlab's U(-0.1, 0.1) m, :108).

    ## Privileged observations (the critic group after the 235 above, without noise; ``env.observation_groups``)
    | index | observation | unit |
    |---|---|---|
    | 0-3 | foot-point heights above the ground | m |
    | 4-7 | time since each foot left the ground | s |
    | 8-11 | 1 per foot in contact | 1 |
    | 12-23 | foot contact forces (x, y, z per foot, world frame), sign(f) log(1 + abs(f)) | log N |
    | 24-210 | base height above the ground at 187 points of a yaw-aligned 1.6 m x 1.0 m grid | m |

    ## Rewards
    The flat task's terms and weights; foot heights (``foot_clearance``, ``foot_swing_height``, the critic's) are
    above the ground under each foot. mjlab's rough Go1 adds contact costs of the shanks, trunk and head with the
    terrain and of the robot with itself (-0.1 each, config/go1/env_cfgs.py:211-226), which need per-shape contact
    sensors: not here (the scene does not collide the robot with itself), nor ``upright``'s terrain-normal
    reference.

    ## Commands and randomization
    As the flat task.

    ## Terrain
    :mod:`steel_envs.envs.terrain`: 10 levels x 7 types of 8 m x 8 m patches (flat, pyramid slopes up and down,
    random rough, pyramid stairs up and down, discrete obstacles; mjlab's ``ROUGH_TERRAINS_CFG`` with obstacles for
    its waves), one static heightfield (``terrain_geometry="mesh"``: the same triangles as a mesh) shared by all
    worlds, seeded by ``terrain_seed``, with an 8 m flat border.

    ## Starting state
    At every reset a world draws a terrain type (``terrain_proportions``: mjlab's flat 0.2, stairs up and down 0.2
    each, the other types 0.1 each) and starts at the centre of that type's patch on its level, on the patch's flat
    platform: base 0.295 m above it, heading U(-pi, pi), joints at the standing pose, at rest.

    ## Terrain curriculum (legged_gym's / mjlab's ``terrain_levels_vel``, curriculums.py:25-66)
    A world's first level is U{0, ..., 4} (``init_terrain_level_max``). At each later reset it moves up a level if
    its base ended more than half a patch (4 m) from its spawn point, down one if it ended less than half its
    commanded distance (|cmd_xy| at the end x the time limit x 0.5) from it, never below 0; a world passing the top
    level gets a level U{0, ..., 9}. ``terrain_level=L`` puts every world on level L, curriculum off;
    ``reset(options={"terrain_level": levels})`` ((num_envs,) integers) puts the reset worlds on those levels for that
    reset (evaluation on chosen levels; the curriculum goes on from them).

    ## Episode end
    As the flat task (``fell_over``, ``base_contact``, non-finite state; truncated after 1000 steps or on a
    constraint overflow), and truncated when the base comes within ``terrain_margin`` (1 m) of the terrain's edge
    (``out_of_terrain``, mjlab's ``out_of_terrain_bounds``). mjlab's rough Go1 ends on thigh contact instead of
    tilt; here the flat task's terminations hold.

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, base frame.
    - ``terrain_level`` [1]: the level of the episode's patch (its mean over episodes is the curriculum's progress).
    """

    config_cls = Go1VelocityRoughConfig
    config: Go1VelocityRoughConfig
    add_ground_plane = False
    default_max_episode_steps = 1000  # 20 s, velocity_env_cfg.py:455
    terrain_config: ClassVar[TerrainConfig] = TerrainConfig()
    """The terrain grid's generator settings (its seed is the config's ``terrain_seed``)."""
    observations = (
        *Go1VelocityEnv.observations,
        ObservationBlock(
            "height_scan",
            len(SCAN_POINTS),
            legged.height_scan,
            "base height above the ground at 187 points of a yaw-aligned 1.6 m x 1.0 m grid",
            "m",
        ),
    )
    privileged_observations = (*Go1VelocityEnv.privileged_observations, observations[-1])
    terminations = (
        *Go1VelocityEnv.terminations,
        TerminationTerm("out_of_terrain", legged.out_of_terrain, time_out=True),
    )
    metrics = (*Go1VelocityEnv.metrics, legged.TERRAIN_LEVEL)
    reset_options = ("terrain_level",)

    @classmethod
    def check_reset_option(cls, name: str, values: torch.Tensor) -> None:
        """``terrain_level``: integers in [0, levels - 1] (the reset worlds start on them).

        Raises:
            ValueError: Another dtype or a level out of range.
        """
        top = cls.terrain_config.levels - 1
        if values.dtype.is_floating_point or not bool(((values >= 0) & (values <= top)).all()):
            raise ValueError(f"options['terrain_level']: expected integer levels in [0, {top}], got {values.tolist()}")

    def _set_reset_options(self, values: dict[str, torch.Tensor]) -> None:
        if "terrain_level" in values:
            self._forced_level.assign(values["terrain_level"].to(torch.int32).cpu().numpy())

    # Watermarks of steel-envs doctor at the hardest level (8 worlds x 200 steps of random, bang-bang and zero
    # actions; newton 1.8.0, CPU), heightfield / mesh: 51 / 58 contacts and 310 / 347 rows per world; 2x headroom.
    rigid_contacts_per_world = 128
    solver_defaults = Go1VelocityEnv.solver_defaults.replace({"articulation_constraint_max": 768})
    contact_gap: ClassVar[float] = 0.03
    """Contact gap of the robot's shapes and the terrain [m] (Newton's default 0.1). Within its gap each shape makes
    speculative contacts with every nearby terrain triangle: with 0.1 a Go1 world made up to 185 contacts under
    random actions on the hardest stairs and stepped 6.7x slower than with 0.02 (27 contacts). The gap must exceed
    the distance a shape closes in one physics step (a foot at 4 m/s: 2 cm)."""

    def build_world(self, builder) -> None:
        builder.rigid_gap = self.contact_gap
        super().build_world(builder)

    def build_shared(self, builder) -> None:
        c = self.config
        terrain = generate_terrain(self.terrain_config, seed=c.terrain_seed)
        self.terrain: Terrain = terrain
        shape = builder.default_shape_cfg.copy()  # the flat scenes' ground's material
        shape.gap = self.contact_gap
        terrain.add_to(builder, c.terrain_geometry, shape)

    def _setup_task(self) -> None:
        super()._setup_task()
        c, t = self.config, self.terrain
        legged.set_terrain(self.term_state, t, SCAN_POINTS)
        self.term_state.terrain_level = wp.zeros(self.num_envs, dtype=wp.float32)
        self.term_state.terrain_margin = float(c.terrain_margin)
        self._terrain_origin = wp.zeros(self.num_envs, dtype=wp.vec3)
        self._forced_level = wp.full(self.num_envs, -1, dtype=wp.int32)
        self._terrain_spawn = wp.array(t.spawn, dtype=wp.vec3)
        self._terrain_cumulative = wp.array(np.cumsum(c.terrain_proportions), dtype=wp.float32)

    def _reset_physics_state(self, world_mask: wp.array) -> None:
        c, s = self.config, self.term_state
        self.launch_per_world(
            update_terrain_levels,
            inputs=[
                world_mask,
                -1 if c.terrain_level is None else int(c.terrain_level),
                self._forced_level,
                int(c.init_terrain_level_max),
                int(self.terrain_config.levels),
                float(self.terrain_config.patch_size),
                float(self.max_episode_steps * self.control_dt),
                self._terrain_cumulative,
                self._terrain_spawn,
                self.episode_steps,
                s,
            ],
            outputs=[self.rng_state, self._terrain_origin, s.terrain_level],
        )
        self.initial_states.reset(world_mask, kinematics=False)  # the bodies follow once the root is placed
        m = self.model
        self.launch_per_world(
            place_on_terrain,
            inputs=[world_mask, self._terrain_origin, m.joint_coord_world_start, m.joint_dof_world_start],
            outputs=[self.rng_state, self.state_0.joint_q, self.state_0.joint_qd],
        )
        self.initial_states.eval_fk(world_mask)
        self.solver.reset(self.state_0, world_mask=world_mask)


Go1VelocityRoughSingleEnv = register_task("steel_envs/Go1VelocityRough-v0", Go1VelocityRoughEnv)
