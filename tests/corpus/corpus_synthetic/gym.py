"""A stand-in for gym (installed on neither side) with the one environment the corpus uses:
CartPole-v1, the cart-and-pole balancing task of Barto, Sutton and Anderson (1983), with gym's
observation (4 float32s), actions (0 / 1), reward (1 per step) and termination (pole beyond 12
degrees or cart beyond 2.4) and its own numpy random generator. The one difference on purpose:
spec.reward_threshold is 20, not 475, so that a program that trains until it is solved stops
after some tens of episodes (a random policy already averages about 22)."""
import math

import numpy as np


class _Spec:
    def __init__(self, name, reward_threshold, max_episode_steps):
        self.id, self.reward_threshold, self.max_episode_steps = name, reward_threshold, max_episode_steps


class CartPoleEnv:
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold = 12 * 2 * math.pi / 360
    x_threshold = 2.4

    def __init__(self):
        self.spec = _Spec("CartPole-v1", 20.0, 500)
        self._rng = np.random.default_rng()
        self._state = None
        self._steps = 0

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state = self._rng.uniform(-0.05, 0.05, size=4)
        self._steps = 0
        return self._state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self._state
        force = self.force_mag if int(action) == 1 else -self.force_mag
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self._state = np.array([x, x_dot, theta, theta_dot])
        self._steps += 1
        terminated = bool(abs(x) > self.x_threshold or abs(theta) > self.theta_threshold)
        truncated = self._steps >= self.spec.max_episode_steps
        return self._state.astype(np.float32), 1.0, terminated, truncated, {}

    def render(self):
        pass

    def close(self):
        pass


def make(name, **kwargs):
    if name not in ("CartPole-v0", "CartPole-v1"):
        raise ValueError(f"corpus gym stand-in: only CartPole, not {name}")
    return CartPoleEnv()
