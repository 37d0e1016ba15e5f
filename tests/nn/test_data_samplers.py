"""utils.data samplers, random_split and the lazy DataLoader, against torch.utils.data where values are comparable.

Random indices cannot equal torch's (a different stream, docs/differences.md): for those
the tests check the structure (a permutation per pass, the range, the count), reproducibility with a
seed and, with fixed seeds, the distribution. Orders that involve no randomness, lengths, batch shapes,
errors and warnings are compared with torch directly.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings

import numpy as np
import pytest

import minigrad
from minigrad.utils import data as mdata


def _libs(torch):
    return [(torch, torch.utils.data), (minigrad, mdata)]


def _tolist(batch):
    if isinstance(batch, (list, tuple)):
        return [_tolist(b) for b in batch]
    return batch.tolist()


def test_sequential_and_batch_sampler_match_torch(torch):
    for bs, drop_last in [(1, False), (3, False), (3, True), (5, True), (12, False), (12, True)]:
        got = []
        for _, data in _libs(torch):
            seq = data.SequentialSampler(range(10))
            bsampler = data.BatchSampler(seq, bs, drop_last)
            got.append((list(seq), len(seq), list(bsampler), len(bsampler)))
        assert got[1] == got[0], (bs, drop_last)
    assert got[0][2] == []  # 12 > 10 and drop_last: no batch at all


def test_batch_sampler_over_a_plain_iterable_and_errors(torch):
    for _, data in _libs(torch):
        assert list(data.BatchSampler(iter("abcde"), 2, False)) == [["a", "b"], ["c", "d"], ["e"]]
        with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
            data.BatchSampler(range(3), 0, False)
        with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
            data.BatchSampler(range(3), True, False)
        with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
            data.BatchSampler(range(3), 2, 1)


def test_random_sampler_without_replacement_is_a_permutation_per_pass():
    gen = minigrad.Generator().manual_seed(3)
    sampler = mdata.RandomSampler(range(10), generator=gen)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second  # a new order every pass
    longer = list(mdata.RandomSampler(range(10), num_samples=25, generator=gen))
    assert len(longer) == 25
    assert sorted(longer[:10]) == sorted(longer[10:20]) == list(range(10))
    assert len(set(longer[20:])) == 5  # the tail comes from one more permutation: no repeats


def test_random_sampler_is_reproducible_with_a_seed_and_follows_manual_seed():
    def draw(**kw):
        return list(mdata.RandomSampler(range(50), **kw))

    a = draw(generator=minigrad.Generator().manual_seed(7))
    assert draw(generator=minigrad.Generator().manual_seed(7)) == a
    assert draw(generator=minigrad.Generator().manual_seed(8)) != a
    minigrad.manual_seed(1)
    b = draw(replacement=True, num_samples=100)
    minigrad.manual_seed(1)
    assert draw(replacement=True, num_samples=100) == b


def test_random_sampler_with_replacement_is_uniform():
    """Chi-square test with a fixed seed: 20,000 draws over 10 bins (critical value 27.9 at p=0.001, 9 dof)."""
    n, draws = 10, 20_000
    out = list(mdata.RandomSampler(range(n), replacement=True, num_samples=draws,
                                   generator=minigrad.Generator().manual_seed(0)))
    assert len(out) == draws and min(out) >= 0 and max(out) < n
    assert all(type(i) is int for i in out[:40])
    counts = np.bincount(out, minlength=n)
    chi2 = ((counts - draws / n) ** 2 / (draws / n)).sum()
    assert chi2 < 27.9, counts
    assert len(set(out[:50])) < 50  # with replacement: repeats happen


@pytest.mark.parametrize("num_samples", [1, 31, 32, 33, 70])
def test_random_sampler_lengths_match_torch(torch, num_samples):
    lens = []
    for _, data in _libs(torch):
        s = data.RandomSampler(range(5), replacement=True, num_samples=num_samples)
        lens.append((len(s), len(list(s)), s.num_samples))
        s = data.RandomSampler(range(5), num_samples=num_samples)
        lens.append((len(s), len(list(s)), s.num_samples))
    assert lens[2:] == lens[:2]


def test_random_sampler_errors_match_torch(torch):
    for _, data in _libs(torch):
        with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
            data.RandomSampler(range(3), replacement=1)
        with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
            data.RandomSampler(range(3), num_samples=0)
        with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
            data.RandomSampler([])
        with pytest.raises(ValueError, match="num_samples=2.5"):
            data.RandomSampler(range(3), replacement=True, num_samples=2.5)


def test_subset_random_sampler():
    idx = [3, 8, 11, 20]
    s = mdata.SubsetRandomSampler(idx, generator=minigrad.Generator().manual_seed(0))
    orders = [tuple(s) for _ in range(20)]
    assert all(sorted(o) == idx for o in orders) and len(set(orders)) > 1 and len(s) == 4


# -- the lazy DataLoader --------------------------------------------------------------------------------------
def _dataset(lib, data, n=10):
    x = lib.tensor(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
    return data.TensorDataset(x, lib.arange(n))


class Endless:
    """A sampler with no end and no __len__: 0, 1, 2, ... modulo the data set's size."""

    def __init__(self, n):
        self.n = n
        self.drawn = 0

    def __iter__(self):
        for i in itertools.count():
            self.drawn += 1
            if self.drawn > 1000:  # a loader that materialises the sampler fails here instead of hanging
                raise RuntimeError("the loader drew 1000 indices: it is not lazy")
            yield i % self.n


def test_an_endless_sampler_yields_batches_at_once(torch):
    for lib, data in _libs(torch):
        sampler = Endless(10)
        loader = data.DataLoader(_dataset(lib, data), batch_size=4, sampler=sampler)
        it = iter(loader)
        batches = [next(it) for _ in range(3)]
        assert [_tolist(b[1]) for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
        assert sampler.drawn <= 16  # drawn batch by batch (torch prefetches a little), never all of them
        with pytest.raises(TypeError):
            len(loader)


def test_makemore_infinite_loader_starts_at_once_and_knows_its_length(torch):
    """makemore's InfiniteDataLoader: RandomSampler(replacement=True, num_samples=int(1e10)) under a DataLoader."""
    lens = []
    for lib, data in _libs(torch):
        ds = _dataset(lib, data)
        sampler = data.RandomSampler(ds, replacement=True, num_samples=int(1e10))
        loader = data.DataLoader(ds, sampler=sampler, batch_size=32)
        start = time.process_time()
        it = iter(loader)
        x, y = next(it)
        x2, y2 = next(it)
        assert time.process_time() - start < 5  # (materialising 1e10 indices would never finish)
        assert tuple(x.shape) == (32, 2) and tuple(y2.shape) == (32,)
        assert 0 <= int(y.min()) and int(y.max()) < 10
        lens.append(len(loader))
    assert lens[1] == lens[0] == math.ceil(1e10 / 32)


@pytest.mark.parametrize("bs,drop_last", [(3, False), (3, True), (4, False), (10, True)])
def test_sampler_and_batch_sampler_arguments_match_torch(torch, bs, drop_last):
    got = []
    for lib, data in _libs(torch):
        ds = _dataset(lib, data)
        order = [9, 2, 4, 7, 0, 1, 8, 3, 6, 5]
        by_sampler = data.DataLoader(ds, batch_size=bs, sampler=order, drop_last=drop_last)
        by_batches = data.DataLoader(ds, batch_sampler=data.BatchSampler(order, bs, drop_last))
        got.append((len(by_sampler), _tolist(list(by_sampler)), len(by_batches), _tolist(list(by_batches)),
                    by_batches.batch_size, type(by_sampler.batch_sampler).__name__))
    assert got[1] == got[0]


def test_default_samplers_are_pytorchs(torch):
    for lib, data in _libs(torch):
        ds = _dataset(lib, data)
        assert type(data.DataLoader(ds).sampler).__name__ == "SequentialSampler"
        assert type(data.DataLoader(ds, shuffle=True).sampler).__name__ == "RandomSampler"
        loader = data.DataLoader(ds, batch_size=None)
        assert loader.batch_sampler is None and type(loader.sampler).__name__ == "SequentialSampler"


def test_shuffle_is_lazy_and_a_permutation(torch):
    for lib, data in _libs(torch):
        loader = data.DataLoader(_dataset(lib, data, 20), batch_size=6, shuffle=True)
        ys = [v for _, y in loader for v in _tolist(y)]
        assert sorted(ys) == list(range(20)) and len(loader) == 4


def test_collate_fn_and_batch_size_none_match_torch(torch):
    got = []
    for lib, data in _libs(torch):
        ds = _dataset(lib, data, 5)
        summed = data.DataLoader(ds, batch_size=2, collate_fn=lambda items: sum(int(y) for _, y in items))
        single = list(data.DataLoader(ds, batch_size=None, sampler=[4, 0]))
        arrays = list(data.DataLoader([np.ones(2) * i for i in range(3)], batch_size=None))
        got.append((list(summed), [type(s).__name__ for s in single], _tolist(single),
                    [(type(a).__name__, str(a.dtype).split(".")[-1], a.tolist()) for a in arrays]))
    assert got[1] == got[0]


def test_loader_argument_errors_match_torch(torch):
    cases = [
        ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive with batch_size"),
        ({"batch_sampler": [[0]], "shuffle": True}, "batch_sampler option is mutually exclusive"),
        ({"batch_sampler": [[0]], "drop_last": True}, "batch_sampler option is mutually exclusive"),
        ({"sampler": [0, 1], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
        ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
        ({"batch_size": 0}, "batch_size should be a positive integer value, but got batch_size=0"),
        ({"num_workers": -1}, "num_workers option should be non-negative"),
        ({"timeout": -1}, "timeout option should be non-negative"),
    ]
    for lib, data in _libs(torch):
        ds = _dataset(lib, data)
        for kwargs, phrase in cases:
            with pytest.raises(ValueError, match=phrase):
                data.DataLoader(ds, **kwargs)


def test_iterable_dataset_batches_in_order_like_torch(torch):
    got = []
    for _, data in _libs(torch):
        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter(range(7))

        got.append((_tolist(list(data.DataLoader(Stream(), batch_size=3))),
                    _tolist(list(data.DataLoader(Stream(), batch_size=3, drop_last=True)))))
        with pytest.raises(ValueError, match="expected unspecified shuffle option"):
            data.DataLoader(Stream(), shuffle=True)
        with pytest.raises(ValueError, match="expected unspecified sampler option"):
            data.DataLoader(Stream(), sampler=[0])
    assert got[1] == got[0] == ([[0, 1, 2], [3, 4, 5], [6]], [[0, 1, 2], [3, 4, 5]])


# -- random_split and Subset --------------------------------------------------------------------------------
@pytest.mark.parametrize("n,lengths", [(10, [7, 3]), (11, [0.7, 0.3]), (10, [0.33, 0.33, 0.34]), (3, [1.0]),
                                       (7, [0.5, 0.5]), (100, [0.8, 0.1, 0.1])])
def test_random_split_sizes_match_torch(torch, n, lengths):
    sizes = []
    for _, data in _libs(torch):
        parts = data.random_split(range(n), lengths)
        sizes.append([len(p) for p in parts])
        assert sorted(x for p in parts for x in p) == list(range(n))
        assert all(type(p).__name__ == "Subset" for p in parts)
    assert sizes[1] == sizes[0]


def test_random_split_is_seeded_and_errors_like_torch(torch):
    def split(seed):
        parts = mdata.random_split(range(20), [15, 5], generator=minigrad.Generator().manual_seed(seed))
        return [list(p) for p in parts]

    assert split(4) == split(4) and split(4) != split(5)
    for _, data in _libs(torch):
        with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
            data.random_split(range(5), [2, 2])
        with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
            data.random_split(range(5), [1.2, -0.2])
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0. This might result in an empty"):
            assert [len(p) for p in data.random_split(range(2), [0.1, 0.1, 0.8])] == [1, 0, 1]


def test_subset_indexing_and_loading(torch):
    got = []
    for lib, data in _libs(torch):
        ds = _dataset(lib, data)
        sub = data.Subset(ds, [8, 1, 5])
        nested = data.Subset(sub, [2, 0])
        got.append((len(sub), _tolist(sub[0]), _tolist(nested[0]), _tolist(sub[[0, 2]]),
                    _tolist(list(data.DataLoader(sub, batch_size=2)))))
    assert got[1] == got[0]


def test_random_split_subsets_feed_a_loader():
    train, val = mdata.random_split(_dataset(minigrad, mdata, 12), [0.75, 0.25],
                                    generator=minigrad.Generator().manual_seed(0))
    seen = [int(v) for loader in (mdata.DataLoader(train, batch_size=4, shuffle=True), mdata.DataLoader(val))
            for _, y in loader for v in y]
    assert sorted(seen) == list(range(12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(mdata.DataLoader(train, batch_size=4)) == 3


def test_pin_memory_warns_like_torch_when_iterated(torch):
    for lib, data in _libs(torch):
        loader = data.DataLoader(_dataset(lib, data), batch_size=4, pin_memory=True)
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found, "
                                             "then device pinned memory won't be used."):
            next(iter(loader))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            next(iter(data.DataLoader(_dataset(lib, data), batch_size=4)))
