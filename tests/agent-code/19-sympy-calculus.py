import sympy as sp

x = sp.symbols("x")
print(sp.integrate(x * sp.exp(x), x))
print(sp.integrate(sp.sin(x) ** 2, (x, 0, sp.pi)))
print(sp.diff(sp.sin(x) * x**2, x))
print(sp.limit(sp.sin(x) / x, x, 0), sp.series(sp.exp(x), x, 0, 4))
