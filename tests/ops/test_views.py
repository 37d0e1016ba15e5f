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
