# dynrepl corpus program (public code, not written by the dynrepl project).
# Source:  https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/time_sequence_prediction/generate_sine_wave.py
# Commit:  77f55b912142e11fcfdf5b530231fb9c52f181e8
# License: BSD-3-Clause (Copyright (c) 2017, PyTorch contributors)
# Changes from the original (everything else is verbatim; see tests/corpus/SOURCES.md):
#   - L (sequence length of the generated sine waves) 1000 -> 200
import numpy as np
import torch

np.random.seed(2)

T = 20
L = 200  # [corpus] was 1000 (sequence length; shrunk to keep the run short)
N = 100

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
torch.save(data, open('traindata.pt', 'wb'))
