"""Training, evaluation and benchmark entry points (built on the core; RL libraries are optional extras)."""
