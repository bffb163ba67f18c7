printf '%s\n' apple pear apple fig pear apple > fruits.txt
sort fruits.txt | uniq -c | sort -rn | awk '{print $2, $1}'
wc -l < fruits.txt
tr 'a-z' 'A-Z' < fruits.txt | head -n 2 | paste -sd, -
