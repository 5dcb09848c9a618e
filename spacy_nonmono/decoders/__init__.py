"""Decoders: the batched greedy loop (Cython); exact chart decoders later."""
