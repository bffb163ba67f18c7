import pandas as pd

with open("sales.csv", "w") as f:
    f.write("date,amount\n2024-01-15,100\n2024-01-20,50\n2024-02-03,70\n2024-02-28,30\n2024-03-01,5\n")
df = pd.read_csv("sales.csv", parse_dates=["date"])
monthly = df.groupby(df.date.dt.to_period("M")).amount.sum()
for period, amount in monthly.items():
    print(period, amount)
print(df.date.dt.day_name().tolist()[:2])
