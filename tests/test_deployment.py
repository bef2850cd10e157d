"""The deployment contract of an exported policy: written by ``steel-envs export``, read back by
``read_contract`` into the same object, in mjlab's keys too, and true of the env: its action scale and offset give
the PD targets the env sets, its observation blocks tile the vector, its joints are the MJCF's; a file without it, or
made for another version or joint order, is refused in one line."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from conftest import CARTPOLE, make

pytest.importorskip("rsl_rl")

from steel_envs.training.policy import export
from steel_envs.training.train import train
from steel_envs.training.train_args import parse_args

from steel_envs.assets import GO1
from steel_envs.deployment import PolicyContract, contract_of, read_contract
from steel_envs.policies import load_policy_callable, reference_checkpoint

GO1_ID = "steel_envs/Go1Velocity-v0"
TINY = ("--num-envs", "4", "--num-steps-per-env", "8", "--no-progress", "--max-iterations", "1")


def test_a_go1_export_carries_the_contract_its_env_applies(tmp_path) -> None:
    run = train(parse_args([GO1_ID, *TINY, "--log-dir", str(tmp_path)]))
    onnx_file = export(run.checkpoint, out=str(tmp_path / "policy.onnx"))
    script_file = export(run.checkpoint, format="torchscript", out=str(tmp_path / "policy.pt"))
    env = make(GO1_ID, 2, randomize=False)
    expected = contract_of(make(GO1_ID, 1), normalizer=True)  # the run's env: randomized, as trained
    for path in (onnx_file, script_file):
        assert read_contract(path) == expected
    c = expected
    assert (c.env_id, c.version, c.control_dt, c.obs_dim, c.action_dim) == (GO1_ID, 0, 0.02, 48, 12)
    assert not c.action_clipped and c.normalizer

    # The joints are the MJCF's hinges in document order; the observation blocks tile the vector in layout order.
    hinges = [j.get("name") for j in ET.parse(GO1.mjcf).getroot().iter("joint") if j.get("type") != "free"]
    assert c.actuation.joint_names == c.actuation.observation_joint_names == tuple(hinges)
    layout = env.observation_layout
    assert [o.name for o in c.observations] == list(layout)
    assert [o.size * o.history_length for o in c.observations] == [s.stop - s.start for s in layout.values()]
    assert [x.name for x in c.commands] == ["lin_vel_x", "lin_vel_y", "ang_vel_z"]

    # The env's PD target of an action is offset + scale * action, joint by joint.
    env.reset(seed=0)
    action = torch.linspace(-0.9, 0.9, 12).repeat(2, 1)
    env.step(action)
    targets = env.control.joint_target_q.numpy().reshape(2, -1)[0, 7:]
    a = c.actuation
    np.testing.assert_allclose(
        targets, np.add(a.action_offset, np.multiply(a.action_scale, action[0].numpy())), rtol=1e-6, atol=1e-6
    )

    # mjlab's keys say the same, to their 3 decimals.
    meta = {p.key: p.value for p in onnx.load(onnx_file).metadata_props}
    assert meta["joint_names"].split(",") == hinges and meta["command_names"] == "twist"
    for key, values in (("joint_stiffness", a.stiffness), ("action_scale", a.action_scale)):
        np.testing.assert_allclose([float(x) for x in meta[key].split(",")], values, atol=5e-4)
    assert meta["observation_names"].split(",") == list(layout)


def test_clipped_exports_clip_and_mismatched_or_bare_files_are_refused(tmp_path) -> None:
    checkpoint = reference_checkpoint(CARTPOLE)
    plain = export(checkpoint, out=str(tmp_path / "plain.onnx"))
    clipped = export(checkpoint, out=str(tmp_path / "clipped.onnx"), clip_actions=True)
    assert read_contract(clipped).action_clipped and not read_contract(plain).action_clipped
    obs = np.random.default_rng(0).normal(0.0, 30.0, (256, 4)).astype(np.float32)

    def run(path: str) -> np.ndarray:
        return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"obs": obs})[0]

    raw = run(plain)
    assert np.abs(raw).max() > 1.0  # the network's own output leaves the action box
    np.testing.assert_array_equal(run(clipped), np.clip(raw, -1.0, 1.0))

    env = make(CARTPOLE, 1)
    model = onnx.load(plain)
    metadata = {p.key: p.value for p in model.metadata_props}
    contract = PolicyContract.from_json(metadata["steel_envs.contract"])
    for name, changed, message in (
        ("version", dataclasses.replace(contract, version=1), "is for version 1 of steel_envs/CartpoleBalance"),
        ("bare", None, "carries no deployment contract"),
    ):
        del model.metadata_props[:]
        if changed is not None:
            for key, value in {**metadata, "steel_envs.contract": changed.to_json()}.items():
                model.metadata_props.add(key=key, value=value)
        path = str(tmp_path / f"{name}.onnx")
        onnx.save(model, path)
        with pytest.raises(ValueError) as err:
            if changed is None:
                read_contract(path)
            else:
                load_policy_callable(path, env, 0)
        assert message in str(err.value) and "\n" not in str(err.value)


def test_contracts_of_another_observation_or_malformed_are_refused_in_one_line(tmp_path) -> None:
    """A policy of another ``obs_variant`` (same sizes: the imu variant's 48 values) is refused by its blocks' names;
    a file whose contract is not a contract object, or is not ONNX at all, gives one line naming the file."""
    imu = contract_of(make(GO1_ID, 1, obs_variant="imu"))
    with pytest.raises(ValueError, match=r"^policy: x.onnx observes \['imu_ang_vel', .* \(another obs_variant\?\)$"):
        imu.check_fits(make(GO1_ID, 1), "x.onnx")
    model = onnx.load(export(reference_checkpoint(CARTPOLE), out=str(tmp_path / "plain.onnx")))
    for name, text in (("list", "[]"), ("nan_dt", imu.to_json().replace('"control_dt": 0.02', '"control_dt": "nan"'))):
        del model.metadata_props[:]
        model.metadata_props.add(key="steel_envs.contract", value=text)
        path = str(tmp_path / f"{name}.onnx")
        onnx.save(model, path)
        with pytest.raises(ValueError, match=rf"^policy: {path}: not a steel-envs policy contract") as err:
            read_contract(path)
        assert "\n" not in str(err.value)
    (tmp_path / "garbage.onnx").write_bytes(b"not protobuf")
    with pytest.raises(ValueError, match=r"garbage.onnx is not a readable ONNX model"):
        read_contract(str(tmp_path / "garbage.onnx"))
