"""Helpers of the typed command lines (``steel-envs train``): the ID among the arguments, which options were named,
and the one-line diagnosis of arguments tyro refused.

tyro parses the command (``tyro.cli(Command, default=...)``) with its console output off; when it refuses the
arguments, :func:`diagnose` names the first unknown option (with the closest known ones, closest first) or the
first value its option's type cannot take, from the command's own dataclasses.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from typing import Any, Literal

__all__ = ["closest_options", "diagnose", "find_env_id", "given", "option_types"]


def find_env_id(argv: list[str]) -> str | None:
    """The registered ID among ``argv`` (before tyro parses it, to build the task's typed defaults); a first word
    that is not a registered ID raises, naming the closest.

    Raises:
        gymnasium.error.UnregisteredEnv: If the first word is not a registered ID.
    """
    import steel_envs
    from steel_envs.registration import registered_ids

    registered = set(registered_ids())
    for a in argv:
        if a in registered:
            return a
    if argv and not argv[0].startswith("-"):
        steel_envs.task_class(argv[0])  # raises with "did you mean"
    return None


def _flag(name: str) -> str:
    return name.replace("_", "-")


def given(argv: list[str], dotted: str) -> bool:
    """Whether ``argv`` names the option ``--<dotted>`` (hyphens and underscores alike)."""
    wanted = _flag(dotted)
    return any(a.startswith("--") and _flag(a[2:].split("=", 1)[0]) == wanted for a in argv)


def _markers(hint: Any) -> tuple[Any, list[Any]]:
    """``hint`` without ``Annotated``, and its metadata."""
    if typing.get_origin(hint) is typing.Annotated:
        base, *meta = typing.get_args(hint)
        return base, meta
    return hint, []


def option_types(instance: Any, prefix: str = "") -> dict[str, Any]:
    """Every option of the command whose defaults are the dataclass ``instance``: ``"--<prefix><field>"`` (and
    ``--no-...`` for a bool) -> the field's type, nested dataclasses as tyro names them (``OmitArgPrefixes``: no
    prefix; ``tyro.conf.arg(name="")``: the parent's prefix; else ``<field>.``); suppressed fields are left out."""
    import tyro

    hints = typing.get_type_hints(type(instance), include_extras=True)
    options: dict[str, Any] = {}
    for f in dataclasses.fields(instance):
        hint, meta = _markers(hints[f.name])
        if any(m is tyro.conf.Suppress for m in meta) or not f.init:
            continue
        value = getattr(instance, f.name)
        name = next((m.name for m in meta if getattr(m, "name", None) is not None), f.name)
        if dataclasses.is_dataclass(value):
            omit = any(m is tyro.conf.OmitArgPrefixes for m in meta)
            nested = "" if omit else prefix + (f"{_flag(name)}." if name else "")
            options.update(option_types(value, nested))
            continue
        options[f"--{prefix}{_flag(name)}"] = hint
        if hint is bool:
            options[f"--{prefix}no-{_flag(name)}"] = bool
    return options


def _accepts(hint: Any, tokens: list[str]) -> bool:
    """Whether ``tokens`` (the words after an option) can be a value of ``hint``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return not tokens
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(a, tokens) for a in args)
    if hint is type(None):
        return tokens == ["None"]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return bool(tokens) and all(_accepts(args[0], [t]) for t in tokens)
        return len(tokens) == len(args) and all(_accepts(a, [t]) for a, t in zip(args, tokens, strict=True))
    if len(tokens) != 1:
        return origin is not None  # containers: left to tyro
    token = tokens[0]
    if origin is Literal:
        return token in [str(a) for a in args]
    for kind in (int, float):
        if hint is kind:
            try:
                kind(token)
            except ValueError:
                return False
    return True


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin is tuple:
        return "a sequence of " + (_describe(args[0]) if args and args[-1] is Ellipsis else f"{len(args)} values")
    return {int: "an int", float: "a number", str: "a string", bool: "no value", type(None): "None"}.get(
        hint, getattr(hint, "__name__", str(hint))
    )


def closest_options(flag: str, options: Any, n: int = 3) -> list[str]:
    """Up to ``n`` of ``options`` (``--a.b.name`` flags) that ``flag`` may have meant, closest first: those whose
    last dotted part contains the given one's (or is contained in it) before the others, then those at the given
    flag's level (``--iterations``: ``--max-iterations`` before ``--env.solver-options.iterations``), then by
    similarity of the last parts (difflib's ratio, at least 0.6 unless contained), then of the whole flags."""
    prefix, _, word = flag[2:].rpartition(".")
    ranked = []
    for option in options:
        option_prefix, _, option_word = option[2:].rpartition(".")
        contained = len(word) >= 3 and (word in option_word or (len(option_word) >= 3 and option_word in word))
        similarity = difflib.SequenceMatcher(None, word, option_word).ratio()
        if contained or similarity >= 0.6:
            whole = difflib.SequenceMatcher(None, flag, option).ratio()
            ranked.append(((contained, option_prefix == prefix, similarity, whole), option))
    return [option for _, option in sorted(ranked, key=lambda r: r[0], reverse=True)[:n]]


def diagnose(argv: list[str], default: Any, help_hint: str) -> str:
    """One line saying why tyro refused ``argv`` for the command whose defaults are ``default`` (None: no ID was
    given): the first unknown option with the closest known ones (closest first), or the first value its option's
    type cannot take."""
    if default is None:
        return f"ENV_ID: give a registered environment ID first (steel-envs list; {help_hint})"
    options = option_types(default)
    for i, token in enumerate(argv):
        if not token.startswith("--"):
            continue
        name, _, inline = token.partition("=")
        flag = "--" + _flag(name[2:])
        if flag not in options:
            close = closest_options(flag, options)
            hint = f"; did you mean {' or '.join(close)}?" if close else f" (see {help_hint})"
            return f"unrecognized option {name}{hint}"
        values = [inline] if inline else []
        for later in argv[i + 1 :]:
            if inline or later.startswith("--") or later == getattr(default, "env_id", None):
                break
            values.append(later)
        if not _accepts(options[flag], values):
            shown = " ".join(values) if values else "nothing"
            return f"{name}: expected {_describe(options[flag])}, got {shown}"
    return f"invalid arguments {' '.join(argv)!r} (see {help_hint})"
