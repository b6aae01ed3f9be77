"""A word-level LSTM language model as in pytorch/examples word_language_model: embedding,
2-layer LSTM with dropout, tied decoder, gradient clipping, plain SGD with a decaying lr, and
sampling with torch.multinomial. Runs unchanged under dynrepl:

    dynrepl --batch scripts/examples/pytorch/lstm_lm.py [--compile]
"""
import argparse
import math

import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def corpus(n_words, vocab, generator):
    # A toy language: each word is followed by one of two successors.
    words = [0]
    choices = torch.randint(0, 2, (n_words,), generator=generator).tolist()
    for c in choices[1:]:
        words.append((words[-1] * 3 + 1 + c) % vocab)
    return torch.tensor(words, dtype=torch.long)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def main(compile=False, epochs=2, verbose=True):
    torch.manual_seed(1111)
    ntokens, bptt, bsz = 20, 8, 4
    data = batchify(corpus(800, ntokens, torch.Generator().manual_seed(3)), bsz)
    model = RNNModel(ntokens, 16, 16, 2, dropout=0.2)
    forward = torch.compile(model) if compile else model
    criterion = nn.NLLLoss()
    lr, losses = 5.0, []
    for epoch in range(epochs):
        model.train()
        hidden = model.init_hidden(bsz)
        for i in range(0, data.size(0) - 1, bptt):
            seq_len = min(bptt, data.size(0) - 1 - i)
            x, y = data[i:i + seq_len], data[i + 1:i + 1 + seq_len].reshape(-1)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = forward(x, hidden)
            loss = criterion(output, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        lr /= 2.0
        if verbose:
            print(f"epoch {epoch + 1}: loss {losses[-1]:.3f}  ppl {math.exp(losses[-1]):.2f}")
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        word = torch.randint(ntokens, (1, 1), dtype=torch.long)
        sample = []
        for _ in range(10):
            output, hidden = model(word, hidden)
            word_weights = output.squeeze().div(1.0).exp()
            word_idx = torch.multinomial(word_weights, 1)[0]
            word.fill_(word_idx)
            sample.append(word_idx.item())
    if verbose:
        print("sample:", sample)
    return losses, model.state_dict(), sample


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    main(compile=p.parse_args().compile)
