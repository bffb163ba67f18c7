import numpy as np
from scipy import integrate

v, err = integrate.quad(np.sin, 0, np.pi)
print(round(v, 8), err < 1e-9)
sol = integrate.solve_ivp(lambda t, y: -0.5 * y, (0, 2), [4.0], rtol=1e-8, atol=1e-10)
print(round(float(sol.y[0, -1]), 5), round(4 * float(np.exp(-1.0)), 5))
