import numpy as np
from scipy import optimize

res = optimize.minimize(optimize.rosen, np.array([1.3, 0.7, 0.8]), method="BFGS", jac=optimize.rosen_der)
print([round(float(v), 3) for v in res.x])
root = optimize.brentq(lambda x: x**3 - 2 * x - 5, 2, 3)
print(round(root, 6))
popt, _ = optimize.curve_fit(lambda x, a, b: a * x + b, np.arange(10.0), 3 * np.arange(10.0) + 1)
print([round(float(v), 6) for v in popt])
