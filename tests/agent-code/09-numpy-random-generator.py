import numpy as np

rng = np.random.default_rng(12345)
a = rng.normal(10.0, 2.0, size=100_000)
print(a.shape, abs(a.mean() - 10.0) < 0.05, abs(a.std() - 2.0) < 0.05)
again = np.random.default_rng(12345).normal(10.0, 2.0, size=100_000)
print(bool((a == again).all()))
print(sorted(set(rng.integers(0, 3, size=1000).tolist())))
