import pandas as pd

idx = pd.date_range("2024-03-01 00:00", periods=72, freq="h")
s = pd.Series(range(72), index=idx)
daily = s.resample("D").sum()
for day, total in daily.items():
    print(day.strftime("%Y-%m-%d"), total)
print(s.resample("12h").mean().round(1).tolist())
