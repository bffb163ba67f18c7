from openpyxl import Workbook, load_workbook

wb = Workbook()
ws = wb.active
ws.title = "data"
ws.append(["name", "qty", "price"])
for row in [("bolt", 10, 0.25), ("nut", 25, 0.1), ("gear", 2, 7.5)]:
    ws.append(row)
ws["E1"] = "=SUM(B2:B4)"
wb.save("stock.xlsx")
back = load_workbook("stock.xlsx")
sheet = back["data"]
print(sheet.max_row, sheet.max_column, sheet["E1"].value)
print([tuple(r) for r in sheet.iter_rows(min_row=2, max_col=3, values_only=True)])
