const crypto = require('crypto');
const { Buffer } = require('buffer');

console.log(crypto.createHash('sha256').update('abc').digest('hex'));
console.log(Buffer.from('hello, world').toString('base64'));
console.log(new URL('https://example.test/a/b?x=1&y=2').searchParams.get('y'));
console.log(typeof fetch, typeof crypto.randomUUID());
