const sleep = (ms, v) => new Promise((resolve) => setTimeout(() => resolve(v), ms));

async function main() {
  const order = [];
  const results = await Promise.all([30, 10, 20].map(async (ms) => {
    const v = await sleep(ms, ms * 2);
    order.push(ms);
    return v;
  }));
  // Promise.all keeps the input's order; the timers' own order is the scheduler's: sorted.
  console.log(results.join(' '), order.sort((a, b) => a - b).join(' '));
  const settled = await Promise.allSettled([Promise.reject(new Error('no')), sleep(1, 'yes')]);
  console.log(settled.map((s) => s.status).join(' '));
  for await (const v of (async function* () { yield 1; yield 2; })()) console.log('gen', v);
}
main();
