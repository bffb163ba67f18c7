// SPDX-License-Identifier: MIT
// sandboxd's /mcp as an agent's MCP client finds it: the official TypeScript SDK's Client over its
// StreamableHTTPClientTransport, against $SANDBOXD_URL/mcp (with $SANDBOXD_API_KEY as a Bearer
// token when set). Connects, lists the tools, calls each, and checks what an agent relies on: the
// image a run wrote comes back as those bytes, a bad argument is a JSON-RPC error in the REST API's
// words, a failed run is a result with isError, a cancelled call kills its run, progress arrives.
// The SDK itself checks every structuredContent against the tool's outputSchema.
//
// Run with the SDK on NODE_PATH (make mcp-clients installs it under build/npm-mcp):
//   NODE_PATH=build/npm-mcp/node_modules node tests/mcp/client.js
// With MCP_SDK=2, the SDK's second generation (@modelcontextprotocol/client) does the same, in the
// era MCP_NEGOTIATION says: legacy (its default: initialize, a session), pin (the stateless
// revision 2026-07-28 only: no initialize, no session, a call cancelled by closing its stream) or
// auto (it finds out which the server speaks, and must find 2026-07-28).
// Prints TAP (node:test); exits non-zero when a check fails. With MCP_CANCEL_MARKER set (a word no
// other process has on its command line), the cancelled run starts a process with that word, and
// the client, on the same host as the service, checks with pgrep that the cancellation ended it.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');

const SDK2 = process.env.MCP_SDK === '2';
const NEGOTIATION = SDK2 ? process.env.MCP_NEGOTIATION || 'legacy' : 'legacy';
const STATELESS_REVISION = '2026-07-28';
// The stateless revision: no session, no ping.
const STATELESS = NEGOTIATION !== 'legacy';
const sdk = SDK2 ? require('@modelcontextprotocol/client') : {
    ...require('@modelcontextprotocol/sdk/client/index.js'),
    ...require('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ...require('@modelcontextprotocol/sdk/types.js'),
};
const { Client, StreamableHTTPClientTransport, SUPPORTED_PROTOCOL_VERSIONS } = sdk;
const McpError = SDK2 ? sdk.ProtocolError : sdk.McpError;
const ErrorCode = SDK2 ? sdk.ProtocolErrorCode : sdk.ErrorCode;

const BASE = (process.env.SANDBOXD_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');
const URL_MCP = new URL(BASE + '/mcp');
const KEY = process.env.SANDBOXD_API_KEY || '';
const MARKER = process.env.MCP_CANCEL_MARKER || '';
const AUTH = KEY ? { Authorization: `Bearer ${KEY}` } : {};

const TOOLS = ['execute', 'runtimes', 'session_create', 'session_delete', 'session_exec', 'session_list_files',
    'session_read_file', 'session_run', 'session_write_file'];
// The REST API's words for a request without code (fcgi/messages.h: MSG_CODE_REQUIRED).
const CODE_REQUIRED = 'code is required and must be a string';

let client;
let transport;
const tools = new Map();

function connect(headers) {
    const options = { capabilities: {} };
    if (NEGOTIATION === 'pin')
        options.versionNegotiation = { mode: { pin: STATELESS_REVISION } };
    else if (NEGOTIATION === 'auto')
        options.versionNegotiation = { mode: 'auto' };
    const c = new Client({ name: 'sandboxd-mcp-tests', version: '1.0.0' }, options);
    const t = new StreamableHTTPClientTransport(URL_MCP, { requestInit: { headers } });
    return c.connect(t).then(() => [c, t]);
}

// arg(tool, names...): the first of names the tool's inputSchema has: the argument the server
// calls that; fails when it has none of them.
function arg(tool, ...names) {
    const props = tools.get(tool).inputSchema.properties || {};
    const name = names.find(n => Object.hasOwn(props, n));
    assert.ok(name, `${tool}'s inputSchema has none of ${names.join(', ')}: ${Object.keys(props).join(', ')}`);
    return name;
}

function call(name, args, options) {
    if (SDK2)
        return client.callTool({ name, arguments: args }, options);
    return client.callTool({ name, arguments: args }, undefined, options);
}

function texts(result) {
    return result.content.filter(c => c.type === 'text').map(c => c.text).join('');
}

// ok(result): a result that is no error, with structuredContent (the SDK checked it against the
// outputSchema); returns it.
function ok(name, result) {
    assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result).slice(0, 2000)}`);
    assert.equal(typeof result.structuredContent, 'object', `${name}: no structuredContent`);
    return result.structuredContent;
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

// The Python that writes a 4x3 RGB PNG with zlib and struct only, and a CSV, and prints the PNG's
// bytes in base64: what the image content must decode to.
const PNG_CODE = `import base64, struct, zlib
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
w, h = 4, 3
raw = b''.join(b'\\x00' + bytes(v for x in range(w) for v in (x * 60, y * 100, 200)) for y in range(h))
png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
       + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
open('plot.png', 'wb').write(png)
open('table.csv', 'w').write('x,y\\n1,2\\n')
print(base64.b64encode(png).decode())
`;

// Connected, and the tools listed (arg() reads their schemas), whichever tests run.
before(async () => {
    [client, transport] = await connect(AUTH);
    for (const t of (await client.listTools()).tools)
        tools.set(t.name, t);
});

after(async () => {
    if (client)
        await client.close();
});

test('initialize: a supported protocol version, a session id, the tools capability', { skip: STATELESS && 'the stateless revision' }, () => {
    assert.ok(SUPPORTED_PROTOCOL_VERSIONS.includes(transport.protocolVersion),
        `negotiated protocol version ${transport.protocolVersion}`);
    assert.match(transport.sessionId || '', /^[\x21-\x7e]+$/, 'Mcp-Session-Id: visible ASCII');
    assert.ok(client.getServerCapabilities().tools, 'the server offers tools');
    assert.ok(client.getServerVersion().name, 'serverInfo has a name');
});

test('server/discover: the stateless revision, no session, the tools capability', { skip: !STATELESS && 'a session\'s revision' }, () => {
    assert.equal(client.getNegotiatedProtocolVersion(), STATELESS_REVISION);
    assert.equal(transport.sessionId, undefined, 'no Mcp-Session-Id');
    assert.ok(client.getServerCapabilities().tools, 'the server offers tools');
    assert.ok(client.getServerVersion().name, 'serverInfo has a name');
});

test('without the key, when keys are on, the connection is refused', { skip: !KEY && 'no SANDBOXD_API_KEY' }, async () => {
    await assert.rejects(connect({}), err => err.code === 401 || /\b401\b|[Uu]nauthori[sz]ed/.test(String(err.message)));
});

test('tools/list: the nine tools, each with a description, an inputSchema and an outputSchema', async () => {
    const { tools: list } = await client.listTools();
    assert.deepEqual(list.map(t => t.name).sort(), TOOLS);
    for (const t of list) {
        assert.ok(t.description, `${t.name}: description`);
        assert.equal(t.inputSchema.type, 'object', `${t.name}: inputSchema`);
        assert.equal(t.outputSchema && t.outputSchema.type, 'object', `${t.name}: outputSchema`);
    }
    assert.deepEqual(tools.get('execute').inputSchema.required, ['code']);
});

test('runtimes: python among them, as GET /v1/runtimes', async () => {
    const out = ok('runtimes', await call('runtimes', {}));
    assert.ok(out.runtimes.some(r => r.language === 'python' && r.version), JSON.stringify(out));
});

test('execute: python that prints; stdout and exit_code in structuredContent and the text', async () => {
    const result = await call('execute', { language: 'python', code: 'print(2**32)' });
    const out = ok('execute', result);
    assert.equal(out.stdout, '4294967296\n');
    assert.equal(out.exit_code, 0);
    assert.ok(texts(result).includes('4294967296'), `text content: ${texts(result)}`);
});

test('execute with stdin and files, as POST /v1/execute takes them', async () => {
    const files = [{ path: 'in/data.txt', content_b64: Buffer.from('from a file\n').toString('base64') }];
    const out = ok('execute', await call('execute', {
        language: 'python',
        code: 'import sys; print(open("in/data.txt").read().strip(), sys.stdin.read().upper())',
        files,
        stdin: 'from stdin',
    }));
    assert.equal(out.stdout, 'from a file FROM STDIN\n');
});

test('execute with return_files: the PNG as image content of exactly the bytes written, the CSV as a resource', async () => {
    const result = await call('execute', { language: 'python', code: PNG_CODE, return_files: ['plot.png', 'table.csv'] });
    const out = ok('execute', result);
    const written = Buffer.from(out.stdout.trim(), 'base64');
    assert.equal(written.subarray(1, 4).toString(), 'PNG');
    const images = result.content.filter(c => c.type === 'image');
    assert.equal(images.length, 1, `image contents: ${JSON.stringify(result.content).slice(0, 500)}`);
    assert.equal(images[0].mimeType, 'image/png');
    const got = Buffer.from(images[0].data, 'base64');
    assert.ok(got.equals(written), `the image is ${got.length} bytes, ${got.toString('hex').slice(0, 40)}..., not the ${written.length} written`);
    assert.equal(got.readUInt32BE(16), 4, 'IHDR width');
    assert.equal(got.readUInt32BE(20), 3, 'IHDR height');
    const resources = result.content.filter(c => c.type === 'resource');
    assert.equal(resources.length, 1, `resource contents: ${JSON.stringify(resources).slice(0, 500)}`);
    const r = resources[0].resource;
    assert.match(r.uri, /table\.csv$/);
    const body = r.text !== undefined ? r.text : Buffer.from(r.blob, 'base64').toString();
    assert.equal(body, 'x,y\n1,2\n');
});

test('a failed run is a result with isError, not a protocol error', async () => {
    const result = await call('execute', { language: 'python', code: 'import sys; print("bye"); sys.exit(3)' });
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 1000));
    assert.ok(result.content.length > 0, 'the error says something');
    if (result.structuredContent)
        assert.equal(result.structuredContent.exit_code, 3);
});

test('a bad argument is a JSON-RPC error -32602 in the REST API\'s words', async () => {
    await assert.rejects(call('execute', { language: 'python' }), err => {
        assert.ok(err instanceof McpError, `not an McpError: ${err}`);
        assert.equal(err.code, ErrorCode.InvalidParams);
        assert.ok(err.message.includes(CODE_REQUIRED), err.message);
        return true;
    });
    const timeout = arg('execute', 'timeout_s', 'timeout');
    await assert.rejects(call('execute', { code: '1', [timeout]: 61 }), err => err instanceof McpError && err.code === ErrorCode.InvalidParams);
    await assert.rejects(call('execute', { code: '1', language: 'cobol' }), err => {
        assert.equal(err.code, ErrorCode.InvalidParams);
        assert.ok(err.message.includes('unsupported language "cobol"'), err.message);
        return true;
    });
});

test('an unknown tool is a JSON-RPC error -32602, and the session still answers after it', async () => {
    await assert.rejects(call('no_such_tool', {}), err => err instanceof McpError && err.code === ErrorCode.InvalidParams);
    if (STATELESS)
        await client.listTools(); // the revision has no ping
    else
        await client.ping();
});

test('progress: a run that prints over seconds sends increasing progress notifications as it runs', async () => {
    const seen = [];
    const code = 'import time\nfor i in range(4):\n    print("step", i, flush=True)\n    time.sleep(1)\n';
    const out = ok('execute', await call('execute', { language: 'python', code }, { onprogress: p => seen.push({ ...p, at: Date.now() }) }));
    const done = Date.now();
    assert.equal(out.stdout, 'step 0\nstep 1\nstep 2\nstep 3\n');
    assert.ok(seen.length >= 2, `${seen.length} progress notifications`);
    // The first step was printed 3 s before the end: its notification came then, not with the result.
    assert.ok(done - seen[0].at > 1500, `the first progress notification came ${done - seen[0].at} ms before the result`);
    for (let i = 1; i < seen.length; i++)
        assert.ok(seen[i].progress > seen[i - 1].progress, `progress must increase: ${JSON.stringify(seen)}`);
});

let sid;
test('session_create, then its files: write, read, list', async () => {
    const created = ok('session_create', await call('session_create', {}));
    sid = created.session_id;
    assert.match(sid, /^session-[a-z0-9]+$/);
    const content = arg('session_write_file', 'content', 'content_b64');
    const text = 'hello, session\n';
    const value = content.endsWith('b64') ? Buffer.from(text).toString('base64') : text;
    const written = ok('session_write_file', await call('session_write_file', { session_id: sid, path: 'notes/a.txt', [content]: value }));
    assert.equal(written.size, Buffer.byteLength(text));
    const read = await call('session_read_file', { session_id: sid, path: 'notes/a.txt' });
    const got = ok('session_read_file', read);
    const fromStructured = got.content !== undefined ? got.content
        : got.content_b64 !== undefined ? Buffer.from(got.content_b64, 'base64').toString() : undefined;
    // The bytes in structuredContent, or as an embedded resource (the text content may be the
    // structured result as JSON).
    const fromContent = read.content.filter(c => c.type === 'resource')
        .map(c => c.resource.text !== undefined ? c.resource.text : Buffer.from(c.resource.blob, 'base64').toString());
    assert.ok(fromStructured === text || fromContent.includes(text), `read back: ${JSON.stringify(read).slice(0, 500)}`);
    const dir = arg('session_list_files', 'dir', 'path');
    const list = ok('session_list_files', await call('session_list_files', { session_id: sid, [dir]: 'notes' }));
    assert.ok(list.files.some(f => /(^|\/)a\.txt$/.test(f.path) && f.type === 'file' && f.size === Buffer.byteLength(text)), JSON.stringify(list));
});

test('session_run keeps the interpreter\'s state; session_exec runs a command in the working directory', async () => {
    ok('session_run', await call('session_run', { session_id: sid, language: 'python', code: 'x = 41' }));
    const run = ok('session_run', await call('session_run', { session_id: sid, language: 'python', code: 'print(x + 1)' }));
    assert.equal(run.result.stdout, '42\n');
    assert.equal(run.status, 'success');
    const exec = ok('session_exec', await call('session_exec', { session_id: sid, command: 'cat notes/a.txt' }));
    assert.equal(exec.result.stdout, 'hello, session\n');
    const failed = await call('session_exec', { session_id: sid, command: 'exit 7' });
    assert.equal(failed.isError, true, JSON.stringify(failed).slice(0, 500));
});

// pgrep for the marker: the processes that have it.
function markerProcs() {
    try {
        return execFileSync('pgrep', ['-f', `--`, `sleep\\(1000\\) ${MARKER}$`], { encoding: 'utf8' }).trim();
    } catch (err) {
        if (err.status === 1)
            return '';
        throw err;
    }
}

// cancelExecute(options): an execute cancelled through the SDK's signal, with the request options
// given besides (onprogress or none: the answer on an event stream, or as JSON).
async function cancelExecute(options) {
    const controller = new AbortController();
    const code = MARKER
        ? `import subprocess, time\nsubprocess.Popen(['/usr/bin/python3', '-c', 'import time; time.sleep(1000)', '${MARKER}'])\nprint('started', flush=True)\ntime.sleep(60)\n`
        : 'import time\nprint("started", flush=True)\ntime.sleep(60)\n';
    const pending = call('execute', { language: 'python', code, [arg('execute', 'timeout_s', 'timeout')]: 60 },
        { ...options, signal: controller.signal });
    if (MARKER) {
        let procs = '';
        for (let i = 0; i < 200 && !procs; i++) {
            await sleep(100);
            procs = markerProcs();
        }
        assert.ok(procs, 'the cancelled run\'s process never started (positive control)');
    } else {
        await sleep(3000);
    }
    const t0 = Date.now();
    controller.abort('the test cancels it');
    await assert.rejects(pending);
    assert.ok(Date.now() - t0 < 2000, 'the call ended when cancelled');
    if (MARKER) {
        let procs = markerProcs();
        for (let i = 0; i < 100 && procs; i++) {
            await sleep(100);
            procs = markerProcs();
        }
        assert.equal(procs, '', 'the cancelled run\'s process is still there 10 s after notifications/cancelled');
    }
    const out = ok('execute', await call('execute', { code: 'print("after")' }));
    assert.equal(out.stdout, 'after\n');
}

test('cancellation of execute answered on a stream: the call ends at once, the next call works, the run is killed', async () => {
    await cancelExecute({ onprogress: () => {} });
});

test('cancellation of execute answered as JSON (no progress token): the same', async () => {
    await cancelExecute({});
});

test('cancellation of session_run: the session\'s next run is not held behind it, and the run never finishes', async () => {
    const controller = new AbortController();
    const code = 'import time\nprint("started", flush=True)\ntime.sleep(8)\nopen("late.txt", "w").write("the run was not killed")\n';
    const started = Date.now();
    const pending = call('session_run', { session_id: sid, language: 'python', code, timeout: 60 },
        { signal: controller.signal, onprogress: () => {} });
    await sleep(2000);
    controller.abort('the test cancels it');
    await assert.rejects(pending);
    const next = ok('session_run', await call('session_run', { session_id: sid, language: 'python', code: 'print("next")' }));
    assert.equal(next.result.stdout, 'next\n');
    assert.ok(Date.now() - started < 7000, `the next run ended ${Date.now() - started} ms after the cancelled one began: it waited for it`);
    await sleep(Math.max(0, started + 10000 - Date.now()));
    const ls = ok('session_exec', await call('session_exec', { session_id: sid, command: 'ls' }));
    assert.ok(!ls.result.stdout.split('\n').includes('late.txt'), 'the cancelled run went on to its end');
});

test('session_delete: the session is gone', async () => {
    const deleted = ok('session_delete', await call('session_delete', { session_id: sid }));
    assert.equal(deleted.state, 'deleted');
    const again = call('session_run', { session_id: sid, language: 'python', code: '1' });
    const result = await again.catch(err => err);
    if (result instanceof Error)
        assert.ok(result instanceof McpError, String(result));
    else
        assert.equal(result.isError, true, JSON.stringify(result));
});

test('DELETE ends the MCP session: a request with its id is then a 404', { skip: STATELESS && 'the stateless revision has no session' }, async () => {
    const id = transport.sessionId;
    await transport.terminateSession();
    const res = await fetch(URL_MCP, {
        method: 'POST',
        headers: {
            ...AUTH, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
            'mcp-session-id': id, 'mcp-protocol-version': transport.protocolVersion || '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list', params: {} }),
    });
    assert.equal(res.status, 404);
});
