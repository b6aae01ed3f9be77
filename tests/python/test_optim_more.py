"""More optimizers against numpy references of PyTorch's algorithms, bit for bit in float64 and float32.

The references follow the algorithms in PyTorch's documentation, with its float order: Python-double
scalars rounded to the array's dtype where they meet it, addcmul as t + (v * a) * b, addcdiv as
t + (v * a) / b, lerp as t + w * (end - t) (see Note [float order] in dyn/optim/__init__.py).
Also: Optimizer's param_groups / state / state_dict API, LBFGS on a quadratic and Rosenbrock, and
dyn.optim.lr_scheduler: each scheduler's lr sequence against the closed forms in PyTorch's documentation.
"""
import math
import unittest
import warnings
from bisect import bisect_right

import numpy as np

import dyn

DTYPES = [(dyn.float64, np.float64), (dyn.float32, np.float32)]
W0 = [1.0, -2.0, 0.5, 3.0, -0.25]


def grads(n, seed=0):
    r = np.random.default_rng(seed)
    return [r.standard_normal(len(W0)) for _ in range(n)]


def param(values, dtype=dyn.float64):
    return dyn.nn.Parameter(dyn.tensor(values, dtype=dtype))


def run(make_opt, gs, dtype, w0=W0):
    """(parameter values, optimizer, parameter) after one step per gradient in gs."""
    p = param(w0, dtype)
    opt = make_opt([p])
    for g in gs:
        p.grad = dyn.tensor(g, dtype=dtype)
        opt.step()
    return p.detach().numpy(), opt, p


def train_scheduled(p, opt, scheduler, compiled):
    """p's values after four steps of opt on (p * p).sum(), the scheduler stepped after each; the step
    compiled or eager."""
    def step():
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()

    fn = dyn.compile(step) if compiled else step
    for _ in range(4):
        fn()
        scheduler.step()
    return p.detach().numpy()


# ---- numpy references (dt: the numpy dtype; scalars are Python doubles until they meet an array) ----

def addcmul(t, a, b, v, dt):
    return t + (dt(v) * a) * b


def addcdiv(t, a, b, v, dt):
    return t + (dt(v) * a) / b


def lerp(t, end, w, dt):
    if abs(w) < 0.5:
        return t + dt(w) * (end - t)
    return end - (end - t) * (dt(1) - dt(w))


def prepare(g, w, wd, maximize, dt):
    g = np.asarray(g).astype(dt)
    g = -g if maximize else g
    return g + dt(wd) * w if wd else g


def sgd_ref(gs, dt, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    w, buf = np.array(W0, dtype=dt), None
    for g in gs:
        d = prepare(g, w, weight_decay, maximize, dt)
        if momentum:
            buf = d.copy() if buf is None else buf * dt(momentum) + dt(1 - dampening) * d
            d = d + dt(momentum) * buf if nesterov else buf
        w = w + dt(-lr) * d
    return w, {"momentum_buffer": buf} if momentum else {}


def adam_ref(gs, dt, lr, betas, eps, weight_decay=0.0, amsgrad=False, maximize=False, decoupled=False):
    b1, b2 = betas
    w = np.array(W0, dtype=dt)
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, start=1):
        if decoupled:
            w = w * dt(1 - lr * weight_decay)
            g = prepare(g, w, 0.0, maximize, dt)
        else:
            g = prepare(g, w, weight_decay, maximize, dt)
        m = lerp(m, g, 1 - b1, dt)
        v = addcmul(v * dt(b2), g, g, 1 - b2, dt)
        step_size = lr / (1 - b1 ** t)
        bc2_sqrt = (1 - b2 ** t) ** 0.5
        if amsgrad:
            vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / dt(bc2_sqrt) + dt(eps)
        w = addcdiv(w, m, denom, -step_size, dt)
    return w, {"exp_avg": m, "exp_avg_sq": v, "max_exp_avg_sq": vmax}


def adagrad_ref(gs, dt, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                maximize=False):
    w = np.array(W0, dtype=dt)
    s = np.full_like(w, initial_accumulator_value)
    for t, g in enumerate(gs, start=1):
        g = prepare(g, w, weight_decay, maximize, dt)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = addcmul(s, g, g, 1, dt)
        w = addcdiv(w, g, np.sqrt(s) + dt(eps), -clr, dt)
    return w, {"sum": s}


def rmsprop_ref(gs, dt, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False):
    w = np.array(W0, dtype=dt)
    sq, buf, gavg = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = prepare(g, w, weight_decay, maximize, dt)
        sq = addcmul(sq * dt(alpha), g, g, 1 - alpha, dt)
        if centered:
            gavg = lerp(gavg, g, 1 - alpha, dt)
            avg = np.sqrt(addcmul(sq, gavg, gavg, -1, dt))
        else:
            avg = np.sqrt(sq)
        avg = avg + dt(eps)
        if momentum > 0:
            buf = addcdiv(buf * dt(momentum), g, avg, 1, dt)
            w = w + dt(-lr) * buf
        else:
            w = addcdiv(w, g, avg, -lr, dt)
    return w, {"square_avg": sq, "momentum_buffer": buf, "grad_avg": gavg}


def adadelta_ref(gs, dt, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    w = np.array(W0, dtype=dt)
    sq, acc = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        g = prepare(g, w, weight_decay, maximize, dt)
        sq = addcmul(sq * dt(rho), g, g, 1 - rho, dt)
        std = np.sqrt(sq + dt(eps))
        delta = np.sqrt(acc + dt(eps)) / std * g
        acc = addcmul(acc * dt(rho), delta, delta, 1 - rho, dt)
        w = w + dt(-lr) * delta
    return w, {"square_avg": sq, "acc_delta": acc}


# (name, optimizer class, reference, keyword arguments for both): each checked bit for bit
CASES = [
    ("sgd", dyn.optim.SGD, sgd_ref, dict(lr=0.1)),
    ("sgd momentum dampening", dyn.optim.SGD, sgd_ref, dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("sgd nesterov maximize", dyn.optim.SGD, sgd_ref, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("adam", dyn.optim.Adam, adam_ref, dict(lr=0.01, betas=(0.9, 0.99), eps=1e-8)),
    ("adam l2 amsgrad", dyn.optim.Adam, adam_ref, dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1,
                                                       amsgrad=True)),
    ("adam maximize small beta1", dyn.optim.Adam, adam_ref, dict(lr=0.02, betas=(0.3, 0.9), eps=1e-8, maximize=True)),
    ("adagrad", dyn.optim.Adagrad, adagrad_ref, dict(lr=0.1)),
    ("adagrad decay init wd", dyn.optim.Adagrad, adagrad_ref, dict(lr=0.1, lr_decay=0.05, weight_decay=0.02,
                                                                   initial_accumulator_value=0.3, eps=1e-6)),
    ("rmsprop", dyn.optim.RMSprop, rmsprop_ref, dict(lr=0.01)),
    ("rmsprop centered momentum wd", dyn.optim.RMSprop, rmsprop_ref, dict(lr=0.01, alpha=0.9, momentum=0.5,
                                                                           centered=True, weight_decay=0.1)),
    ("rmsprop centered maximize", dyn.optim.RMSprop, rmsprop_ref, dict(lr=0.02, alpha=0.4, centered=True,
                                                                        maximize=True)),
    ("adadelta", dyn.optim.Adadelta, adadelta_ref, dict()),
    ("adadelta lr wd", dyn.optim.Adadelta, adadelta_ref, dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
]


def adamw_case(gs, dt, **kw):
    return adam_ref(gs, dt, decoupled=True, **kw)


CASES.append(("adamw", dyn.optim.AdamW, adamw_case, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                                                         weight_decay=0.1)))
CASES.append(("adamw amsgrad", dyn.optim.AdamW, adamw_case, dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                                                                 weight_decay=0.1, amsgrad=True)))


class TestUpdateRules(unittest.TestCase):
    def test_bitwise_against_reference(self):
        gs = grads(6)
        for name, cls, ref, kw in CASES:
            for dyn_dtype, np_dtype in DTYPES:
                with self.subTest(name, dtype=np_dtype.__name__):
                    got, opt, p = run(lambda ps: cls(ps, **kw), gs, dyn_dtype)
                    want, want_state = ref(gs, np_dtype, **kw)
                    self.assertEqual(got.dtype, want.dtype)
                    np.testing.assert_array_equal(got, want)
                    # the state too: adding a small update to a parameter can hide its last bits
                    keys = set(opt.state[p]) - {"step"}
                    self.assertLessEqual(keys, set(want_state))
                    for k in keys:
                        np.testing.assert_array_equal(opt.state[p][k].numpy(), want_state[k], err_msg=k)

    def test_rounding_order_is_visible(self):
        # The float32 checks above can tell orders apart: Adam's moment written as
        # m * beta1 + (1 - beta1) * g instead of PyTorch's lerp differs in the last bits.
        gs = grads(6)
        got, _, _ = run(lambda ps: dyn.optim.Adam(ps, lr=0.01), gs, dyn.float32)
        w = np.array(W0, dtype=np.float32)
        m, v = np.zeros_like(w), np.zeros_like(w)
        for t, g in enumerate(gs, start=1):
            g = g.astype(np.float32)
            m = m * np.float32(0.9) + np.float32(0.1) * g
            v = addcmul(v * np.float32(0.999), g, g, 1 - 0.999, np.float32)
            denom = np.sqrt(v) / np.float32((1 - 0.999 ** t) ** 0.5) + np.float32(1e-8)
            w = addcdiv(w, m, denom, -0.01 / (1 - 0.9 ** t), np.float32)
        self.assertFalse(np.array_equal(got, w), "the reference order should matter in float32")
        np.testing.assert_allclose(got, w, rtol=1e-5)
        # and the state's last bits: addcmul's (v * g) * g against v * (g * g)
        g = gs[0].astype(np.float32)
        self.assertFalse(np.array_equal((np.float32(0.001) * g) * g, np.float32(0.001) * (g * g)))

    def test_step_counts(self):
        for cls in (dyn.optim.Adam, dyn.optim.Adagrad, dyn.optim.RMSprop, dyn.optim.Adadelta):
            with self.subTest(cls.__name__):
                _, opt, p = run(lambda ps: cls(ps), grads(3), dyn.float32)
                self.assertEqual(opt.state[p]["step"].item(), 3.0)

    def test_defaults_are_pytorchs(self):
        p = param([1.0])
        expect = {
            dyn.optim.SGD: dict(lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False),
            dyn.optim.Adam: dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                                 maximize=False),
            dyn.optim.AdamW: dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False),
            dyn.optim.Adadelta: dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False),
            dyn.optim.Adagrad: dict(lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10),
            dyn.optim.RMSprop: dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False),
            dyn.optim.LBFGS: dict(lr=1, max_iter=20, max_eval=25, tolerance_grad=1e-7, tolerance_change=1e-9,
                                  history_size=100, line_search_fn=None),
        }
        for cls, want in expect.items():
            with self.subTest(cls.__name__):
                group = cls([p]).param_groups[0]
                self.assertEqual({k: group[k] for k in want}, want)

    def test_state_keys_are_pytorchs(self):
        p = param([1.0, 2.0])
        self.assertEqual(set(dyn.optim.Adam([p], amsgrad=True).state[p]),
                         {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"})
        self.assertEqual(set(dyn.optim.Adagrad([p]).state[p]), {"step", "sum"})
        self.assertEqual(set(dyn.optim.RMSprop([p], momentum=0.1, centered=True).state[p]),
                         {"step", "square_avg", "momentum_buffer", "grad_avg"})
        self.assertEqual(set(dyn.optim.Adadelta([p]).state[p]), {"step", "square_avg", "acc_delta"})
        np.testing.assert_array_equal(dyn.optim.Adagrad([p], initial_accumulator_value=0.5).state[p]["sum"].numpy(),
                                      [0.5, 0.5])

    def test_bad_hyperparameters(self):
        p = param([1.0])
        bad = [(dyn.optim.Adam, dict(betas=(1.0, 0.9))), (dyn.optim.Adam, dict(eps=-1)),
               (dyn.optim.Adagrad, dict(lr_decay=-1)), (dyn.optim.Adagrad, dict(initial_accumulator_value=-1)),
               (dyn.optim.RMSprop, dict(alpha=-0.1)), (dyn.optim.RMSprop, dict(momentum=-1)),
               (dyn.optim.Adadelta, dict(rho=1.5)), (dyn.optim.SGD, dict(nesterov=True)),
               (dyn.optim.LBFGS, dict(line_search_fn="backtracking"))]
        for cls, kw in bad:
            with self.subTest(cls.__name__, **{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(ValueError):
                    cls([p], **kw)
        with self.assertRaisesRegex(ValueError, "Invalid beta parameter at index 0"):
            dyn.optim.AdamW([p], betas=(-0.1, 0.9))


class TestOptimizerAPI(unittest.TestCase):
    def test_param_groups_defaults_and_overrides(self):
        a, b = param([1.0]), param([2.0])
        opt = dyn.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
        self.assertEqual([g["lr"] for g in opt.param_groups], [0.1, 0.5])
        self.assertEqual([g["momentum"] for g in opt.param_groups], [0.9, 0.9])
        self.assertIs(opt.param_groups[1]["params"][0], b)
        a.grad, b.grad = dyn.tensor([1.0], dtype=dyn.float64), dyn.tensor([1.0], dtype=dyn.float64)
        opt.step()
        self.assertEqual((a.item(), b.item()), (1.0 - 0.1, 2.0 - 0.5))

    def test_add_param_group(self):
        a, b = param([1.0]), param([2.0])
        opt = dyn.optim.Adam([a], lr=0.1)
        opt.add_param_group({"params": [b], "lr": 0.01})
        self.assertEqual(len(opt.param_groups), 2)
        self.assertEqual(opt.param_groups[1]["betas"], (0.9, 0.999))
        self.assertIn(b, opt.state)
        with self.assertRaisesRegex(ValueError, "more than one parameter group"):
            opt.add_param_group({"params": [a]})
        with self.assertRaises(TypeError):
            opt.add_param_group({"params": {param([3.0])}})
        with self.assertRaisesRegex(ValueError, "non-leaf"):
            opt.add_param_group({"params": [a * 2]})

    def test_params_must_be_an_iterable_of_tensors(self):
        with self.assertRaises(TypeError):
            dyn.optim.SGD(param([1.0]), lr=0.1)
        with self.assertRaises(TypeError):
            dyn.optim.SGD([1.0], lr=0.1)
        with self.assertRaises(ValueError):
            dyn.optim.SGD([], lr=0.1)
        gen = (p for p in [param([1.0])])
        self.assertEqual(len(dyn.optim.SGD(gen, lr=0.1).param_groups[0]["params"]), 1)

    def test_named_parameters(self):
        model = dyn.nn.Linear(2, 3)
        opt = dyn.optim.Adam(model.named_parameters(), lr=0.1)
        group = opt.param_groups[0]
        self.assertEqual(group["param_names"], ["weight", "bias"])
        self.assertIs(group["params"][0], model.weight)
        self.assertEqual(opt.state_dict()["param_groups"][0]["param_names"], ["weight", "bias"])

    def test_step_closure_returns_loss_with_grad_enabled(self):
        p = param([3.0])
        opt = dyn.optim.SGD([p], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with dyn.no_grad():
            loss = opt.step(closure)
        self.assertEqual(loss.item(), 9.0)
        self.assertAlmostEqual(p.item(), 3.0 - 0.1 * 6.0, places=15)
        self.assertIsNone(opt.step())

    def test_zero_grad(self):
        p = param([1.0])
        opt = dyn.optim.Adagrad([p])
        p.grad = dyn.tensor([3.0], dtype=dyn.float64)
        opt.zero_grad(set_to_none=False)
        self.assertEqual(p.grad.item(), 0.0)
        opt.zero_grad()
        self.assertIsNone(p.grad)

    def test_state_is_keyed_by_parameter(self):
        p, q = param([1.0]), param([2.0])
        opt = dyn.optim.SGD([p, q], lr=0.1, momentum=0.9)
        p.grad = dyn.tensor([1.0], dtype=dyn.float64)
        opt.step()
        self.assertEqual(opt.state[p]["momentum_buffer"].item(), 1.0)
        self.assertEqual(opt.state[q]["momentum_buffer"].item(), 0.0)
        self.assertEqual(dyn.optim.SGD([p], lr=0.1).state[p], {})  # a defaultdict, as PyTorch's

    def test_momentum_switched_on_later(self):
        # OneCycleLR sets SGD's momentum on a group made without one: state appears at the next step.
        p = param([1.0])
        opt = dyn.optim.SGD([p], lr=0.1)
        opt.param_groups[0]["momentum"] = 0.5
        for g in (1.0, 2.0):
            p.grad = dyn.tensor([g], dtype=dyn.float64)
            opt.step()
        self.assertEqual(opt.state[p]["momentum_buffer"].item(), 0.5 * 1.0 + 2.0)

    def test_user_defined_optimizer(self):
        # How programs write their own: lazy state in self.state[p], hyperparameters from the groups.
        class SignSGD(dyn.optim.Optimizer):
            def __init__(self, params, lr=0.1):
                super().__init__(params, dict(lr=lr))

            @dyn.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if len(state) == 0:
                            state["step"] = 0
                        state["step"] += 1
                        p.sub_(p.grad.clamp(-1e-12, 1e-12) * (group["lr"] * 1e12))

        p = param([1.0, -1.0])
        opt = SignSGD([p], lr=0.25)
        p.grad = dyn.tensor([3.0, -0.5], dtype=dyn.float64)
        opt.step()
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), [0.5, -0.5], rtol=1e-12)
        sd = opt.state_dict()
        self.assertEqual(sd, {"state": {0: {"step": 2}}, "param_groups": [{"lr": 0.25, "params": [0]}]})
        q = param([0.0, 0.0])
        opt2 = SignSGD([q])
        opt2.load_state_dict(sd)
        self.assertEqual((opt2.state[q], opt2.param_groups[0]["lr"]), ({"step": 2}, 0.25))

    def test_repr(self):
        text = repr(dyn.optim.RMSprop([param([1.0])], lr=0.5))
        self.assertTrue(text.startswith("RMSprop (\nParameter Group 0\n"), text)
        self.assertIn("\n    lr: 0.5\n", text)
        self.assertTrue(text.endswith("\n)"))


class TestStateDict(unittest.TestCase):
    MAKERS = [
        ("SGD", lambda ps: dyn.optim.SGD(ps, lr=0.1, momentum=0.9)),
        ("Adam", lambda ps: dyn.optim.Adam(ps, lr=0.01, amsgrad=True)),
        ("AdamW", lambda ps: dyn.optim.AdamW(ps, lr=0.01)),
        ("Adagrad", lambda ps: dyn.optim.Adagrad(ps, lr=0.1, lr_decay=0.1)),
        ("RMSprop", lambda ps: dyn.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True)),
        ("Adadelta", lambda ps: dyn.optim.Adadelta(ps)),
    ]

    def test_round_trip_continues_identically(self):
        gs = grads(6, seed=1)
        for name, make in self.MAKERS:
            with self.subTest(name):
                want, _, _ = run(make, gs, dyn.float64)
                p = param(W0)
                opt = make([p])
                for g in gs[:3]:
                    p.grad = dyn.tensor(g, dtype=dyn.float64)
                    opt.step()
                sd = opt.state_dict()
                q = param(p.detach().numpy().tolist())
                opt2 = make([q])
                p.grad = dyn.tensor(gs[0], dtype=dyn.float64)
                opt2.step()  # state that the load must replace
                with dyn.no_grad():
                    q.copy_(p.detach())
                opt2.load_state_dict(sd)
                for g in gs[3:]:
                    q.grad = dyn.tensor(g, dtype=dyn.float64)
                    opt2.step()
                np.testing.assert_array_equal(q.detach().numpy(), want)

    def test_layout(self):
        a, b, c = param([1.0]), param([2.0]), param([3.0])
        opt = dyn.optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
        a.grad = dyn.tensor([1.0], dtype=dyn.float64)
        opt.step()
        sd = opt.state_dict()
        self.assertEqual(set(sd), {"state", "param_groups"})
        self.assertEqual([g["params"] for g in sd["param_groups"]], [[0, 1], [2]])
        self.assertEqual([g["lr"] for g in sd["param_groups"]], [0.1, 0.5])
        self.assertEqual(sd["param_groups"][0]["betas"], (0.9, 0.999))
        # PyTorch's Adam makes state at a parameter's first update: only a has any
        self.assertEqual(list(sd["state"]), [0])
        self.assertEqual(set(sd["state"][0]), {"step", "exp_avg", "exp_avg_sq"})
        self.assertIs(sd["state"][0]["exp_avg"], opt.state[a]["exp_avg"])  # references, as PyTorch's
        # Adagrad makes its state in the constructor: every parameter has some
        self.assertEqual(list(dyn.optim.Adagrad([a, b]).state_dict()["state"]), [0, 1])

    def test_load_replaces_hyperparameters_and_resets_missing_state(self):
        a, b = param([1.0]), param([2.0])
        src = dyn.optim.Adam([a, b], lr=0.1, betas=(0.5, 0.6))
        a.grad = dyn.tensor([1.0], dtype=dyn.float64)
        src.step()
        x, y = param([1.0]), param([2.0])
        dst = dyn.optim.Adam([x, y], lr=0.9)
        x.grad, y.grad = dyn.tensor([1.0], dtype=dyn.float64), dyn.tensor([1.0], dtype=dyn.float64)
        dst.step()
        dst.step()
        dst.load_state_dict(src.state_dict())
        self.assertEqual(dst.param_groups[0]["lr"], 0.1)
        self.assertEqual(dst.param_groups[0]["betas"], (0.5, 0.6))
        self.assertIs(dst.param_groups[0]["params"][0], x)
        self.assertEqual(dst.state[x]["step"].item(), 1.0)
        self.assertEqual(dst.state[y]["step"].item(), 0.0)  # b had no state: y starts fresh
        self.assertEqual(dst.state[y]["exp_avg"].item(), 0.0)
        self.assertIsNot(dst.state[x]["exp_avg"], src.state[a]["exp_avg"])  # copied into dst's own tensor

    def test_load_checks_group_sizes(self):
        opt = dyn.optim.SGD([param([1.0]), param([2.0])], lr=0.1)
        with self.assertRaisesRegex(ValueError, "doesn't match the size"):
            opt.load_state_dict(dyn.optim.SGD([param([1.0])], lr=0.1).state_dict())
        two = dyn.optim.SGD([{"params": [param([1.0])]}, {"params": [param([1.0])]}], lr=0.1)
        with self.assertRaisesRegex(ValueError, "different number of parameter groups"):
            opt.load_state_dict(two.state_dict())

    def test_sgd_loads_a_buffer_without_step_count(self):
        # PyTorch's SGD saves only momentum_buffer; the buffer is live, so the next step decays it.
        p = param([0.0])
        opt = dyn.optim.SGD([p], lr=1.0, momentum=0.5)
        opt.load_state_dict({"state": {0: {"momentum_buffer": dyn.tensor([4.0], dtype=dyn.float64)}},
                             "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
        p.grad = dyn.tensor([1.0], dtype=dyn.float64)
        opt.step()
        self.assertEqual(opt.state[p]["momentum_buffer"].item(), 0.5 * 4.0 + 1.0)
        self.assertEqual(p.item(), -3.0)


class TestCompiledStep(unittest.TestCase):
    """State made up front and float64 step counts: a compiled training step compiles once."""

    MAKERS = TestStateDict.MAKERS + [("SGD nesterov", lambda ps: dyn.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                                               nesterov=True))]

    def train(self, make, compiled, steps=5):
        dyn.manual_seed(0)
        model = dyn.nn.Linear(4, 2)
        opt = make(list(model.parameters()))
        x = dyn.randn(8, 4)

        def step():
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        fn = dyn.compile(step) if compiled else step
        losses = [fn().item() for _ in range(steps)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()]

    def test_one_graph_bitwise_equal_to_eager(self):
        for name, make in self.MAKERS:
            with self.subTest(name):
                eager = self.train(make, False)
                dyn.debug.reset()
                compiled = self.train(make, True)
                self.assertEqual(compiled[0], eager[0])
                for a, b in zip(compiled[1], eager[1]):
                    np.testing.assert_array_equal(a, b)
                c = dyn.debug.counters()
                self.assertEqual((c["compiles"], c["recompiles"], c["graph_breaks"], c["cache_hits"]), (1, 0, 0, 4))

    def test_tensor_lr_follows_a_scheduler_without_recompiling(self):
        def train(lr, compiled):
            p = param([1.0, -2.0, 0.5], dtype=dyn.float32)
            opt = dyn.optim.AdamW([p], lr=lr)
            return train_scheduled(p, opt, dyn.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4), compiled)

        want = train(0.1, False)
        dyn.debug.reset()
        got = train(dyn.tensor(0.1, dtype=dyn.float64), True)
        np.testing.assert_array_equal(got, want)
        c = dyn.debug.counters()
        self.assertEqual((c["compiles"], c["recompiles"]), (1, 0))
        with self.assertRaisesRegex(ValueError, "1-element"):
            dyn.optim.SGD([param([1.0])], lr=dyn.tensor([0.1, 0.2]))


def quadratic(n=6, seed=0):
    r = np.random.default_rng(seed)
    m = r.standard_normal((n, n))
    return m @ m.T + n * np.eye(n), r.standard_normal(n)


def lbfgs_ref(A, b, x, lr, iters, history):
    """PyTorch's L-BFGS without line search on 0.5 x'Ax - b'x, one step() call of `iters` iterations."""
    grad = lambda x: A @ x - b  # noqa: E731
    g = grad(x)
    dirs, stps, ro, H = [], [], [], 1.0
    d = t = prev_g = None
    for it in range(1, iters + 1):
        if it == 1:
            d = -g
        else:
            y, s = g - prev_g, d * t
            ys = y @ s
            if ys > 1e-10:
                if len(dirs) == history:
                    dirs.pop(0), stps.pop(0), ro.pop(0)
                dirs.append(y), stps.append(s), ro.append(1.0 / ys)
                H = ys / (y @ y)
            q, al = -g, [0.0] * len(dirs)
            for i in reversed(range(len(dirs))):
                al[i] = (stps[i] @ q) * ro[i]
                q = q - al[i] * dirs[i]
            r = q * H
            for i in range(len(dirs)):
                r = r + stps[i] * (al[i] - (dirs[i] @ r) * ro[i])
            d = r
        prev_g = g
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if it == 1 else lr
        x = x + t * d
        g = grad(x)
    return x


class TestLBFGS(unittest.TestCase):
    def make_quadratic(self, **kw):
        A, b = quadratic()
        At, bt = dyn.tensor(A, dtype=dyn.float64), dyn.tensor(b, dtype=dyn.float64)
        x = param([0.0] * len(b))
        opt = dyn.optim.LBFGS([x], **kw)
        evals = []

        def closure():
            opt.zero_grad()
            loss = 0.5 * (x * (At @ x)).sum() - (bt * x).sum()
            loss.backward()
            evals.append(loss.item())
            return loss

        return A, b, x, opt, closure, evals

    def test_first_iteration_is_scaled_steepest_descent(self):
        A, b, x, opt, closure, _ = self.make_quadratic(lr=0.7, max_iter=1)
        opt.step(closure)
        g0 = -b
        np.testing.assert_array_equal(x.detach().numpy(), 0.0 + (min(1.0, 1.0 / np.abs(g0).sum()) * 0.7) * -g0)

    def test_iterations_match_reference(self):
        # lr < 1 keeps the iterates away from the minimizer, so every iteration's arithmetic shows
        A, b, x, opt, closure, _ = self.make_quadratic(lr=0.3, max_iter=8, history_size=3, tolerance_change=0,
                                                       tolerance_grad=0)
        opt.step(closure)
        want = lbfgs_ref(A, b, np.zeros(len(b)), 0.3, 8, 3)
        self.assertGreater(np.abs(want - np.linalg.solve(A, b)).max(), 1e-3)
        np.testing.assert_allclose(x.detach().numpy(), want, rtol=1e-12, atol=1e-15)
        state = opt.state[x]
        self.assertEqual((state["n_iter"], state["func_evals"], len(state["old_dirs"])), (8, 8, 3))

    def one_dim(self, a, x0, lr):
        x = param([x0])
        opt = dyn.optim.LBFGS([x], lr=lr, max_iter=1, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = 0.5 * a * (x * x).sum()
            loss.backward()
            return loss

        opt.step(closure)
        return x.item(), opt.state[x]["func_evals"]

    def test_strong_wolfe_zooms_into_an_overshooting_step(self):
        # f = x^2 / 2 from 0.5 with lr 3: the first trial goes to -1, where f is higher; the cubic
        # through the bracket [0, 3] is f itself, so the zoom lands on the minimizer 0.
        self.assertEqual(self.one_dim(1.0, 0.5, 3), (0.0, 3))

    def test_strong_wolfe_extrapolates_a_short_step(self):
        # f = 0.003 x^2 / 2 from 10 (slope 0.03): the curvature condition |f'(t)| <= 0.9 |f'(0)| needs
        # t >= 33; the bracketing phase grows t tenfold per trial (its cap: the cubic's minimizer is
        # 333) and accepts t = 100, x = 10 - 100 * 0.03.
        x, evals = self.one_dim(0.003, 10.0, 1)
        self.assertAlmostEqual(x, 7.0, places=12)
        self.assertEqual(evals, 4)

    def test_quadratic_strong_wolfe_reaches_the_minimum(self):
        A, b, x, opt, closure, evals = self.make_quadratic(line_search_fn="strong_wolfe", max_iter=50)
        loss = opt.step(closure)
        self.assertEqual(loss.item(), evals[0])  # step returns the first evaluation's loss
        best = -0.5 * b @ np.linalg.solve(A, b)
        self.assertLess(evals[-1] - best, 1e-9)  # stopped by tolerance_change on the loss
        self.assertLessEqual(opt.state[x]["func_evals"], opt.param_groups[0]["max_eval"] + 25)
        # with tolerance_change off it goes on to where the loss no longer resolves x (~sqrt(eps))
        A, b, x, opt, closure, evals = self.make_quadratic(line_search_fn="strong_wolfe", max_iter=50,
                                                           tolerance_change=0, tolerance_grad=1e-12)
        opt.step(closure)
        np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(A, b), rtol=0, atol=1e-8)

    def test_rosenbrock(self):
        for line_search, calls in (("strong_wolfe", 5), (None, 60)):
            with self.subTest(line_search=line_search):
                xy = param([-1.5, 2.0])
                opt = dyn.optim.LBFGS([xy], lr=1 if line_search else 0.1, max_iter=20, history_size=10,
                                      line_search_fn=line_search)

                def closure():
                    opt.zero_grad()
                    x, y = xy[0], xy[1]
                    loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
                    loss.backward()
                    return loss

                for _ in range(calls):
                    opt.step(closure)
                np.testing.assert_allclose(xy.detach().numpy(), [1.0, 1.0], atol=1e-4)

    def test_stops_at_once_when_gradient_is_below_tolerance(self):
        A, b, x, opt, closure, evals = self.make_quadratic(max_iter=10)
        with dyn.no_grad():
            x.copy_(dyn.tensor(np.linalg.solve(A, b), dtype=dyn.float64))
        before = x.detach().numpy().copy()
        opt.step(closure)
        self.assertEqual(len(evals), 1)
        np.testing.assert_array_equal(x.detach().numpy(), before)

    def test_max_eval_bounds_evaluations(self):
        A, b, x, opt, closure, evals = self.make_quadratic(lr=0.01, max_iter=100, max_eval=7, tolerance_grad=0,
                                                           tolerance_change=0)
        opt.step(closure)
        self.assertEqual(len(evals), 7)
        self.assertEqual(opt.state_dict()["state"][0]["func_evals"], 7)

    def test_one_group_only(self):
        with self.assertRaisesRegex(ValueError, "parameter groups"):
            dyn.optim.LBFGS([{"params": [param([1.0])]}, {"params": [param([2.0])]}])

    def test_float32(self):
        xy = param([-1.0, 1.5], dtype=dyn.float32)
        opt = dyn.optim.LBFGS([xy], line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((xy - dyn.tensor([0.5, -0.25])) ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        self.assertEqual(xy.dtype, dyn.float32)
        np.testing.assert_allclose(xy.detach().numpy(), [0.5, -0.25], atol=1e-6)



# ---- schedulers ----
from dyn.optim import lr_scheduler as sched  # noqa: E402  (a submodule, as torch.optim.lr_scheduler)


def sgd(lr=0.1, groups=1, **kw):
    return dyn.optim.SGD([{"params": [param([1.0])]} for _ in range(groups)], lr=lr, **kw)


def lr_sequence(s, n, group=0):
    """The lr after construction and after each of n steps; the optimizer's group must agree each time."""
    out = [s.get_last_lr()[group]]
    for _ in range(n):
        s.step()
        out.append(s.get_last_lr()[group])
        assert s.optimizer.param_groups[group]["lr"] == out[-1]
    return out


def cos_anneal(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


class TestSchedulers(unittest.TestCase):
    def check(self, got, want, rtol=1e-13):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300)

    def test_base_class(self):
        opt = sgd(0.1)
        s = sched.StepLR(opt, step_size=2)
        self.assertIs(sched._LRScheduler, sched.LRScheduler)
        self.assertEqual(opt.param_groups[0]["initial_lr"], 0.1)
        self.assertEqual((s.last_epoch, s.base_lrs, s.get_last_lr()), (0, [0.1], [0.1]))
        with self.assertRaisesRegex(KeyError, "initial_lr"):
            sched.StepLR(sgd(0.1), step_size=2, last_epoch=3)
        resumed = sched.ExponentialLR(opt, gamma=0.5, last_epoch=3)  # resuming: opt has initial_lr
        self.assertEqual((resumed.last_epoch, opt.param_groups[0]["lr"]), (4, 0.1))
        with self.assertRaises(TypeError):
            sched.StepLR("not an optimizer", step_size=1)

    def test_step_lr(self):
        self.check(lr_sequence(sched.StepLR(sgd(0.1), step_size=3, gamma=0.1), 10),
                   [0.1 * 0.1 ** (e // 3) for e in range(11)])

    def test_multistep_lr(self):
        ms = [2, 5, 5]
        self.check(lr_sequence(sched.MultiStepLR(sgd(0.1), milestones=ms, gamma=0.5), 8),
                   [0.1 * 0.5 ** bisect_right(ms, e) for e in range(9)])

    def test_exponential_lr(self):
        self.check(lr_sequence(sched.ExponentialLR(sgd(0.1), gamma=0.9), 12), [0.1 * 0.9 ** e for e in range(13)])

    def test_cosine_annealing_lr(self):
        T, eta = 5, 0.01
        # past T_max the cosine rises again, as PyTorch's does
        self.check(lr_sequence(sched.CosineAnnealingLR(sgd(0.1), T_max=T, eta_min=eta), 17),
                   [eta + (0.1 - eta) * (1 + math.cos(math.pi * e / T)) / 2 for e in range(18)], rtol=1e-12)

    def test_cosine_annealing_is_recursive(self):
        # The recursive form scales the current lr: a change made by someone else carries on.
        opt = sgd(0.1)
        s = sched.CosineAnnealingLR(opt, T_max=10)
        s.step()
        opt.param_groups[0]["lr"] *= 0.5
        s.step()
        ratio = (1 + math.cos(math.pi * 2 / 10)) / (1 + math.cos(math.pi * 1 / 10))
        self.assertAlmostEqual(s.get_last_lr()[0], ratio * 0.5 * (0.1 * (1 + math.cos(math.pi / 10)) / 2), 16)

    def test_lambda_lr_per_group(self):
        s = sched.LambdaLR(sgd(0.2, groups=2), lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.5 ** e])
        self.assertEqual(lr_sequence(s, 5, group=0), [0.2 * (1 / (e + 1)) for e in range(6)])
        s = sched.LambdaLR(sgd(0.2, groups=2), lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.5 ** e])
        self.assertEqual(lr_sequence(s, 5, group=1), [0.2 * 0.5 ** e for e in range(6)])
        with self.assertRaisesRegex(ValueError, "Expected 2 lr_lambdas, but got 1"):
            sched.LambdaLR(sgd(0.2, groups=2), lr_lambda=[lambda e: 1.0])

    def test_multiplicative_lr(self):
        self.check(lr_sequence(sched.MultiplicativeLR(sgd(0.1), lr_lambda=lambda e: 0.95), 10),
                   [0.1 * 0.95 ** e for e in range(11)])

    def test_linear_lr(self):
        for start, end in ((0.25, 1.0), (1.0, 0.1)):
            with self.subTest(start=start, end=end):
                s = sched.LinearLR(sgd(0.1), start_factor=start, end_factor=end, total_iters=4)
                self.check(lr_sequence(s, 8), [0.1 * (start + (end - start) * min(4, e) / 4) for e in range(9)])
        with self.assertRaises(ValueError):
            sched.LinearLR(sgd(), start_factor=0)

    def test_constant_lr(self):
        self.check(lr_sequence(sched.ConstantLR(sgd(0.1), factor=0.5, total_iters=3), 6),
                   [0.05, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1])
        with self.assertRaises(ValueError):
            sched.ConstantLR(sgd(), factor=1.5)

    def test_polynomial_lr(self):
        self.check(lr_sequence(sched.PolynomialLR(sgd(0.1), total_iters=4, power=2.0), 7),
                   [0.1 * (1 - min(4, e) / 4) ** 2 for e in range(8)], rtol=1e-12)

    def test_cosine_warm_restarts(self):
        eta = 0.001
        for T_0, T_mult in ((3, 1), (3, 2)):
            with self.subTest(T_mult=T_mult):
                want, T_cur, T_i = [], 0, T_0
                for e in range(25):
                    want.append(eta + (0.1 - eta) * (1 + math.cos(math.pi * T_cur / T_i)) / 2)
                    T_cur += 1
                    if T_cur == T_i:
                        T_cur, T_i = 0, T_i * T_mult
                s = sched.CosineAnnealingWarmRestarts(sgd(0.1), T_0=T_0, T_mult=T_mult, eta_min=eta)
                self.assertEqual(lr_sequence(s, 24), want)

    def test_cosine_warm_restarts_fractional_epochs(self):
        s = sched.CosineAnnealingWarmRestarts(sgd(0.1), T_0=3, T_mult=2)
        s.step(4.5)  # the second cycle (epochs 3..9, T_i = 6), 1.5 epochs in
        self.assertEqual((s.T_cur, s.T_i, s.last_epoch), (1.5, 6, 4))
        self.assertEqual(s.get_last_lr()[0], 0.1 * (1 + math.cos(math.pi * 1.5 / 6)) / 2)
        s.step(1.25)
        self.assertEqual((s.T_cur, s.T_i), (1.25, 3))
        with self.assertRaises(ValueError):
            s.step(-1)
        with self.assertRaises(ValueError):
            sched.CosineAnnealingWarmRestarts(sgd(), T_0=0)

    def test_sequential_lr(self):
        opt = sgd(0.1)
        warm = sched.ConstantLR(opt, factor=0.1, total_iters=2)
        decay = sched.ExponentialLR(opt, gamma=0.9)
        s = sched.SequentialLR(opt, schedulers=[warm, decay], milestones=[3])
        self.check(lr_sequence(s, 6), [0.01, 0.01, 0.1, 0.1, 0.09, 0.081, 0.0729])
        with self.assertRaisesRegex(ValueError, "one more than the number of milestone"):
            sched.SequentialLR(opt, schedulers=[warm, decay], milestones=[])
        with self.assertRaisesRegex(ValueError, "same optimizer"):
            sched.SequentialLR(opt, schedulers=[warm, sched.StepLR(sgd(), 1)], milestones=[2])

    def test_chained_scheduler(self):
        opt = sgd(0.05)
        s = sched.ChainedScheduler([sched.ConstantLR(opt, factor=0.1, total_iters=3),
                                    sched.ExponentialLR(opt, gamma=0.9)])
        self.check(lr_sequence(s, 6), [0.05 * 0.9 ** e * (0.1 if e < 3 else 1.0) for e in range(7)])

    def test_deprecated_epoch_argument_uses_closed_form(self):
        s = sched.ExponentialLR(sgd(0.1), gamma=0.5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s.step(5)
        self.assertEqual(s.get_last_lr(), [0.1 * 0.5 ** 5])
        self.assertTrue(any("epoch parameter" in str(w.message) for w in caught))

    def test_state_dict_round_trip(self):
        opt, opt2 = sgd(0.1), sgd(0.1)
        a = sched.StepLR(opt, step_size=2, gamma=0.5)
        for _ in range(5):
            a.step()
        sd = a.state_dict()
        self.assertNotIn("optimizer", sd)
        self.assertEqual(sd["last_epoch"], 5)
        b = sched.StepLR(opt2, step_size=7, gamma=0.9)
        opt2.load_state_dict(opt.state_dict())
        b.load_state_dict(sd)
        self.assertEqual((b.step_size, b.gamma, b.last_epoch), (2, 0.5, 5))
        self.assertEqual(lr_sequence(b, 4), lr_sequence(a, 4))

    def test_lambda_state_dict_keeps_callable_objects(self):
        class Scale:
            def __init__(self, k):
                self.k = k

            def __call__(self, epoch):
                return self.k ** epoch

        s = sched.LambdaLR(sgd(0.1, groups=2), lr_lambda=[Scale(0.5), lambda e: 1.0])
        sd = s.state_dict()
        self.assertEqual(sd["lr_lambdas"], [{"k": 0.5}, None])
        t = sched.LambdaLR(sgd(0.1, groups=2), lr_lambda=[Scale(0.9), lambda e: 1.0])
        t.load_state_dict(sd)
        self.assertEqual(t.lr_lambdas[0].k, 0.5)
        self.assertEqual(sd["lr_lambdas"], [{"k": 0.5}, None])  # the dict passed in is left as it was

    def test_scheduled_lr_reaches_a_compiled_step(self):
        def train(compiled):
            p = param([1.0, -2.0], dtype=dyn.float32)
            opt = dyn.optim.SGD([p], lr=0.1, momentum=0.5)
            return train_scheduled(p, opt, sched.StepLR(opt, step_size=1, gamma=0.5), compiled)

        np.testing.assert_array_equal(train(True), train(False))


class TestOneCycleLR(unittest.TestCase):
    def expected(self, total, pct_start, three_phase, anneal, max_lr=1.0, div=25.0, final_div=1e4,
                 moms=(0.85, 0.95)):
        initial, base_m, max_m = max_lr / div, moms[0], moms[1]
        low = initial / final_div
        up = pct_start * total - 1
        if three_phase:
            phases = [(up, initial, max_lr, max_m, base_m), (2 * pct_start * total - 2, max_lr, initial, base_m, max_m),
                      (total - 1, initial, low, max_m, max_m)]
        else:
            phases = [(up, initial, max_lr, max_m, base_m), (total - 1, max_lr, low, base_m, max_m)]
        lrs, ms = [], []
        for step in range(total):
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(phases):
                if step <= end or i == len(phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(lr0, lr1, pct))
                    ms.append(anneal(m0, m1, pct))
                    break
                start = end
        return lrs, ms

    def run_schedule(self, opt, n, **kw):
        s = sched.OneCycleLR(opt, **kw)
        lrs, ms = [], []
        for i in range(n):
            if i:
                s.step()
            g = opt.param_groups[0]
            lrs.append(g["lr"])
            ms.append(g["betas"][0] if "betas" in g else g["momentum"])
        return s, lrs, ms

    def test_two_phase_cos_with_sgd_momentum(self):
        opt = sgd(0.5, momentum=0.9)
        s, lrs, ms = self.run_schedule(opt, 10, max_lr=1.0, total_steps=10)
        want_lr, want_m = self.expected(10, 0.3, False, cos_anneal)
        self.assertEqual(lrs, want_lr)
        self.assertEqual(ms, want_m)
        self.assertAlmostEqual(lrs[0], 1.0 / 25, places=15)  # max_lr / div_factor, to the cosine's rounding
        self.assertEqual(ms[0], 0.95)
        self.assertEqual((max(lrs), min(ms)), (1.0, 0.85))
        g = opt.param_groups[0]
        self.assertEqual((g["initial_lr"], g["max_lr"], g["min_lr"]), (0.04, 1.0, 0.04 / 1e4))
        s.step()  # step 10 == total_steps is still allowed, as in PyTorch
        with self.assertRaisesRegex(ValueError, "Tried to step 11 times"):
            s.step()

    def test_three_phase_linear_with_adam_beta1(self):
        opt = dyn.optim.Adam([param([1.0])], lr=0.5, betas=(0.9, 0.99))
        _, lrs, ms = self.run_schedule(opt, 20, max_lr=[0.2], epochs=4, steps_per_epoch=5, pct_start=0.25,
                                       anneal_strategy="linear", three_phase=True, div_factor=10.0,
                                       final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9)
        linear = lambda a, b, pct: (b - a) * pct + a  # noqa: E731
        want_lr, want_m = self.expected(20, 0.25, True, linear, max_lr=0.2, div=10.0, final_div=100.0,
                                        moms=(0.8, 0.9))
        self.assertEqual(lrs, want_lr)
        self.assertEqual(ms, want_m)
        self.assertEqual(opt.param_groups[0]["betas"][1], 0.99)

    def test_cycled_momentum_reaches_the_update(self):
        p = param([0.0])
        opt = dyn.optim.SGD([p], lr=0.1, momentum=0.9)
        s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=0.5)
        want, buf = 0.0, None
        for _ in range(4):
            lr, m = opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]
            p.grad = dyn.tensor([1.0], dtype=dyn.float64)
            opt.step()
            buf = 1.0 if buf is None else buf * m + 1.0
            want = want - lr * buf
            s.step()
        self.assertAlmostEqual(p.item(), want, places=14)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "total_steps OR"):
            sched.OneCycleLR(sgd(momentum=0.9), max_lr=1.0)
        with self.assertRaisesRegex(ValueError, "must support momentum"):
            sched.OneCycleLR(dyn.optim.Adagrad([param([1.0])]), max_lr=1.0, total_steps=5)
        with self.assertRaisesRegex(ValueError, "anneal_strategy"):
            sched.OneCycleLR(sgd(momentum=0.9), max_lr=1.0, total_steps=5, anneal_strategy="step")
        with self.assertRaisesRegex(ValueError, "max_lr must have the same length"):
            sched.OneCycleLR(sgd(momentum=0.9), max_lr=[1.0, 2.0], total_steps=5)
        s = sched.OneCycleLR(dyn.optim.Adagrad([param([1.0])]), max_lr=1.0, total_steps=5, cycle_momentum=False)
        self.assertAlmostEqual(s.get_last_lr()[0], 0.04, places=15)


class TestReduceLROnPlateau(unittest.TestCase):
    def lrs(self, s, metrics):
        out = []
        for m in metrics:
            s.step(m)
            out.append(s.optimizer.param_groups[0]["lr"])
            self.assertEqual(s.get_last_lr()[0], out[-1])
        return out

    def test_patience(self):
        s = sched.ReduceLROnPlateau(sgd(1.0), factor=0.5, patience=2)
        self.assertEqual(self.lrs(s, [10, 9, 9, 9, 9, 8, 8, 8, 8]),
                         [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25])

    def test_cooldown(self):
        s = sched.ReduceLROnPlateau(sgd(1.0), factor=0.5, patience=0, cooldown=2)
        self.assertEqual(self.lrs(s, [5] * 8), [1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125])

    def test_threshold_modes(self):
        # rel: 9.9995 is not below 10 * (1 - 1e-4) = 9.999; abs (0.5): 1.4 is not above 1 + 0.5
        s = sched.ReduceLROnPlateau(sgd(1.0), factor=0.5, patience=0)
        self.assertEqual(self.lrs(s, [10, 9.9995, 9.998]), [1, 0.5, 0.5])
        s = sched.ReduceLROnPlateau(sgd(1.0), mode="max", threshold=0.5, threshold_mode="abs", factor=0.5,
                                    patience=0)
        self.assertEqual(self.lrs(s, [1, 1.4, 1.6]), [1, 0.5, 0.5])
        self.assertEqual(s.best, 1.6)

    def test_min_lr_and_eps(self):
        s = sched.ReduceLROnPlateau(sgd(1.0, groups=2), factor=0.1, patience=0, min_lr=[0.5, 0.0])
        self.lrs(s, [1, 1, 1])
        self.assertEqual([g["lr"] for g in s.optimizer.param_groups], [0.5, 1.0 * 0.1 * 0.1])
        s = sched.ReduceLROnPlateau(sgd(1.5e-8), factor=0.5, patience=0)
        self.assertEqual(self.lrs(s, [1, 1]), [1.5e-8, 1.5e-8])  # a change below eps is skipped

    def test_tensor_metric_and_state_dict(self):
        s = sched.ReduceLROnPlateau(sgd(1.0), patience=1, cooldown=3)
        s.step(dyn.tensor(2.0))
        s.step(dyn.tensor(3.0))
        sd = s.state_dict()
        self.assertEqual((sd["best"], sd["num_bad_epochs"], sd["last_epoch"]), (2.0, 1, 2))
        t = sched.ReduceLROnPlateau(sgd(1.0))
        t.load_state_dict(sd)
        self.assertEqual((t.best, t.num_bad_epochs, t.patience, t.cooldown), (2.0, 1, 1, 3))

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "Factor should be < 1.0"):
            sched.ReduceLROnPlateau(sgd(), factor=1.0)
        with self.assertRaisesRegex(ValueError, "mode avg is unknown"):
            sched.ReduceLROnPlateau(sgd(), mode="avg")
        with self.assertRaisesRegex(ValueError, "expected 2 min_lrs, got 1"):
            sched.ReduceLROnPlateau(sgd(groups=2), min_lr=[0.1])


if __name__ == "__main__":
    unittest.main()
