"""What a task declares for comparing learning algorithms across the suite (``steel-envs compare``): its suite, the
score a comparison reads from an evaluation, the random and expert scores that normalize it, and the env-step
budget of a run.

Normalized score (Agarwal et al. 2021, "Deep RL at the Edge of the Statistical Precipice", section 4, as DMC and
Atari's human-normalized scores): ``(score - random_score) / (expert_score - random_score)``: 0 is the random
policy, 1 the expert. The formula holds for a score where lower is better (a tracking error) too, since then
``expert_score < random_score``. The two anchors are numbers fixed in the task, never recomputed from the algorithms
being compared: the expert is the task's scripted solver where it ships one (its measured mean), else the task's
reference target; the random score is the uniform random policy's measured mean. Each value cites its measurement.

Plain data, like :mod:`steel_envs.train_config`: the comparison itself is :mod:`steel_envs.training.compare`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .hooks import TaskHooks

__all__ = ["SUITES", "BenchmarkSpec", "scripted_success", "suite_ids", "task_benchmark"]

SUITES = ("classic", "locomotion", "manipulation", "deformable")
"""The suites a task belongs to: ``classic`` (cart-poles), ``locomotion`` (legged robots), ``manipulation`` (arms,
hands, pushers on SolverSteel), ``deformable`` (cloth and soft bodies on SolverVBD)."""


@dataclass(frozen=True, kw_only=True)
class BenchmarkSpec:
    """A task's benchmark declaration (the class attribute ``benchmark``).

    Raises:
        ValueError: (construction) On an unknown suite, a non-finite anchor, anchors that do not order as ``direction``
            says (the expert better than random), or a budget < 1, naming the field.
    """

    suite: Literal["classic", "locomotion", "manipulation", "deformable"]
    """One of :data:`SUITES`."""
    score: str
    """What a comparison reads from an evaluation of the policy's mean action: ``"return"`` (mean episode return),
    ``"success_rate"`` (fraction of episodes successful at their last step) or the name of one of the task's episode
    metrics (its mean over the episodes, e.g. ``"tracking_error"``)."""
    direction: Literal["higher", "lower"]
    """Which way the score is better."""
    random_score: float
    """The score of the uniform random policy (the 0 of the normalized score) [the score's unit]."""
    expert_score: float
    """The score of an expert (the 1 of the normalized score) [the score's unit]."""
    expert_from: Literal["scripted_policy", "target"]
    """``"scripted_policy"``: ``expert_score`` is the task's scripted solver's measured mean; ``"target"``: it is
    the task's reference target (the task ships no solver)."""
    anchors: str
    """Where the two numbers come from: the command or report that measured them, or the target they state."""
    env_steps: int | None = None
    """The env-step budget of one run of a comparison; None: the budget of the task's ``train_config``
    (``num_envs * num_steps_per_env * max_iterations``)."""

    def __post_init__(self) -> None:
        if self.suite not in SUITES:
            raise ValueError(f"suite: expected one of {list(SUITES)}, got {self.suite!r}")
        if self.expert_from not in ("scripted_policy", "target"):
            raise ValueError(f"expert_from: expected 'scripted_policy' or 'target', got {self.expert_from!r}")
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"direction: expected 'higher' or 'lower', got {self.direction!r}")
        for name in ("random_score", "expert_score"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value)):
                raise ValueError(f"{name}: expected a finite number, got {value!r}")
        better = (
            self.expert_score > self.random_score
            if self.direction == "higher"
            else self.expert_score < self.random_score
        )
        if not better:
            raise ValueError(
                f"expert_score: expected a score {self.direction} than random_score ({self.random_score}), "
                f"got {self.expert_score}"
            )
        if self.env_steps is not None and not (isinstance(self.env_steps, int) and self.env_steps >= 1):
            raise ValueError(f"env_steps: expected an int >= 1 or None, got {self.env_steps!r}")

    def normalize(self, score: float) -> float:
        """``(score - random_score) / (expert_score - random_score)``: 0 random, 1 expert, above 1 better than the
        expert (unitless)."""
        return (float(score) - self.random_score) / (self.expert_score - self.random_score)


_REPORTS = "docs/reference"


def scripted_success(suite: str, name: str, random_score: float = 0.0, expert_score: float = 1.0) -> BenchmarkSpec:
    """The declaration of a task scored by its success rate, anchored by the random policy's and the scripted solver's
    rates as its reference report ``docs/reference/<name>.json`` measured them (100 episodes each)."""
    return BenchmarkSpec(
        suite=suite,
        score="success_rate",
        direction="higher",
        random_score=random_score,
        expert_score=expert_score,
        expert_from="scripted_policy",
        anchors=f"success rates over 100 episodes of the random policy and of scripted_policy ({_REPORTS}/{name}.json)",
    )


def task_benchmark(env_id: str) -> BenchmarkSpec:
    """The benchmark declaration of a registered ID, its ``env_steps`` resolved (the ``train_config`` budget where the
    task states none).

    Raises:
        ValueError: If the task declares no benchmark, or states no budget and its ``train_config`` has no
            ``max_iterations``.
        gymnasium.error.UnregisteredEnv: On an unknown ID (naming the closest).
    """
    import dataclasses

    from .registration import task_class

    cls: type[TaskHooks] = task_class(env_id)
    spec = getattr(cls, "benchmark", None)
    if spec is None:
        raise ValueError(f"{env_id}: the task declares no benchmark (its class attribute 'benchmark')")
    if spec.env_steps is not None:
        return spec
    ppo = cls.train_config
    if ppo.max_iterations is None:
        raise ValueError(f"{env_id}: benchmark.env_steps: the train_config has no max_iterations; state a budget")
    return dataclasses.replace(spec, env_steps=ppo.num_envs * ppo.num_steps_per_env * ppo.max_iterations)


def suite_ids(suite: str) -> list[str]:
    """The shipped IDs of ``suite`` (one of :data:`SUITES`, or ``"all"``), in registration order.

    Raises:
        ValueError: On an unknown suite, naming the known ones.
    """
    from .registration import ENV_IDS, task_class

    if suite != "all" and suite not in SUITES:
        raise ValueError(f"--suite: expected one of {[*SUITES, 'all']} or a comma-separated list of IDs, got {suite!r}")
    ids = [i for i in ENV_IDS if getattr(task_class(i), "benchmark", None) is not None]
    return ids if suite == "all" else [i for i in ids if task_class(i).benchmark.suite == suite]
