import re
from datetime import date, datetime, timedelta

log = """2024-05-01 12:00:01 ERROR disk full
2024-05-01 12:00:05 INFO retry
2024-05-02 08:30:00 ERROR timeout"""
errors = [m.groupdict() for m in re.finditer(r"^(?P<day>\S+) \S+ ERROR (?P<what>.+)$", log, re.M)]
print(errors)
d = datetime.strptime("2024-02-28", "%Y-%m-%d").date() + timedelta(days=1)
print(d.isoformat(), (date(2024, 12, 25) - date(2024, 1, 1)).days)
