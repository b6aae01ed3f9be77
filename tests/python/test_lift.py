"""Tier 2 (trace once, dyn.compile(lift=True)): a lifted entry serves calls without running the
body, and every change of Python state the body read sends the call back to tier 1 (never a stale
result). Each test compares against the plain function, call by call, in verify mode as well."""
import os
import unittest

import dyn
import dyn.nn as nn


# DYN_VERIFY_LIFT=1 (the suite in verify mode) makes every function verify: the body serves calls.
FORCED = os.environ.get("DYN_VERIFY_LIFT", "0") not in ("", "0")


def same(a, b):
    if isinstance(a, dyn.Tensor):
        return isinstance(b, dyn.Tensor) and a.dtype == b.dtype and list(a.shape) == list(b.shape) and \
            a.numpy().tobytes() == b.numpy().tobytes()
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class Base(unittest.TestCase):
    def check(self, fn, calls, **kw):
        """Calls the compiled fn with each (args, before) where before() changes Python state first;
        every result must equal the plain function's: once served by lifted entries, and once in
        verify mode (the body serves each call and the lifted result is compared with it)."""
        forced = FORCED
        for verify in (False, True):
            cf = dyn.compile(fn, lift=True, verify=verify, **kw)
            for i, (args, before) in enumerate(calls):
                if before:
                    before()
                want = fn(*args)
                got = cf(*args)
                self.assertTrue(same(got, want), f"call {i}: {got} vs {want}")
            if verify or forced:
                self.assertEqual(cf._state.lifted_hits, 0)  # verify mode counts as tier 1 does
                self.assertGreater(cf._verified, 0, cf.why_python())
            else:
                self.assertGreater(cf._state.lifted_hits, 0, cf.why_python())
        return cf


X = dyn.randn(3, 4)
W = dyn.randn(4, 4)


class TestLifted(Base):
    def test_hits_skip_the_body(self):
        runs = []

        def f(x, w):
            return (x @ w).relu() * 0.5 + x

        cf = dyn.compile(f, lift=True)
        for _ in range(5):
            r = cf(X, W)
        self.assertTrue(same(r, f(X, W)))
        # the first call records, the second (a replay) is analyzed, the others skip the body
        self.assertEqual(cf._state.lifted_hits, 0 if FORCED else 3)
        self.assertEqual(cf.why_python(), [])
        del runs

    def test_int_argument_guard(self):
        def f(x, n):
            for _ in range(n):
                x = x * 2.0
            return x

        cf = self.check(f, [((X, 2), None), ((X, 2), None), ((X, 3), None), ((X, 2), None), ((X, 3), None)])
        self.assertGreaterEqual(cf._verified, 2)
        lines = [t for lift in cf._lifts for t, _ in lift.guard_lines()]
        self.assertTrue(any("n == 2" in t for t in lines), lines)

    def test_global_changes(self):
        g = {"scale": 2}

        def f(x):
            return x * g["scale"]

        self.check(f, [((X,), None), ((X,), None), ((X,), lambda: g.update(scale=3)), ((X,), None)])

    def test_attribute_and_training_flag(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.k = 1

            def forward(self, x):
                y = self.fc(x)
                if self.training:
                    y = y + self.k
                return y

        m = M()
        with dyn.no_grad():
            self.check(m, [((X,), None), ((X,), None), ((X,), lambda: setattr(m, "k", 5)), ((X,), None),
                           ((X,), m.eval), ((X,), None), ((X,), m.train)])

    def test_list_length_and_swapped_submodule(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x).tanh()
                return x

        m = M()
        with dyn.no_grad():
            self.check(m, [((X,), None), ((X,), None), ((X,), lambda: m.layers.append(nn.Linear(4, 4))),
                           ((X,), None), ((X,), lambda: m.layers.__setitem__(0, nn.Linear(4, 4))), ((X,), None)])

    def test_parameter_values_are_read_at_each_call(self):
        lin = nn.Linear(4, 4)
        with dyn.no_grad():
            self.check(lin, [((X,), None), ((X,), None), ((X,), lambda: lin.weight.mul_(2.0)), ((X,), None),
                             ((X,), lambda: setattr(lin, "weight", nn.Parameter(dyn.randn(4, 4)))), ((X,), None)])

    def test_closure_default_and_monkey_patch(self):
        box = [1.5]
        k = 2

        def helper(x):
            return x + 1

        def f(x, m=3):
            return helper(x) * box[0] + m + k

        calls = [((X,), None), ((X,), None), ((X,), lambda: box.__setitem__(0, 2.5)), ((X,), None),
                 ((X,), lambda: setattr(f, "__defaults__", (7,))), ((X,), None)]
        self.check(f, calls)
        g = globals()
        g["_lift_helper"] = lambda x: x + 1

        def h(x):
            return _lift_helper(x) * 2  # noqa: F821 - a global patched between calls

        self.check(h, [((X,), None), ((X,), None), ((X,), None),
                       ((X,), lambda: g.update(_lift_helper=lambda x: x - 1)), ((X,), None), ((X,), None)])

    def test_hooks_added_later(self):
        lin = nn.Linear(4, 4)
        with dyn.no_grad():
            self.check(lin, [((X,), None), ((X,), None),
                             ((X,), lambda: lin.register_forward_hook(lambda mod, a, out: out * 2)), ((X,), None)])

    def test_floats_are_read_at_each_call(self):
        # As in tier 1, a float an op reads is an input of the graph: an lr schedule keeps one lifted
        # entry; an int is baked in and guarded.
        sched = {"lr": 0.1}

        def f(x, scale):
            return (x * scale).tanh() + sched["lr"] * 0.5

        calls = [((X, 0.5), None), ((X, 0.7), lambda: sched.update(lr=0.2)), ((X, -0.0), None),
                 ((X, 0.9), lambda: sched.update(lr=0.3))]
        cf = self.check(f, calls)
        self.assertEqual(cf._state.entries, 1)
        lines = [t for lift in cf._lifts for t, _ in lift.guard_lines()]
        self.assertTrue(any(t.startswith("scale is a float read at each call") for t in lines), lines)
        cf2 = dyn.compile(f, lift=True)
        cf2(X, 0.5)
        cf2(X, 2)  # an int: another entry
        self.assertEqual(cf2._state.entries, 2)

    def test_returns_python_values_and_containers(self):
        def f(x, n):
            return {"y": x + n, "n": n, "pair": (x * 2, [n, n + 1])}

        self.check(f, [((X, 1), None), ((X, 1), None), ((X, 1), None), ((X, 2), None), ((X, 2), None),
                       ((X, 2), None)])


class TestStaysOnTier1(Base):
    def reason(self, fn, *args):
        cf = self.cf = dyn.compile(fn, lift=True)
        for _ in range(3):
            cf(*args)
        self.assertEqual(cf._state.lifted_hits, 0)
        why = cf.why_python()
        self.assertEqual(len(why), 1, why)
        return why[0][1], why[0][2]

    def test_print(self):
        def f(x):
            print("step", end="")
            return x + 1

        reason, where = self.reason(f, X)
        self.assertIn("print", reason)
        self.assertIn("test_lift.py", where)
        (ev,) = dyn.debug.events("lift_refused", self.cf)
        self.assertIn("print", ev["reason"])
        self.assertTrue(ev["file"].endswith("test_lift.py"))
        self.assertEqual(ev["line"], f.__code__.co_firstlineno + 1)

    def test_star_args_from_an_iterator_are_not_used_up(self):
        # The analysis would have read map's items before the call did: f then got no arguments.
        def g(*ts):
            return sum(ts)

        def f(x, y):
            return g(*map(lambda t: t * 2, (x, y)))

        y = X + 1
        cf = dyn.compile(f, lift=True)
        for _ in range(3):
            self.assertTrue(same(cf(X, y), f(X, y)))
        reason, _ = self.reason(f, X, y)
        self.assertIn("map iterator", reason)

    def test_store_to_outside_object(self):
        class C:
            n = 0
        c = C()

        def f(x):
            c.n = c.n + 1
            return x + 1

        reason, _ = self.reason(f, X)
        self.assertIn("stores `.n`", reason)

    def test_a_written_view_of_another_argument(self):
        """y[0, 0] = v with y a view of x wrote into x's memory when traced: y is an input too, fetched
        and checked at each hit (a lifted hit wrote x when y no longer was its view: found by the
        stale-graph fuzzer, seed 9)."""
        def f(x, y):
            t = x.t() @ x
            with dyn.no_grad():
                y[0, 0] = -1.5
            return t.softmax(-1)

        cf = dyn.compile(f, lift=True)
        for _ in range(3):
            x = dyn.randn(1, 3)
            y_eager, x_eager = x.clone(), x.clone()
            want = f(x_eager, x_eager[...])
            got = cf(x, x[...])
            self.assertTrue(same(got, want) and same(x, x_eager))
        hits = cf._state.lifted_hits  # (x, x[...]) may be served: the engine checks y is x again
        x, y = dyn.randn(1, 3), dyn.tensor([[1, 2, 3]], dtype=dyn.int32)
        x0 = x.clone()
        cf(x, y)
        self.assertTrue(same(x, x0))  # x untouched, the write went to y
        self.assertEqual(y.tolist(), [[-1, 2, 3]])
        self.assertEqual(cf._state.lifted_hits, hits)  # an independent y is not served by that entry
        del y_eager

    def test_graph_break(self):
        def f(x):
            if x.sum().item() > 0:
                return x + 1
            return x - 1

        reason, _ = self.reason(f, X)
        self.assertIn("item", reason)

    def test_value_to_python(self):
        def f(x):
            return x * len(x.tolist())

        reason, _ = self.reason(f, X)
        self.assertIn("tolist", reason)

    def test_kill_switch(self):
        cf = dyn.compile(lambda x: x + 1, lift=False)
        for _ in range(3):
            cf(X)
        self.assertEqual(cf._state.lifted_hits, 0)
        self.assertEqual(cf.why_python(), [])


def _train_setup(seed=0):
    dyn.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = dyn.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    return model, opt


def _snapshot(model, opt):
    out = []
    for p in model.parameters():
        out += [p.detach().numpy().tobytes(), None if p.grad is None else p.grad.numpy().tobytes()]
        out += [v.numpy().tobytes() for _, v in sorted(opt.state[p].items())]
    return out


XB, YB = dyn.randn(6, 4), dyn.randint(0, 3, (6,))


class TestTraining(unittest.TestCase):
    """Training steps are lifted: the graph writes the parameters and the optimizer's state in
    place, the call sets .grad, the loss keeps the body's (consumed) history; every number equals
    eager's, bit for bit, over steps whose learning rate changes."""

    def run_both(self, make_step, steps=8, accumulate=False, **kw):
        results = []
        for compiled in (False, True):
            model, opt = _train_setup()
            sched = dyn.optim.lr_scheduler.StepLR(opt, 3, 0.5)
            step = make_step(model, opt)
            cf = dyn.compile(step, lift=True, **kw) if compiled else step
            losses = []
            for _ in range(steps):
                losses.append(cf(XB, YB))
                sched.step()
            results.append(([float(x) for x in losses], _snapshot(model, opt), cf, losses))
        (el, es, _, _), (cl, cs, cf, losses) = results
        self.assertEqual(el, cl)
        self.assertEqual(es, cs)
        return cf, losses

    def test_step_with_zero_grad_backward_and_update(self):
        def make(model, opt):
            def step(x, y):
                opt.zero_grad()
                loss = dyn.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                return loss
            return step

        cf, losses = self.run_both(make)
        if not FORCED:
            self.assertGreaterEqual(cf._state.lifted_hits, 5, cf.why_python())
            (ev,) = dyn.debug.events("lift", cf)
            self.assertEqual(ev["entry"], 0)
        loss = losses[-1]
        self.assertTrue(loss.requires_grad)
        # the repr names the body's grad_fn (the first call ran the body)
        self.assertIn("grad_fn=<", repr(loss))
        self.assertEqual(repr(loss).split("grad_fn=")[1], repr(losses[0]).split("grad_fn=")[1])
        with self.assertRaisesRegex(RuntimeError, "backward through the graph a second time"):
            loss.backward()

    def test_gradients_accumulate_across_calls(self):
        def make(model, opt):
            def step(x, y):
                loss = ((model(x) - y.float().unsqueeze(-1)) ** 2).mean()
                loss.backward()
                return loss.detach()
            return step

        cf, _ = self.run_both(make)
        if not FORCED:
            self.assertGreater(cf._state.lifted_hits, 0, cf.why_python())

    def test_compiled_forward_keeps_its_history(self):
        """torch.compile(model) with backward and the update outside: a lifted call's results carry
        the history the body's ops record, and backward through it gives eager's gradients."""
        states = []
        for compiled in (False, True):
            model, opt = _train_setup()
            fwd = dyn.compile(model, lift=True) if compiled else model
            losses = []
            for _ in range(6):
                opt.zero_grad()
                out = fwd(XB)
                self.assertTrue(out.requires_grad)
                loss = dyn.nn.functional.cross_entropy(out, YB)
                loss.backward()
                opt.step()
                losses.append(float(loss))
            states.append((losses, _snapshot(model, opt)))
        self.assertEqual(states[0], states[1])
        if not FORCED:
            self.assertGreater(fwd._state.lifted_hits, 0, fwd.why_python())

    def test_random_numbers_follow_the_generator(self):
        def f(x):
            return dyn.nn.functional.dropout(x, 0.5, training=True) + dyn.rand(3, 4)

        cf = dyn.compile(f, lift=True)
        for compiled in (False, True):
            dyn.manual_seed(3)
            outs = [(cf if compiled else f)(X).numpy().tobytes() for _ in range(5)]
            after = dyn.rand(1).numpy().tobytes()
            if not compiled:
                want = (outs, after)
        self.assertEqual((outs, after), want)
        if not FORCED:
            self.assertGreater(cf._state.lifted_hits, 0, cf.why_python())

    def test_verify_compares_the_effects(self):
        """Verify mode checks what the lifted call writes (.grad here) against the body, not only
        its result: a lifted call made to leave another .grad is caught."""
        model, opt = _train_setup()

        def step(x, y):
            opt.zero_grad()
            loss = dyn.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            return loss.detach()

        cf = dyn.compile(step, lift=True, verify=True)
        for _ in range(3):
            cf(XB, YB)
        self.assertGreater(cf._verified, 0, cf.why_python())
        lift = cf._lifts[0]
        real = lift.fn

        def tampered(*a):
            r = real(*a)
            if r is not dyn._lift._MISS:
                with dyn.no_grad():
                    model[0].weight.grad.mul_(2.0)
            return r
        lift.fn = tampered
        with self.assertRaisesRegex(dyn.LiftMismatch, "grad"):
            cf(XB, YB)


class TestAutogradEdges(unittest.TestCase):
    """What a lifted call does to autograd equals the body's in the corners (each found by review):
    a run compiled and one eager, from the same seed, must end in the same observable state."""

    def both(self, scenario):
        out = []
        for compiled in (False, True):
            dyn.manual_seed(0)
            out.append(scenario(lambda f: dyn.compile(f, lift=True) if compiled else f))
        self.assertEqual(out[0], out[1])
        return out[1]

    @staticmethod
    def outcome(fn):
        try:
            return ("ok", fn())
        except RuntimeError as e:
            return ("raised", str(e).split(".")[0])

    def test_detached_value_has_no_history(self):
        def scenario(compile_):
            w = dyn.randn(3, requires_grad=True)
            x = dyn.randn(3)

            def fwd(x):
                h = x * w
                y = h.detach()
                return y * w, h, y
            f = compile_(fwd)
            for _ in range(4):
                w.grad = None
                out, h, y = f(x)
                out.sum().backward()
            return (w.grad.tolist(), y.requires_grad, y.grad_fn is None, h.requires_grad, repr(out.grad_fn))
        self.both(scenario)

    def test_leaf_made_in_the_call(self):
        def scenario(compile_):
            def fwd(x):
                w = dyn.ones(3, requires_grad=True)
                return x * w, w
            f = compile_(fwd)
            x = dyn.randn(3)
            for _ in range(4):
                y, w = f(x)
            y.sum().backward()
            return (y.requires_grad, repr(y.grad_fn), w.requires_grad, w.is_leaf, w.grad.tolist())
        self.both(scenario)

    def test_history_used_after_backward_in_the_body(self):
        def scenario(compile_):
            w = dyn.randn(3, requires_grad=True)
            x = dyn.randn(3)

            def step(x):
                h = x * w
                h.sum().backward()
                return h * 2
            f = compile_(step)
            for _ in range(4):
                w.grad = None
                out = f(x)
            return self.outcome(lambda: out.sum().backward())
        self.assertEqual(self.both(scenario)[0], "raised")

    def test_write_into_memory_a_saved_view_reads(self):
        def scenario(compile_):
            w = dyn.randn(2, requires_grad=True)
            buf = dyn.randn(4)

            def fwd(x):
                v = buf[0:2]
                y = v * w
                buf.add_(1.0)
                return y + x
            f = compile_(fwd)
            for _ in range(4):
                out = f(dyn.zeros(2))
            return self.outcome(lambda: out.sum().backward()), buf.tolist()
        self.assertEqual(self.both(scenario)[0][0], "raised")

    def test_backward_through_history_from_outside(self):
        def scenario(compile_):
            w = dyn.randn(3, requires_grad=True)

            def step(h):
                loss = (h * 2.0).sum()
                loss.backward()
                return loss.detach()
            f = compile_(step)
            for i in range(4):
                w.grad = None
                f(w * w if i < 2 else w + 1.0)
            return w.grad.tolist()
        self.both(scenario)

    def test_an_input_that_stops_being_a_leaf(self):
        def scenario(compile_):
            w = dyn.randn(3, requires_grad=True)

            def step(x):
                (x * w).sum().backward()
                return w.grad.clone()
            f = compile_(step)
            for _ in range(3):
                x = dyn.randn(3, requires_grad=True)
                f(x)
            a = dyn.randn(3, requires_grad=True)
            x2 = a * 2
            f(x2)
            return a.grad.tolist(), x2.grad
        self.both(scenario)

    def test_a_hook_registered_after_the_lift(self):
        def scenario(compile_):
            w = dyn.randn(3, requires_grad=True)

            def step(x):
                w.grad = None
                (x * w).sum().backward()
                return w.grad.clone()
            f = compile_(step)
            x = dyn.randn(3)
            grads = [f(x).tolist() for _ in range(3)]
            w.register_hook(lambda g: g * 3)  # a lifted call must not skip it
            grads += [f(x).tolist() for _ in range(2)]
            return grads
        grads = self.both(scenario)
        self.assertNotEqual(grads[0], grads[-1])

    def test_a_generator_of_the_users(self):
        def scenario(compile_):
            g = dyn.Generator().manual_seed(5)
            f = compile_(lambda x: x + dyn.rand(3, generator=g))
            vals = [f(dyn.zeros(3)).tolist() for _ in range(5)]
            return vals, g._offset, dyn.rand(1).tolist()
        self.both(scenario)


if __name__ == "__main__":
    unittest.main()
