const fs = require('fs');
const path = require('path');

const file = path.join(process.cwd(), 'inventory.json');
fs.writeFileSync(file, JSON.stringify({ items: [{ name: 'bolt', qty: 10 }, { name: 'nut', qty: 25 }] }));
const data = JSON.parse(fs.readFileSync(file, 'utf8'));
const total = data.items.reduce((sum, i) => sum + i.qty, 0);
console.log(data.items.map((i) => i.name).join(','), total);
fs.mkdirSync('out/deep', { recursive: true });
fs.writeFileSync('out/deep/a.txt', 'hello\n');
console.log(fs.readdirSync('out').join(','), fs.statSync('out/deep/a.txt').size);
