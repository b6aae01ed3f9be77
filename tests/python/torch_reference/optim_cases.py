"""The optimizers added in optim/{adamax,nadam,radam,rprop,asgd}.py: eight steps on a fixed problem,
the parameters after each step and the state after the last, for each hyperparameter set. Run by
PyTorch 2.15 to record optim.json (record.py) and by dyn to compare with it (test_optim_extras.py)."""
from reference import encode_value, recorder

CONFIGS = [("Adamax", {}), ("Adamax", dict(lr=0.1, weight_decay=0.1, maximize=True)), ("NAdam", {}),
           ("NAdam", dict(lr=0.05, weight_decay=0.01, decoupled_weight_decay=True)), ("NAdam", dict(weight_decay=0.1)),
           ("RAdam", {}), ("RAdam", dict(lr=0.1, weight_decay=0.1)), ("RAdam", dict(decoupled_weight_decay=True,
                                                                                    weight_decay=0.1)),
           ("Rprop", {}), ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))), ("ASGD", {}),
           ("ASGD", dict(lr=0.1, t0=3, lambd=0.01, weight_decay=0.1))]


def run(torch, name, kw, wrap=None):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
    opt = getattr(torch.optim, name)([w], **kw)
    c = torch.tensor([1.0, -2.0, 0.5])

    def step(i):
        opt.zero_grad()
        loss = ((w * c) ** 2).sum() + (w.sin() * i).sum()
        loss.backward()
        opt.step()
        return loss

    f = wrap(step) if wrap else step
    out = []
    for i in range(8):
        f(torch.tensor(float(i + 1)))
        out.append(w.detach().clone())
    state = opt.state[w]
    return out, {k: v for k, v in sorted(state.items())}


def cases(torch, wrap=None):
    r = {}
    rec = recorder(r)
    for name, kw in CONFIGS:
        rec(f"{name}_{sorted(kw.items())}", lambda: run(torch, name, kw, wrap))
    for kw in (dict(base_lr=0.01, max_lr=0.1, step_size_up=3), dict(base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                                    step_size_down=4, mode="triangular2"),
               dict(base_lr=[0.01], max_lr=0.2, step_size_up=3, mode="exp_range", gamma=0.9),
               dict(base_lr=0.05, max_lr=0.5, step_size_up=2, scale_fn=lambda x: 1 / x, cycle_momentum=False)):
        rec(f"CyclicLR_{sorted((k, v) for k, v in kw.items() if k != 'scale_fn')}",
            lambda: _cyclic(torch, "SGD", dict(lr=1.0, momentum=0.9), kw))
    rec("CyclicLR_adam_beta1", lambda: _cyclic(torch, "Adam", dict(lr=1.0), dict(base_lr=0.001, max_lr=0.01,
                                                                                 step_size_up=4)))
    rec("error_cyclic_mode", lambda: torch.optim.lr_scheduler.CyclicLR(
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1), 0.01, 0.1, mode="sawtooth"))
    rec("error_cyclic_momentum", lambda: torch.optim.lr_scheduler.CyclicLR(
        torch.optim.Rprop([torch.nn.Parameter(torch.ones(1))], lr=0.1), 0.01, 0.1))
    rec("error_rprop_etas", lambda: torch.optim.Rprop([torch.nn.Parameter(torch.ones(1))], etas=(1.5, 1.2)))
    rec("error_nadam_lr", lambda: torch.optim.NAdam([torch.nn.Parameter(torch.ones(1))], lr=-1))
    return r


def _cyclic(torch, name, opt_kw, kw):
    """lr and momentum (or beta1) over 14 steps of a CyclicLR."""
    opt = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **opt_kw)
    s = torch.optim.lr_scheduler.CyclicLR(opt, **kw)
    out = []
    for _ in range(14):
        g = opt.param_groups[0]
        out.append([g["lr"], g["betas"][0] if "betas" in g else g.get("momentum")])
        opt.step()
        s.step()
    return out, s.get_last_lr()


def encode(torch, v):
    if isinstance(v, dict):
        return {k: encode_value(torch, x) for k, x in v.items()}
    if isinstance(v, tuple) and v and v[0] != "error":
        return [encode(torch, x) for x in v]
    return encode_value(torch, v)
