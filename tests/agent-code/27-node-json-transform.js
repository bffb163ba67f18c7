// needs: debian 13 (Array.prototype.toSorted is node 20's)
const sales = [
  { region: 'north', amount: 120 },
  { region: 'south', amount: 80 },
  { region: 'north', amount: 30 },
  { region: 'east', amount: 55 },
];
const byRegion = sales.reduce((acc, s) => {
  acc[s.region] = (acc[s.region] || 0) + s.amount;
  return acc;
}, {});
const sorted = Object.entries(byRegion).sort((a, b) => b[1] - a[1]);
console.log(JSON.stringify(Object.fromEntries(sorted)));
console.log(structuredClone({ a: [1, { b: 2 }] }).a[1].b, [3, 1, 2].toSorted().join(''));
