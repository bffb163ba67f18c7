// SPDX-License-Identifier: MIT
// What a sandbox's node runs, as `node --experimental-vm-modules -e` of this file (bootstrap.py execs
// it), so that node has
// started before the code arrives: it waits on fd 3 for "LENGTH\n", the code and the bytes of
// standard input, writes those into its fd 0 (an empty file of the sandbox's /tmp), and runs the
// code as `node -e CODE` runs it: a script named [eval] in this context, where -e has already set
// module, exports, require, __filename and __dirname (the working directory's), CommonJS, dynamic
// import(), process.exit codes, and an uncaught exception or unhandled rejection ending in 1.
// Everything here stays inside one function: the code's own top-level declarations must not meet
// any of ours. What is left to see: process.execArgv names the code, as for `node -e CODE`, and a
// stack trace ends with a few frames of this file below the code's.
//
// With the argument "session" (a session's node, zygote-proto.h), it serves one code after another
// instead, each through vm.runInThisContext in the state the earlier ones left (top-level
// declarations persist), with the event loop running between them: a completion value that is a
// promise is awaited, and code with a top-level await runs in an async function that is; a thrown
// error or a rejection is printed as node prints an uncaught one, and the code's status is 1. Each
// code's status goes to fd 4 as a line.
(function () {
  'use strict';
  const fs = require('fs');
  const vm = require('vm');
  if (process.argv[1] === 'session') {
    process.argv.splice(1, 1);
    session();
    return;
  }
  const data = fs.readFileSync(3);
  fs.closeSync(3);
  const nl = data.indexOf(10);
  const length = Number(data.subarray(0, nl).toString('latin1'));
  const code = data.subarray(nl + 1, nl + 1 + length).toString('utf8');
  const stdin = data.subarray(nl + 1 + length);
  for (let done = 0; done < stdin.length;)
    done += fs.writeSync(0, stdin, done, stdin.length - done, done);
  process.execArgv.splice(0, process.execArgv.length, '-e', code);
  // import() in the code resolves as in -e's, through ours: node takes such a callback only with
  // --experimental-vm-modules (bootstrap.py passes it; it prints nothing).
  vm.runInThisContext(code, {
    filename: '[eval]',
    displayErrors: true,
    importModuleDynamically: (specifier) => import(specifier),
  });

  function session() {
    const net = require('net');
    const util = require('util');
    // The runner's descriptors. node cannot make them close-on-exec: the code's subprocesses
    // inherit them, and could only spoil the code's own replies with them.
    const done = 4;
    const stream = new net.Socket({ fd: 3, readable: true, writable: false });
    let pending = Buffer.alloc(0);
    let busy = false;

    async function one(code) {
      let status = 0;
      try {
        const options = {
          filename: '[eval]',
          importModuleDynamically: (specifier) => import(specifier),
        };
        let script;
        try {
          script = new vm.Script(code, options);
        } catch (e) {
          // Top-level await, which a script may not hold: the code runs in an async function
          // instead (its own declarations then stay in it), and its promise is awaited.
          if (!(e instanceof SyntaxError) || !/\bawait\b/.test(code))
            throw e;
          script = new vm.Script('(async () => {\n' + code + '\n})()', { ...options, lineOffset: -1 });
        }
        const value = script.runInThisContext({ displayErrors: true });
        if (value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function')
          await value;
      } catch (e) {
        status = 1;
        try {
          process.stderr.write(util.inspect(e) + '\n');
        } catch {
          // Nothing more to say it with.
        }
      }
      fs.writeSync(done, status + '\n');
    }

    // One code at a time: the runner sends the next once this one's status is back.
    async function next() {
      while (!busy) {
        const nl = pending.indexOf(10);
        if (nl < 0)
          return;
        const length = Number(pending.subarray(0, nl).toString('latin1'));
        if (pending.length < nl + 1 + length)
          return;
        const code = pending.subarray(nl + 1, nl + 1 + length).toString('utf8');
        pending = pending.subarray(nl + 1 + length);
        busy = true;
        await one(code);
        busy = false;
      }
    }

    stream.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      next();
    });
    stream.on('end', () => process.exit(0));
  }
})();
