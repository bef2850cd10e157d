"""The term library: reward, termination, observation and metric functions shared by the tasks, named as the field
names them (legged_gym, Isaac Lab, mjlab, Gymnasium, dm_control), each with its formula, units and source.

A term function reads a task's term state (a ``@wp.struct``; each function says which fields it reads) and the
world index, and returns its value: a task declares it in one line (``RewardTerm("action_rate",
legged.action_rate_l2, weight="action_rate_weight")``). The modules, by family:

- :mod:`steel_envs.tasks.terms.legged`: velocity tracking with a floating-base legged robot.
"""
