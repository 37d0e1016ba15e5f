"""View chains (see also tests/torch_parity for the views' parity with PyTorch)."""



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
