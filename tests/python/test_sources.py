"""Sources: every value entering a trace is named as the user would write it, floats that only
feed tensor arithmetic are graph inputs (an lr schedule runs on one graph), and every recompile is
blamed on the one source that changed.

Each scenario asserts the exact source text in the recompile event and in dyn.debug.guards, and
that every compiled result is bitwise equal to eager mode.
"""
import os
import unittest

import dyn
from compiletest import assert_same, copy_tensor, line_of, randt

BASE = os.path.basename(__file__)


def counts():
    c = dyn.debug.counters()
    return c["compiles"], c["recompiles"], c["cache_hits"]


def one_failure(tc, cf):
    (ev,) = dyn.debug.events("recompile", cf)
    (f,) = ev["failures"]
    return ev, f


def input_names(cf, entry=0, segment=0):
    g = [g for g in dyn.debug.graphs(cf) if g.entry == entry and g.segment == segment][0]
    return {i["name"]: i["kind"] for i in g.inputs}


proj_weight = randt(4, 4, seed=1)


def project(x):
    return x @ proj_weight  # GLOBAL


def make_scaled(scale):
    def scaled(x):
        return x * scale  # CLOSURE
    return scaled


def pytree(batch, xs):
    return batch["ids"] * xs[1]  # PYTREE


def loop(x, steps):
    for _ in range(steps):  # STEPS
        x = x * 2.0
    return x


class Net(dyn.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = dyn.nn.ModuleList([dyn.nn.Linear(4, 4) for _ in range(3)])
        self.register_buffer("scale", randt(4, seed=3))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return x * self.scale  # BUFFER


class TestTensorSources(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_global(self):
        global proj_weight
        cf = dyn.compile(project)
        x = randt(2, 4, seed=2)
        assert_same(self, project(x), cf(x), "call 1")
        self.assertEqual(input_names(cf), {"x": "argument", "proj_weight": "global"})
        saved = proj_weight
        try:
            proj_weight = randt(4, 4, seed=5).t()  # another layout: the global's guard fails
            assert_same(self, project(x), cf(x), "call 2")
        finally:
            proj_weight = saved
        ev, f = one_failure(self, cf)
        self.assertEqual(f["what"], "tensor 'proj_weight' (global) strides (memory layout)")
        self.assertEqual(ev["cause"]["key"], "the strides of tensor 'proj_weight' (global)")
        self.assertIn("tensor_input: tensor 'proj_weight' (global) is %1 f32[4, 4]", "\n".join(dyn.debug.guards(cf)[0]))

    def test_closure_cell(self):
        cf = dyn.compile(make_scaled(randt(4, seed=4)))
        x = randt(2, 4, seed=2)
        cf(x)
        cf2 = dyn.compile(make_scaled(randt(3, 4, seed=4)))
        assert_same(self, make_scaled(randt(3, 4, seed=4))(x[:1].expand(3, 4)), cf2(x[:1].expand(3, 4)), "closure")
        self.assertEqual(input_names(cf), {"x": "argument", "scale": "closure"})
        self.assertIn("tensor 'scale' (closure)", "\n".join(dyn.debug.guards(cf)[0]))

    def test_pytree_paths(self):
        cf = dyn.compile(pytree)
        a, b, c = randt(3, seed=1), randt(3, seed=2), randt(3, seed=3)
        assert_same(self, pytree({"ids": a}, [a, b]), cf({"ids": a}, [a, b]))
        self.assertEqual(input_names(cf), {"batch['ids'] = xs[0]": "argument", "xs[1]": "argument"})
        assert_same(self, pytree({"ids": c}, [a, randt(2, 3, seed=4)]), cf({"ids": c}, [a, randt(2, 3, seed=4)]))
        ev = dyn.debug.events("recompile", cf)[-1]
        self.assertIn("tensor 'xs[1]' (argument)", "\n".join(f["what"] for f in ev["failures"]))

    def test_module_parameters_and_buffers_by_path(self):
        dyn.manual_seed(0)
        net = Net()
        model = dyn.compile(net)
        cf = model
        x = randt(2, 4, seed=2)
        assert_same(self, net(x), model(x), "call 1")  # named by the expression the call used
        names = input_names(cf)
        self.assertEqual(names["model.layers[2].weight"], "parameter")
        self.assertEqual(names["model.layers[0].bias"], "parameter")
        self.assertEqual(names["model.scale"], "attribute")
        net.layers[2].bias.requires_grad_(False)
        assert_same(self, net(x), model(x), "call 2")
        ev, f = one_failure(self, cf)
        self.assertEqual(f["what"], "tensor 'model.layers[2].bias' (parameter) requires_grad")
        self.assertEqual(ev["cause"]["key"], "requires_grad of tensor 'model.layers[2].bias' (parameter)")
        self.assertEqual(f["line"], line_of(Net.forward, "layer(x).relu()"))

    def test_tensor_made_before_a_graph_break_is_named_by_its_value(self):
        def two_parts(x):
            h = x * 3
            print(end="")  # not a break: nothing asked for a value
            if h.sum() > 0:  # a break: h's graph runs
                return h + 1
            return h - 1
        cf = dyn.compile(two_parts)
        x = randt(5, seed=6)
        assert_same(self, two_parts(x), cf(x))
        second = [g for g in dyn.debug.graphs(cf) if g.segment == 1][0]
        # the value of the earlier segment it is (the frame's locals are not read: on Python 3.11
        # that would copy them into a dict the frame keeps)
        self.assertEqual([(i["name"], i["kind"]) for i in second.inputs], [("%1 of segment 0", "materialized")])


class TestScalarSources(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_int_argument_deciding_a_loop(self):
        cf = dyn.compile(loop)
        x = randt(3, seed=1)
        for steps in (3, 5, 7, 9, 11, 5):
            assert_same(self, loop(x, steps), cf(x, steps), f"steps={steps}")
        self.assertEqual(counts(), (5, 4, 1))
        uses = f"{BASE}:{line_of(loop, '# STEPS')}"
        # The cause is the closest entry's failure: the one traced with the steps before (its loop
        # matched longest); entry 0's failure says the same of 3.
        for ev, (near, new) in zip(dyn.debug.events("recompile", cf), [(3, 5), (5, 7), (7, 9), (9, 11)]):
            self.assertEqual(ev["closest"], ev["entry"] - 1)
            self.assertEqual(ev["cause"]["key"], "`steps`")
            self.assertEqual((ev["cause"]["first"], ev["cause"]["value"]), (str(near), str(new)))
            self.assertEqual(ev["cause"]["where"], uses)
            self.assertEqual(ev["failures"][0]["cause"], f"`steps` changed from 3 to {new} (used at {uses})")

    def test_float_argument_is_a_named_graph_input(self):
        def scale(x, w):
            return x * w  # W
        cf = dyn.compile(scale)
        x = randt(4, seed=1)
        for w in (0.5, 0.25, -3.0, 1e-30):
            assert_same(self, scale(x, w), cf(x, w), f"w={w}")
        self.assertEqual(counts(), (1, 0, 3))
        (g,) = dyn.debug.graphs(cf)
        self.assertEqual(g.scalar_inputs, [{"node": 1, "op": "mul", "kind": "argument", "name": "w", "traced": 0.5}])
        lines = dyn.debug.guards(cf)[0]
        self.assertIn(f"scalar_input: mul reads 'w' (argument), a float read at each call (0.5 when traced)  "
                      f"# {BASE}:{line_of(scale, '# W')}", "\n".join(lines))

    def test_naming_keeps_no_code_alive(self):
        # a function made by exec (in a loop, say) is freed with its code once it is gone: the
        # namer's caches of what bytecode reads hold code objects weakly
        import gc
        import tempfile
        import weakref
        ns = {}
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write("def made(x, w):\n    return x * w + 1.0\n")
        self.addCleanup(os.unlink, fh.name)
        with open(fh.name) as src:
            exec(compile(src.read(), fh.name, "exec"), ns)
        fn = ns.pop("made")
        code = weakref.ref(fn.__code__)
        cf = dyn.compile(fn)
        for w in (0.5, 0.25):
            cf(randt(3, seed=1), w)
        (g,) = dyn.debug.graphs(cf)
        self.assertEqual([(s["name"], s["kind"]) for s in g.scalar_inputs], [("w", "argument"), ("1.0", "literal")])
        del fn, cf, g
        dyn.debug.reset()
        gc.collect()
        self.assertIsNone(code(), gc.get_referrers(code()) if code() else None)

    def test_literal_is_not_named(self):
        def half(x):
            return x * 0.5
        cf = dyn.compile(half)
        cf(randt(3, seed=1))
        (g,) = dyn.debug.graphs(cf)
        self.assertEqual([(s["name"], s["kind"]) for s in g.scalar_inputs], [("0.5", "literal")])
        self.assertIn("scalar_input: mul reads the literal 0.5", "\n".join(dyn.debug.guards(cf)[0]))
        self.assertNotIn("float input", g.text())  # only named numbers are listed with the inputs


class Logged(dict):
    """A dict whose reads are user code (and issue dyn ops)."""
    reads = 0

    def __getitem__(self, k):
        Logged.reads += 1
        dyn.ones(1) * 2  # an op, inside the region when the compiled function reads it
        return dict.__getitem__(self, k)


class TestNamingHasNoSideEffects(unittest.TestCase):
    """Naming runs no user code, changes nothing the program can see, keeps nothing alive."""

    def setUp(self):
        dyn.debug.reset()

    def test_user_getitem_runs_as_often_as_in_eager(self):
        def f(x, cfg):
            return (x + 1) * cfg["scale"]
        cf = dyn.compile(f)
        x = randt(3, seed=1)
        for s in (2.0, 3.0):
            Logged.reads = 0
            want = f(x, Logged(scale=s))
            eager_reads = Logged.reads
            Logged.reads = 0
            assert_same(self, want, cf(x, Logged(scale=s)), f"scale {s}")
            self.assertEqual(Logged.reads, eager_reads)

    def test_a_held_locals_dict_is_left_alone(self):
        def f(x, s):
            env = locals()
            y = x * s
            z = y + s
            return sorted(env), z
        cf = dyn.compile(f)
        x = randt(3, seed=1)
        for s in (0.5, 0.25):
            assert_same(self, f(x, s), cf(x, s), f"s={s}")

    def test_reassigned_module_attribute_is_not_an_extra_output(self):
        class M(dyn.nn.Module):
            def forward(self, x, n):
                self.h = x * 2
                for _ in range(n):
                    self.h = self.h + 1
                return self.h
        m = M()
        cm = dyn.compile(m)
        x = randt(3, seed=1)
        for n in (1, 2):
            assert_same(self, m(x, n), cm(x, n), f"n={n}")
        for g in dyn.debug.graphs(cm):
            self.assertEqual(len(g.nodes[-1].outputs), 1)
            self.assertEqual(g.text().splitlines()[-1], f"return (%{g.nodes[-1].outputs[0]})", g.text())


class TestCauses(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def test_an_unread_counter_is_not_the_cause(self):
        def f(x, it, n):
            for _ in range(n):
                x = x + 1
            return x
        cf = dyn.compile(f)
        x = randt(3, seed=1)
        for it, n in ((0, 1), (1, 1), (2, 2), (3, 2), (4, 3)):
            assert_same(self, f(x, it, n), cf(x, it, n))
        keys = {e["cause"]["key"] for e in dyn.debug.events("recompile", cf)}
        self.assertEqual(keys, {"`n`"})

    def test_a_float_is_not_blamed_for_a_branch_on_a_tensor(self):
        def f(x, lr):
            y = x * lr
            if y.sum() > 0:
                return y + 1
            return y - 1
        cf = dyn.compile(f)
        for x, lr in ((dyn.ones(3), 0.5), (dyn.ones(3), -0.5)):
            assert_same(self, f(x, lr), cf(x, lr))
        (ev,) = dyn.debug.events("recompile", cf)
        self.assertEqual(ev["failures"][0]["guard"], "branch")
        self.assertEqual(ev["failures"][0]["cause"], "")

    def test_the_changed_clamp_bound_is_named(self):
        def f(x, lo, hi):
            return x.clamp(lo, hi)
        cf = dyn.compile(f)
        x = dyn.tensor([1, 5, 9])
        for hi in (3, 4):
            assert_same(self, f(x, 2, hi), cf(x, 2, hi))
        (ev,) = dyn.debug.events("recompile", cf)
        self.assertEqual(ev["cause"]["key"], "`hi`")
        # two local bounds in one call are not told apart by their text: the failure names the op
        self.assertEqual(ev["failures"][0]["what"], "constant of clamp changed")


def make_training(opt_kind, seed=0):
    dyn.manual_seed(seed)
    model = dyn.nn.Sequential(dyn.nn.Linear(6, 8), dyn.nn.GELU(), dyn.nn.Linear(8, 3))
    if opt_kind == "adamw":
        opt = dyn.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    else:
        opt = dyn.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, opt


class TestTrainingWithSchedules(unittest.TestCase):
    """A compiled training step under lr schedules: one graph for every lr (and betas), one recompile
    for the ragged last batch, parameters bitwise equal to an eager twin after every epoch."""

    def setUp(self):
        dyn.debug.reset()

    def run_schedule(self, opt_kind, make_scheduler, epochs=4, batches=(8, 8, 8, 5)):
        model, opt = make_training(opt_kind)
        twin, twin_opt = make_training(opt_kind)
        sched, twin_sched = make_scheduler(opt), make_scheduler(twin_opt)
        loss_fn = dyn.nn.CrossEntropyLoss()

        def step(m, o, x, y):
            o.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            o.step()
            return loss

        train_step = dyn.compile(step)
        data = [(randt(b, 6, seed=10 + i), dyn.randint(0, 3, (b,))) for i, b in enumerate(batches)]
        lrs = []
        for epoch in range(epochs):
            for i, (x, y) in enumerate(data):
                want = step(twin, twin_opt, copy_tensor(x), copy_tensor(y))
                got = train_step(model, opt, x, y)
                assert_same(self, want, got, f"epoch {epoch} batch {i} loss")
                if per_batch(sched):
                    sched.step()
                    twin_sched.step()
            lrs.append(opt.param_groups[0]["lr"])
            if not per_batch(sched):
                sched.step()
                twin_sched.step()
            for (n, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
                assert_same(self, q, p, f"epoch {epoch} {n}")
        self.assertEqual(len(set(lrs)), len(lrs), f"the lr changed every epoch: {lrs}")
        return train_step

    def check_one_recompile_for_the_ragged_batch(self, cf):
        compiles, recompiles, hits = counts()
        self.assertEqual(recompiles, 1, [e["failures"] for e in dyn.debug.events("recompile", cf)])
        (ev,) = dyn.debug.events("recompile", cf)
        self.assertEqual(ev["cause"]["key"], "dim 0 of tensor 'x' (argument)")
        self.assertEqual((ev["cause"]["first"], ev["cause"]["value"]), ("8", "5"))

    def test_adamw_with_lr_halved_per_epoch(self):
        cf = self.run_schedule("adamw", lambda o: dyn.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5))
        self.check_one_recompile_for_the_ragged_batch(cf)
        guards = "\n".join(dyn.debug.guards(cf)[0])
        # the optimizer's state and hyperparameters are named by their path from the call's arguments
        self.assertIn("tensor 'o.state[m[0].weight]['exp_avg']' (optimizer state)", guards)
        self.assertIn("tensor 'm[2].bias' (parameter)", guards)
        self.assertIn("'o.param_groups[0]['lr']' (optimizer state)", guards)
        # backward's own numbers are named after the derivative that wrote them
        self.assertIn("div reads the literal 8.0 in the derivative of mean", guards)
        # nothing anywhere in the entry is anonymous
        for anonymous in ("unnamed", "made outside", "tensor %"):
            self.assertNotIn(anonymous, guards)

    def test_sgd_momentum_with_cosine_annealing(self):
        cf = self.run_schedule("sgd", lambda o: dyn.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3))
        self.check_one_recompile_for_the_ragged_batch(cf)
        self.assertIn("mul reads '-o.param_groups[0]['lr']' (optimizer state)", "\n".join(dyn.debug.guards(cf)[0]))

    def test_adamw_with_one_cycle_changing_lr_and_betas_every_step(self):
        cf = self.run_schedule("adamw", lambda o: dyn.optim.lr_scheduler.OneCycleLR(o, max_lr=0.05, total_steps=40))
        self.check_one_recompile_for_the_ragged_batch(cf)


class TestNoAnonymousSource(unittest.TestCase):
    """Numbers that dyn's own modules and functions pass on are named too: LayerNorm's eps by the
    module's path, masked_fill's float('-inf') as the literal the user wrote, an optimizer's
    hyperparameters even beside a model with hundreds of attributes, zeros' 0.0 inside dyn."""

    def setUp(self):
        dyn.debug.reset()

    def check_named(self, cf):
        text = "\n".join(line for entry in dyn.debug.guards(cf) for line in entry)
        for anonymous in ("unnamed", "made outside", "tensor %"):
            self.assertNotIn(anonymous, text)
        return text

    def test_layer_norm_eps_and_masked_fill_value(self):
        class Block(dyn.nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = dyn.nn.LayerNorm(4)

            def forward(self, x, mask):
                return self.ln(x).masked_fill(mask, float("-inf"))

        model = dyn.nn.Sequential(Block(), Block())
        cf = dyn.compile(lambda x, mask: model[1](model[0](x, mask), mask))
        x, mask = randt(3, 4), randt(3, 4) > 0
        cf(x, mask)
        text = self.check_named(cf)
        self.assertIn("layer_norm reads 'model[0].ln.eps' (attribute)", text)
        self.assertIn("full reads the literal float('-inf')", text)

    def test_optimizer_beside_a_large_model(self):
        # 40 BatchNorms: well past the cap on plain values kept for explaining recompiles
        model = dyn.nn.Sequential(*[dyn.nn.BatchNorm1d(4) for _ in range(40)], dyn.nn.Linear(4, 2))
        opt = dyn.optim.SGD(model.parameters(), lr=0.1, weight_decay=1e-2)

        def step(m, x, o):
            o.zero_grad()
            m(x).sum().backward()
            o.step()

        cf = dyn.compile(step)
        cf(model, randt(8, 4), opt)
        text = self.check_named(cf)
        self.assertIn("'o.param_groups[0]['weight_decay']' (optimizer state)", text)
        self.assertIn("'-o.param_groups[0]['lr']' (optimizer state)", text)


def per_batch(sched):
    return isinstance(sched, dyn.optim.lr_scheduler.OneCycleLR)


if __name__ == "__main__":
    unittest.main()
