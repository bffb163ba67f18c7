import pandas as pd

df = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0]})
df.to_excel("t.xlsx", index=False, sheet_name="weather")
back = pd.read_excel("t.xlsx", sheet_name="weather")
print(back.equals(df), back.temp.mean())
