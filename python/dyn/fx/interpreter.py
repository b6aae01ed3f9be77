"""torch.fx.Interpreter and Transformer: running a GraphModule's graph node by node, with a method
per node kind that a subclass overrides (to profile, to swap an op, to look at each value), and
building a new graph the same way."""
import dyn

from . import Graph, GraphModule, Proxy, Tracer, _fetch, _map_arg, _nodes_in

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs module.graph (or graph) on concrete values: run_node calls the method named by each
    node's op (placeholder, get_attr, call_function, call_method, call_module, output) with its
    target and its arguments looked up in the values computed so far."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules()) if isinstance(module, dyn.nn.Module) else {}
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # the last node that uses each value: the value is dropped after it
            self.user_to_last_uses = {}
            seen = set()
            for node in reversed(list(self.graph.nodes)):
                for n in _nodes_in(node.args) + _nodes_in(node.kwargs):
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """The graph's output for these arguments."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if len(args) > 0:
                return args[0]  # the parameter's default value
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!")

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target):
        try:
            return _fetch(self.module, target)
        except AttributeError as e:
            raise RuntimeError(f"Node referenced nonexistent target {target}") from e

    def fetch_args_kwargs_from_env(self, n):
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n):
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose such "
                                   "issues")
            return self.env[a]
        return _map_arg(args, load)


def _unproxy(a):
    """a with each Proxy replaced by its node."""
    if isinstance(a, Proxy):
        return a.node
    if isinstance(a, (tuple, list)):
        return type(a)(_unproxy(x) for x in a)
    if isinstance(a, dict):
        return {k: _unproxy(v) for k, v in a.items()}
    return a


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, m, module_qualified_name):
        return True


class Transformer(Interpreter):
    """An Interpreter that runs the graph on Proxies of a new graph: transform() gives a
    GraphModule of what the overridden methods made of each node."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = () if len(args) == 0 else (args[0],)
        return Proxy(self.tracer.create_node("placeholder", target, default, {}, target), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def transform(self):
        """The new GraphModule: the original module's attributes, the new graph."""
        result = super().run()
        if result is not None:
            self.new_graph.output(_unproxy(result))
        return GraphModule(self.module, self.new_graph)

