"""``steel_envs/Go1VelocityRough-v0``, ``steel_envs/G1VelocityRough-v0``: the flat velocity tasks
(:mod:`steel_envs.tasks.unitree_velocity`) on rough ground: a terrain grid of difficulty levels
(:mod:`steel_envs.envs.terrain`, the scenes :class:`steel_envs.envs.unitree.Go1RoughScene` and ``G1RoughScene``), a
terrain curriculum and a height scan, mjlab 1.6.0's rough velocity configuration
(``mjlab/tasks/velocity/velocity_env_cfg.py``, ``config/go1/env_cfgs.py``, ``config/g1/env_cfgs.py``; line numbers
below are those files'). mjlab derives its flat tasks from the rough ones by removing the terrain, the height scan
(from both observation groups), the out-of-bounds termination and the curriculum (``unitree_g1_flat_env_cfg``); these
tasks add the same to the flat ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import warp as wp
from steel_envs.envs.terrain import TERRAIN_TYPES, TerrainConfig, TerrainSceneConfig
from steel_envs.envs.unitree import G1RoughScene, Go1RoughScene
from steel_envs.tasks.terms import legged
from steel_envs.tasks.unitree_velocity import G1VelocityConfig, G1VelocityEnv, Go1VelocityConfig, Go1VelocityEnv

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import any_value, at_least, between, declare
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm

__all__ = [
    "HEIGHT_SCAN",
    "SCAN_POINTS",
    "G1VelocityRoughConfig",
    "G1VelocityRoughEnv",
    "G1VelocityRoughSingleEnv",
    "Go1VelocityRoughConfig",
    "Go1VelocityRoughEnv",
    "Go1VelocityRoughSingleEnv",
    "RoughVelocityConfig",
    "RoughVelocityTask",
]

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
class RoughVelocityConfig(TerrainSceneConfig):
    """The curriculum's and the height scan's fields (mixed into a flat velocity config:
    ``class Go1VelocityRoughConfig(RoughVelocityConfig, Go1VelocityConfig)``)."""

    terrain_level: int | None = None
    """None: the terrain curriculum moves each world between levels; a level in [0, levels - 1]: every world starts on
    it, curriculum off (evaluation)."""
    init_terrain_level_max: int = 4
    """With the curriculum, a world's first level is drawn uniformly in [0, this] (legged_gym's
    ``max_init_terrain_level = 5``, exclusive)."""
    terrain_proportions: tuple[float, ...] = _PROPORTIONS
    """Probability of each terrain type (``TERRAIN_TYPES`` order) at a world's reset (mjlab's proportions)."""
    height_scan_noise: float = 0.1
    """Bound of mjlab's uniform noise on the height scan [m] (velocity_env_cfg.py:108); with ``randomize`` the
    observation gets Gaussian noise of its standard deviation, bound / sqrt(3)."""
    terrain_margin: float = 1.0
    """``out_of_terrain`` ends an episode when the base comes this close to the terrain's edge [m]."""

    field_ranges = declare(
        terrain_level=between(0, TerrainConfig().levels - 1, "a level of the terrain grid", integer=True),
        init_terrain_level_max=between(0, TerrainConfig().levels - 1, "a level of the terrain grid", integer=True),
        terrain_proportions=at_least(0.0, "one weight per terrain type"),
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
        explicit_noise = self.obs_noise_std is not None
        super().__post_init__()
        if not explicit_noise and self.randomize:
            scan = self.height_scan_noise / math.sqrt(3.0)
            self.obs_noise_std = (*self.obs_noise_std, *(scan,) * len(SCAN_POINTS))


@dataclass(kw_only=True)
class Go1VelocityRoughConfig(RoughVelocityConfig, Go1VelocityConfig):
    """Go1's flat recipe plus the terrain's, the curriculum's and the height scan's fields, and mjlab's rough Go1
    contact costs (config/go1/env_cfgs.py:211-226: -0.1 each, per control step here as mjlab's weights are)."""

    shank_collision_weight: float = -0.1 * 0.02
    """Weight of ``shank_collision`` (a calf touching the ground)."""
    base_collision_weight: float = -0.1 * 0.02
    """Weight of ``base_collision`` (the trunk or head touching the ground; mjlab's ``trunk_head_collision``)."""

    field_ranges = declare(
        shank_collision_weight=any_value("a signed reward weight per step (mjlab's times 0.02 s)"),
        base_collision_weight=any_value("a signed reward weight per step (mjlab's times 0.02 s)"),
    )


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


HEIGHT_SCAN = ObservationBlock(
    "height_scan",
    len(SCAN_POINTS),
    legged.height_scan,
    "base height above the ground at 187 points of a yaw-aligned 1.6 m x 1.0 m grid",
    "m",
)
"""The height scan, in the rough tasks' policy group; the critic group starts with the policy's blocks (without
noise), so it has the scan once, as mjlab's critic (velocity_env_cfg.py:122-137)."""
OUT_OF_TERRAIN = TerminationTerm("out_of_terrain", legged.out_of_terrain, time_out=True)


class RoughVelocityTask:
    """A mixin that adds the terrain curriculum and the reset options to a flat velocity task on a rough scene
    (``class Go1VelocityRoughEnv(RoughVelocityTask, Go1VelocityEnv, Go1RoughScene)``); the concrete class lists the
    height scan, the termination and the metric in its term tuples."""

    config: RoughVelocityConfig
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

    def _set_reset_options(self, values: dict[str, torch.Tensor], mask: torch.Tensor | None) -> None:
        if "terrain_level" in values:
            levels = values["terrain_level"].to(torch.int32).cpu().numpy()
            if mask is not None:  # a world this reset leaves alone takes no level (its next reset is its own)
                levels = np.where(mask.cpu().numpy(), levels, -1).astype(np.int32)
            self._forced_level.assign(levels)

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

    def _place_robots(self, world_mask: wp.array) -> None:
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
        self._spawn_on_terrain(world_mask, self._terrain_origin)
        self.solver.reset(self.state_0, world_mask=world_mask)


class Go1VelocityRoughEnv(RoughVelocityTask, Go1VelocityEnv, Go1RoughScene):
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

    ## Rewards
    The flat task's terms and weights, as mjlab's rough Go1 changes them (config/go1/env_cfgs.py:199-226); foot
    heights (``foot_clearance``, ``foot_swing_height``, the critic's) are above the ground under each foot.

    - ``reward_upright = 0.02 * exp(-(n_x^2 + n_y^2) / 0.2)``, n the normal of the ground under the height scan in
      the trunk's frame: the least-squares plane through the ground heights at the scan's 187 points (mjlab fits a
      plane to its terrain scan's hits); on flat ground it is the flat task's term
    - ``reward_shank_collision = -0.002 * 4 * [a calf touches the ground with more than 10 N]``: mjlab counts the
      physics steps (4 per control step) in which a shank geom's contact force exceeds its threshold; the contact
      wrench here is the last physics step's, so a touch counts 4
    - ``reward_base_collision = -0.002 * 4 * [the trunk touches the ground with more than 10 N]`` (mjlab's
      ``trunk_head_collision``: Go1's trunk and head geoms are the trunk body's)

    mjlab's ``self_collisions`` (-0.1) has no counterpart: the scene does not collide the robot with itself.

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
    As mjlab's rough Go1 (config/go1/env_cfgs.py:227-234), which tilts too much on rough ground to end on
    orientation: terminated when a thigh touches the ground with more than 10 N (``thigh_contact``, mjlab's
    ``illegal_contact``) or on a non-finite state (no ``fell_over``, no ``base_contact``: touching with the trunk
    costs ``base_collision``); truncated after 1000 steps, on a constraint overflow, or when the base comes within
    ``terrain_margin`` (1 m) of the terrain's edge (``out_of_terrain``, mjlab's ``out_of_terrain_bounds``).

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, base frame.
    - ``tracking_error_horizon`` [m/s]: the same RMS over the time limit's steps, each step lost to an early end
      charged ``|cmd_xy|`` (standing still): the benchmark score, in which a fall does not hide the steps it
      cut off.
    - ``terrain_level`` [1]: the level of the episode's patch (its mean over episodes is the curriculum's progress).
    """

    config_cls = Go1VelocityRoughConfig
    config: Go1VelocityRoughConfig
    default_max_episode_steps = 1000  # 20 s, velocity_env_cfg.py:455
    observations = (*Go1VelocityEnv.observations, HEIGHT_SCAN)
    rewards = (
        *(
            RewardTerm("upright", legged.upright_on_terrain, weight="upright_weight") if r.name == "upright" else r
            for r in Go1VelocityEnv.rewards
        ),
        RewardTerm("shank_collision", legged.shank_collision, weight="shank_collision_weight"),
        RewardTerm("base_collision", legged.base_collision, weight="base_collision_weight"),
    )
    terminations = (TerminationTerm("thigh_contact", legged.thigh_contact), OUT_OF_TERRAIN)
    metrics = (*Go1VelocityEnv.metrics, legged.TERRAIN_LEVEL)
    # train_config: the flat task's, 6 M env-steps (977 iterations of 256 worlds x 24 steps).
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="tracking_error_horizon",
        direction="lower",
        random_score=0.616,
        expert_score=0.265,
        expert_from="target",
        anchors=(
            "random and zero: tracking_error_horizon 0.616 and 0.663 over 100 episodes each (steel-envs evaluate "
            "steel_envs/Go1VelocityRough-v0 --policy random --policy zero --episodes 100 --num-envs 16); expert: "
            "40 % of the zero policy's, Go1Velocity-v0's target"
        ),
    )

    def _setup_task(self) -> None:
        super()._setup_task()
        labels = [label.rsplit("/", 1)[-1] for label in self.model.body_label[: self.bodies_per_world]]

        def bodies(part: str) -> wp.array:
            return wp.array([i for i, name in enumerate(labels) if name.endswith(part)], dtype=wp.int32)

        self.term_state.shank_bodies, self.term_state.thigh_bodies = bodies("_calf"), bodies("_thigh")


@dataclass(kw_only=True)
class G1VelocityRoughConfig(RoughVelocityConfig, G1VelocityConfig):
    """G1's flat recipe plus the terrain's, the curriculum's and the height scan's fields (mjlab's G1 rough
    configuration, ``unitree_g1_rough_env_cfg``, is its flat one with the terrain)."""


class G1VelocityRoughEnv(RoughVelocityTask, G1VelocityEnv, G1RoughScene):
    """Track a commanded base velocity with the Unitree G1 (29 DOF) on rough ground, mjlab's
    ``Mjlab-Velocity-Rough-Unitree-G1`` recipe (``unitree_g1_rough_env_cfg``) on SolverSteel: the flat task
    (:class:`steel_envs.tasks.unitree_velocity.G1VelocityEnv`) on the terrain grid of
    :class:`Go1VelocityRoughEnv`, with its terrain curriculum and height scan.

    ## Action space
    As :class:`steel_envs.tasks.unitree_velocity.G1VelocityEnv`: 29 joint position offsets in [-1, 1] around the
    knees-bent standing pose (mjlab's actions clipped at 1).

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0-2 | base linear velocity, base frame | m/s |
    | 3-5 | base angular velocity, base frame | rad/s |
    | 6-8 | gravity direction in the base frame | 1 |
    | 9-37 | joint angles minus the standing pose, plus the encoder bias | rad |
    | 38-66 | joint velocities | rad/s |
    | 67-95 | the last applied actions (0 after a reset) | 1 |
    | 96-98 | command (vx, vy, yaw rate) | m/s, rad/s |
    | 99-285 | base height above the ground at 187 points of a yaw-aligned 1.6 m x 1.0 m grid | m |

    The base is the pelvis (mjlab points its terrain scan at the pelvis, config/g1/env_cfgs.py:35-40); the scan as
    :class:`Go1VelocityRoughEnv`'s. With ``randomize`` (the default), the flat task's Gaussian noise plus 0.058 m on
    the scan.

    ## Privileged observations (the critic group after the 286 above, without noise; ``env.observation_groups``)
    | index | observation | unit |
    |---|---|---|
    | 0-1 | foot-point heights above the ground | m |
    | 2-3 | time since each foot left the ground | s |
    | 4-5 | 1 per foot in contact | 1 |
    | 6-11 | foot contact forces (x, y, z per foot, world frame), sign(f) log(1 + abs(f)) | log N |

    ## Rewards
    The flat task's terms and weights (mjlab's G1 rough and flat configurations share them); foot heights
    (``foot_clearance``, ``foot_swing_height``, the critic's) are above the ground under each foot. mjlab's
    ``self_collisions`` (-1.0) has no counterpart, as on flat ground.

    ## Commands and randomization
    As the flat task.

    ## Terrain, starting state and curriculum
    As :class:`Go1VelocityRoughEnv`: 10 levels x 7 types of 8 m x 8 m patches, a world's patch drawn by
    ``terrain_proportions`` at each reset and its level by the curriculum (``terrain_level=L``: every world on level
    L, curriculum off; ``reset(options={"terrain_level": levels})`` for chosen levels). The robot starts on the
    patch's platform, pelvis 0.76 m above it, heading U(-pi, pi), joints at the standing pose, at rest.

    ## Episode end
    As the flat task (``fell_over``, ``base_contact``, non-finite state; truncated after 1000 steps or on a
    constraint overflow), and truncated when the pelvis comes within ``terrain_margin`` (1 m) of the terrain's edge
    (``out_of_terrain``).

    ## Metrics (``info["episode"]``, per ended episode)
    - ``tracking_error`` [m/s]: RMS over the episode's steps of ``|cmd_xy - v_xy|``, base frame.
    - ``tracking_error_horizon`` [m/s]: the same RMS over the time limit's steps, each step lost to an early end
      charged ``|cmd_xy|`` (standing still): the benchmark score, in which a fall does not hide the steps it
      cut off.
    - ``terrain_level`` [1]: the level of the episode's patch (its mean over episodes is the curriculum's progress).
    """

    config_cls = G1VelocityRoughConfig
    config: G1VelocityRoughConfig
    default_max_episode_steps = 1000  # 20 s, velocity_env_cfg.py:455
    observations = (*G1VelocityEnv.observations, HEIGHT_SCAN)
    terminations = (*G1VelocityEnv.terminations, OUT_OF_TERRAIN)
    metrics = (*G1VelocityEnv.metrics, legged.TERRAIN_LEVEL)
    benchmark = BenchmarkSpec(
        suite="locomotion",
        score="tracking_error_horizon",
        direction="lower",
        random_score=0.656,
        expert_score=0.260,
        expert_from="target",
        anchors=(
            "random and zero: tracking_error_horizon 0.656 and 0.649 over 100 episodes each (steel-envs evaluate "
            "steel_envs/G1VelocityRough-v0 --policy random --policy zero --episodes 100 --num-envs 16); expert: "
            "40 % of the zero policy's, Go1Velocity-v0's target"
        ),
    )


Go1VelocityRoughSingleEnv = register_task("steel_envs/Go1VelocityRough-v0", Go1VelocityRoughEnv)
G1VelocityRoughSingleEnv = register_task("steel_envs/G1VelocityRough-v0", G1VelocityRoughEnv)
