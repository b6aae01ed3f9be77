"""torch.fx under dyn (python/dyn/fx): symbolic tracing of functions and modules into graphs whose
nodes, printed graph and generated code are torch.fx's (the expected texts below are what PyTorch
2.15's torch.fx printed for the same programs), graph editing, and GraphModule running the code."""
import operator
import unittest

import torch  # dyn, under dynrepl
import torch.fx as fx


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.w = torch.nn.Parameter(torch.ones(2))

    def forward(self, x, y=2.0):
        h = torch.relu(self.lin(x)) * self.w + y
        return h.sum(dim=-1), x[:, 0]


GRAPH = """graph():
    %x : [num_users=2] = placeholder[target=x]
    %y : [num_users=1] = placeholder[target=y](default=2.0)
    %lin : [num_users=1] = call_module[target=lin](args = (%x,), kwargs = {})
    %relu : [num_users=1] = call_function[target=torch.relu](args = (%lin,), kwargs = {})
    %w : [num_users=1] = get_attr[target=w]
    %mul : [num_users=1] = call_function[target=operator.mul](args = (%relu, %w), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%mul, %y), kwargs = {})
    %sum_1 : [num_users=1] = call_method[target=sum](args = (%add,), kwargs = {dim: -1})
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%x, (slice(None, None, None), 0)), \
kwargs = {})
    return (sum_1, getitem)"""

CODE = """


def forward(self, x, y = 2.0):
    lin = self.lin(x)
    relu = torch.relu(lin);  lin = None
    w = self.w
    mul = relu * w;  relu = w = None
    add = mul + y;  mul = y = None
    sum_1 = add.sum(dim = -1);  add = None
    getitem = x[(slice(None, None, None), 0)];  x = None
    return (sum_1, getitem)
    """


class TestTrace(unittest.TestCase):
    def test_module_graph_and_code_are_torch_fx_s(self):
        m = M()
        gm = fx.symbolic_trace(m)
        self.assertEqual(str(gm.graph), GRAPH)
        self.assertEqual(gm.code, CODE)
        self.assertEqual(type(gm).__name__, "M")
        x = torch.randn(4, 3)
        for a, b in zip(gm(x), m(x)):
            self.assertTrue(torch.equal(a, b))
        self.assertEqual([n.op for n in gm.graph.nodes][:3], ["placeholder", "placeholder", "call_module"])

    def test_edit_replace_erase_recompile(self):
        gm = fx.symbolic_trace(M())
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target is operator.mul:
                with gm.graph.inserting_after(n):
                    new = gm.graph.call_function(torch.sub, n.args)
                n.replace_all_uses_with(new)
                gm.graph.erase_node(n)
        gm.graph.lint()
        gm.recompile()
        self.assertIn("sub = torch.sub(relu, w);  relu = w = None", gm.code)
        x = torch.randn(2, 3)
        want = (torch.relu(gm.lin(x)) - gm.w + 2.0).sum(dim=-1)
        self.assertTrue(torch.equal(gm(x)[0], want))

    def test_errors(self):
        with self.assertRaisesRegex(fx.TraceError, "control flow"):
            fx.symbolic_trace(lambda x: x if x.sum() > 0 else -x)
        gm = fx.symbolic_trace(lambda x: torch.exp(x) + 1)
        node = [n for n in gm.graph.nodes if n.op == "call_function"][0]
        with self.assertRaisesRegex(RuntimeError, "still had 1 users"):
            gm.graph.erase_node(node)

    def test_a_new_graph_built_by_hand(self):
        g = fx.Graph()
        x = g.placeholder("x")
        y = g.call_function(torch.exp, (x,))
        g.output(g.call_method("sum", (y,)))
        gm = fx.GraphModule(torch.nn.Module(), g)
        t = torch.tensor([0.0, 1.0])
        self.assertTrue(torch.equal(gm(t), t.exp().sum()))
        self.assertIn("exp = torch.exp(x);  x = None", gm.code)

    def test_a_tracer_subclass_makes_every_node_through_create_node(self):
        """pytorch/examples fx/custom_tracer.py: overriding Tracer.create_node tags every node,
        placeholders and output included."""
        class Tagging(torch.fx.Tracer):
            def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
                n = super().create_node(kind, target, args, kwargs, name)
                n.tag = "foo"
                return n

        class Add(torch.nn.Module):
            def forward(self, a, b=2):
                return a + b

        g = Tagging().trace(Add())
        self.assertEqual([n.op for n in g.nodes], ["placeholder", "placeholder", "call_function", "output"])
        self.assertTrue(all(getattr(n, "tag", None) == "foo" for n in g.nodes))
        self.assertEqual(list(g.nodes)[1].args, (2,))  # a default value is the placeholder's argument

    def test_interpreter_runs_node_by_node(self):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 3)

            def forward(self, x, scale=2.0):
                y = torch.relu(self.lin(x)) * scale
                return y.sum(-1), y

        torch.manual_seed(0)
        gm = fx.symbolic_trace(Net())
        x = torch.randn(2, 4)

        class Counting(fx.Interpreter):
            def __init__(self, mod):
                super().__init__(mod)
                self.ops = []

            def run_node(self, n):
                self.ops.append(n.op)
                return super().run_node(n)

        c = Counting(gm)
        out = c.run(x)
        self.assertEqual(c.ops, ["placeholder", "placeholder", "call_module", "call_function", "call_function",
                                 "call_method", "output"])
        self.assertTrue(torch.equal(out[0], gm(x)[0]) and torch.equal(out[1], gm(x)[1]))
        self.assertEqual([n.op for n in c.env], ["output"])  # the others dropped after their last use

        class Sigmoid(fx.Interpreter):
            def call_function(self, target, args, kwargs):
                if target is torch.relu:
                    return torch.sigmoid(*args)
                return super().call_function(target, args, kwargs)

        self.assertTrue(torch.equal(Sigmoid(gm).run(x, 1.0)[1], torch.sigmoid(gm.lin(x))))
        with self.assertRaisesRegex(RuntimeError, "Expected positional argument for parameter"):
            fx.Interpreter(fx.symbolic_trace(lambda a, b: a + b)).run(x)

        class Gelu(fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is torch.relu:
                    target = torch.nn.functional.gelu
                return super().call_function(target, args, kwargs)

        new = Gelu(gm).transform()
        self.assertEqual(type(new).__name__, "GraphModule")
        self.assertEqual([n.target for n in new.graph.nodes if n.op == "call_function"][0].__name__, "gelu")
        self.assertTrue(torch.equal(new(x)[1], torch.nn.functional.gelu(gm.lin(x)) * 2.0))

    def test_buffers_are_values_and_names_keep_underscores(self):
        """As torch.fx: a buffer read by attribute is its value (b.sum() runs, and its result is a
        _tensor_constant attribute); nodes keep the underscores of their names (relu_, _private).
        The expected texts are what PyTorch 2.15 printed for the same modules."""
        class B(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", torch.ones(3))

            def forward(self, x):
                return x + self.b.sum() + self.b

        gm = fx.symbolic_trace(B())
        self.assertEqual(str(gm.graph).strip(), """graph():
    %x : [num_users=1] = placeholder[target=x]
    %_tensor_constant0 : [num_users=1] = get_attr[target=_tensor_constant0]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %_tensor_constant0), kwargs = {})
    %b : [num_users=1] = get_attr[target=b]
    %add_1 : [num_users=1] = call_function[target=operator.add](args = (%add, %b), kwargs = {})
    return add_1""")
        x = torch.randn(3)
        self.assertTrue(torch.equal(gm(x), x + 3.0 + 1.0))

        class N(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = torch.nn.ModuleList([torch.nn.ReLU()])
                self._private = torch.nn.Parameter(torch.ones(2))

            def forward(self, x):
                y = x.relu_()
                z = self.layers[0](y) + self._private
                return z.add_(1).__add__(2)

        self.assertEqual([n.name for n in fx.symbolic_trace(N()).graph.nodes],
                         ["x", "relu_", "layers_0", "_private", "add", "add_", "add_1", "output"])

    def test_tracing_leaves_dyn_as_it_was(self):
        before = torch.exp
        with self.assertRaises(fx.TraceError):
            fx.symbolic_trace(lambda x: [v for v in x])
        self.assertIs(torch.exp, before)
        self.assertIs(torch.nn.Module.__call__, torch.nn.Module.__dict__["__call__"])


if __name__ == "__main__":
    unittest.main()
