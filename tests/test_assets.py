"""The vendored robot models: license and provenance beside every model, packaged; joints, DOFs and actuation
against an independent parse of the MJCF and mjlab's published formulas; standing under the default targets; the
Panda holding its home pose as MuJoCo holds it."""

from __future__ import annotations

import ast
import fnmatch
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import newton
import numpy as np
import pytest
import torch
import warp as wp
from steel_envs.envs.unitree import G1Scene, Go1Scene, UnitreeScene

from steel_envs.assets import ALLEGRO, ASSET_ROOT, G1, GO1, PANDA, RobotModel
from steel_envs.spec import ObservationBlock, RewardTerm, term

ROOT = Path(__file__).resolve().parents[1]


def _model_folders() -> list[Path]:
    return sorted({p.parent for pattern in ("*.xml", "*.urdf") for p in ASSET_ROOT.rglob(pattern)})


_SOURCES = {
    "unitree": (("mjlab", "1.6.0", "BSD-3-Clause", "Apache-2.0"), "Apache License"),
    "franka": (("genesis-world", "1.4.5", "Apache-2.0"), "Apache License"),
    "allegro": (("example-robot-data", "6.0.0", "BSD"), "BSD 2-Clause License"),
}
"""Folder name prefix -> (what its provenance must name, its license file's title)."""


def test_every_model_folder_has_its_license_and_provenance_and_is_packaged() -> None:
    folders = _model_folders()
    assert {f.name for f in folders} >= {"unitree_go1", "unitree_g1", "franka_panda", "allegro_hand"}
    # pyproject's package-data line of the package (tomllib is 3.11+; the project supports 3.10).
    line = next(x for x in (ROOT / "pyproject.toml").read_text().splitlines() if x.startswith('"steel_envs.assets" ='))
    shipped = ast.literal_eval(line.split("=", 1)[1].strip())
    for folder in folders:
        source, license_title = _SOURCES[folder.name.split("_")[0]]
        assert license_title in (folder / "LICENSE").read_text(), folder
        provenance = (folder / "PROVENANCE.md").read_text()
        for needed in (*source, "sha256", "What was changed"):
            assert needed in provenance, (folder.name, needed)
        for path in folder.rglob("*"):
            relative = path.relative_to(ASSET_ROOT).as_posix()
            assert path.is_dir() or any(fnmatch.fnmatch(relative, p) for p in shipped), f"not packaged: {relative}"

    def size(names: tuple[str, ...]) -> int:
        return sum(p.stat().st_size for f in folders if f.name in names for p in f.rglob("*") if p.is_file())

    assert size(("unitree_go1", "unitree_g1")) <= 8_000_000, "Go1 and G1 take more than 8 MB"
    assert size(("franka_panda", "allegro_hand")) <= 6_000_000, "the Panda and the Allegro hand take more than 6 MB"


def _mjcf_hinges_and_bodies(path: Path) -> tuple[list[tuple[str, float, float]], int]:
    """(name, lower, upper) of every hinge in document order and the number of bodies, read with ElementTree."""
    root = ET.parse(path).getroot()
    hinges = [
        (j.get("name"), *map(float, j.get("range").split()))
        for j in root.iter("joint")
        if j.get("type", "hinge") == "hinge" and j.get("name")
    ]
    return hinges, len(list(root.find("worldbody").iter("body")))


@pytest.mark.parametrize(("robot", "bodies", "dofs"), [(GO1, 13, 18), (G1, 30, 35)], ids=["go1", "g1"])
def test_joints_dofs_and_actuation_match_the_mjcf(robot: RobotModel, bodies: int, dofs: int) -> None:
    hinges, body_count = _mjcf_hinges_and_bodies(robot.mjcf)
    assert body_count == bodies and len(hinges) == dofs - 6
    assert robot.joints == tuple(h[0] for h in hinges)
    builder = newton.ModelBuilder()
    dof_index = robot.add_to(builder)
    assert (builder.body_count, builder.joint_dof_count) == (bodies, dofs)
    assert dof_index == list(range(6, dofs))
    np.testing.assert_allclose(builder.joint_limit_lower[6:], [h[1] for h in hinges], rtol=1e-6)
    np.testing.assert_allclose(builder.joint_limit_upper[6:], [h[2] for h in hinges], rtol=1e-6)
    np.testing.assert_allclose(builder.joint_target_ke[6:], robot.stiffness, rtol=1e-6)
    np.testing.assert_allclose(builder.joint_armature[6:], robot.armature, rtol=1e-6)
    np.testing.assert_allclose(builder.joint_effort_limit[6:], robot.effort_limit, rtol=1e-6)
    np.testing.assert_allclose(builder.joint_target_q[7:], robot.standing_pose, rtol=1e-6)
    assert all(lo <= q <= hi for (_, lo, hi), q in zip(hinges, robot.standing_pose, strict=True))


def test_actuation_constants_are_mjlabs() -> None:
    """A few gains recomputed by hand from mjlab's formulas: ke = J omega^2, kd = 4 J omega (10 Hz, damping ratio 2),
    J the reflected rotor inertia; action scale 0.25 effort / ke."""
    omega = 20 * math.pi
    go1 = dict(zip(GO1.joints, zip(GO1.stiffness, GO1.damping, GO1.action_scale, strict=True), strict=True))
    hip_j, knee_j = 0.000111842 * 36, 0.000111842 * 81
    np.testing.assert_allclose(
        go1["FR_hip_joint"][:3], [hip_j * omega**2, 4 * hip_j * omega, 0.25 * 23.7 / 15.895], rtol=1e-3
    )
    np.testing.assert_allclose(go1["RL_calf_joint"][:2], [knee_j * omega**2, 4 * knee_j * omega], rtol=1e-6)
    g1 = dict(zip(G1.joints, G1.armature, strict=True))
    # 7520-22 (hip roll, knee): rotor inertias (0.489, 0.109, 0.738) 1e-4, stages 4.5 and 5.
    assert g1["left_knee_joint"] == pytest.approx(0.489e-4 * 22.5**2 + 0.109e-4 * 25 + 0.738e-4, rel=1e-6)
    assert g1["right_ankle_pitch_joint"] == pytest.approx(2 * g1["left_elbow_joint"], rel=1e-6)
    assert dict(zip(G1.joints, G1.standing_pose, strict=True))["left_knee_joint"] == pytest.approx(0.669)


@wp.struct
class _BaseState:
    body_q: wp.array[wp.transform]
    bodies: wp.int32


@term("base height")
def _base_height(s: Any, w: int) -> float:
    return wp.transform_get_translation(s.body_q[w * s.bodies])[2]


def _standing_env(scene: type[UnitreeScene]) -> UnitreeScene:
    class Standing(scene):
        observations = (ObservationBlock("base_height", 1, _base_height, "base height", "m"),)
        rewards = (RewardTerm("base_height", _base_height),)

        def _setup_task(self) -> None:
            self.term_state = _BaseState()
            self.term_state.body_q, self.term_state.bodies = self.state_0.body_q, self.bodies_per_world

    return Standing(1, device="cpu", seed=0)


def _hold_default_targets(scene: type[UnitreeScene], seconds: float = 2.0) -> tuple[np.ndarray, np.ndarray, list]:
    """Base height [m] and tilt [deg] after every control step under zero actions, and the steps' end flags."""
    env = _standing_env(scene)
    heights, tilts, ends = [], [], []
    for _ in range(round(seconds / env.control_dt)):
        _, _, terminated, truncated, info = env.step(torch.zeros(1, env.action_dim))
        pose = wp.to_torch(env.state_0.body_q)[0].clone()  # the base, the world's first body
        assert torch.isfinite(wp.to_torch(env.state_0.joint_q)).all() and torch.isfinite(pose).all()
        x, y = float(pose[3]), float(pose[4])
        heights.append(float(pose[2]))
        tilts.append(math.degrees(math.acos(max(-1.0, min(1.0, 1 - 2 * (x * x + y * y))))))
        ends.append((bool(terminated[0]), bool(truncated[0]), bool(info["constraint_overflow"][0])))
    env.close()
    return np.array(heights), np.array(tilts), ends


def test_go1_stands_under_its_default_targets() -> None:
    """2 s at the standing pose's targets with mjlab's gains: base within 3 cm of the keyframe's 0.278 m, tilt
    under 10 degrees, no episode end (overflow, penetration, non-finite), all finite."""
    heights, tilts, ends = _hold_default_targets(Go1Scene)
    assert not any(any(e) for e in ends), ends
    assert np.abs(heights - GO1.standing_height).max() <= 0.03, heights
    assert tilts.max() < 10.0, tilts


def test_g1_under_its_default_targets() -> None:
    """2 s at the standing pose's targets with mjlab's gains: finite, no overflow, no penetration. Standing is
    expected to fail: with these gains the G1 is statically unstable at the ankles (two ankle drives of
    2 x 28.5 N m/rad against m g h of about 230 N m/rad) and tips over after about 1 s, as it does in MuJoCo with
    the same model and gains; holding it up is the policy's job."""
    heights, tilts, ends = _hold_default_targets(G1Scene)
    assert not any(any(e) for e in ends), ends
    stands = np.abs(heights - G1.standing_height).max() <= 0.03 and tilts.max() < 10.0
    assert np.abs(heights[:25] - G1.standing_height).max() <= 0.03 and tilts[:25].max() < 10.0  # the first 0.5 s
    if not stands:
        pytest.xfail(f"G1 tips over under its default targets (tilt {tilts.max():.0f} deg within 2 s)")


def test_the_panda_matches_its_mjcf_and_holds_its_home_pose_as_mujoco_does() -> None:
    """The Panda's driven joints are the MJCF's hinges and slides in document order (``xml.etree``), 11 bodies and 9
    DOFs; under its home targets with the MJCF's gains for 2 s (gravity sags joint 2 by 6.6 mrad against kp 4500)
    SolverSteel's joint angles equal MuJoCo's on the same file (its own actuators, keyframe ``home``) within 1e-4
    rad, finite."""
    import mujoco

    root = ET.parse(PANDA.path).getroot()
    joints = [j.get("name") for j in root.find("worldbody").iter("joint")]
    assert PANDA.joints == tuple(joints) and len(list(root.find("worldbody").iter("body"))) == 11
    builder = newton.ModelBuilder()
    dofs = PANDA.add_to(builder)
    model = builder.finalize(device="cpu")
    assert (model.body_count, model.joint_dof_count, dofs) == (11, 9, list(range(9)))
    solver = newton.solvers.SolverSteel(model, iterations=20, drive_mode="rows", enable_joint_limits=True)
    state_0, state_1, control = model.state(), model.state(), model.control()
    for _ in range(400):  # 2 s of 5 ms; the arm touches nothing
        solver.step(state_0, state_1, control, None, 0.005)
        state_0, state_1 = state_1, state_0
    q = state_0.joint_q.numpy()
    assert np.isfinite(q).all()

    mj_model = mujoco.MjModel.from_xml_path(str(PANDA.path))
    mj_data = mujoco.MjData(mj_model)
    mujoco.mj_resetDataKeyframe(mj_model, mj_data, mj_model.key("home").id)
    for _ in range(round(2.0 / mj_model.opt.timestep)):
        mujoco.mj_step(mj_model, mj_data)
    assert abs(mj_data.qpos[1] - 0.0066) < 0.001  # the sag the comparison is about
    np.testing.assert_allclose(q[:7], mj_data.qpos[:7], atol=1e-4)


def test_the_allegro_hand_matches_its_urdf_and_holds_its_pose() -> None:
    """The Allegro's driven joints are the URDF's revolute joints in document order with its limits (``xml.etree``),
    21 bodies and 16 DOFs, driven with Isaac Lab's gains; palm up under targets at mid-range for 2 s with gravity
    each finger settles within 0.05 rad of its target (stiffness 1 N m/rad against the finger's weight) and at rest,
    finite."""
    joints = [j for j in ET.parse(ALLEGRO.path).getroot().iter("joint") if j.get("type") == "revolute"]
    assert ALLEGRO.joints == tuple(j.get("name") for j in joints)
    limits = np.array([[float(j.find("limit").get(k)) for k in ("lower", "upper")] for j in joints])
    builder = newton.ModelBuilder()
    palm_up = wp.quat(math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0)
    dofs = ALLEGRO.add_to(builder, xform=wp.transform(wp.vec3(0.0, 0.0, 0.5), palm_up))
    targets = limits.mean(axis=1)
    for dof in dofs:
        builder.joint_target_q[dof] = float(targets[dof])
    model = builder.finalize(device="cpu")
    assert (model.body_count, model.joint_dof_count, dofs) == (21, 16, list(range(16)))
    np.testing.assert_allclose(model.joint_limit_lower.numpy(), limits[:, 0], rtol=1e-6)
    np.testing.assert_allclose(model.joint_limit_upper.numpy(), limits[:, 1], rtol=1e-6)
    np.testing.assert_allclose(model.joint_target_ke.numpy(), 1.0)
    np.testing.assert_allclose(model.joint_target_kd.numpy(), 0.1)
    np.testing.assert_allclose(model.joint_effort_limit.numpy(), 0.5)
    solver = newton.solvers.SolverSteel(model, iterations=20, drive_mode="rows", enable_joint_limits=True)
    state_0, state_1, control = model.state(), model.state(), model.control()
    for _ in range(240):  # 2 s at 1/120 s; the fingers touch nothing
        solver.step(state_0, state_1, control, None, 1.0 / 120.0)
        state_0, state_1 = state_1, state_0
    q, qd = state_0.joint_q.numpy(), state_0.joint_qd.numpy()
    assert np.isfinite(q).all() and np.abs(q - targets).max() < 0.05 and np.abs(qd).max() < 1e-3


def test_fitted_colliders_enclose_their_shapes_and_pick_the_tightest() -> None:
    """:func:`steel_envs.assets.colliders.enclosing_primitives` on shapes whose best enclosure is known: a box's
    corners give that box (volume ratio 1); a cylinder of radius 0.05 m and length 0.3 m gives one capsule of radius
    0.05 m enclosing every vertex; a truncated cone's enclosure holds its solid."""
    pytest.importorskip("scipy")
    from steel_envs.assets.colliders import Box, Capsule, enclosing_primitives

    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.02, 0.02) for z in (0.0, 0.3)])
    (box,), ratio = enclosing_primitives(corners)
    assert isinstance(box, Box) and ratio == pytest.approx(1.0)
    np.testing.assert_allclose(box.half, [0.1, 0.02, 0.15], atol=1e-12)

    angles = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
    ring = np.stack([0.05 * np.cos(angles), 0.05 * np.sin(angles)], 1)

    tube = np.concatenate([np.insert(ring, 2, h, axis=1) for h in (0.0, 0.3)])
    (capsule,), _ = enclosing_primitives(tube)
    assert isinstance(capsule, Capsule) and capsule.radius == pytest.approx(0.05, rel=1e-3)
    assert capsule.distance(tube).max() <= capsule.radius + 1e-9

    # A truncated cone (radius 0.08 m to 0.02 m over 0.3 m): whichever enclosure wins, it holds every vertex and
    # every point of the hull (sampled), and it is no larger than the bounding box.
    cone = np.concatenate([np.insert(r * ring / 0.05, 2, z, axis=1) for r, z in ((0.08, 0.0), (0.02, 0.3))])
    prims, ratio = enclosing_primitives(cone)
    rng = np.random.default_rng(0)
    t = rng.uniform(0.0, 1.0, (4000, 1))
    spoke = ring[rng.integers(0, len(ring), 4000)] / 0.05 * rng.uniform(0.0, 1.0, (4000, 1))
    inner = np.concatenate([spoke * (0.08 + (0.02 - 0.08) * t), 0.3 * t], 1)  # points of the cone's solid
    for points in (cone, inner):
        outside = np.min(
            [p.distance(points) - p.radius if isinstance(p, Capsule) else _box_excess(p, points) for p in prims], axis=0
        )
        assert outside.max() <= 1e-9, prims
    assert sum(p.volume for p in prims) <= np.prod(cone.max(0) - cone.min(0)) + 1e-12


def _box_excess(box, points: np.ndarray) -> np.ndarray:
    """How far ``points`` lie outside ``box`` along its worst axis [m] (<= 0 inside)."""
    return (np.abs(points - box.center) - box.half).max(axis=1)
