"""More names the teaching-code census lists (tests/teaching_code/CENSUS.md), each against PyTorch 2.13: values,
gradients, node names, warnings and errors, as lecture code meets them."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(2028)


def _both(torch):
    return (torch, minigrad)


def _error(fn, lib):
    with pytest.raises(Exception) as e:
        fn(lib)
    return type(e.value), str(e.value).split("\n")[0]


def _same_error(torch, fn, phrase):
    t, m = _error(fn, torch), _error(fn, minigrad)
    assert m[0] is t[0] and phrase in t[1] and phrase in m[1], (t, m)


def _close(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# -- Tensor.normal_ (weights drawn in place: d2l's init, minGPT's, a VAE's noise) ------------------------------------
def test_normal_in_place_draws_torchs_distribution_and_records_its_node(torch):
    """The draws differ (minigrad's own stream); their spread, the node and the zero gradient are PyTorch's."""
    res = {}
    for lib in _both(torch):
        x = lib.zeros(20000, dtype=lib.float64)
        assert x.normal_(mean=1.5, std=0.25) is x and x._version == 1
        v = x.numpy()
        assert abs(v.mean() - 1.5) < 0.01 and abs(v.std() - 0.25) < 0.01
        a = lib.zeros(3, requires_grad=True)
        b = a * 1
        b.normal_()
        (b * 2).sum().backward()
        with lib.autograd.forward_ad.dual_level():  # the draw's tangent is zero
            dual = lib.autograd.forward_ad.make_dual(lib.zeros(3), lib.ones(3)) * 1
            dual.normal_()
            tangent = lib.autograd.forward_ad.unpack_dual(dual).tangent.tolist()
        res[lib.__name__] = (type(b.grad_fn).__name__, a.grad.tolist(), str(lib.ones(2).normal_().dtype).split(".")[1],
                             tangent)
    assert res["minigrad"] == res["torch"]


def test_normal_in_place_errors(torch):
    _same_error(torch, lambda lib: lib.zeros(3, dtype=lib.int64).normal_(), "not implemented for 'Long'")
    _same_error(torch, lambda lib: lib.zeros(3).normal_(0.0, -1.0), "normal expects std >= 0.0")
    _same_error(torch, lambda lib: lib.zeros(3, requires_grad=True).normal_(),
                "a leaf Variable that requires grad is being used in an in-place operation")


# -- .cuda() on a CPU-only machine -----------------------------------------------------------------------------------
def test_cuda_methods_give_a_cpu_only_torchs_error(torch):
    _same_error(torch, lambda lib: lib.ones(2).cuda(), "Torch not compiled with CUDA enabled")
    _same_error(torch, lambda lib: lib.nn.Linear(2, 1).cuda(), "Torch not compiled with CUDA enabled")


# -- Tensor.resize (deprecated, out of place) -----------------------------------------------------------------------
def test_resize_out_of_place_values_gradient_node_and_warning(torch):
    x = RNG.standard_normal(6)
    res = {}
    for lib in _both(torch):
        a = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = a.resize(2, 3)
        (y * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        res[lib.__name__] = ([y.detach().numpy(), a.grad.numpy()], tuple(y.shape), type(y.grad_fn).__name__,
                             [type(n).__name__ for n, _ in y.grad_fn.next_functions], [str(m.message) for m in w])
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]


def test_resize_out_of_place_keeps_the_number_of_elements(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(torch, lambda lib: lib.zeros(6).resize(4), "requested resize to 4 (4 elements in total), but "
                    "the given tensor has a size of 6 (6 elements). autograd's resize can only change the shape")


# -- torch.__version__ ---------------------------------------------------------------------------------------------
def test_version_is_a_printable_release_string(torch):
    """minigrad's own version (it is not PyTorch): a str as PyTorch's, so printing it and string comparisons work."""
    for lib in _both(torch):
        assert isinstance(lib.__version__, str) and re.match(r"\d+\.\d+\.\d+", lib.__version__)
        assert f"{lib.__version__}".count(".") >= 2


# -- addcmul_, addcdiv_ (hand-written Adam steps) --------------------------------------------------------------------
def test_addcmul_addcdiv_in_place_values_gradients_and_nodes(torch):
    p, m, v = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), RNG.uniform(0.5, 2.0, (2, 3))
    res = {}
    for lib in _both(torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in (p, m, v)]
        y = leaves[0] * 1
        y.addcmul_(leaves[1], leaves[1], value=0.1)
        z = y.addcdiv_(leaves[1], leaves[2].sqrt() + 1e-8, value=-0.01)
        (z * lib.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        with lib.no_grad():
            plain = lib.tensor(p).addcdiv_(lib.tensor(m), lib.tensor(v)).addcmul_(lib.tensor(m), lib.tensor(v), value=2)
        res[lib.__name__] = ([z.detach().numpy(), plain.numpy()] + [t.grad.numpy() for t in leaves],
                             z is y, y._version, type(z.grad_fn).__name__,
                             type(z.grad_fn.next_functions[0][0]).__name__)
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]


# -- nn.modules.<file>.<Class>: the full paths code names ----------------------------------------------------------
MODULE_PATHS = ["nn.modules.activation.MultiheadAttention", "nn.modules.activation.ReLU",
                "nn.modules.container.ModuleList", "nn.modules.conv.Conv2d", "nn.modules.dropout.Dropout",
                "nn.modules.linear.Linear", "nn.modules.linear.NonDynamicallyQuantizableLinear",
                "nn.modules.normalization.LayerNorm", "nn.modules.rnn.GRU", "nn.modules.rnn.LSTM",
                "nn.modules.rnn.RNN", "nn.modules.sparse.Embedding", "nn.modules.transformer.TransformerEncoder",
                "nn.modules.transformer.TransformerEncoderLayer", "nn.modules.loss.MSELoss",
                "nn.modules.module.Module", "nn.modules.batchnorm.BatchNorm2d", "nn.modules.pooling.MaxPool2d"]


def _path(lib, name):
    where = lib
    for part in name.split("."):
        where = getattr(where, part)
    return where


@pytest.mark.parametrize("name", MODULE_PATHS)
def test_layers_by_their_full_module_path(torch, name):
    for lib in _both(torch):
        cls = _path(lib, name)
        short = name.rsplit(".", 1)[1]
        assert cls is getattr(lib.nn, short, cls) and issubclass(cls, lib.nn.Module)
    mha = {lib.__name__: lib.nn.MultiheadAttention(4, 2) for lib in _both(torch)}
    for lib in _both(torch):
        assert isinstance(mha[lib.__name__].out_proj, lib.nn.modules.linear.NonDynamicallyQuantizableLinear)
        assert isinstance(mha[lib.__name__].out_proj, lib.nn.modules.linear.Linear)
    assert repr(mha["minigrad"]) == repr(mha["torch"])
    with pytest.raises(AttributeError, match="does not implement torch.nn.modules.linear.Bilinear"):
        minigrad.nn.modules.linear.Bilinear  # noqa: B018


# -- small names lecture code calls once or twice ------------------------------------------------------------------
def test_select_and_tile_values_gradients_nodes_and_errors(torch):
    x = RNG.standard_normal((3, 4))
    res = {}
    for lib in _both(torch):
        a = lib.tensor(x, requires_grad=True)
        outs = [a.select(1, 2), lib.select(a, 0, -1), lib.tile(a, (2,)), a.tile((2, 1, 2))]
        sum((o * o).sum() for o in outs).backward()
        res[lib.__name__] = ([o.detach().numpy() for o in outs] + [a.grad.numpy()],
                             [type(o.grad_fn).__name__ for o in outs], [o.storage_offset() for o in outs[:2]])
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]
    _same_error(torch, lambda lib: lib.zeros(2, 3).select(0, 5), "select(): index 5 out of range for tensor of size")
    _same_error(torch, lambda lib: lib.zeros(2, 3).select(2, 0), "Dimension out of range")
    _same_error(torch, lambda lib: lib.tile(lib.zeros(2), 2), "tile(): argument 'dims' (position 2) must be tuple")


def test_casts_legacy_new_and_storage_offset(torch):
    res = {}
    for lib in _both(torch):
        x = lib.arange(6.0).view(2, 3)
        made = [x.byte(), x.short(), x.new(2, 3), x.new([1, 2]), x.new(), x.new(lib.Size([1, 2])),
                x.new(lib.tensor([1.5]))]
        res[lib.__name__] = ([(str(m.dtype).split(".")[1], tuple(m.shape)) for m in made], made[3].tolist(),
                             [x[1].storage_offset(), x[:, 2].storage_offset(), x.storage_offset(),
                              x.t()[1:].storage_offset()], lib.numel(x), str(lib.preserve_format),
                             x.clone(memory_format=lib.preserve_format).t().stride(),
                             x.t().clone(memory_format=lib.contiguous_format).stride())
    assert res["minigrad"] == res["torch"]


def test_settings_lecture_code_makes(torch):
    for lib in _both(torch):
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("bogus")
        lib.random.manual_seed(7)
        a = lib.rand(3)
        lib.manual_seed(7)
        assert lib.rand(3).tolist() == a.tolist() and lib.random.initial_seed() == 7
        with lib.serialization.safe_globals([dict]):
            assert dict in lib.serialization.get_safe_globals()
        assert dict not in lib.serialization.get_safe_globals()


@pytest.mark.parametrize(("a", "b", "kwargs"), [([1.0, 2.0], [1.0, 2.00001], {}), ([1.0, 2.0], [1.0, 2.1], {}),
                                                ([float("nan")], [float("nan")], {}), ([1, 2], [1.0, 2.0], {}),
                                                ([1.0], [1.5], {"rtol": 0.5, "atol": 0.0})])
def test_deprecated_assert_allclose(torch, a, b, kwargs):
    outcomes = []
    for lib in _both(torch):
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated since 1.12"):
            try:
                outcomes.append(lib.testing.assert_allclose(lib.tensor(a), b, **kwargs))
            except AssertionError as e:
                outcomes.append(str(e).split("\n")[0])
    assert outcomes[1] == outcomes[0]


def test_subset_and_iterable_dataset(torch):
    res = {}
    for lib in _both(torch):
        data = lib.utils.data.TensorDataset(lib.arange(10.0), lib.arange(10))
        sub = lib.utils.data.Subset(data, [7, 2, 5])

        class Count(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(5))

        loader = lib.utils.data.DataLoader(Count(), batch_size=2)
        res[lib.__name__] = (len(sub), [(float(x), int(y)) for x, y in sub], [b.tolist() for b in loader],
                             [[t.tolist() for t in b] for b in lib.utils.data.DataLoader(sub, batch_size=2)])
    assert res["minigrad"] == res["torch"]


def test_layers_over_existing_functions(torch):
    x = RNG.standard_normal((2, 1, 3, 3))
    t = RNG.standard_normal((2, 1, 3, 3))
    res = {}
    for lib in _both(torch):
        nn = lib.nn
        mods = [nn.Softplus(), nn.Softplus(beta=2, threshold=1.0), nn.ZeroPad2d((1, 0, 2, 1)), nn.ZeroPad2d(1),
                nn.Upsample(scale_factor=2), nn.Upsample(size=(4, 5), mode="nearest")]
        losses = [nn.SmoothL1Loss(), nn.SmoothL1Loss(beta=0.5, reduction="sum")]
        a = lib.tensor(x, requires_grad=True)
        outs = [m(a) for m in mods] + [loss(a, lib.tensor(t)) for loss in losses]
        sum((o * o).sum() for o in outs).backward()
        res[lib.__name__] = ([o.detach().numpy() for o in outs] + [a.grad.numpy()],
                             [repr(m) for m in mods + losses], [type(o.grad_fn).__name__ for o in outs],
                             issubclass(lib.optim.lr_scheduler.StepLR, lib.optim.lr_scheduler._LRScheduler),
                             issubclass(lib.optim.lr_scheduler._LRScheduler, lib.optim.lr_scheduler.LRScheduler))
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(torch, batch_first, padding_side):
    seqs = [RNG.standard_normal((n, 2)) for n in (2, 4, 3)]
    res = {}
    for lib in _both(torch):
        ts = [lib.tensor(s, requires_grad=True) for s in seqs]
        out = lib.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_value=-1.0,
                                            padding_side=padding_side)
        (out * lib.tensor(np.arange(out.numel(), dtype=float).reshape(out.shape))).sum().backward()
        res[lib.__name__] = ([out.detach().numpy()] + [t.grad.numpy() for t in ts], type(out.grad_fn).__name__,
                             [type(n).__name__ for n, _ in out.grad_fn.next_functions])
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]
    with pytest.raises(AttributeError, match="does not implement torch.nn.utils.rnn.PackedSequence"):
        minigrad.nn.utils.rnn.PackedSequence  # noqa: B018


def test_init_trunc_normal_and_orthogonal(torch):
    for lib in _both(torch):
        w = lib.empty(20000)
        assert lib.nn.init.trunc_normal_(w, mean=0.1, std=0.02, a=0.07, b=0.13) is w
        v = w.numpy()
        assert v.min() >= 0.07 and v.max() <= 0.13 and abs(v.mean() - 0.1) < 1e-3
        assert abs(v.std() - 0.01485) < 1e-3  # N(0.1, 0.02²) cut at ±1.5 std: std 0.02 * 0.7427
        for shape, gain in (((3, 5), 1.0), ((5, 3), 2.0), ((4, 2, 3), 1.0)):
            q = lib.nn.init.orthogonal_(lib.empty(*shape, dtype=lib.float64), gain=gain).reshape(shape[0], -1)
            small = q @ q.T if shape[0] <= q.shape[1] else q.T @ q
            np.testing.assert_allclose(small.numpy(), gain**2 * np.eye(min(q.shape)), atol=1e-12)
    _same_error(torch, lambda lib: lib.nn.init.orthogonal_(lib.empty(3)), "Only tensors with 2 or more dimensions")


def test_methods_removed_in_pytorch_1_9(torch):
    _same_error(torch, lambda lib: lib.eye(2).eig(), "This function was deprecated since version 1.9 and is now "
                "removed. `torch.linalg.eig` returns complex tensors")
    _same_error(torch, lambda lib: lib.eye(2).lstsq(lib.eye(2)), "`torch.lstsq` is deprecated in favor of "
                "`torch.linalg.lstsq`.")


def test_data_classes_by_their_module_path(torch):
    for lib in _both(torch):
        assert lib.utils.data.dataloader.DataLoader is lib.utils.data.DataLoader
        assert lib.utils.data.dataset.Dataset is lib.utils.data.Dataset
        assert lib.utils.data.sampler.Sampler is lib.utils.data.Sampler
        assert issubclass(lib.utils.data.sampler.RandomSampler, lib.utils.data.sampler.Sampler)
    with pytest.raises(AttributeError, match="does not implement torch.utils.data.sampler.DistributedSampler"):
        minigrad.utils.data.sampler.DistributedSampler  # noqa: B018


@pytest.mark.parametrize(("name", "shape"), [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)),
                                             ("LazyBatchNorm2d", (2, 3, 4, 4))])
def test_lazy_batch_norm(torch, name, shape):
    x = RNG.standard_normal(shape)
    res = {}
    for lib in _both(torch):
        m = getattr(lib.nn, name)().double()
        before = repr(m)
        a = lib.tensor(x, requires_grad=True)
        y = m(a)
        (y * lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))).sum().backward()
        res[lib.__name__] = ([y.detach().numpy(), a.grad.numpy(), m.weight.grad.numpy(), m.running_mean.numpy(),
                              m.running_var.numpy()], before, repr(m), type(m).__name__, sorted(m.state_dict()),
                             type(y.grad_fn).__name__)
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]


def test_pixel_shuffle_layer(torch):
    x = RNG.standard_normal((2, 8, 2, 3))
    res = {}
    for lib in _both(torch):
        m = lib.nn.PixelShuffle(2)
        a = lib.tensor(x, requires_grad=True)
        y = m(a)
        (y * y).sum().backward()
        res[lib.__name__] = ([y.detach().numpy(), a.grad.numpy()], repr(m), type(y.grad_fn).__name__,
                             lib.nn.modules.pixelshuffle.PixelShuffle is lib.nn.PixelShuffle)
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1:] == res["torch"][1:]
    _same_error(torch, lambda lib: lib.nn.functional.pixel_shuffle(lib.zeros(1, 3, 2, 2), 2),
                "channel' dimension to be divisible by the square of upscale_factor")
    _same_error(torch, lambda lib: lib.nn.functional.pixel_shuffle(lib.zeros(3, 2), 2),
                "pixel_shuffle expects input to have at least 3 dimensions")


def test_bincount(torch):
    res = {}
    for lib in _both(torch):
        x = lib.tensor([1, 3, 3, 0])
        outs = [lib.bincount(x), lib.bincount(x, minlength=6), x.bincount(),
                lib.bincount(x, weights=lib.tensor([0.5, 1.0, 2.0, 3.0])),
                lib.bincount(x, weights=lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64)),
                lib.bincount(x, weights=lib.tensor([1, 2, 3, 4])), lib.bincount(lib.tensor([], dtype=lib.int64))]
        res[lib.__name__] = [(o.tolist(), str(o.dtype).split(".")[1]) for o in outs]
    assert res["minigrad"] == res["torch"]
    _same_error(torch, lambda lib: lib.bincount(lib.tensor([-1, 2])), "bincount only supports 1-d non-negative")
    _same_error(torch, lambda lib: lib.bincount(lib.tensor([[1, 2]])), "bincount only supports 1-d non-negative")
    _same_error(torch, lambda lib: lib.bincount(lib.tensor([1.0, 2.0])), "\"bincount_cpu\" not implemented for")
    _same_error(torch, lambda lib: lib.bincount(lib.tensor([1, 2]), weights=lib.ones(3)),
                "weights should be 1-d and have the same length as input")
    _same_error(torch, lambda lib: lib.bincount(lib.tensor([1, 2]), minlength=-1), "minlength should be >= 0")


@pytest.mark.parametrize("kwargs", [{}, {"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 1},
                                    {"threshold_mode": "abs", "threshold": 0.1, "patience": 0, "min_lr": 0.02}])
def test_reduce_lr_on_plateau(torch, kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    res = {}
    for lib in _both(torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.4)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seen = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seen.append((sched.get_last_lr()[0], sched.num_bad_epochs, sched.best))
        res[lib.__name__] = seen
    assert res["minigrad"] == res["torch"]
    _same_error(torch, lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
        lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1), factor=1.0), "Factor should be < 1.0.")


def _graph(node, depth=6):
    if node is None or depth == 0:
        return None
    return type(node).__name__, tuple(_graph(n, depth - 1) for n, _ in node.next_functions)


@pytest.mark.parametrize(("s1", "s2", "kwargs"), [((3, 4), (3, 4), {}), ((3, 4), (1, 4), {"dim": 1}),
                                                  ((2, 3, 4), (2, 3, 4), {"dim": -1, "eps": 0.5})])
def test_cosine_similarity(torch, s1, s2, kwargs):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    b.flat[0] = 0.0
    res = {}
    for lib in _both(torch):
        x1, x2 = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = lib.nn.functional.cosine_similarity(x1, x2, **kwargs)
        (y * lib.tensor(np.arange(float(y.numel())).reshape(y.shape))).sum().backward()
        res[lib.__name__] = ([y.detach().numpy(), x1.grad.numpy(), x2.grad.numpy()], _graph(y.grad_fn))
    _close(res["minigrad"][0], res["torch"][0])
    assert res["minigrad"][1] == res["torch"][1]
