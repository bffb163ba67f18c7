cat > orders.json <<'JSON'
[{"id": 1, "total": 20.5, "status": "paid"}, {"id": 2, "total": 5, "status": "open"}, {"id": 3, "total": 14.5, "status": "paid"}]
JSON
jq -c '[.[] | select(.status == "paid") | .id]' orders.json
jq '[.[] | .total] | add' orders.json
jq -r 'group_by(.status)[] | "\(.[0].status) \(length)"' orders.json
