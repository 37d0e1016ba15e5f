"""View chains (see also tests/torch_parity for the views' parity with PyTorch)."""

import numpy as np


def test_a_view_of_a_view_shares_its_bases_recipes():
    # issue 34: `y = y.view(1)[0]` repeated n times copied the whole recipe chain at each view (O(n²)); a view's
    # chain now points to its base's, and the recipes are still those from the root, in order
    import minigrad
    from minigrad.ops.views import view_recipes

    x = minigrad.ones(1, requires_grad=True)
    y = x[0]
    chains = []
    for _ in range(50):
        y = y.view(1)
        chains.append(y._extras.view_fn)
        y = y[0]
    assert y._extras.view_fn.prev is chains[-1]
    assert len(view_recipes(y)) == 101 and view_recipes(y)[0][0] == "getitem" and view_recipes(y)[1][0] == "reshape"
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_a_write_into_a_base_rebuilds_its_views_nodes_only_when_read():
    # issue 34: a write rebuilt every live view's node at once (a loop of writes into a base with many views cost
    # O(views) node rebuilds per write); as in PyTorch, a view's node is rebuilt when read after its base's version
    # changed, from the base's node at that time
    import minigrad

    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    views = [b[1:] for _ in range(100)]
    old = views[0]._node
    b.mul_(2.0)
    b.mul_(3.0)
    assert all(v._extras.stale for v in views) and views[0]._node is old  # nothing rebuilt yet
    node = views[0].grad_fn  # rebuilt now, from the base's node after both writes
    assert node is not old and not views[0]._extras.stale and views[1]._extras.stale
    assert node.name() == "SliceBackward0" and node.next_functions[0][0] is b.grad_fn
    (views[0] * views[1]).sum().backward()
    assert x.grad.tolist() == [0.0, 144.0, 216.0]  # d(36 x²)/dx, as torch


def _writes_through_views(m):
    """A loop of writes into a base and through views of it (slice, select, transpose then slice, reshape then
    select), each view's node read after each write."""
    x = m.tensor(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)
    b = x * 1
    views = [b[1:], b[2], b.t()[1:3], b.view(12)[5]]
    views[0].retain_grad()
    names = []
    for _ in range(3):
        for k, v in enumerate(views):
            b.mul_(1.5)
            v.add_(0.25 * (k + 1))
            node = v.grad_fn
            names.append((node.name(), dict(node._args), node._input_metadata, node.next_functions[0][0] is b.grad_fn
                           or node.next_functions[0][0].next_functions[0][0] is b.grad_fn))
    (b * b).sum().backward()
    return names, x.grad.numpy().copy()


def test_a_view_written_again_and_again_gets_the_nodes_its_recipes_record(monkeypatch):
    # a loop writing through one view rebuilds the view's node at each write; from the second rebuild on it is
    # made from the view's plan (the nodes the first rebuild recorded), not by replaying the recipes as ops: the
    # same classes, saved arguments, metadata and edges, and the same gradients
    import minigrad
    from minigrad.ops import inplace

    planned = _writes_through_views(minigrad)
    monkeypatch.setattr(inplace, "_plan_of", lambda node, root: None)  # every rebuild replays the recipes
    replayed = _writes_through_views(minigrad)
    monkeypatch.undo()
    assert planned[0] == replayed[0]
    np.testing.assert_array_equal(planned[1], replayed[1])
    x = minigrad.ones(3, requires_grad=True)
    b = x * 1
    v = b[1:]
    for _ in range(3):
        b.mul_(2.0)
        v.add_(1.0)
    assert v._extras.view_fn.plan is not None and v.grad_fn.output_tensor is v
    b.sum().backward()
    assert x.grad.tolist() == [8.0, 8.0, 8.0]
