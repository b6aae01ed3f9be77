"""torch.distributions on fixed parameters: reprs, shapes, log_prob, cdf, icdf, entropy, the
moments, gradients of log_prob and of rsample's reparameterization (with the noise fixed), KL
divergences, transforms, and the validation errors. Run by PyTorch 2.15 to record
distributions.json (record.py) and by dyn to compare with it (test_distributions.py). Samples
themselves are not recorded: dyn's random stream is not PyTorch's."""
from reference import encode_value, recorder


def cases(torch, wrap=None):
    r = {}
    rec = recorder(r)
    D = torch.distributions
    call = wrap or (lambda f: f)
    t = torch.tensor

    def summary(d, value):
        """What a distribution says about itself and about value."""
        out = {"repr": repr(d), "batch": list(d.batch_shape), "event": list(d.event_shape),
               "log_prob": d.log_prob(value)}
        for name in ("mean", "variance", "stddev", "mode"):
            try:
                out[name] = getattr(d, name)
            except NotImplementedError as e:
                out[name] = ("error", "NotImplementedError", str(e))
        for name in ("entropy", "cdf"):
            try:
                out[name] = getattr(d, name)(value) if name == "cdf" else d.entropy()
            except NotImplementedError:
                out[name] = "not implemented"
        return out

    loc, scale = t([0.0, 1.5, -2.0]), t([1.0, 0.5, 3.0])
    rec("normal", lambda: summary(D.Normal(loc, scale), t([0.3, 1.0, -5.0])))
    rec("normal_scalar", lambda: summary(D.Normal(0.0, 1.0), t(0.25)))
    rec("normal_icdf", lambda: D.Normal(loc, scale).icdf(t([0.1, 0.5, 0.975])))
    rec("normal_broadcast", lambda: summary(D.Normal(t([[0.0], [1.0]]), t([1.0, 2.0])), t(0.5)))
    rec("normal_float64", lambda: summary(D.Normal(t([0.5], dtype=torch.float64), 2.0), t([1.0], dtype=torch.float64)))
    rec("normal_bad_scale", lambda: D.Normal(0.0, t([1.0, -1.0])))
    rec("normal_bad_value", lambda: D.Normal(0.0, 1.0).log_prob(t(float("nan"))))
    rec("normal_no_validation", lambda: D.Normal(0.0, -1.0, validate_args=False).log_prob(t(0.0)))
    rec("normal_value_shape", lambda: D.Normal(t([0.0, 1.0]), 1.0).log_prob(t([1.0, 2.0, 3.0])))
    rec("normal_expand", lambda: summary(D.Normal(0.0, 1.0).expand([2, 3]), t(0.5)))
    probs = t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    rec("categorical_probs", lambda: summary(D.Categorical(probs=probs), t([2, 0])))
    rec("categorical_logits", lambda: summary(D.Categorical(logits=t([1.0, -0.5, 2.0, 0.0])), t(3)))
    rec("categorical_unnormalized", lambda: D.Categorical(probs=t([1.0, 3.0])).probs)
    rec("categorical_logits_of_probs", lambda: D.Categorical(probs=probs).logits)
    rec("categorical_enumerate", lambda: D.Categorical(probs=probs).enumerate_support())
    rec("categorical_both", lambda: D.Categorical(probs=probs, logits=probs))
    rec("categorical_scalar", lambda: D.Categorical(probs=t(0.5)))
    rec("categorical_bad_value", lambda: D.Categorical(probs=probs).log_prob(t([3, 0])))
    rec("categorical_zero_prob_entropy", lambda: D.Categorical(probs=t([0.0, 0.5, 0.5])).entropy())
    rec("one_hot_categorical", lambda: summary(D.OneHotCategorical(probs=probs), t([[0.0, 0.0, 1.0], [1.0, 0, 0]])))
    rec("bernoulli_probs", lambda: summary(D.Bernoulli(probs=t([0.1, 0.5, 0.9])), t([1.0, 0.0, 1.0])))
    rec("bernoulli_logits", lambda: summary(D.Bernoulli(logits=t([-2.0, 0.0, 3.0])), t([0.0, 1.0, 1.0])))
    rec("bernoulli_bad_value", lambda: D.Bernoulli(probs=0.3).log_prob(t(0.5)))
    rec("bernoulli_bad_probs", lambda: D.Bernoulli(probs=t([1.5])))
    rec("uniform", lambda: summary(D.Uniform(t([0.0, -1.0]), t([2.0, 1.0])), t([0.5, 0.25])))
    rec("uniform_scalar", lambda: summary(D.Uniform(0.0, 4.0), t(1.0)))
    rec("uniform_icdf", lambda: D.Uniform(1.0, 3.0).icdf(t([0.0, 0.25, 1.0])))
    rec("uniform_bad", lambda: D.Uniform(2.0, 1.0))
    rec("uniform_outside", lambda: D.Uniform(0.0, 1.0).log_prob(t(2.0)))
    rec("exponential", lambda: summary(D.Exponential(t([0.5, 2.0])), t([1.0, 0.25])))
    rec("exponential_icdf", lambda: D.Exponential(t([0.5, 2.0])).icdf(t([0.3, 0.9])))
    rec("laplace", lambda: summary(D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])), t([0.5, -1.0])))
    rec("laplace_icdf", lambda: D.Laplace(t([0.0, 1.0]), t([1.0, 0.5])).icdf(t([0.2, 0.7])))
    rec("gamma", lambda: summary(D.Gamma(t([2.0, 0.5, 7.5]), t([1.0, 3.0, 0.5])), t([1.5, 0.1, 20.0])))
    rec("beta", lambda: summary(D.Beta(t([2.0, 0.5]), t([3.0, 0.5])), t([0.3, 0.9])))
    rec("beta_scalar", lambda: summary(D.Beta(2.0, 5.0), t(0.25)))
    rec("dirichlet", lambda: summary(D.Dirichlet(t([1.0, 2.0, 3.0])), t([0.2, 0.3, 0.5])))
    rec("dirichlet_batched", lambda: summary(D.Dirichlet(t([[0.5, 0.5], [4.0, 1.0]])), t([[0.9, 0.1], [0.5, 0.5]])))
    rec("poisson", lambda: summary(D.Poisson(t([3.0, 0.5])), t([2.0, 0.0])))
    rec("poisson_bad_value", lambda: D.Poisson(t([3.0])).log_prob(t([1.5])))
    rec("binomial", lambda: summary(D.Binomial(10, t([0.3, 0.8])), t([4.0, 10.0])))
    rec("binomial_logits", lambda: summary(D.Binomial(t([5.0, 6.0]), logits=t([0.2, -1.0])), t([0.0, 3.0])))
    rec("lognormal", lambda: summary(D.LogNormal(t([0.0, 0.5]), t([1.0, 0.25])), t([1.5, 2.0])))
    cov = t([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]])
    rec("mvn_cov", lambda: summary(D.MultivariateNormal(t([0.0, 1.0, -1.0]), cov), t([0.5, 0.5, 0.5])))
    rec("mvn_scale_tril", lambda: summary(D.MultivariateNormal(t([0.0, 1.0, -1.0]),
                                                               scale_tril=torch.linalg.cholesky(cov)),
                                          t([[0.5, 0.5, 0.5], [1.0, 0.0, -2.0]])))
    rec("mvn_precision", lambda: summary(D.MultivariateNormal(t([0.0, 1.0, -1.0]),
                                                              precision_matrix=torch.linalg.inv(cov)),
                                         t([0.5, 0.5, 0.5])))
    rec("mvn_matrices", lambda: [D.MultivariateNormal(t([0.0, 1.0, -1.0]), cov).precision_matrix,
                                 D.MultivariateNormal(t([0.0, 0.0, 0.0]), precision_matrix=cov).covariance_matrix,
                                 D.MultivariateNormal(t([0.0, 0.0, 0.0]), cov).scale_tril])
    rec("mvn_two", lambda: D.MultivariateNormal(t([0.0]), cov[:1, :1], precision_matrix=cov[:1, :1]))
    rec("mvn_not_pd", lambda: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]])))
    rec("independent", lambda: summary(D.Independent(D.Normal(t([[0.0, 1.0], [2.0, 3.0]]), 1.0), 1),
                                       t([[0.5, 0.5], [1.0, 1.0]])))
    rec("independent_too_many", lambda: D.Independent(D.Normal(t([0.0]), 1.0), 2))
    # rsample's gradient, with the noise drawn once: loc + eps * scale is differentiable in both
    rec("normal_rsample_grad", lambda: _rsample_grad(torch, call))
    rec("log_prob_grad", lambda: _log_prob_grad(torch, call))
    # KL divergences
    kl = D.kl_divergence
    rec("kl_normal", lambda: kl(D.Normal(loc, scale), D.Normal(t([1.0, 1.0, 1.0]), t([2.0, 0.5, 1.0]))))
    rec("kl_categorical", lambda: kl(D.Categorical(probs=probs), D.Categorical(probs=t([0.3, 0.3, 0.4]))))
    rec("kl_categorical_zero", lambda: kl(D.Categorical(probs=t([0.5, 0.5])), D.Categorical(probs=t([1.0, 0.0]))))
    rec("kl_bernoulli", lambda: kl(D.Bernoulli(probs=t([0.2, 0.0, 1.0])), D.Bernoulli(probs=t([0.5, 0.3, 0.3]))))
    rec("kl_uniform", lambda: kl(D.Uniform(t([0.0, 0.0]), t([1.0, 2.0])), D.Uniform(t([-1.0, 0.5]), t([2.0, 3.0]))))
    rec("kl_exponential", lambda: kl(D.Exponential(t([1.0, 2.0])), D.Exponential(t([0.5, 3.0]))))
    rec("kl_laplace", lambda: kl(D.Laplace(0.0, 1.0), D.Laplace(1.0, 2.0)))
    rec("kl_gamma", lambda: kl(D.Gamma(t([2.0]), t([1.0])), D.Gamma(t([3.0]), t([0.5]))))
    rec("kl_beta", lambda: kl(D.Beta(t([2.0]), t([3.0])), D.Beta(t([1.0]), t([1.5]))))
    rec("kl_dirichlet", lambda: kl(D.Dirichlet(t([1.0, 2.0, 3.0])), D.Dirichlet(t([2.0, 2.0, 2.0]))))
    rec("kl_poisson", lambda: kl(D.Poisson(t([3.0])), D.Poisson(t([1.5]))))
    rec("kl_mvn", lambda: kl(D.MultivariateNormal(t([0.0, 1.0, -1.0]), cov),
                             D.MultivariateNormal(t([1.0, 0.0, 0.0]), torch.eye(3) * 2)))
    rec("kl_independent", lambda: kl(D.Independent(D.Normal(loc, scale), 1), D.Independent(D.Normal(0.0, 1.0)
                                                                                           .expand([3]), 1)))
    rec("kl_lognormal", lambda: kl(D.LogNormal(0.0, 1.0), D.LogNormal(0.5, 2.0)))
    rec("kl_missing", lambda: kl(D.Categorical(probs=probs), D.Normal(0.0, 1.0)))
    # transforms
    x = t([-1.5, 0.0, 0.7])
    for name, tr in (("exp", D.ExpTransform()), ("sigmoid", D.SigmoidTransform()), ("tanh", D.TanhTransform()),
                     ("affine", D.AffineTransform(1.0, t([2.0, -0.5, 3.0]))), ("softplus", D.SoftplusTransform())):
        rec(f"transform_{name}", lambda: [tr(x), tr.inv(tr(x)), tr.log_abs_det_jacobian(x, tr(x)), repr(tr)])
    rec("transform_compose", lambda: _compose(torch, x))
    rec("transformed_tanh_normal", lambda: D.TransformedDistribution(
        D.Normal(t([0.0, 1.0]), t([1.0, 0.5])), [D.TanhTransform()]).log_prob(t([0.5, -0.25])))
    rec("transformed_affine_cdf", lambda: D.TransformedDistribution(
        D.Normal(0.0, 1.0), [D.AffineTransform(2.0, -3.0)]).cdf(t([0.0, 2.0, 5.0])))
    rec("constraint_reprs", lambda: [repr(c) for c in (
        D.constraints.real, D.constraints.positive, D.constraints.unit_interval, D.constraints.simplex,
        D.constraints.boolean, D.constraints.nonnegative_integer, D.constraints.real_vector,
        D.constraints.integer_interval(0, 3), D.constraints.interval(-1.0, 1.0),
        D.constraints.lower_cholesky, D.constraints.positive_definite)])
    rec("gamma_cdf_grad", lambda: _gamma_cdf_grad(torch))
    rec("gammainc", lambda: [torch.special.gammainc(t([0.5, 2.0, 7.5, 30.0, 1.0], dtype=torch.float64),
                                                    t([0.2, 3.0, 2.0, 35.0, 0.0], dtype=torch.float64)),
                             torch.special.gammaincc(t([0.5, 2.0, 7.5]), t([0.2, 3.0, 12.0])),
                             torch.igamma(t([3.0]), t([float("inf")])), torch.igamma(t([-1.0]), t([1.0]))])
    rec("constraint_checks", lambda: [D.constraints.simplex.check(t([[0.5, 0.5], [0.7, 0.2]])),
                                      D.constraints.positive.check(t([1.0, 0.0])),
                                      D.constraints.integer_interval(0, 3).check(t([0.0, 3.0, 3.5, 4.0]))])
    return r


def _rsample_grad(torch, call):
    D = torch.distributions
    loc = torch.tensor([0.5, -1.0], requires_grad=True)
    scale = torch.tensor([2.0, 0.25], requires_grad=True)

    def f(loc, scale):
        d = D.Normal(loc, scale)
        eps = torch.tensor([0.3, -1.2])  # the rsample formula, with eps fixed
        return (d.loc + eps * d.scale).sum() + d.log_prob(torch.tensor([1.0, 1.0])).sum() + d.entropy().sum()

    call(f)(loc, scale).backward()
    return loc.grad, scale.grad


def _log_prob_grad(torch, call):
    D = torch.distributions
    logits = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    conc = torch.tensor([2.0, 3.5], requires_grad=True)
    rate = torch.tensor([1.0, 0.5], requires_grad=True)
    cov_root = torch.tensor([[1.0, 0.0], [0.5, 2.0]], requires_grad=True)

    def f(logits, conc, rate, cov_root):
        total = D.Categorical(logits=logits).log_prob(torch.tensor(1)) + D.Categorical(logits=logits).entropy()
        total = total + D.Gamma(conc, rate).log_prob(torch.tensor([1.5, 2.0])).sum()
        total = total + D.Beta(conc, rate).log_prob(torch.tensor([0.25, 0.5])).sum()
        total = total + D.Gamma(conc, rate).entropy().sum()
        cov = cov_root @ cov_root.T + torch.eye(2)
        total = total + D.MultivariateNormal(torch.zeros(2), cov).log_prob(torch.tensor([0.5, -1.0]))
        return total

    call(f)(logits, conc, rate, cov_root).backward()
    return logits.grad, conc.grad, rate.grad, cov_root.grad


def _gamma_cdf_grad(torch):
    x = torch.tensor([0.5, 2.0, 4.0], requires_grad=True)
    torch.distributions.Gamma(torch.tensor([1.5, 2.0, 3.0]), torch.tensor([1.0, 0.5, 2.0])).cdf(x).sum().backward()
    return x.grad


def _compose(torch, x):
    D = torch.distributions
    tr = D.ComposeTransform([D.AffineTransform(0.5, 2.0), D.ExpTransform()])
    y = tr(x)
    return [y, tr.inv(y), tr.log_abs_det_jacobian(x, y), repr(tr)]


def encode(torch, v):
    if isinstance(v, dict):
        return {k: encode(torch, e) for k, e in v.items()}
    if isinstance(v, list):
        return [encode(torch, e) for e in v]
    return encode_value(torch, v)
