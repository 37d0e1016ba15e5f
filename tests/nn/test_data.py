"""utils.data: Dataset/TensorDataset/DataLoader batching, collation and seeded shuffling, against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.utils.data import DataLoader, Dataset, TensorDataset, default_collate, random_split


def _same(got, want):
    """Equal batches: same nesting (lists stay lists, dicts keep their keys), values and dtypes."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want)
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    else:
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False), (4, True)])
def test_unshuffled_batches_match_torch(torch, batch_size, drop_last):
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10)
    tl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                     batch_size=batch_size, drop_last=drop_last)
    ml = DataLoader(TensorDataset(minigrad.tensor(x), minigrad.tensor(y)), batch_size=batch_size,
                    drop_last=drop_last)
    assert len(ml) == len(tl)
    tb, mb = list(tl), list(ml)
    assert len(mb) == len(tb)
    for a, b in zip(mb, tb):
        _same(a, b)


SAMPLES = {
    "tuples of numbers": [(1, 2.0, True), (3, 4.0, False), (5, 6.0, True)],
    "dicts": [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    "arrays": [np.ones((2, 2), np.float32) * i for i in range(3)],
    "numpy scalars": [np.float64(1.5), np.float64(2.5)],
}


@pytest.mark.parametrize("case", list(SAMPLES))
def test_default_collate_matches_torch(torch, case):
    samples = SAMPLES[case]
    _same(default_collate(samples), torch.utils.data.default_collate(samples))


def test_collate_of_tensors_and_custom_dataset(torch):
    class Squares(Dataset):
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"x": self.lib.tensor([float(i), float(i * i)]), "label": i % 2}

    tb = list(torch.utils.data.DataLoader(Squares(torch), batch_size=3))
    mb = list(DataLoader(Squares(minigrad), batch_size=3))
    assert len(mb) == len(tb) == 3
    for a, b in zip(mb, tb):
        _same(a, b)


def test_shuffle_is_a_permutation_and_seeded():
    ds = TensorDataset(minigrad.arange(20))

    def epoch(loader):
        return [int(v) for (b,) in loader for v in b]

    minigrad.manual_seed(0)
    first = epoch(DataLoader(ds, batch_size=6, shuffle=True))
    assert sorted(first) == list(range(20)) and first != list(range(20))
    minigrad.manual_seed(0)
    assert epoch(DataLoader(ds, batch_size=6, shuffle=True)) == first
    loader = DataLoader(ds, batch_size=6, shuffle=True, generator=minigrad.Generator().manual_seed(42))
    e1, e2 = epoch(loader), epoch(loader)
    assert e1 != e2 and sorted(e2) == list(range(20))  # a new order every epoch
    again = DataLoader(ds, batch_size=6, shuffle=True, generator=minigrad.Generator().manual_seed(42))
    assert epoch(again) == e1 and epoch(again) == e2


def test_requires_grad_dataset_keeps_the_graph(torch):
    x = minigrad.randn(6, 2, requires_grad=True)
    (batch,) = next(iter(DataLoader(TensorDataset(x), batch_size=4)))
    assert batch.grad_fn.name() == "StackBackward0"
    batch.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[:4], 1)
    np.testing.assert_array_equal(x.grad.numpy()[4:], 0)


def test_batch_size_none_and_errors(torch):
    ds = TensorDataset(minigrad.arange(3), minigrad.arange(3) * 2)
    items = list(DataLoader(ds, batch_size=None))
    assert len(items) == 3 and int(items[2][1]) == 4
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(minigrad.arange(3), minigrad.arange(4))
    assert len(ds) == 3


def test_random_split():
    parts = random_split(TensorDataset(minigrad.arange(10)), [7, 3], generator=minigrad.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [7, 3]
    seen = sorted(int(p[i][0]) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    assert [len(p) for p in random_split(TensorDataset(minigrad.arange(10)), [0.5, 0.5])] == [5, 5]
