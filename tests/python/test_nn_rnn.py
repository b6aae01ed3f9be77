"""dyn.nn sequence models: RNN, LSTM, GRU and their cells against numpy references of PyTorch's
documented equations (gate order, layers, directions, batch_first, initial and final states,
proj_size), MultiheadAttention and scaled_dot_product_attention against a numpy reference with
the module's own weights, and the Transformer layers; gradients by finite differences, and
dyn.compile bitwise equal to eager for LSTM, MultiheadAttention and TransformerEncoderLayer.
"""
import math
import unittest
import warnings

import numpy as np

import dyn
import dyn.nn as nn
import dyn.nn.functional as F
from test_autograd_modules import module_gradcheck
from test_autograd_ops import rnd
from test_nn_layers import close, compiled_matches_eager, t64

F64 = dyn.float64


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_params(module):
    return {n: p.detach().numpy().astype(np.float64) for n, p in module.named_parameters()}


# ---------------------------------------------------------------- recurrent references

def lstm_cell_ref(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    """PyTorch's LSTM equations; W_ih stacks W_ii, W_if, W_ig, W_io."""
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, g, o = np.split(gates, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return (h @ w_hr.T if w_hr is not None else h), c


def gru_cell_ref(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's GRU equations; W_ih stacks W_ir, W_iz, W_in; n uses r * (W_hn h + b_hn)."""
    xr, xz, xn = np.split(x @ w_ih.T + b_ih, 3, axis=-1)
    hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h


def rnn_ref(mode, x, p, layers, bidirectional, h0, c0=None, bias=True, dropped_layers=()):
    """x [T, N, F]; p: parameters by PyTorch name; h0/c0 [layers * dirs, N, H]. Returns (out, h_n, c_n).
    dropped_layers: layers whose input is all zeros (dropout p=1 before them)."""
    dirs = 2 if bidirectional else 1
    seq = x
    hs, cs = [], []
    for layer in range(layers):
        if layer in dropped_layers:
            seq = np.zeros_like(seq)
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w_ih, w_hh = p["weight_ih" + sfx], p["weight_hh" + sfx]
            b_ih = p["bias_ih" + sfx] if bias else 0.0
            b_hh = p["bias_hh" + sfx] if bias else 0.0
            h, c = h0[layer * dirs + d], (c0[layer * dirs + d] if c0 is not None else None)
            out = [None] * len(seq)
            for t in (range(len(seq)) if d == 0 else reversed(range(len(seq)))):
                if mode == "LSTM":
                    h, c = lstm_cell_ref(seq[t], h, c, w_ih, w_hh, b_ih, b_hh, p.get("weight_hr" + sfx))
                elif mode == "GRU":
                    h = gru_cell_ref(seq[t], h, w_ih, w_hh, b_ih, b_hh)
                else:
                    pre = seq[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
                    h = np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0)
                out[t] = h
            outs.append(np.stack(out))
            hs.append(h)
            cs.append(c)
        seq = np.concatenate(outs, axis=-1)
    return seq, np.stack(hs), (np.stack(cs) if c0 is not None else None)


class TestRecurrent(unittest.TestCase):
    def check(self, module, mode, x, batch_first=False, with_state=True, bias=True, msg=""):
        module.double()
        p = np_params(module)
        layers, dirs = module.num_layers, 2 if module.bidirectional else 1
        unbatched = x.ndim == 2
        xs = x[:, None] if unbatched else (x.transpose(1, 0, 2) if batch_first else x)
        n = xs.shape[1]
        out_size = module.proj_size if getattr(module, "proj_size", 0) else module.hidden_size
        h0 = rnd((layers * dirs, n, out_size), 50) if with_state else np.zeros((layers * dirs, n, out_size))
        c0 = rnd((layers * dirs, n, module.hidden_size), 51) if with_state else np.zeros(
            (layers * dirs, n, module.hidden_size))
        out, h_n, c_n = rnn_ref(mode, xs, p, layers, dirs == 2, h0, c0 if mode == "LSTM" else None, bias)
        if unbatched:
            out, h_n, c_n = out[:, 0], h_n[:, 0], (c_n[:, 0] if c_n is not None else None)
            h0, c0 = h0[:, 0], c0[:, 0]
        elif batch_first:
            out = out.transpose(1, 0, 2)
        if mode == "LSTM":
            got, (gh, gc) = module(t64(x), (t64(h0), t64(c0)) if with_state else None)
            close(self, gc, c_n, 1e-12, f"{msg} c_n")
        else:
            got, gh = module(t64(x), t64(h0) if with_state else None)
        close(self, got, out, 1e-12, f"{msg} output")
        close(self, gh, h_n, 1e-12, f"{msg} h_n")

    def test_lstm(self):
        self.check(nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), "LSTM", rnd((2, 5, 3), 1),
                   batch_first=True, msg="2 layers bidirectional batch_first")
        self.check(nn.LSTM(3, 4), "LSTM", rnd((5, 2, 3), 2), with_state=False, msg="zero initial state")
        self.check(nn.LSTM(3, 4, num_layers=2, proj_size=2), "LSTM", rnd((4, 2, 3), 3), msg="proj_size")
        self.check(nn.LSTM(3, 4, bidirectional=True, bias=False), "LSTM", rnd((4, 3), 4), bias=False,
                   msg="unbatched, no bias")

    def test_gru_and_rnn(self):
        self.check(nn.GRU(3, 4, num_layers=2, bidirectional=True), "GRU", rnd((5, 2, 3), 5), msg="GRU")
        self.check(nn.GRU(3, 4, batch_first=True), "GRU", rnd((2, 5, 3), 6), batch_first=True, with_state=False,
                   msg="GRU batch_first")
        self.check(nn.RNN(3, 4, num_layers=2), "tanh", rnd((4, 2, 3), 7), msg="RNN tanh")
        self.check(nn.RNN(3, 4, nonlinearity="relu", bidirectional=True), "relu", rnd((4, 3), 8), msg="RNN relu")

    def test_cells(self):
        x, h, c = rnd((2, 3), 1), rnd((2, 4), 2), rnd((2, 4), 3)
        cell = nn.LSTMCell(3, 4).double()
        p = np_params(cell)
        want_h, want_c = lstm_cell_ref(x, h, c, p["weight_ih"], p["weight_hh"], p["bias_ih"], p["bias_hh"])
        got_h, got_c = cell(t64(x), (t64(h), t64(c)))
        close(self, got_h, want_h, 1e-12, "LSTMCell h")
        close(self, got_c, want_c, 1e-12, "LSTMCell c")
        zero_h, _ = lstm_cell_ref(x[0], 0 * h[0], 0 * c[0], p["weight_ih"], p["weight_hh"], p["bias_ih"],
                                  p["bias_hh"])
        close(self, cell(t64(x[0]))[0], zero_h, 1e-12, "LSTMCell unbatched, no state")
        cell = nn.GRUCell(3, 4).double()
        p = np_params(cell)
        close(self, cell(t64(x), t64(h)), gru_cell_ref(x, h, p["weight_ih"], p["weight_hh"], p["bias_ih"],
                                                     p["bias_hh"]), 1e-12, "GRUCell")
        cell = nn.RNNCell(3, 4, nonlinearity="relu", bias=False).double()
        p = np_params(cell)
        close(self, cell(t64(x), t64(h)), np.maximum(x @ p["weight_ih"].T + h @ p["weight_hh"].T, 0), 1e-12,
              "RNNCell relu")
        self.assertEqual(repr(cell), "RNNCell(3, 4, bias=False, nonlinearity=relu)")

    def test_parameters_init_and_repr(self):
        dyn.manual_seed(0)
        m = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
        names = [(n, tuple(p.shape)) for n, p in m.named_parameters()]
        want = []
        for layer, fan in ((0, 3), (1, 10)):
            for sfx in ("", "_reverse"):
                want += [(f"weight_ih_l{layer}{sfx}", (20, fan)), (f"weight_hh_l{layer}{sfx}", (20, 5)),
                         (f"bias_ih_l{layer}{sfx}", (20,)), (f"bias_hh_l{layer}{sfx}", (20,))]
        self.assertEqual(names, want)
        values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
        bound = 1 / math.sqrt(5)
        self.assertLessEqual(np.abs(values).max(), bound)
        self.assertGreater(np.abs(values).max(), 0.95 * bound)
        self.assertEqual(repr(m), "LSTM(3, 5, num_layers=2, bidirectional=True)")
        self.assertEqual([n for n, _ in nn.GRU(2, 3, bias=False).named_parameters()], ["weight_ih_l0", "weight_hh_l0"])
        p = dict(nn.LSTM(2, 4, proj_size=3).named_parameters())
        self.assertEqual((tuple(p["weight_hh_l0"].shape), tuple(p["weight_hr_l0"].shape)), ((16, 3), (3, 4)))
        self.assertEqual(tuple(nn.GRUCell(2, 3).weight_ih.shape), (9, 2))

    def test_dropout_between_layers(self):
        m = nn.GRU(2, 3, num_layers=3, dropout=1.0).double()  # p = 1 zeroes the input of layers 1 and 2
        x = rnd((4, 2, 2), 1)
        h0 = np.zeros((3, 2, 3))
        out, h_n, _ = rnn_ref("GRU", x, np_params(m), 3, False, h0, dropped_layers=(1, 2))
        got, gh = m(t64(x))
        close(self, got, out, 1e-12, "train")
        close(self, gh, h_n, 1e-12, "train h_n")
        m.eval()
        out, _, _ = rnn_ref("GRU", x, np_params(m), 3, False, h0)
        close(self, m(t64(x))[0], out, 1e-12, "eval: no dropout")

    def test_gradients(self):
        class Output(nn.Module):
            def __init__(self, rnn):
                super().__init__()
                self.rnn = rnn

            def forward(self, x):
                return self.rnn(x)[0]
        module_gradcheck(self, Output(nn.LSTM(2, 3, num_layers=2, bidirectional=True)), rnd((3, 1, 2), 1), msg="LSTM")
        module_gradcheck(self, Output(nn.GRU(2, 3, batch_first=True)), rnd((2, 3, 2), 2), msg="GRU")

        class LastState(nn.Module):  # checks the gradient through the final (h, c)
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(2, 2, proj_size=1)

            def forward(self, x):
                _, (h, c) = self.lstm(x)
                return h.sum() + (c * c).sum()
        module_gradcheck(self, LastState(), rnd((3, 2, 2), 3), msg="LSTM final state")

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, "input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
            nn.LSTM(3, 4)(dyn.zeros(5, 1, 2))
        with self.assertRaisesRegex(RuntimeError, r"Expected hidden size \(2, 1, 4\), got \[1, 1, 4\]"):
            nn.GRU(3, 4, num_layers=2)(dyn.zeros(5, 1, 3), dyn.zeros(1, 1, 4))
        with self.assertRaisesRegex(ValueError, "Expected input to be 2D or 3D, got 4D instead"):
            nn.RNN(3, 4)(dyn.zeros(1, 1, 1, 3))
        with self.assertRaisesRegex(ValueError, "proj_size argument is only supported for LSTM"):
            nn.modules.rnn.RNNBase("GRU", 3, 4, proj_size=2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nn.LSTM(3, 4, dropout=0.5)
        self.assertIn("non-zero dropout expects num_layers greater than 1", str(caught[0].message))

    def test_compiled_lstm_bitwise(self):
        r = np.random.default_rng(0)

        def make():
            dyn.manual_seed(3)
            return nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), step

        def step(m, x, h0, c0):
            out, (h, c) = m(x, (h0, c0))
            (out.sum() + (h * c).sum()).backward()
            return out, h, c
        inputs = [tuple(dyn.tensor(r.standard_normal(s).astype(np.float32)) for s in ((2, 5, 3), (4, 2, 4), (4, 2, 4)))
                  for _ in range(3)]
        compiled_matches_eager(self, make, inputs)


# ---------------------------------------------------------------- attention references

def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(q, k, v, p, heads, attn_mask=None, key_padding_mask=None, separate=False, bias_kv=None,
            zero_attn=False):
    """Sequence-first q [L, N, E], k/v [S, N, *]; p: the module's parameters by name. attn_mask: additive
    float [L, S]; key_padding_mask: bool [N, S] (True = ignore). Returns (out, per-head weights)."""
    E = q.shape[-1]
    if separate:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    else:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    bq, bk, bv = np.split(p["in_proj_bias"], 3)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    L, N = Q.shape[:2]
    if bias_kv is not None:
        K = np.concatenate([K, np.broadcast_to(bias_kv[0], (1, N, E))])
        V = np.concatenate([V, np.broadcast_to(bias_kv[1], (1, N, E))])
    hd = E // heads
    out = np.zeros((L, N, E))
    weights = np.zeros((N, heads, L, K.shape[0] + zero_attn))
    for n in range(N):
        for h in range(heads):
            sl = slice(h * hd, (h + 1) * hd)
            kk, vv = K[:, n, sl], V[:, n, sl]
            if zero_attn:
                kk, vv = np.concatenate([kk, np.zeros((1, hd))]), np.concatenate([vv, np.zeros((1, hd))])
            scores = Q[:, n, sl] @ kk.T / math.sqrt(hd)
            if attn_mask is not None:
                scores[:, :attn_mask.shape[1]] += attn_mask
            if key_padding_mask is not None:
                scores[:, :key_padding_mask.shape[1]][:, key_padding_mask[n]] = -np.inf
            w = softmax(scores)
            weights[n, h] = w
            out[:, n, sl] = w @ vv
    return out @ p["out_proj.weight"].T + p["out_proj.bias"], weights


def sdpa_ref(q, k, v, keep=None, add=None, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    if add is not None:
        s = s + add
    return softmax(s) @ v


def randomized(m):
    """m in float64 with every parameter set to random values (LayerNorm's ones and zeros too)."""
    m.double()
    with dyn.no_grad():
        for i, (_, p) in enumerate(m.named_parameters()):
            p.copy_(t64(rnd(tuple(p.shape), 100 + i) * 0.5))
    return m


class TestAttention(unittest.TestCase):

    def test_mha_matches_reference(self):
        m = randomized(nn.MultiheadAttention(8, 2))
        p = np_params(m)
        q, k, v = rnd((3, 2, 8), 1), rnd((4, 2, 8), 2), rnd((4, 2, 8), 3)
        float_mask = rnd((3, 4), 4)
        kpm = np.array([[False, False, True, False], [True, False, False, False]])
        out, w = mha_ref(q, k, v, p, 2, float_mask, kpm)
        got, got_w = m(t64(q), t64(k), t64(v), attn_mask=t64(float_mask), key_padding_mask=dyn.tensor(kpm))
        close(self, got, out, 1e-12, "output")
        close(self, got_w, w.mean(1), 1e-12, "weights averaged over heads")
        bool_mask = np.array([[False, True, False, False]] * 3)
        out, w = mha_ref(q, k, v, p, 2, np.where(bool_mask, -np.inf, 0.0))
        got, got_w = m(t64(q), t64(k), t64(v), attn_mask=dyn.tensor(bool_mask), average_attn_weights=False)
        close(self, got, out, 1e-12, "bool attn_mask")
        close(self, got_w, w, 1e-12, "per-head weights")
        got, none = m(t64(q), t64(k), t64(v), need_weights=False)
        self.assertIsNone(none)
        close(self, got, mha_ref(q, k, v, p, 2)[0], 1e-12, "need_weights=False")

    def test_mha_variants(self):
        q, kv = rnd((3, 2, 6), 5), rnd((4, 2, 4), 6)
        m = randomized(nn.MultiheadAttention(6, 3, kdim=4, vdim=4, batch_first=True))
        self.assertIsNone(m.in_proj_weight)
        out, w = mha_ref(q, kv, kv, np_params(m), 3, separate=True)
        got, got_w = m(t64(q.transpose(1, 0, 2)), t64(kv.transpose(1, 0, 2)), t64(kv.transpose(1, 0, 2)))
        close(self, got, out.transpose(1, 0, 2), 1e-12, "kdim/vdim, batch_first")
        close(self, got_w, w.mean(1), 1e-12, "kdim/vdim weights")
        m = randomized(nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True))
        p = np_params(m)
        kpm = np.array([[False, True, False, False], [False, False, False, True]])
        out, w = mha_ref(q, q[:, :, :6][:1].repeat(4, 0), q[:1].repeat(4, 0), p, 2,
                         key_padding_mask=kpm, bias_kv=(p["bias_k"], p["bias_v"]), zero_attn=True)
        got, got_w = m(t64(q), t64(q[:1].repeat(4, 0)), t64(q[:1].repeat(4, 0)), key_padding_mask=dyn.tensor(kpm))
        close(self, got, out, 1e-12, "add_bias_kv, add_zero_attn")
        close(self, got_w, w.mean(1), 1e-12, "add_bias_kv weights")
        m = randomized(nn.MultiheadAttention(6, 2))
        got, got_w = m(t64(q[:, 0]), t64(q[:, 0]), t64(q[:, 0]))
        out, w = mha_ref(q[:, :1], q[:, :1], q[:, :1], np_params(m), 2)
        close(self, got, out[:, 0], 1e-12, "unbatched")
        close(self, got_w, w.mean(1)[0], 1e-12, "unbatched weights")

    def test_mha_parameters_and_init(self):
        dyn.manual_seed(0)
        m = nn.MultiheadAttention(16, 4)
        self.assertEqual(list(m.state_dict()), ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"])
        self.assertEqual(tuple(m.in_proj_weight.shape), (48, 16))
        self.assertEqual(m.in_proj_bias.abs().sum().item(), 0.0)
        self.assertEqual(m.out_proj.bias.abs().sum().item(), 0.0)
        bound = math.sqrt(6 / (48 + 16))  # xavier_uniform_ over the stacked [3E, E] matrix
        w = m.in_proj_weight.detach().numpy()
        self.assertLessEqual(np.abs(w).max(), bound)
        self.assertGreater(np.abs(w).max(), 0.9 * bound)
        self.assertLessEqual(np.abs(m.out_proj.weight.detach().numpy()).max(), 1 / 4)  # Linear's default
        self.assertEqual(repr(m), "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                                  "in_features=16, out_features=16, bias=True)\n)")
        with self.assertRaisesRegex(AssertionError, "embed_dim must be divisible by num_heads"):
            nn.MultiheadAttention(10, 4)
        with self.assertRaisesRegex(RuntimeError, "Need attn_mask if specifying the is_causal hint"):
            m(dyn.zeros(2, 1, 16), dyn.zeros(2, 1, 16), dyn.zeros(2, 1, 16), is_causal=True)

    def test_sdpa(self):
        q, k, v = rnd((2, 3, 4, 5), 1), rnd((2, 3, 6, 5), 2), rnd((2, 3, 6, 2), 3)
        close(self, F.scaled_dot_product_attention(t64(q), t64(k), t64(v)), sdpa_ref(q, k, v), 1e-12, "plain")
        keep = rnd((4, 6), 4) > -0.5
        close(self, F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=dyn.tensor(keep)),
              sdpa_ref(q, k, v, keep=keep), 1e-12, "bool mask: True = attend")
        add = rnd((3, 4, 6), 5)
        close(self, F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(add), scale=0.3),
              sdpa_ref(q, k, v, add=add, scale=0.3), 1e-12, "float mask, scale")
        causal = np.tril(np.ones((4, 6), dtype=bool))
        close(self, F.scaled_dot_product_attention(t64(q), t64(k), t64(v), is_causal=True),
              sdpa_ref(q, k, v, keep=causal), 1e-12, "is_causal: top-left aligned")
        kv1 = k[:, :1], v[:, :1]
        close(self, F.scaled_dot_product_attention(t64(q), t64(kv1[0]), t64(kv1[1]), enable_gqa=True),
              sdpa_ref(q, np.repeat(kv1[0], 3, 1), np.repeat(kv1[1], 3, 1)), 1e-12, "grouped-query heads")

    def test_gradients(self):
        class SelfAttention(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(4, 2, batch_first=True)

            def forward(self, x):
                mask = dyn.tensor([[False, True, False]])
                return self.attn(x, x, x, key_padding_mask=mask)[0]
        module_gradcheck(self, SelfAttention(), rnd((1, 3, 4), 1), msg="MultiheadAttention")

    def test_compiled_mha_bitwise(self):
        r = np.random.default_rng(1)

        def make():
            dyn.manual_seed(4)
            return nn.MultiheadAttention(8, 2, batch_first=True), step

        def step(m, x, mask):
            out, w = m(x, x, x, attn_mask=mask)
            (out.sum() + w.sum()).backward()
            return out, w
        mask = nn.Transformer.generate_square_subsequent_mask(5)
        inputs = [(dyn.tensor(r.standard_normal((2, 5, 8)).astype(np.float32)), mask) for _ in range(3)]
        compiled_matches_eager(self, make, inputs)


def layer_norm_ref(x, eps=1e-5):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


class TestTransformer(unittest.TestCase):
    def test_encoder_layer_matches_reference(self):
        for norm_first in (False, True):
            with self.subTest(norm_first=norm_first):
                dyn.manual_seed(0)
                m = randomized(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, norm_first=norm_first,
                                                          activation="gelu")).eval()
                p = np_params(m)
                x = rnd((5, 2, 8), 1)
                mask = np.triu(np.full((5, 5), -np.inf), 1)

                def sa(y):
                    return mha_ref(y, y, y, {k[len("self_attn."):]: v for k, v in p.items()
                                              if k.startswith("self_attn.")}, 2, mask)[0]

                def ff(y):
                    h = y @ p["linear1.weight"].T + p["linear1.bias"]
                    h = 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
                    return h @ p["linear2.weight"].T + p["linear2.bias"]

                def norm(y, i):
                    return layer_norm_ref(y) * p[f"norm{i}.weight"] + p[f"norm{i}.bias"]
                if norm_first:
                    y = x + sa(norm(x, 1))
                    want = y + ff(norm(y, 2))
                else:
                    y = norm(x + sa(x), 1)
                    want = norm(y + ff(y), 2)
                close(self, m(t64(x), src_mask=t64(mask)), want, 1e-12)

    def test_encoder_decoder_structure(self):
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
        enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8))
        self.assertEqual(len(enc.layers), 3)
        self.assertIsNot(enc.layers[0].linear1.weight, enc.layers[1].linear1.weight)
        self.assertIsNot(enc.layers[0].linear1.weight, layer.linear1.weight)
        self.assertTrue(all(np.array_equal(l.linear1.weight.detach().numpy(), layer.linear1.weight.detach().numpy())
                            for l in enc.layers))
        keys = list(enc.state_dict())
        self.assertEqual(keys[:4], ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias",
                                    "layers.0.self_attn.out_proj.weight", "layers.0.self_attn.out_proj.bias"])
        self.assertEqual(keys[-2:], ["norm.weight", "norm.bias"])
        enc.eval()
        x = dyn.randn(4, 2, 8, dtype=F64)
        enc = enc.double()
        y = x
        for l in enc.layers:
            y = l(y)
        close(self, enc(x), enc.norm(y).detach().numpy(), 0)
        mask = nn.Transformer.generate_square_subsequent_mask(3)
        self.assertEqual(mask.tolist(), [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf], [0.0, 0.0, 0.0]])

    def test_decoder_layer_wiring_and_transformer(self):
        dyn.manual_seed(1)
        layer = nn.TransformerDecoderLayer(8, 2, 16, norm_first=True).double().eval()
        tgt, mem = dyn.randn(3, 2, 8, dtype=F64), dyn.randn(5, 2, 8, dtype=F64)
        y = tgt + layer.self_attn(*(layer.norm1(tgt),) * 3, need_weights=False)[0]
        y = y + layer.multihead_attn(layer.norm2(y), mem, mem, need_weights=False)[0]
        y = y + layer.linear2(layer.linear1(layer.norm3(y)).relu())
        close(self, layer(tgt, mem), y.detach().numpy(), 1e-14)
        model = nn.Transformer(8, 2, 2, 1, 16, batch_first=True)
        out = model(dyn.randn(2, 5, 8), dyn.randn(2, 3, 8), tgt_mask=model.generate_square_subsequent_mask(3))
        self.assertEqual(tuple(out.shape), (2, 3, 8))
        w = model.encoder.layers[0].linear1.weight.detach().numpy()  # re-initialized xavier_uniform_
        self.assertLessEqual(np.abs(w).max(), math.sqrt(6 / 24))
        self.assertGreater(np.abs(w).max(), 1 / math.sqrt(8))
        with self.assertRaisesRegex(RuntimeError, "the batch number of src and tgt must be equal"):
            model(dyn.randn(2, 5, 8), dyn.randn(3, 3, 8))

    def test_compiled_encoder_layer_bitwise(self):
        r = np.random.default_rng(2)

        def make():
            dyn.manual_seed(5)
            return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True), step

        def step(m, x, kpm):
            y = m(x, src_key_padding_mask=kpm)
            (y * y).mean().backward()
            return y
        kpm = dyn.tensor([[False, False, False, True], [False, False, False, False]])
        inputs = [(dyn.tensor(r.standard_normal((2, 4, 8)).astype(np.float32)), kpm) for _ in range(3)]
        compiled_matches_eager(self, make, inputs, seed=10)


if __name__ == "__main__":
    unittest.main()
