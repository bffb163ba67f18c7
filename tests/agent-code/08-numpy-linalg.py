import numpy as np

a = np.array([[3.0, 1.0], [1.0, 2.0]])
b = np.array([9.0, 8.0])
x = np.linalg.solve(a, b)
print([round(float(v), 6) for v in x])
w = np.linalg.eigvalsh(np.array([[2.0, 0.0], [0.0, 5.0]]))
print([float(v) for v in w])
print(round(float(np.linalg.det(a)), 6), np.linalg.matrix_rank(np.ones((3, 3))))
