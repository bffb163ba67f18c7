set -euo pipefail
mkdir -p data/2024/{01,02}
for m in 01 02; do for d in 1 2 3; do echo "$m-$d" > "data/2024/$m/day$d.log"; done; done
find data -name '*.log' | wc -l
find data -name 'day2.log' | sort | xargs cat
du -a data | awk '$2 ~ /\.log$/' | wc -l
tar -czf data.tgz data && tar -tzf data.tgz | grep -c '\.log$'
