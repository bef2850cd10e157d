"""The ``steel-envs doctor`` subcommand: parse its JSON options, run :func:`~steel_envs.doctor.runner.doctor`, print
the table and write ``--json``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from steel_envs.cli_common import check_output_file
from steel_envs.doctor.runner import doctor

__all__ = ["run_cli"]

_JSON_OPTIONS = (
    ("--solver-options", "solver_options", '{"iterations": 16}'),
    ("--collision-options", "collision_options", '{"rigid_contact_max": 4096}'),
    ("--env-kwargs", "env_kwargs", '{"clutter": 4}'),
)
"""The JSON-object flags: flag, attribute of the parsed arguments, an example for the error message."""
_OWN_FLAGS = {
    "num_envs": "--num-envs",
    "steps": "--steps",
    "device": "--device",
    "seed": "--seed",
    "solver_options": "--solver-options",
    "collision_options": "--collision-options",
    "check_world_count": "",
    "env_id": "",
}
"""Keywords of :func:`~steel_envs.doctor.runner.doctor` that ``--env-kwargs`` cannot set, with the flag that does."""


def _error(message: str) -> int:
    print(f"steel-envs doctor: {message}", file=sys.stderr)
    return 2


def _parse_json_options(args: argparse.Namespace) -> dict[str, dict[str, Any] | None]:
    """The JSON objects of the flags in ``_JSON_OPTIONS`` by attribute name (None: not given).

    Raises:
        ValueError: A one-line message naming the flag: its value is not JSON or not a JSON object, or an
            ``--env-kwargs`` key is a keyword of the doctor itself.
    """
    options: dict[str, Any] = {}
    for flag, attribute, example in _JSON_OPTIONS:
        text = getattr(args, attribute, None)
        try:
            value = None if text is None else json.loads(text)
        except json.JSONDecodeError:
            value = text
        if value is not None and not isinstance(value, dict):
            raise ValueError(f"{flag}: expected a JSON object such as '{example}', got {text!r}")
        options[attribute] = value
    for key in options["env_kwargs"] or {}:
        if key in _OWN_FLAGS:
            own = f"; use {_OWN_FLAGS[key]}" if _OWN_FLAGS[key] else ""
            raise ValueError(f"--env-kwargs: {key!r} is an option of the doctor, not of the env{own}")
    return options


def run_cli(args: argparse.Namespace) -> int:
    """The ``steel-envs doctor`` subcommand (``args`` from ``steel_envs.cli``'s parser): print the table and write
    ``--json``. ``--env-kwargs`` (a JSON object) passes env keywords and task config fields to the env.

    Returns:
        The exit status: 0 no line failed, 1 a line failed, 2 bad arguments (a one-line message on stderr: an
        unregistered ID, a count below 1, a JSON option that is not a JSON object, a ``--json`` file that cannot be
        written (checked before the build), or the env's own ``ValueError`` / ``TypeError``, e.g. for an unknown
        config field).
    """
    import gymnasium as gym

    from steel_envs.registration import task_class

    try:
        task_class(args.env_id)
    except gym.error.UnregisteredEnv as e:
        return _error(f"{e} (steel-envs list shows them all)")
    for flag, value in (("--num-envs", args.num_envs), ("--steps", args.steps)):
        if value < 1:
            return _error(f"{flag}: expected an int >= 1, got {value}")
    try:
        options = _parse_json_options(args)
        if args.json:  # before the build, not after the whole report
            check_output_file(args.json, "--json")
    except ValueError as e:
        return _error(str(e))
    print(f"building {args.num_envs} worlds of {args.env_id} (the first run compiles Warp kernels, about a minute)")
    try:
        report = doctor(
            args.env_id,
            args.num_envs,
            args.steps,
            args.device,
            seed=args.seed,
            solver_options=options["solver_options"],
            collision_options=options["collision_options"],
            **(options["env_kwargs"] or {}),
        )
    except (ValueError, TypeError) as e:
        return _error(str(e).splitlines()[0] if str(e) else type(e).__name__)
    print(report.table())
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(report.to_json() + "\n")
        except OSError as e:
            return _error(f"--json: {e}")
    return 1 if report.failed else 0
