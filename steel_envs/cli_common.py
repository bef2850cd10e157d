"""What every ``steel-envs`` command shares: the one line of a Ctrl-C, and the checks of its file arguments that run
before any env is built (so a typo costs no build and its message is never glued to a progress bar).

Light: ``os``, ``signal`` and ``sys`` only, so a command checks its arguments before loading Warp, Newton or torch.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["EXIT_INTERRUPTED", "check_input_file", "check_output_file", "check_policy_spec", "stopped_by_ctrl_c"]

EXIT_INTERRUPTED = 130
"""The exit status of a command ended by Ctrl-C: 128 + SIGINT, as a shell reports a process SIGINT killed."""

_NAMED_POLICIES = ("random", "zero", "reference")
_POLICY_FILE_SUFFIXES = (".pt", ".pth", ".onnx", ".jit")


def stopped_by_ctrl_c(command: str, saved: str = "nothing saved", when: str = "", by: str = "Ctrl-C") -> int:
    """Close the open progress bars (so the line stands on its own), print ``steel-envs <command>: stopped by <by>
    [<when>]; <saved>`` on stderr and return the shell's status for it: :data:`EXIT_INTERRUPTED` for Ctrl-C, 128 + the
    signal's number for a signal's name (``by="SIGTERM"``: 143). ``saved`` says what was written and where; ``when``,
    how far the command got (e.g. ``after 120 of 500 steps``)."""
    tqdm_module = sys.modules.get("tqdm.std")
    if tqdm_module is not None:  # a bar left open by the interrupted loop would end mid-line
        for bar in list(getattr(tqdm_module.tqdm, "_instances", ())):
            bar.close()
    print(f"steel-envs {command}: stopped by {by}{' ' + when if when else ''}; {saved}", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED if by == "Ctrl-C" else 128 + signal.Signals[by].value


def check_input_file(path: str, argument: str) -> None:
    """Raise FileNotFoundError (``<argument>: no such file '<path>'``) unless ``path`` is a file."""
    if os.path.isdir(path):
        raise FileNotFoundError(f"{argument}: {path!r} is a folder, not a file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{argument}: no such file {path!r}")


def check_policy_spec(spec: str, argument: str) -> None:
    """Raise FileNotFoundError when the policy spec ``spec`` (:func:`steel_envs.policies.load_policy_callable`) names
    a file that does not exist: a path (it holds a ``/``) or a ``.pt`` / ``.pth`` / ``.onnx`` / ``.jit`` name. A
    named policy or ``module:function`` is left to the loader."""
    if spec.partition(":")[0] in _NAMED_POLICIES:
        return
    if "/" in spec or os.sep in spec or spec.endswith(_POLICY_FILE_SUFFIXES):
        check_input_file(spec, argument)


def check_output_file(path: str, argument: str, suffixes: tuple[str, ...] = ()) -> None:
    """Check that the command can write ``path`` at its end: its suffix is one of ``suffixes`` (when given), it is not
    a folder, and its folder exists or is created here and is writable.

    Raises:
        ValueError: Naming ``argument``, the path and the reason.
    """
    if suffixes and not path.endswith(suffixes):
        raise ValueError(f"{argument}: expected a {' or '.join(suffixes)} file name, got {path!r}")
    if os.path.isdir(path):
        raise ValueError(f"{argument}: {path!r} is a folder; expected a file name")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{argument}: cannot create the folder of {path!r} ({e.strerror or e})") from None
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"{argument}: cannot write {path!r} (permission denied)")
