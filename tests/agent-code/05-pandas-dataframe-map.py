# needs: debian 13 (DataFrame.map is pandas 2.1's; applymap before)
import pandas as pd

df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
print(df.map(lambda v: v * 10).to_csv(index=False), end="")
print(df.map(str).map(len).to_numpy().sum())
