# needs: debian 13 (np.trapezoid and the removed aliases are numpy 2's)
import numpy as np

x = np.linspace(0, 1, 101)
print(round(float(np.trapezoid(x**2, x)), 4))
print(hasattr(np, "float_"), hasattr(np, "Inf"), np.__version__.split(".")[0])
