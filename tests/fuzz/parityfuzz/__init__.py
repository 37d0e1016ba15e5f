"""minigrad's differential fuzzer: random autograd programs run on PyTorch 2.13 and on minigrad.

Layout: ``program`` (statements and snippets), ``catalogue`` (the ops and how to draw their
arguments), ``values`` (edge shapes and values), ``generator`` and ``features`` (random programs),
``runner`` (run a program on one library), ``observe``/``compare`` (what is compared and how a
difference is categorised), ``conditioning`` (a value or gradient mismatch that PyTorch itself moves
past the tolerance at 1-ulp input changes is ill-conditioned: reported apart, not counted),
``shrink``, ``exclusions`` (the README's documented differences),
``corpus`` (fixed cases of issue 14), ``known`` with ``known_failures.md`` (today's mismatches)
and ``bullets`` (issue 14's bullets), ``broken`` (the self-test's broken PyTorch), ``fuzz``
(batches, coverage) and ``__main__`` (``make fuzz``).
"""
