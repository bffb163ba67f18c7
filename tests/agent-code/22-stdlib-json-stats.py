import json
import statistics
from collections import Counter

records = json.loads('[{"k": "a", "v": 3}, {"k": "b", "v": 7}, {"k": "a", "v": 5}, {"k": "c", "v": 1}]')
vals = [r["v"] for r in records]
print(statistics.mean(vals), statistics.median(vals), round(statistics.stdev(vals), 4))
print(Counter(r["k"] for r in records).most_common(1))
print(json.dumps({"n": len(records), "max": max(vals)}, sort_keys=True))
