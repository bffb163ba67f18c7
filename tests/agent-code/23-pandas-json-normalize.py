import pandas as pd

data = [
    {"id": 1, "user": {"name": "ann", "age": 31}, "tags": ["x", "y"]},
    {"id": 2, "user": {"name": "bob", "age": 45}, "tags": ["y"]},
]
df = pd.json_normalize(data)
print(sorted(df.columns))
print(df.explode("tags").groupby("tags").id.count().to_dict())
print(df["user.age"].sum())
