"""Compile-region semantics: nesting, mutation write-back, modules, recursion, shape queries,
naming, cache entries and reset. (Exceptions and bad input: test_compile_exceptions.py.)

Results are compared bitwise with running the same function eagerly on copies of the inputs.
"""
import unittest

import dyn
from compiletest import assert_same, break_events, copy_tensor, line_of, ops_of, randt as data, same_file

BACKENDS = ("default", "eager")


class Base(unittest.TestCase):
    def setUp(self):
        dyn.debug.reset()

    def compare_with_eager(self, f, make, calls=2):
        """Runs f eagerly and compiled (both backends) on fresh inputs; outputs and inputs bitwise."""
        for backend in BACKENDS:
            cf = dyn.compile(f, backend=backend)
            for call in range(calls):
                xe = make()
                xc = [copy_tensor(t) for t in xe]
                want = f(*xe)
                got = cf(*xc)
                assert_same(self, (want, xe), (got, xc), f"{f.__name__}/{backend}/call {call}")


class TestNesting(Base):
    def test_inner_is_inlined(self):
        def inner(x):
            return x * 2.0 + 1.0  # INNER
        cinner = dyn.compile(inner)

        def outer(x):
            y = cinner(x)
            return y.exp()  # OUTER
        couter = dyn.compile(outer)
        x = data(3)
        want = inner(copy_tensor(x)).exp()  # eager reference (outer() itself would call cinner)
        assert_same(self, want, couter(x), "nested")
        self.assertEqual(ops_of(couter), [["mul", "add", "exp"]])
        self.assertEqual(dyn.debug.graphs(cinner), [])
        g = dyn.debug.graphs(couter)[0]
        self.assertEqual([n.line for n in g.nodes], [line_of(inner, "# INNER")] * 2 + [line_of(outer, "# OUTER")])
        self.assertEqual([fr[2] for fr in g.nodes[0].stack[:2]], ["inner", "outer"])
        self.assertEqual(dyn.debug.counters()["calls"], 1)
        # called on its own, inner gets its own graph
        assert_same(self, inner(copy_tensor(x)), cinner(x), "inner alone")
        self.assertEqual(ops_of(cinner), [["mul", "add"]])

    def test_break_inside_inlined_function(self):
        def inner(x):
            if x.sum() > 0:  # BREAK
                return x + 1.0
            return x
        cinner = dyn.compile(inner)

        def outer(x):
            return cinner(x * 2.0).exp()
        couter = dyn.compile(outer)
        x = data(4, seed=1).abs()
        assert_same(self, inner(copy_tensor(x) * 2.0).exp(), couter(x), "nested break")
        self.assertEqual(ops_of(couter), [["mul", "sum", "gt"], ["add", "exp"]])
        (e,) = break_events(couter)
        self.assertEqual(break_events(cinner), [])
        self.assertEqual((e["fn"], e["line"], e["break_kind"]), (couter.name, line_of(inner, "# BREAK"),
                                                                 "data_dependent_branch"))


class TestMutation(Base):
    def test_augmented_add_on_argument(self):
        def f(w, v):
            w += v
            return w * 2.0
        self.compare_with_eager(f, lambda: [data(3), data(3, seed=1)])
        w = data(3)
        wid = id(w)
        dyn.compile(f)(w, data(3, seed=1))
        self.assertEqual(id(w), wid)

    def test_index_assignment_on_argument(self):
        def f(x):
            x[0] = 5
            x[1:, 1] = -1.5
            return x.sum(dim=0)
        self.compare_with_eager(f, lambda: [data(3, 2)])

    def test_inplace_on_view_of_lazy_tensor(self):
        def f(x):
            y = x * 2.0
            y[1:].add_(1.0)
            y.t()[0].mul_(3.0)
            return y
        self.compare_with_eager(f, lambda: [data(3, 3)])

    def test_inplace_on_global(self):
        def f(x):
            G.mul_(0.5)
            G.add_(x)
            return G * 1.0
        global G
        for backend in BACKENDS:
            G = data(4, seed=5)
            want = f(data(4))
            g_eager = G
            G = data(4, seed=5)
            got = dyn.compile(f, backend=backend)(data(4))
            assert_same(self, (want, g_eager), (got, G), backend)

    def test_argument_is_view_of_bigger_tensor(self):
        for backend in BACKENDS:
            be, bc = data(6), data(6)

            def f(v, base):
                v.mul_(2.0)
                return base.sum(), v + 0.0
            want = f(be[1:4], be)
            got = dyn.compile(f, backend=backend)(bc[1:4], bc)
            assert_same(self, (want, be), (got, bc), backend)

    def test_mutation_then_break_then_use(self):
        def f(w):
            w.add_(1.0)
            s = w.sum().item()
            w.mul_(s)
            return w - 1.0
        self.compare_with_eager(f, lambda: [data(3)])

    def test_module_parameter_mul_(self):
        class M(dyn.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = dyn.nn.Parameter(data(2, 2, seed=3))

            def forward(self, x):
                y = x @ self.w
                with dyn.no_grad():  # parameters require grad: updates go under no_grad, as in PyTorch
                    self.w.mul_(0.9)
                return y
        me, mc = M(), M()
        x = data(1, 2)
        want = me(copy_tensor(x))
        got = dyn.compile(mc)(x)
        assert_same(self, (want, me.w), (got, mc.w), "param write-back")
        self.assertTrue(mc.w.requires_grad)

    def test_cse_must_not_merge_clones_mutated_later(self):
        def clones(x):
            a = x.clone()
            b = x.clone()
            a.add_(1.0)
            return a, b
        self.compare_with_eager(clones, lambda: [data(3)])

    def test_cse_must_not_merge_values_mutated_later(self):
        def adds(x):
            a = x + 0.0
            b = x + 0.0
            a.mul_(3.0)
            return a + b
        self.compare_with_eager(adds, lambda: [data(3)])

    def test_outputs_do_not_alias(self):
        def f(x):
            return x * 2.0, x * 2.0
        for backend in BACKENDS:
            a, b = dyn.compile(f, backend=backend)(data(3))
            before = b.tolist()
            a.add_(100.0)  # eager: a and b are different tensors
            self.assertEqual(b.tolist(), before, backend)


class TestModule(Base):
    def test_parameters_are_named_inputs(self):
        class Lin(dyn.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = dyn.nn.Parameter(data(3, 2, seed=1))
                self.bias = dyn.nn.Parameter(data(3, seed=2))

            def forward(self, x):
                return x @ self.weight.t() + self.bias

        class Net(dyn.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = Lin()
                self.scale = dyn.nn.Parameter(data(3, seed=4))

            def forward(self, x):
                return self.fc(x).relu() * self.scale
        net = Net()
        cnet = dyn.compile(net)
        x = data(4, 2)
        assert_same(self, net(copy_tensor(x)), cnet(x), "module")
        self.assertEqual(cnet.name, "Net")
        (g,) = dyn.debug.graphs(cnet)
        self.assertEqual(g.ops, ["permute", "matmul", "add", "relu", "mul"])
        self.assertEqual(g.id, "Net[0].0")
        kinds = {i["name"]: i["kind"] for i in g.inputs}
        # parameters by their path from the name the call used for the module (cnet(x))
        self.assertEqual(kinds, {"x": "argument", "cnet.fc.weight": "parameter", "cnet.fc.bias": "parameter",
                                 "cnet.scale": "parameter"})
        self.assertEqual([g.id for g in dyn.debug.graphs(net)], ["Net[0].0"])

    def test_argument_names(self):
        def f(xs, scale, *, bias=None, opts=None):
            return xs[0] * scale + xs[1] + bias + opts["b"]
        cf = dyn.compile(f)
        cf([data(2), data(2, seed=1)], 2.0, bias=data(2, seed=2), opts={"b": data(2, seed=3)})
        (g,) = dyn.debug.graphs(cf)
        self.assertEqual([(i["kind"], i["name"]) for i in g.inputs],
                         [("argument", "xs[0]"), ("argument", "xs[1]"), ("argument", "bias"),
                          ("argument", "opts['b']")])


class TestMisc(Base):
    def test_recursion(self):
        def fact(x, n):
            if n == 0:
                return x
            return cfact(x * 2.0 + 1.0, n - 1) - 0.5
        cfact = dyn.compile(fact)
        x = data(3)
        want = self.eager_fact(copy_tensor(x), 4)
        got = cfact(x, 4)
        assert_same(self, want, got, "recursion")
        self.assertEqual(ops_of(cfact), [["mul", "add"] * 4 + ["sub"] * 4])
        self.assertEqual(dyn.debug.counters()["calls"], 1)

    def eager_fact(self, x, n):
        return x if n == 0 else self.eager_fact(x * 2.0 + 1.0, n - 1) - 0.5

    def test_recursion_with_data_dependent_stop(self):
        def grow(x):
            if x.sum() > 50.0:
                return x
            return cgrow(x * 3.0)
        cgrow = dyn.compile(grow)

        def eager(x):
            return x if x.sum() > 50.0 else eager(x * 3.0)
        x = dyn.tensor([1.0, 2.0])
        assert_same(self, eager(copy_tensor(x)), cgrow(x), "recursion with breaks")
        self.assertEqual(len(break_events(cgrow)), 4)

    def test_shape_queries_do_not_break(self):
        def f(x):
            n, m = x.shape
            y = x.reshape(m, n) * x.ndim
            z = y.sum(dim=0) + x.numel() + len(x) + x.size(1)
            assert y.shape == (m, n) and y.dtype == dyn.float32
            return z.unsqueeze(0).expand(n, z.shape[0])
        cf = dyn.compile(f)
        assert_same(self, f(data(2, 3)), cf(data(2, 3)), "shapes")
        self.assertEqual(break_events(cf), [])
        self.assertEqual(len(dyn.debug.graphs(cf)), 1)

    def test_names(self):
        def same(x):
            return x + 1.0
        c1 = dyn.compile(same)

        def same(x):  # noqa: F811
            return x + 2.0
        c2 = dyn.compile(same)
        c3 = dyn.compile(lambda x: x * 3.0, name="triple")
        c1(data(2)), c2(data(2)), c3(data(2))
        base = c1.name
        self.assertEqual(c2.name, base + "#" + c2.name.split("#")[1])
        self.assertNotEqual(c1.name, c2.name)
        self.assertEqual(ops_of(c1), [["add"]])
        self.assertEqual(ops_of(c2), [["add"]])
        self.assertTrue(dyn.debug.graphs(c3)[0].id.startswith("triple"))

    def test_repeated_calls_reuse_entry_and_new_shape_new_entry(self):
        def f(x):
            return (x * 2.0).sum(dim=-1)
        cf = dyn.compile(f)
        for seed in range(3):
            assert_same(self, f(data(2, 3, seed=seed)), cf(data(2, 3, seed=seed)), "reuse")
        self.assertEqual([(g.id, g.calls) for g in dyn.debug.graphs(cf)], [(f"{cf.name}[0].0", 3)])
        assert_same(self, f(data(4, 5)), cf(data(4, 5)), "new shape")
        self.assertEqual([g.id for g in dyn.debug.graphs(cf)], [f"{cf.name}[0].0", f"{cf.name}[1].0"])
        self.assertEqual(dyn.debug.graphs(cf)[1].nodes[0].shape, (4, 5))

    def test_reset_forgets_cache_entries(self):
        def f(x):
            return x * 2.0
        cf = dyn.compile(f)
        cf(data(3))
        dyn.debug.reset()
        self.assertEqual(dyn.debug.graphs(), [])
        self.assertEqual(dyn.debug.counters()["calls"], 0)
        cf(data(4))
        # reset forgets caches: the next call is a first compile again, entry 0
        self.assertEqual([g.id for g in dyn.debug.graphs(cf)], [f"{cf.name}[0].0"])

    def test_reset_inside_region_is_an_error(self):
        def f(x):
            dyn.debug.reset()
            return x
        with self.assertRaises(RuntimeError):
            dyn.compile(f)(data(2))
        self.assertEqual(dyn.compile(lambda x: x * 2.0)(dyn.tensor([1.0])).tolist(), [2.0])

    def test_decorator_forms_and_method(self):
        @dyn.compile
        def a(x):
            return x + 1.0

        @dyn.compile(backend="eager", fullgraph=True, cache_limit=3, name="bee")
        def b(x):
            return x + 2.0

        class K:
            @dyn.compile
            def m(self, x):
                return x * 4.0
        x = dyn.tensor([1.0])
        self.assertEqual((a(x).tolist(), b(x).tolist(), K().m(x).tolist()), ([2.0], [3.0], [4.0]))
        self.assertEqual((b.backend, b.fullgraph, b.cache_limit, b.name), ("eager", True, 3, "bee"))
        self.assertEqual(ops_of("bee"), [["add"]])
        self.assertTrue(same_file(dyn.debug.graphs(a)[0].nodes[0].file, __file__))


if __name__ == "__main__":
    unittest.main()
