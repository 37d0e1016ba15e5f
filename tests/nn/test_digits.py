"""A real data set, offline: an MLP trained with minigrad on scikit-learn's bundled 8x8 digits.

This is the course's "train a real model" promise: Sequential + CrossEntropyLoss + Adam +
DataLoader, seeded, reaching at least 95% test accuracy in well under a second of training.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

import minigrad
import minigrad.nn as nn
from minigrad.utils.data import DataLoader, TensorDataset


def train_digits_mlp(epochs: int = 15, seed: int = 0) -> float:
    """Train a 64-64-10 MLP on 80% of the digits; return accuracy on the other 20%."""
    digits = load_digits()
    X = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(X))
    train, test = order[:1437], order[1437:]

    minigrad.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = minigrad.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(minigrad.tensor(X[train]), minigrad.tensor(y[train])), batch_size=32,
                        shuffle=True, generator=minigrad.Generator().manual_seed(seed))
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    model.eval()
    with minigrad.no_grad():
        predicted = model(minigrad.tensor(X[test])).argmax(1)
    return (predicted == minigrad.tensor(y[test])).float().mean().item()


def test_mlp_reaches_95_percent_on_digits():
    assert train_digits_mlp() >= 0.95


def test_training_is_reproducible():
    assert train_digits_mlp(epochs=2, seed=3) == train_digits_mlp(epochs=2, seed=3)
