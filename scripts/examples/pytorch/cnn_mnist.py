"""A PyTorch MNIST-style CNN, as users write it (after pytorch/examples mnist), on synthetic
28x28 digits so that it needs no download. Runs unchanged under dynrepl:

    dynrepl --batch scripts/examples/pytorch/cnn_mnist.py [--compile]
"""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def synthetic_digits(n, generator):
    # Each class lights a different 7x7 patch of a noisy 28x28 image.
    labels = torch.randint(0, 10, (n,), generator=generator)
    images = torch.randn(n, 1, 28, 28, generator=generator) * 0.3
    for k in range(10):
        r, c = divmod(k, 4)
        images[:, :, r * 7:(r + 1) * 7, c * 7:(c + 1) * 7] += (labels == k).float().view(-1, 1, 1, 1)
    return images, labels


def train(model, device, loader, optimizer, step):
    model.train()
    losses = []
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = step(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test(model, device, loader, step):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            pred = step(data).argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return correct / len(loader.dataset)


def main(compile=False, epochs=2, n_train=256, n_test=128, verbose=True):
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    g = torch.Generator().manual_seed(0)
    train_set = TensorDataset(*synthetic_digits(n_train, g))
    test_set = TensorDataset(*synthetic_digits(n_test, g))
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(2))
    test_loader = DataLoader(test_set, batch_size=64)
    model = Net().to(device)
    step = torch.compile(model) if compile else model
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for epoch in range(1, epochs + 1):
        losses += train(model, device, train_loader, optimizer, step)
        acc = test(model, device, test_loader, step)
        scheduler.step()
        if verbose:
            print(f"epoch {epoch}: loss {losses[-1]:.4f}  test accuracy {100 * acc:.1f}%")
    path = os.path.join(tempfile.mkdtemp(), "mnist_cnn.pt")
    torch.save(model.state_dict(), path)
    reloaded = Net()
    reloaded.load_state_dict(torch.load(path))
    return losses, acc, model.state_dict(), reloaded.state_dict()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--epochs", type=int, default=2)
    main(compile=p.parse_args().compile, epochs=p.parse_args().epochs)
