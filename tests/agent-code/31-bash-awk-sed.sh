printf 'name,qty,price\nbolt,10,0.25\nnut,25,0.10\ngear,2,7.50\n' > stock.csv
awk -F, 'NR > 1 { total += $2 * $3 } END { printf "%.2f\n", total }' stock.csv
sed -n '2,$p' stock.csv | cut -d, -f1 | sort | paste -sd' ' -
grep -c ',[0-9]\{2\},' stock.csv
head -n 1 stock.csv | tr , " "
