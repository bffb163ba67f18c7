import pandas as pd

s = pd.Series([1, 2, 3, 4, 5, 6], dtype="float64")
print(s.rolling(3).mean().dropna().tolist())
words = pd.Series(["Apple pie", "banana", "apple", "Cherry", "BANANA"])
print(words.str.lower().str.split().str[0].value_counts().sort_index().to_dict())
