# needs: debian 13 (numpy 2's promotion rules, NEP 50)
import numpy as np

print((np.float32(3) + 3.0).dtype)
print((np.array([1, 2], dtype=np.int8) + 1).dtype)
print(np.result_type(np.float32, np.float64))
