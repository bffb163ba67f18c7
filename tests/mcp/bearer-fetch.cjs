// SPDX-License-Identifier: MIT
// Preloaded (node --require) by tests/mcp/conformance when $SANDBOXD_API_KEY is set: the conformance
// suite has no option for request headers, so every fetch() to $SANDBOXD_URL's origin gets
// "Authorization: Bearer $SANDBOXD_API_KEY", as an agent configured with the key sends it.
'use strict';

const key = process.env.SANDBOXD_API_KEY;
const origin = new URL(process.env.SANDBOXD_URL || 'http://127.0.0.1:8080').origin;
const fetchWithoutKey = globalThis.fetch;

globalThis.fetch = (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    if (new URL(request ? request.url : input).origin !== origin)
        return fetchWithoutKey(input, init);
    const headers = new Headers(init.headers || (request && request.headers));
    if (!headers.has('authorization'))
        headers.set('authorization', `Bearer ${key}`);
    return fetchWithoutKey(input, { ...init, headers });
};
