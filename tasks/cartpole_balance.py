"""``steel_envs/CartpoleBalance-v0``: keep a pole upright on a cart, Gymnasium CartPole-v1 with a force action."""

from __future__ import annotations

from dataclasses import dataclass

from steel_envs.envs.cartpole import CartpoleScene, CartpoleSceneConfig
from steel_envs.tasks.terms import classic

from steel_envs.benchmark import BenchmarkSpec
from steel_envs.ranges import any_value, declare, positive
from steel_envs.registration import register_task
from steel_envs.spec import ObservationBlock, RewardTerm, TerminationTerm
from steel_envs.train_config import PpoConfig

__all__ = ["CartpoleBalanceConfig", "CartpoleBalanceEnv", "CartpoleBalanceSingleEnv"]


@dataclass(kw_only=True)
class CartpoleBalanceConfig(CartpoleSceneConfig):
    """Weights and thresholds of CartpoleBalance (defaults: Gymnasium CartPole-v1)."""

    alive_reward: float = 1.0
    """Reward of every step, the terminating one included."""
    pole_angle_limit: float = 0.2
    """Terminate when |theta| exceeds this [rad] (CartPole-v1: 12 deg = 0.2094)."""
    cart_position_limit: float = 2.4
    """Terminate when |x| exceeds this [m]: the cart left the rail."""

    field_ranges = declare(
        alive_reward=any_value("a reward per step; a negative one rewards ending the episode early"),
        pole_angle_limit=positive("a termination angle [rad]; 0 ends every episode at once"),
        cart_position_limit=positive("a termination distance [m]; 0 ends every episode at once"),
    )


class CartpoleBalanceEnv(CartpoleScene):
    """Balance a pole on a cart by pushing the cart (Gymnasium CartPole-v1 with a continuous force).

    ## Action space
    | index | action | min | max | unit |
    |---|---|---|---|---|
    | 0 | force on the cart, times ``force_scale`` (10 N) | -1 | 1 | 1 |

    ## Observation space
    | index | observation | unit |
    |---|---|---|
    | 0 | cart position x | m |
    | 1 | cart velocity | m/s |
    | 2 | pole angle from upright, wrapped to [-pi, pi] | rad |
    | 3 | pole angular velocity | rad/s |

    ## Rewards
    ``reward_alive = alive_reward`` (1) on every step, the terminating one included (CartPole-v1).

    ## Starting state
    All four states uniform in [-0.05, 0.05] (``reset_noise_scale``), as CartPole-v1.

    ## Episode end
    Terminated when |theta| > ``pole_angle_limit`` (0.2 rad, term ``pole_fell``) or |x| > ``cart_position_limit``
    (2.4 m, term ``cart_off_rail``), or on a non-finite state; truncated at ``max_episode_steps`` (500, control
    dt 0.02 s) or on a SolverSteel constraint overflow (a termination with ``overflow_is_terminal=True``).

    ## Arguments
    Those of :class:`steel_envs.SteelVectorEnv` and the fields of :class:`CartpoleBalanceConfig`.
    """

    config_cls = CartpoleBalanceConfig
    config: CartpoleBalanceConfig
    rewards = (RewardTerm("alive", classic.alive, weight="alive_reward"),)
    terminations = (
        TerminationTerm("pole_fell", classic.pole_fell),
        TerminationTerm("cart_off_rail", classic.cart_off_rail),
    )
    default_max_episode_steps = 500
    train_config = PpoConfig(
        num_steps_per_env=32,
        max_iterations=300,
        actor_hidden_dims=(64, 64),
        critic_hidden_dims=(64, 64),
        target_return=475.0,
    )
    """PPO settings of ``steel-envs train`` for this task (the learner is not imported here)."""
    benchmark = BenchmarkSpec(
        suite="classic",
        score="return",
        direction="higher",
        random_score=23.38,
        expert_score=475.0,
        expert_from="target",
        anchors=(
            "random: the uniform random policy over 100 episodes (docs/reference/CartpoleBalance-v0.json); "
            "expert: the reference target, mean return >= 475 (Gymnasium CartPole-v1's reward_threshold)"
        ),
    )
    observations = (
        ObservationBlock("cart_pos", 1, classic.cart_pos, "cart position x", "m"),
        ObservationBlock("cart_vel", 1, classic.cart_vel, "cart velocity", "m/s"),
        ObservationBlock("pole_angle", 1, classic.pole_angle, "pole angle from upright, wrapped to [-pi, pi]", "rad"),
        ObservationBlock("pole_ang_vel", 1, classic.pole_ang_vel, "pole angular velocity", "rad/s"),
    )

    def _setup_task(self) -> None:
        self.term_state = classic.make_cartpole_state(self)


CartpoleBalanceSingleEnv = register_task("steel_envs/CartpoleBalance-v0", CartpoleBalanceEnv)
