import sympy as sp

x, y = sp.symbols("x y")
print(sp.solve(x**2 - 5 * x + 6, x))
print(sp.solve([x + y - 10, x - y - 2], [x, y]))
print(sp.factor(x**3 - x), sp.expand((x + 1) ** 3))
