"""In-place ops on tensors that take part in autograd: the values, gradients and grad_fn names they
give, and the errors PyTorch raises (a leaf, a view of a leaf, a view made under no_grad, a saved
value written before backward()). Run by PyTorch 2.15 to record autograd.json (record.py) and by
dyn to compare with it (test_autograd_inplace.py)."""
from reference import encode_value, recorder



def _grads(torch, f, *leaves, wrap=None):
    """f's result, the name of its grad_fn, and each leaf's gradient of result * weights summed.
    wrap: what f is called through (dyn.compile, to compare compiled with eager)."""
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in leaves]
    out = (wrap(f) if wrap else f)(*xs)
    name = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    w = torch.arange(1.0, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    (out * w).sum().backward()
    return (out.detach(), name) + tuple(x.grad if x.grad is not None else "none" for x in xs)


def cases(torch, wrap=None):
    r = {}

    rec = recorder(r)

    A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
    B = [[2.0, 0.25, -1.0], [3.0, -0.5, 1.0]]

    def unary(op):
        def f(a):
            y = a * 1.5
            getattr(y, op)()
            return y
        return f

    for op in ["relu_", "exp_", "tanh_", "sigmoid_", "neg_", "abs_", "sqrt_", "log_", "sin_", "zero_"]:
        rec(f"unary_{op}", lambda: _grads(torch, unary(op), [[1.0, 2.0, 0.5], [3.0, 0.25, 4.0]], wrap=wrap))

    def binary(op, scalar):
        def f(a, b):
            y = a + 0.5
            getattr(y, op)(2.5 if scalar else b)
            return y
        return f

    for op in ["add_", "sub_", "mul_", "div_", "pow_", "clamp_min_", "maximum", "copy_"]:
        for scalar in (False, True):
            if op in ("maximum",) or (op == "copy_" and scalar):
                continue
            f = binary(op, scalar)
            rec(f"binary_{op}_{'scalar' if scalar else 'tensor'}", lambda: _grads(torch, f, A, B, wrap=wrap))

    def iops(a, b):
        y = a * 2
        y += b
        y *= a
        y -= 1
        y /= b
        return y
    rec("augmented_assignments", lambda: _grads(torch, iops, A, B, wrap=wrap))

    def self_product(a):
        y = a + 1
        y.mul_(y)
        return y
    rec("mul_by_itself", lambda: _grads(torch, self_product, A, wrap=wrap))

    def broadcast_into(a, b):
        y = a * 1
        y.add_(b[0])
        return y
    rec("broadcast_operand", lambda: _grads(torch, broadcast_into, A, B, wrap=wrap))

    def setitem_rows(h):
        out = torch.zeros(2, 3, 3, dtype=h.dtype)
        for t in range(3):
            out[:, t] = h * (t + 1)
        return out
    rec("setitem_into_buffer", lambda: _grads(torch, setitem_rows, A, wrap=wrap))

    def setitem_nonleaf(a, b):
        z = a * 1
        z[0] = b[1]
        z[:, 2] = 0.0
        z[1, 0] = b[0, 0] * 3
        return z
    rec("setitem_into_nonleaf", lambda: _grads(torch, setitem_nonleaf, A, B, wrap=wrap))

    def setitem_mask(a, b):
        z = a * 2
        z[z > 2] = 0.0
        z[b < 0] = b[b < 0]
        return z
    rec("setitem_mask", lambda: _grads(torch, setitem_mask, A, B, wrap=wrap))

    def setitem_index(a, b):
        z = a * 2
        z[[1, 0]] = b
        z[0, torch.tensor([2, 0])] = 7.0
        return z
    rec("setitem_index_tensor", lambda: _grads(torch, setitem_index, A, B, wrap=wrap))

    def view_written(a, b):
        z = a * 1
        z[0].mul_(b[0])
        z.t()[1].add_(b[1, :2])
        z.view(6)[5:].sub_(1)
        return z
    rec("view_written_in_place", lambda: _grads(torch, view_written, A, B, wrap=wrap))

    def view_of_view(a):
        z = a.exp()
        v = z[1]
        w = v[1:]
        w.mul_(3)
        return z
    rec("view_of_view_written", lambda: _grads(torch, view_of_view, A, wrap=wrap))

    def view_then_read(a):
        z = a * 1
        v = z[0]
        v.mul_(2)
        return v * z[1]
    rec("written_view_read_after", lambda: _grads(torch, view_then_read, A, wrap=wrap))

    def transposed_base(a, b):
        z = (a * 1).t()
        z[1] = b[0, :2]
        return z
    rec("write_into_transposed_base", lambda: _grads(torch, transposed_base, A, B, wrap=wrap))

    def fill(a):
        z = a * 3
        z[0].fill_(2.0)
        return z
    rec("fill_part", lambda: _grads(torch, fill, A, wrap=wrap))

    def buffer_copy(a):
        buf = torch.zeros(2, 4, dtype=a.dtype)
        buf[:, 1:].copy_(a.exp())
        return buf
    rec("copy_into_buffer_view", lambda: _grads(torch, buffer_copy, A, wrap=wrap))

    def activation_inplace(a):
        return torch.nn.functional.relu(a * 2, inplace=True) + torch.nn.functional.leaky_relu(a, 0.1, inplace=False)
    rec("functional_inplace", lambda: _grads(torch, activation_inplace, A, wrap=wrap))

    def module_inplace(a):
        m = torch.nn.Sequential(torch.nn.ReLU(inplace=True), torch.nn.Hardtanh(-1.0, 2.0, inplace=True))
        return m(a * 1)
    rec("modules_inplace", lambda: _grads(torch, module_inplace, A, wrap=wrap))

    def resnet_add(a, b):
        out = a * b
        out += a
        return torch.relu_(out)
    rec("residual_add", lambda: _grads(torch, resnet_add, A, B, wrap=wrap))

    def detached_alias(a):
        y = a * 3
        d = y.detach()
        d.copy_(a.sigmoid())
        return d + y
    rec("detached_alias_takes_history", lambda: _grads(torch, detached_alias, A, wrap=wrap))

    def grad_fn_of_write():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        names = []
        for f in (lambda: y.add_(1), lambda: y.copy_(a), lambda: y.fill_(0), lambda: y.exp_(),
                  lambda: y.clamp_(0, 1)):
            f()
            names.append(type(y.grad_fn).__name__)
        return names
    rec("grad_fn_names", grad_fn_of_write)

    def version():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        v0 = y._version
        y.add_(1)
        y[0] = 5
        return [v0, y._version]
    rec("version_counter", version)

    # from a review: an expanded view read after its base was written, an in-place op without a
    # derivative, a saved operand whose gradient nobody needs, random fills, in-place activations
    def expanded_view_after_write(a):
        x = a * 1
        y = x.expand(3, 2)
        x.mul_(2)
        return y * torch.arange(6.0, dtype=a.dtype).reshape(3, 2)
    rec("expanded_view_read_after_write", lambda: _grads(torch, expanded_view_after_write, [1.0, 2.0], wrap=wrap))

    def gt_in_place(a):
        x = a * 1
        v = x[:2]
        x.gt_(0)
        return v * 1 + x
    rec("gt_in_place", lambda: _grads(torch, gt_in_place, [1.5, -2.5, 3.25], wrap=wrap))

    def unneeded_saved_operand(a):
        x = a * 1
        y = x * torch.tensor([0.0, 2.0, 2.0], dtype=a.dtype)
        x.add_(1)
        return y + x
    rec("unneeded_saved_operand_written", lambda: _grads(torch, unneeded_saved_operand, [1.0, 2.0, 3.0], wrap=wrap))

    def random_fill_view(a):
        x = a * 1.5
        x[:2].uniform_()
        return x[2:] * 1
    rec("random_fill_of_a_view", lambda: _grads(torch, random_fill_view, [-1.0, 0.7, 2.0, 3.0], wrap=wrap))

    def inplace_elu(a):
        x = a * 1
        return torch.nn.functional.elu(x, inplace=True) + torch.nn.functional.silu(a * 2, inplace=True)
    rec("inplace_elu_silu_non_leaf", lambda: _grads(torch, inplace_elu, [-1.0, 0.5, 2.0], wrap=wrap))

    # Higher-order gradients: create_graph=True through each derivative, then backward again.
    X = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]]
    W = [[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]]
    F = torch.nn.functional
    second = {
        "exp": lambda x: x.exp(), "log": lambda x: (x * x + 1).log(), "sqrt": lambda x: (x * x + 1).sqrt(),
        "rsqrt": lambda x: (x * x + 1).rsqrt(), "sin": lambda x: x.sin(), "cos": lambda x: x.cos(),
        "tanh": lambda x: (x * 0.5).tanh(), "sigmoid": lambda x: x.sigmoid(), "relu": lambda x: x.relu() * x,
        "gelu": lambda x: F.gelu(x), "silu": lambda x: F.silu(x), "erf": lambda x: x.erf(),
        "abs": lambda x: x.abs() * x, "pow": lambda x: x.abs().pow(2.5), "pow_tensor": lambda x: (x * x + 1).pow(x),
        "div": lambda x: x / (x * x + 1), "mul": lambda x: x * x * x, "square": lambda x: x.square() * x,
        "softmax": lambda x: F.softmax(x, 1) * x, "log_softmax": lambda x: F.log_softmax(x, 1) * x,
        "matmul": lambda x: (x @ torch.tensor(W, dtype=x.dtype)) ** 2,
        "layer_norm": lambda x: F.layer_norm(x, (3,)) * x, "sum_mean": lambda x: x.sum(1) ** 2 + x.mean(0).sum() * x,
        "max": lambda x: x.amax(1) * x.sum(1), "clamp": lambda x: x.clamp(-1, 1) * x, "where": lambda x:
        torch.where(x > 0, x * x, x * 3), "norm": lambda x: x.norm() * x, "cumsum": lambda x: x.cumsum(1) ** 2,
        "views": lambda x: (x.t().reshape(6)[1:] ** 2).unsqueeze(0).expand(2, 5),
        "cat_index": lambda x: torch.cat([x, x[:, :1] ** 3], 1)[:, [3, 0]] ** 2,
        "mse": lambda x: F.mse_loss(x * x, torch.ones_like(x)), "cross_entropy": lambda x: F.cross_entropy(
            x * x, torch.tensor([2, 0])),
        "linear": lambda x: F.linear(x, torch.tensor(W, dtype=x.dtype).t(), torch.tensor([0.5, -1.0], dtype=x.dtype))
        .tanh(),
    }

    def twice(f):
        def both(x):
            y = f(x)
            wy = torch.arange(1.0, y.numel() + 1, dtype=y.dtype).reshape(y.shape) / 7
            g, = torch.autograd.grad((y * wy).sum(), x, create_graph=True)
            wg = torch.arange(1.0, g.numel() + 1, dtype=g.dtype).reshape(g.shape) / 5
            (g * g * wg).sum().backward()
            return g.detach()

        x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        return (wrap(both) if wrap else both)(x), x.grad

    for name, f in second.items():
        rec(f"double_backward_{name}", lambda: twice(f))

    def penalty():
        w = torch.tensor(W, dtype=torch.float64, requires_grad=True)
        x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        out = (x @ w).tanh().sum()
        g, = torch.autograd.grad(out, x, create_graph=True)
        loss = out + ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss.backward()
        return w.grad, x.grad
    rec("gradient_penalty", penalty)

    def hvp():
        x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
        v = torch.tensor([1.0, 0.5, -2.0], dtype=torch.float64)
        y = (x.exp() * x.sin()).sum() + (x[0] * x[1] * x[2])
        g, = torch.autograd.grad(y, x, create_graph=True)
        hv, = torch.autograd.grad(g, x, grad_outputs=v)
        return g.detach(), hv
    rec("hessian_vector_product", hvp)

    def third():
        x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
        y = (x ** 4).sum()
        g1, = torch.autograd.grad(y, x, create_graph=True)
        g2, = torch.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = torch.autograd.grad(g2.sum(), x)
        return g1.detach(), g2.detach(), g3
    rec("third_derivative", third)

    def backward_create_graph():
        x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        gx = x.grad
        has = gx.requires_grad
        x.grad = None
        gx.sum().backward()
        return has, x.grad
    rec("backward_create_graph", backward_create_graph)

    def grad_leaves_untouched():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        w.grad = torch.tensor([10.0, 10.0])
        y = (w * x).sum()
        g, = torch.autograd.grad(y, x)
        return g, w.grad, x.grad is None
    rec("grad_leaves_other_grads_alone", grad_leaves_untouched)

    def grad_of_non_leaf():
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        z = x * 2
        y = (z ** 2).sum()
        gz, = torch.autograd.grad(y, z)
        return gz, x.grad is None, z.grad is None
    rec("grad_with_respect_to_non_leaf", grad_of_non_leaf)

    def grad_unused():
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        u = torch.tensor([1.0], requires_grad=True)
        return torch.autograd.grad((x * 2).sum(), [x, u])
    rec("error_grad_unused_input", grad_unused)

    def grad_unused_allowed():
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        u = torch.tensor([1.0], requires_grad=True)
        g = torch.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
        m = torch.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
        return g[0], g[1] is None, m[1]
    rec("grad_allow_unused", grad_unused_allowed)

    def second_time():
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        y = (x * x).sum()
        torch.autograd.grad(y, x)
        torch.autograd.grad(y, x)
    rec("error_grad_twice_without_retain", second_time)

    # torch.autograd.functional
    AF = torch.autograd.functional
    x0 = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    y0 = torch.tensor([[1.0, 2.0], [0.5, -0.25]], dtype=torch.float64)
    v3 = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)

    def f1(x):
        return x.exp() * x.sin() + x ** 2

    def f2(x, y):
        return (x[:2] * y).sum(1).tanh(), (x.sum() * y).exp()

    def scalar(x):
        return (x.exp() * x.sin()).sum() + x[0] * x[1] * x[2]

    def scalar2(x, y):
        return (x[:2] @ y).sin().sum() * x.sum()

    rec("functional_vjp", lambda: AF.vjp(f1, x0, v3))
    rec("functional_vjp_tuple", lambda: AF.vjp(f2, (x0, y0), (torch.ones(2, dtype=torch.float64), y0)))
    rec("functional_jvp", lambda: AF.jvp(f1, x0, v3))
    rec("functional_jvp_tuple", lambda: AF.jvp(f2, (x0, y0), (v3, y0)))
    rec("functional_jacobian", lambda: AF.jacobian(f1, x0))
    rec("functional_jacobian_tuple", lambda: AF.jacobian(f2, (x0, y0)))
    rec("functional_hessian", lambda: AF.hessian(scalar, x0))
    rec("functional_hessian_tuple", lambda: AF.hessian(scalar2, (x0, y0)))
    rec("functional_hvp", lambda: AF.hvp(scalar, x0, v3))
    rec("functional_vhp", lambda: AF.vhp(scalar2, (x0, y0), (v3, y0)))
    rec("functional_jacobian_independent", lambda: AF.jacobian(lambda x, y: x * 2, (x0, y0)))
    rec("error_functional_strict", lambda: AF.jacobian(lambda x, y: x * 2, (x0, y0), strict=True))
    rec("error_functional_v_missing", lambda: AF.vjp(f1, x0))
    rec("error_functional_not_scalar", lambda: AF.hessian(f1, x0))
    rec("error_functional_bad_inputs", lambda: AF.jacobian(f1, [1.0, 2.0]))

    # errors
    def leaf_write():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        a.add_(1)
    rec("error_leaf", leaf_write)

    def leaf_view_write():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        a[0] = 3.0
    rec("error_view_of_leaf", leaf_view_write)

    def no_grad_view():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        with torch.no_grad():
            v = y[:1]
        v.mul_(2)
    rec("error_view_made_under_no_grad", no_grad_view)

    def no_grad_view_of_buffer():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        buf = torch.zeros(3)
        with torch.no_grad():
            v = buf[:2]
        v.copy_(a)
    rec("error_no_grad_view_of_buffer", no_grad_view_of_buffer)

    def saved_output_written():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (a * 2).exp()
        y.add_(1)
        y.sum().backward()
    rec("error_saved_output_written", saved_output_written)

    def inplace_output_written():
        a = torch.tensor([1.0, -2.0], requires_grad=True)
        y = a * 2
        y.relu_()
        y[0] = 3.0
        y.sum().backward()
    rec("error_inplace_output_written", inplace_output_written)

    def saved_input_written():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        z = y * y
        y.add_(1)
        z.sum().backward()
    rec("error_saved_input_written", saved_input_written)

    def int_target():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        t = torch.tensor([1, 2])
        t.add_(a)
    rec("error_int_target", int_target)

    def shape_error():
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a[:1] * 2
        y.add_(a)
    rec("error_broadcast_into", shape_error)
    return r


def encode(torch, v):
    return encode_value(torch, v)
