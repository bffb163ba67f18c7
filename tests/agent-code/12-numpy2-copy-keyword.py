# needs: debian 13 (numpy 2's copy=False refuses to copy)
import numpy as np

a = np.arange(4)
print(np.array(a, copy=False) is a)
try:
    np.array([1, 2, 3], copy=False)
except ValueError:
    print("ValueError")
print(np.asarray([1, 2, 3]).tolist())
