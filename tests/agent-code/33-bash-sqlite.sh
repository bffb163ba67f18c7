sqlite3 shop.db <<'SQL'
CREATE TABLE item(name TEXT, qty INTEGER);
INSERT INTO item VALUES ('bolt', 10), ('nut', 25), ('gear', 2);
SQL
sqlite3 -separator ' ' shop.db 'SELECT name, qty FROM item WHERE qty > 5 ORDER BY qty DESC;'
sqlite3 shop.db 'SELECT SUM(qty) FROM item;'
