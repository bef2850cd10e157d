"""Scenes: one module per robot or asset, with its solver options, actuation and initial state (``joint_limits``: the
declared-limit helpers the scenes share)."""
