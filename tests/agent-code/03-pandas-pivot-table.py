import pandas as pd

df = pd.DataFrame({
    "year": [2023, 2023, 2024, 2024, 2024, 2023],
    "team": ["a", "b", "a", "b", "a", "a"],
    "score": [3, 5, 4, 6, 8, 1],
})
p = pd.pivot_table(df, index="team", columns="year", values="score", aggfunc="sum", fill_value=0)
print(p.to_csv(), end="")
print(int(p.values.sum()))
