import io
import pandas as pd

csv = io.StringIO("""region,product,units,price
north,apple,10,1.5
south,apple,4,1.5
north,pear,7,2.0
south,pear,12,2.0
north,apple,3,1.5
""")
df = pd.read_csv(csv)
df["revenue"] = df.units * df.price
out = df.groupby("region").agg(units=("units", "sum"), revenue=("revenue", "sum")).reset_index()
for row in out.itertuples(index=False):
    print(f"{row.region} {row.units} {row.revenue:.2f}")
