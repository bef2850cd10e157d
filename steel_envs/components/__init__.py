"""Device components of the core env: each owns its buffers, only launches kernels (graph-capturable) and resets by
world mask. The core (:class:`steel_envs.core.NewtonVectorEnv`) calls them in the step order of the contract.

- :class:`ActionPipeline`: clip, non-finite handling, delay.
- :class:`Randomizer`: per-world friction, mass and drive-gain factors (``set_world_parameters``, reset
  randomization) and pushes.
- :class:`ObservationPipeline`: the task's observations, noise, clip, camera images, ``final_obs``.
- :class:`EpisodeStatistics`: dones and their causes, weighted rewards, per-name episode sums, final statistics.
- :class:`PenetrationProbe`: the ``penetration`` end cause.
- :class:`InitialStates`: the scene's initial joint states with their noise, drawn at reset.
- :class:`StepGraph`: the one captured graph of a step, conditional resets, torch/Warp stream order.
- :class:`ContactWrenches`: per-body contact wrenches from SolverSteel's ``contact_f`` (tasks that request it).
- :class:`TermGroups`: the task's term functions, one kernel per group (observations, terminations, rewards,
  metrics).
"""
