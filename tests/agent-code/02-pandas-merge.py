import pandas as pd

orders = pd.DataFrame({"order": [1, 2, 3, 4], "customer": ["ann", "bob", "ann", "cy"], "total": [20, 35, 15, 50]})
customers = pd.DataFrame({"customer": ["ann", "bob", "dee"], "city": ["Oslo", "Lima", "Rome"]})
m = orders.merge(customers, on="customer", how="left").fillna({"city": "?"})
print(m.sort_values("order").to_csv(index=False), end="")
inner = orders.merge(customers, on="customer")
print(len(inner), inner.total.sum())
