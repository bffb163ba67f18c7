import numpy as np
import pandas as pd

df = pd.DataFrame({"a": [3, np.nan, 1, 4], "b": ["x", "y", None, "z"]})
print(int(df.isna().sum().sum()), df.a.fillna(df.a.mean()).round(3).tolist())
print(df.dropna().sort_values("a", ascending=False).b.tolist())
print(df.a.rank(method="min").tolist())
