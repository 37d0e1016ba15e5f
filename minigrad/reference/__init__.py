"""A reference engine: reverse-mode autodiff in one short file (``engine.py``), for reading.

It imports NumPy only and shares no code with the rest of minigrad; lesson 14 builds it step by step
and reads minigrad's real engine (``minigrad/autograd/engine.py``) beside it.
"""
