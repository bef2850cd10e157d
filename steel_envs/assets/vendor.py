"""Vendoring script of the Unitree models: copies ``go1.xml`` / ``g1.xml`` and their meshes out of the pinned mjlab
wheel into ``steel_envs/assets/<robot>/`` with mjlab's license, simplifying the visual meshes on the way.

A maintainer's tool, run once when the models are (re)vendored; the package never imports it and needs neither
mjlab nor the mesh libraries at run time. It needs the wheel file and, in the venv that runs it,
``fast-simplification`` (quadric decimation) and ``trimesh`` (STL reading and writing)::

    pip download mjlab==1.6.0 --no-deps -d /tmp/dl
    pip install fast-simplification trimesh
    python -m steel_envs.assets.vendor /tmp/dl/mjlab-1.6.0-py3-none-any.whl

The MJCF files are copied byte for byte: the simplified meshes keep their file names, so the models reference
them unchanged. Only visual geoms use meshes (class ``visual``: ``contype=0 conaffinity=0``); every collision
geom is a primitive (box, sphere, capsule), so the dynamics do not depend on the simplification. The script
checks the wheel's sha256 and writes each folder's ``PROVENANCE.md`` (sizes and triangle counts included).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

WHEEL_NAME = "mjlab-1.6.0-py3-none-any.whl"
WHEEL_SHA256 = "03d003854e2f44c48330c6dcf4c2253ff7641bb569747846825a21b9efa8540b"
"""sha256 of the wheel the vendored files come from (as ``pip download mjlab==1.6.0 --no-deps`` fetches it)."""
LICENSE_IN_WHEEL = "mjlab-1.6.0.dist-info/licenses/LICENSE"
ROBOTS = {
    "unitree_go1": ("go1.xml", "go1_constants.py"),
    "unitree_g1": ("g1.xml", "g1_constants.py"),
}
"""Asset folder -> (MJCF file, mjlab's constants module the actuation comes from)."""
KEEP_FRACTION = 0.2
"""Fraction of a visual mesh's triangles kept by the quadric decimation..."""
MAX_TRIANGLES = 6000
"""...but at most this many per mesh (the 112k-triangle Go1 trunk), and no fewer than MIN_TRIANGLES."""
MIN_TRIANGLES = 1000

_UPSTREAM = {
    "unitree_go1": "`unitree_go1/` of MuJoCo Menagerie, derived by Menagerie from Unitree's `go1_description` URDF",
    "unitree_g1": "`unitree_g1/` of MuJoCo Menagerie, derived by Menagerie from Unitree's `g1_description` MJCF",
}


def _simplify_stl(data: bytes) -> tuple[bytes, int, int]:
    """Decimate one STL mesh; returns (binary STL bytes, triangles before, triangles after)."""
    return simplify_mesh(data, "stl", KEEP_FRACTION, MIN_TRIANGLES, MAX_TRIANGLES)


def simplify_mesh(
    data: bytes, file_type: str, fraction: float, low: int, high: int, out_type: str | None = None
) -> tuple[bytes, int, int]:
    """Decimate one mesh (``file_type`` "stl" or "obj") towards ``fraction`` of its triangles, clamped to [low,
    high]; returns (the mesh in ``out_type``, default the same format, triangles before, triangles after). OBJ is
    written with vertices and faces only (no normals, no materials: the model gives each geom its material)."""
    import fast_simplification
    import numpy as np
    import trimesh

    # The decimation needs a connected mesh: merge the per-triangle vertices by position alone. trimesh keeps apart
    # vertices with different normals or texture coordinates (an OBJ's seams), and a shell decimated along seams
    # falls apart: the Panda's link1.obj kept 11 % of its volume, and rendered as scattered fragments.
    mesh = trimesh.load(io.BytesIO(data), file_type=file_type, force="mesh", process=True)
    mesh.merge_vertices(merge_tex=True, merge_norm=True)
    before = len(mesh.faces)
    keep = min(before, max(low, min(high, round(fraction * before))))
    if keep < before:
        points, faces = fast_simplification.simplify(
            np.asarray(mesh.vertices, np.float64), np.asarray(mesh.faces, np.int64), target_count=keep
        )
        mesh = trimesh.Trimesh(points, faces, process=True)
    if (out_type or file_type) == "obj":
        text = trimesh.exchange.obj.export_obj(mesh, include_normals=False, include_color=False, include_texture=False)
        return text.encode(), before, len(mesh.faces)
    return mesh.export(file_type="stl"), before, len(mesh.faces)


def _provenance(robot: str, rows: list[tuple[str, int, int, int, int]], xml: str, sizes: tuple[int, int]) -> str:
    prefix = f"mjlab/asset_zoo/robots/{robot}"
    table = "\n".join(f"| `assets/{n}` | {a:,} | {b:,} | {t0:,} | {t1:,} |" for n, a, b, t0, t1 in rows)
    return f"""# Provenance of `{robot}/`

| | |
| --- | --- |
| package | `mjlab` (PyPI), version 1.6.0, `{WHEEL_NAME}` |
| sha256 of the wheel | `{WHEEL_SHA256}` |
| paths in the wheel | `{prefix}/xmls/{xml}`, `{prefix}/xmls/assets/*`; license `{LICENSE_IN_WHEEL}` |
| license | Apache-2.0 (`LICENSE` here: mjlab's license file, verbatim) |
| actuation constants | `{prefix}/{ROBOTS[robot][1]}` (read by `steel_envs/assets/__init__.py`, cited by line there) |
| upstream | {_UPSTREAM[robot]}; Menagerie's README for the model says it is released under a BSD-3-Clause license |
| vendored by | `python -m steel_envs.assets.vendor <wheel>` (`steel_envs/assets/vendor.py`) |

mjlab's wheel states no origin or license for these files beyond its own Apache-2.0 license (no file header, no
notice, no mention in its README); the Menagerie origin and its BSD-3-Clause license are stated by Menagerie.

## What was changed

- `{xml}`: none (byte for byte the wheel's file). The model has no actuators and no keyframe; the standing pose,
  PD gains, armature and effort/velocity limits come from mjlab's constants module and are applied when the model
  is added to a Newton builder (`steel_envs.assets`).
- Visual meshes: decimated with fast-simplification 0.2.0 (quadric edge collapse) towards {KEEP_FRACTION:.0%} of their
  triangles, at most {MAX_TRIANGLES:,} and at least {MIN_TRIANGLES:,} per mesh (a target: the decimation stops near
  it, see the table), and re-written as binary STL by trimesh
  (vertices merged, normals recomputed); file names kept. They are visual geoms only (`contype=0 conaffinity=0`):
  collision uses the model's primitives (boxes, spheres, capsules), unchanged.
- Nothing else from the wheel is included.

Sizes: {sizes[0]:,} bytes in the wheel, {sizes[1]:,} bytes here (MJCF, meshes and license).

| file | bytes in the wheel | bytes here | triangles in the wheel | triangles here |
| --- | ---: | ---: | ---: | ---: |
{table}
"""


def vendor(wheel: Path, out: Path) -> None:
    """Write ``out/<robot>/`` for each robot of :data:`ROBOTS` from ``wheel``.

    Raises:
        ValueError: If the wheel's sha256 is not :data:`WHEEL_SHA256`.
    """
    check_wheel(wheel, WHEEL_SHA256, WHEEL_NAME)
    with zipfile.ZipFile(wheel) as zf:
        license_text = zf.read(LICENSE_IN_WHEEL)
        for robot, (xml, _) in ROBOTS.items():
            prefix = f"mjlab/asset_zoo/robots/{robot}/xmls/"
            folder = out / robot
            (folder / "assets").mkdir(parents=True, exist_ok=True)
            xml_bytes = zf.read(prefix + xml)
            (folder / xml).write_bytes(xml_bytes)
            (folder / "LICENSE").write_bytes(license_text)
            rows = []
            before_total, after_total = len(xml_bytes) + len(license_text), len(xml_bytes) + len(license_text)
            for name in sorted(n for n in zf.namelist() if n.startswith(prefix + "assets/") and not n.endswith("/")):
                data = zf.read(name)
                simplified, t0, t1 = _simplify_stl(data)
                (folder / "assets" / Path(name).name).write_bytes(simplified)
                rows.append((Path(name).name, len(data), len(simplified), t0, t1))
                before_total += len(data)
                after_total += len(simplified)
            (folder / "PROVENANCE.md").write_text(_provenance(robot, rows, xml, (before_total, after_total)))
            print(f"{robot}: {before_total:,} -> {after_total:,} bytes")


def check_wheel(wheel: Path, sha256: str, name: str) -> None:
    """Refuse a wheel file whose sha256 is not ``sha256`` (that of ``name``).

    Raises:
        ValueError: Naming the expected and the found digest.
    """
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != sha256:
        raise ValueError(f"wheel: expected sha256 {sha256} ({name}), got {digest}")


def command_line(argv: list[str] | None, description: str, wheel_name: str, write: Callable[[Path, Path], None]):
    """A vendoring script's command line, ``WHEEL [--out DIR]``: ``write(wheel, out)``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("wheel", type=Path, help=f"path of {wheel_name}")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="asset root (default: this folder)")
    args = parser.parse_args(argv)
    write(args.wheel, args.out)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m steel_envs.assets.vendor WHEEL [--out DIR]``."""
    command_line(argv, __doc__.split("\n\n")[0], WHEEL_NAME, vendor)


if __name__ == "__main__":
    main()
