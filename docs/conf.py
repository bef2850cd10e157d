"""Sphinx configuration of the steel-envs documentation.

Build (offline: nothing is fetched, no intersphinx):

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The task pages (``docs/tasks/``), the CLI reference and the results tables (``docs/_generated/``) are written at
build time by the local extension ``docs/_ext/steel_docs.py`` from the tasks themselves, the parsers and the JSON
files under ``docs/``; they are git-ignored.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "steel-envs"
author = "steel-envs contributors"
copyright = "steel-envs contributors, Apache-2.0"
release = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "steel_docs",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "reference", "gpu", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence"]
# Headings h1-h3 get anchors, so "[text](page.md#a-heading)" links resolve (and a broken one warns).
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

html_theme = "furo"
html_title = "steel-envs"
html_static_path = ["_static"]
html_css_files = ["tables.css"]
html_show_sourcelink = False

# Every cross-reference must resolve: with -W a missing one fails the build.
nitpicky = False
