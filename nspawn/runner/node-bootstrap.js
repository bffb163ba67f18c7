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
(function () {
  'use strict';
  const fs = require('fs');
  const vm = require('vm');
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
})();
