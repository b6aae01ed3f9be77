"""Recurrent layers RNN, LSTM, GRU and their cells, with PyTorch's gate order, parameter names,
shapes and initialization U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

Each layer and direction projects the whole input sequence at once (x @ W_ih^T + b_ih, one
matmul), then steps through time with one h @ W_hh^T per step. Gates are cut out of the projected
rows by slicing: LSTM (i, f, g, o), GRU (r, z, n).
"""
import math
import numbers
import warnings

import dyn

from .. import Parameter
from .. import functional as F
from .. import init
from .module import Module, _check_device, _optional_parameters

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_tanh_step(gi, state, w_hh, b_hh, w_hr=None):
    return ((gi + F.linear(state[0], w_hh, b_hh)).tanh(),)


def _rnn_relu_step(gi, state, w_hh, b_hh, w_hr=None):
    return ((gi + F.linear(state[0], w_hh, b_hh)).relu(),)


def _lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    """c' = f * c + i * g, h' = o * tanh(c') (then h' @ W_hr^T with proj_size)."""
    h, c = state
    gates = gi + F.linear(h, w_hh, b_hh)
    n = gates.shape[-1] // 4
    i, f = gates[..., :n].sigmoid(), gates[..., n:2 * n].sigmoid()
    g, o = gates[..., 2 * n:3 * n].tanh(), gates[..., 3 * n:].sigmoid()
    c = f * c + i * g
    h = o * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi, state, w_hh, b_hh, w_hr=None):
    """r, z from input and hidden; n = tanh(gi_n + r * (W_hn h + b_hn)); h' = (1 - z) * n + z * h."""
    h = state[0]
    gh = F.linear(h, w_hh, b_hh)
    n = gh.shape[-1] // 3
    r = (gi[..., :n] + gh[..., :n]).sigmoid()
    z = (gi[..., n:2 * n] + gh[..., n:2 * n]).sigmoid()
    cand = (gi[..., 2 * n:] + r * gh[..., 2 * n:]).tanh()
    return ((1.0 - z) * cand + z * h,)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence shared by RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        _check_device(type(self).__name__, device)
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(dyn.empty(*shape, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op (there is no cuDNN weight buffer to compact)."""

    @property
    def all_weights(self):
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + suffix), get("weight_hh" + suffix), get("bias_ih" + suffix),
                get("bias_hh" + suffix), get("weight_hr" + suffix))

    def _check_input(self, input):
        if not isinstance(input, dyn.Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, not {type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def _initial(self, hx, batched, batch, dtype, size):
        """hx as [layers * directions, batch, size] (zeros if None)."""
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, size)
        if hx is None:
            return dyn.zeros(*expected, dtype=dtype)
        if not batched:
            if hx.ndim != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.ndim}-D tensor")
            hx = hx.unsqueeze(1)
        elif hx.ndim != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.ndim}-D tensor")
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(hx.shape)}")
        return hx

    def _run(self, input, states):
        """input: [T, N, F] sequence-first; states: one tuple per layer * direction. Returns (output, finals)."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        seq_len = input.shape[0]
        layer_input, finals = input, []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
                gi = F.linear(layer_input, w_ih, b_ih)
                state = states[layer * directions + direction]
                hs = [None] * seq_len
                for t in (range(seq_len) if direction == 0 else reversed(range(seq_len))):
                    state = step(gi[t], state, w_hh, b_hh, w_hr)
                    hs[t] = state[0]
                outputs.append(dyn.stack(hs, 0))
                finals.append(state)
            layer_input = outputs[0] if directions == 1 else dyn.cat(outputs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, finals

    def _forward(self, input, hx):
        """(output, [final state tuples]) with batch_first and unbatched input handled."""
        self._check_input(input)
        batched = input.ndim == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        batch = x.shape[1]
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if self.mode == "LSTM":
            h0, c0 = (None, None) if hx is None else hx
            h0 = self._initial(h0, batched, batch, x.dtype, out_size)
            c0 = self._initial(c0, batched, batch, x.dtype, self.hidden_size)
            states = [(h0[i], c0[i]) for i in range(h0.shape[0])]
        else:
            h0 = self._initial(hx, batched, batch, x.dtype, out_size)
            states = [(h0[i],) for i in range(h0.shape[0])]
        output, finals = self._run(x, states)
        if batched and self.batch_first:
            output = output.transpose(0, 1)
        if not batched:
            output = output.squeeze(1)
        stacked = [dyn.stack([s[k] for s in finals], 0) for k in range(len(finals[0]))]
        if not batched:
            stacked = [s.squeeze(1) for s in stacked]
        return output, stacked

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu). forward(input, hx) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity  # a plain attribute: allowed before Module.__init__
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx=None):
        output, (h_n,) = self._forward(input, hx)
        return output, h_n


class LSTM(RNNBase):
    """Gates i, f, g, o. forward(input, (h_0, c_0)) -> (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx=None):
        output, (h_n, c_n) = self._forward(input, hx)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gates r, z, n. forward(input, h_0) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input, hx=None):
        output, (h_n,) = self._forward(input, hx)
        return output, h_n


class RNNCellBase(Module):
    """One step of a recurrence: weight_ih, weight_hh, bias_ih, bias_hh, initialized like RNNBase."""

    _mode = None

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(type(self).__name__, device)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = _GATES[self._mode] * hidden_size
        self.weight_ih = Parameter(dyn.empty(gate_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(dyn.empty(gate_size, hidden_size, dtype=dtype))
        _optional_parameters(self, bias, (gate_size,), dtype, bias_ih=dyn.empty, bias_hh=dyn.empty)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def _step(self, input, hx, cell_state):
        """(new state tuple, batched) for one step."""
        name = type(self).__name__
        if not isinstance(input, dyn.Tensor) or input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got "
                             f"{input.ndim if isinstance(input, dyn.Tensor) else type(input).__name__}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        states = hx if cell_state else (hx,)
        if hx is None:
            zero = dyn.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            states = (zero, zero) if cell_state else (zero,)
        elif not batched:
            states = tuple(s.unsqueeze(0) for s in states)
        for s in states:
            if tuple(s.shape) != (x.shape[0], self.hidden_size):
                raise RuntimeError(f"{name}: Expected hidden size {(x.shape[0], self.hidden_size)}, got "
                                   f"{list(s.shape)}")
        new = _STEPS[self._mode](F.linear(x, self.weight_ih, self.bias_ih), states, self.weight_hh, self.bias_hh)
        return new if batched else tuple(s.squeeze(0) for s in new)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._step(input, hx, False)[0]


class LSTMCell(RNNCellBase):
    _mode = "LSTM"

    def forward(self, input, hx=None):
        h, c = self._step(input, hx, True)
        return h, c


class GRUCell(RNNCellBase):
    _mode = "GRU"

    def forward(self, input, hx=None):
        return self._step(input, hx, False)[0]
