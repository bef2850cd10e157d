"""Small Markdown writers shared by the generated pages: tables, cells, docstring sections."""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["attribute_docs", "cell", "code", "docstring_sections", "fmt_value", "table"]


def cell(text: Any) -> str:
    """``text`` as one Markdown table cell: on one line, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: Any) -> str:
    """``text`` as an inline code span (longer backtick fence when the text holds backticks); "" for empty."""
    text = str(text)
    if not text:
        return ""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> str:
    """A Markdown table; ``align`` has one letter per column (``l`` or ``r``), left by default."""
    align = align.ljust(len(header), "l")
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_value(value: Any) -> str:
    """A default or option value as a user writes it: ``inf`` for infinity, short floats, reprs otherwise."""
    if isinstance(value, float):
        return "inf" if math.isinf(value) and value > 0 else "-inf" if math.isinf(value) else f"{value:.6g}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(fmt_value(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else f"({inner})"
    if hasattr(value, "name") and type(value).__module__.startswith(("steel_envs", "enum")):
        return str(value.name)
    return repr(value)


def attribute_docs(cls: type) -> dict[str, str]:
    """Field name -> the docstring under its annotated assignment, for ``cls`` and its bases (the most derived class
    first). Python keeps no attribute docstrings, so they are read from each class's source with :mod:`ast`."""
    docs: dict[str, str] = {}
    for klass in cls.__mro__:
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body[0].body
        for node, following in itertools.pairwise(body):
            name = getattr(getattr(node, "target", None), "id", None)
            is_doc = isinstance(following, ast.Expr) and isinstance(getattr(following, "value", None), ast.Constant)
            if isinstance(node, ast.AnnAssign) and name and is_doc and isinstance(following.value.value, str):
                docs.setdefault(name, inspect.cleandoc(following.value.value))
    return docs


_HEADING = re.compile(r"^## (.*)$")


def docstring_sections(doc: str) -> tuple[str, list[tuple[str, str]]]:
    """Split a task class's docstring into its description (first paragraph) and its ``## Heading`` sections, in
    order, as (heading, body) pairs. A heading whose parenthesis opens on its line and closes on a later one
    continues there (``## Rewards (weights ...;`` / ``per control step)``)."""
    lines = inspect.cleandoc(doc).splitlines()
    description = " ".join(_take_paragraph(lines))
    sections: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        match = _HEADING.match(lines[i])
        if not match:
            i += 1
            continue
        heading = match.group(1)
        while heading.count("(") > heading.count(")") and i + 1 < len(lines):
            i += 1
            heading += " " + lines[i].strip()
        j = i + 1
        while j < len(lines) and not _HEADING.match(lines[j]):
            j += 1
        sections.append((heading, "\n".join(lines[i + 1 : j]).strip()))
        i = j
    return description, sections


def _take_paragraph(lines: list[str]) -> list[str]:
    """The lines of the first paragraph of ``lines`` (up to the first blank line or heading)."""
    out = []
    for line in lines:
        if not line.strip() or _HEADING.match(line):
            break
        out.append(line.strip())
    return out
