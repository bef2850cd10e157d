"""The observation pipeline: the task's observation vector (or camera images), noise, clip, and ``final_obs``."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import gymnasium as gym
import numpy as np
import torch
import warp as wp

from .. import kernels
from ..torch_views import to_torch

if TYPE_CHECKING:
    from ..core import NewtonVectorEnv
    from .terms import TermGroups

__all__ = ["ObservationPipeline"]


class ObservationPipeline:
    """Completes every world's observation after the task's blocks (``TermGroups.observe``) wrote it: Gaussian noise
    (``obs_noise_std``: redrawn for the worlds named, repeated for the others, so recomputing after a partial reset
    leaves the other worlds' observations bitwise as they were), then non-finite entries to 0 and the clip to
    ``obs_clip``; with ``obs_mode="rgb"`` / ``"depth"`` the camera images of every world instead.

    Attributes:
        obs: (num_envs, observation_dim) float32, the task's observations (also computed in pixel modes, where the
            tasks' terms may read them).
        final_obs: the same, copied before an autoreset (SAME_STEP).
        obs_t, final_obs_t: the torch views the env returns: of ``obs`` / ``final_obs``, or of the images.
        critic_t: the critic group, (num_envs, observation_dim + privileged size) float32: the state observations
            before noise, then the task's privileged blocks (a view of ``obs`` itself when there is neither, so in
            pixel modes the critic sees the state vector).
        single_observation_space: the Gymnasium space of one world.

    Raises:
        ValueError: (construction) On an ``obs_noise_std`` of the wrong length, or noise with pixel observations.
    """

    def __init__(self, env: NewtonVectorEnv, obs_mode: str) -> None:
        self.env = weakref.proxy(env)  # no env <-> component cycle: the env goes with its last reference
        self.obs_mode = obs_mode
        n, obs_dim, config = env.num_envs, int(env.observation_dim), env.config
        bound = float(config.obs_clip)
        noise = np.atleast_1d(np.asarray(config.obs_noise_std, np.float32))
        if noise.shape[0] == 1:
            noise = np.full(obs_dim, noise[0], np.float32)
        elif noise.shape[0] != obs_dim:
            raise ValueError(
                f"obs_noise_std: expected one value or {obs_dim} (the observation size), got {noise.shape[0]}"
            )
        self._history = self._history_rows(env.observation_blocks())
        if self._history is not None:  # an older frame keeps the noise it was observed with
            for start, size, frames in self._history.numpy():
                noise[start : start + size * (frames - 1)] = 0.0
        self._noise_std = wp.array(np.ascontiguousarray(noise), dtype=wp.float32) if noise.any() else None
        # The last noise drawn per world, added again when observations are recomputed without a redraw.
        self._noise = wp.zeros((n, obs_dim), dtype=wp.float32) if self._noise_std is not None else None
        self.single_observation_space = gym.spaces.Box(-bound, bound, (obs_dim,), np.float32)
        self.camera = None
        if obs_mode != "state":
            self._make_camera(bound)
        self.obs = wp.zeros((n, obs_dim), dtype=wp.float32)
        self.final_obs = wp.zeros((n, obs_dim), dtype=wp.float32)
        self.obs_t, self.final_obs_t = to_torch(self.obs), to_torch(self.final_obs)
        if self.camera is not None:
            self.obs_t, self.final_obs_t = self._pixel_view(self._pixels), self._pixel_view(self._final_pixels)
        self._make_critic_group(n, obs_dim, sum(block.width for block in env.privileged_observation_blocks()))

    @staticmethod
    def _history_rows(blocks: tuple) -> wp.array | None:
        """(first entry, size, frames) of each block with history, (B, 3) int32; None without any."""
        rows, start = [], 0
        for block in blocks:
            if block.history > 1:
                rows.append((start, block.size, block.history))
            start += block.width
        return wp.array(np.array(rows, np.int32), dtype=wp.int32) if rows else None

    def observe(self, terms: TermGroups, redraw: wp.array | None, no_world: wp.array, started: wp.array | None) -> None:
        """Every world's observations: in a step (``redraw`` None) the blocks' history moves one frame on, then the
        task's blocks (``terms``), then :meth:`process`."""
        if redraw is None and self._history is not None:
            self.env.launch_per_world(kernels.shift_observation_history, inputs=[self._history], outputs=[self.obs])
        terms.observe(self.obs)
        if self.privileged is not None:
            terms.observe_privileged(self.privileged)
        self.process(redraw, no_world, started)

    def _make_critic_group(self, n: int, obs_dim: int, privileged_dim: int) -> None:
        """The critic group: the policy's state observations without noise, then the task's privileged blocks; the
        policy's own buffer (no copy) when it has neither noise nor privileged blocks."""
        self.privileged = wp.zeros((n, privileged_dim), dtype=wp.float32) if privileged_dim else None
        self.critic = None
        if privileged_dim or self._noise is not None:
            self.critic = wp.zeros((n, obs_dim + privileged_dim), dtype=wp.float32)
        if self.critic is not None:
            self.critic_t = to_torch(self.critic)
        else:  # the state vector: the policy's own view, or (pixel modes) a view of the state buffer
            self.critic_t = to_torch(self.obs) if self.camera is not None else self.obs_t

    def _make_camera(self, bound: float) -> None:
        if self._noise is not None:
            raise ValueError(
                f"obs_noise_std: applies to state observations; with obs_mode={self.obs_mode!r} pass 0 (add noise to "
                "the images in the learner's pipeline)"
            )
        from ..rendering import Renderer

        env = self.env
        width, height = env.render_size
        self.camera = Renderer(env, width, height, num_worlds=env.num_envs)
        sensor = self.camera.sensor
        alloc = sensor.allocate_image_color if self.obs_mode == "rgb" else sensor.allocate_image_depth
        self._pixels = alloc(env.num_envs, width, height)
        self._final_pixels = alloc(env.num_envs, width, height)
        if self.obs_mode == "rgb":
            self.single_observation_space = gym.spaces.Box(0, 255, (height, width, 3), np.uint8)
        else:
            self.single_observation_space = gym.spaces.Box(-1.0, bound, (height, width), np.float32)

    def _pixel_view(self, image: wp.array) -> torch.Tensor:
        """A torch view of a sensor image: (N, H, W, 3) uint8 for RGB, (N, H, W) float32 for depth."""
        t = to_torch(image)
        if self.obs_mode == "depth":
            return t
        n, h, w = image.shape
        return t.view(torch.uint8).reshape(n, h, w, 4)[..., :3]

    def process(self, redraw: wp.array | None, no_world: wp.array, started: wp.array | None = None) -> None:
        """After the task wrote ``obs``: noise, drawn anew for the worlds in ``redraw`` ((num_envs + 1,) bool; None:
        every world) while the others get their last draw again (``no_world``: an all-False mask), the clip, the
        history of the worlds in ``started`` (bool mask; None: none) filled with their first frame, and the camera
        images."""
        env, out = self.env, self.obs
        if self.critic is not None:
            privileged = self.privileged if self.privileged is not None else out
            wp.launch(
                kernels.assemble_critic_observations,
                self.critic.shape,
                inputs=[out, privileged],
                outputs=[self.critic],
                device=env.wp_device,
            )
            wp.launch(
                kernels.sanitize_observations,
                self.critic.shape,
                inputs=[float(env.config.obs_clip)],
                outputs=[self.critic],
                device=env.wp_device,
            )
        if self._noise is not None:
            env.launch_per_world(
                kernels.add_observation_noise,
                inputs=[self._noise_std, no_world if redraw is None else redraw, redraw is None],
                outputs=[env.noise_rng_state, self._noise, out],
            )
        wp.launch(
            kernels.sanitize_observations,
            out.shape,
            inputs=[float(env.config.obs_clip)],
            outputs=[out],
            device=env.wp_device,
        )
        if self._history is not None and started is not None:
            for buffer in (out, self.critic) if self.critic is not None else (out,):
                env.launch_per_world(
                    kernels.fill_observation_history, inputs=[started, self._history], outputs=[buffer]
                )
        if self.camera is not None:
            if self.obs_mode == "rgb":
                self.camera.draw(color=self._pixels)
            else:
                self.camera.draw(depth=self._pixels)

    def save_final(self) -> None:
        """Copy this step's observations (and images) to ``final_obs`` before an autoreset overwrites them."""
        wp.copy(self.final_obs, self.obs)
        if self.camera is not None:
            wp.copy(self._final_pixels, self._pixels)
