"""Tasks: observations, rewards and terminations on a scene, one module per task, each ending with the line that
registers its ID (``AntRunSingleEnv = register_task("steel_envs/AntRun-v0", AntRunEnv)``).

``import steel_envs`` registers every module's ID from that line without importing the module
(:mod:`steel_envs.registration`), so a new task file is picked up without editing any list; a module loads when an
env of its ID is made. The shared term functions are in :mod:`steel_envs.tasks.terms`.
"""
