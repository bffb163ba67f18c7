// SPDX-License-Identifier: MIT
// A client of sandboxd made from its OpenAPI document alone: openapi-typescript turns
// docs/openapi.json into sandboxd.d.ts, and openapi-fetch calls the service with those types, so a
// field the document lacks, or names otherwise, does not compile.
//
//   node out/client.js [URL]   runs print(2**32), then lists the pool, then runs code that writes
//                              as it goes, streamed (Accept: text/event-stream); exits 1 on any error.
//   With SANDBOXD_TOKEN set, it sends that API key (the document's bearer scheme).
import createClient from "openapi-fetch";
import type { components, paths } from "./sandboxd.js";

declare const process: { argv: string[]; env: Record<string, string | undefined>; exitCode?: number };

type ExecuteRequest = paths["/v1/execute"]["post"]["requestBody"]["content"]["application/json"];
type ExecuteBody = paths["/v1/execute"]["post"]["responses"][200]["content"]["application/json"];
type OutputChunk = components["schemas"]["OutputChunk"];
type ErrorBody = components["schemas"]["Error"];

const baseUrl = process.argv[2] ?? process.env.SANDBOXD_URL ?? "http://127.0.0.1:8080";
const token = process.env.SANDBOXD_TOKEN;
// The 200 has two media types (JSON, and the event stream asked for with Accept): data is typed
// as the JSON one, and a streamed call reads the body itself (parseAs: "stream").
const client = createClient<paths, "application/json">({ baseUrl, headers: token ? { Authorization: `Bearer ${token}` } : {} });

function failed(what: string): void {
    console.error(what);
    process.exitCode = 1;
}

const run = await client.POST("/v1/execute", { body: { code: "print(2**32)", language: "python", timeout_s: 10 } });
if (run.error || !run.data) {
    failed(`POST /v1/execute: ${run.response.status}: ${run.error?.error}`);
} else {
    const { stdout, exit_code, usage } = run.data;
    console.log(`stdout=${JSON.stringify(stdout)} exit_code=${exit_code} cpu_ms=${usage.cpu_ms} memory_peak_bytes=${usage.memory_peak_bytes}`);
}

const pool = await client.GET("/v1/pool");
if (pool.error || !pool.data) {
    failed(`GET /v1/pool: ${pool.response.status}`);
} else {
    console.log(`warm=${pool.data.warm} target=${pool.data.target}`);
}

interface ServerSentEvent {
    event: string;
    data: string;
}

// The events of a text/event-stream body, read as the WHATWG HTML parser reads them, less id and
// retry, which sandboxd does not send: lines end at CRLF, LF or CR; a line starting with ":" is a
// comment; "event" names the event, "data" lines are joined with "\n"; a blank line dispatches one
// with data. What follows the last blank line is no event.
async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = "";
    let data: string[] = [];

    for (;;) {
        const { done, value } = await reader.read();
        buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
        for (;;) {
            const end = /\r\n|\n|\r/.exec(buffer);
            // A CR last in what came so far may be the first half of a CRLF.
            if (!end || (end[0] === "\r" && end.index === buffer.length - 1 && !done)) {
                break;
            }
            const line = buffer.slice(0, end.index);
            buffer = buffer.slice(end.index + end[0].length);
            if (line === "") {
                if (data.length > 0) {
                    yield { event: event || "message", data: data.join("\n") };
                }
                event = "";
                data = [];
            } else if (!line.startsWith(":")) {
                const colon = line.indexOf(":");
                const field = colon < 0 ? line : line.slice(0, colon);
                let text = colon < 0 ? "" : line.slice(colon + 1);
                if (text.startsWith(" ")) {
                    text = text.slice(1);
                }
                if (field === "event") {
                    event = text;
                } else if (field === "data") {
                    data.push(text);
                }
            }
        }
        if (done) {
            return;
        }
    }
}

function chunkText(chunk: OutputChunk): string {
    if (!chunk.base64) {
        return chunk.data;
    }
    return new TextDecoder().decode(Uint8Array.from(atob(chunk.data), (c) => c.charCodeAt(0)));
}

// Three lines a fifth of a second apart, and one on stderr: each comes as an event when written.
// (A body declared apart: written inline, it keeps TypeScript from inferring parseAs.)
const writer: ExecuteRequest = {
    code: "import sys, time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.2)\nprint('e', file=sys.stderr)\n",
    language: "python",
    timeout_s: 10,
};
const streamed = await client.POST("/v1/execute", { params: { header: { Accept: "text/event-stream" } }, body: writer, parseAs: "stream" });
const ctype = streamed.response.headers.get("Content-Type") ?? "";
if (streamed.error || !streamed.data) {
    failed(`POST /v1/execute (streamed): ${streamed.response.status}: ${streamed.error?.error}`);
} else if (!ctype.startsWith("text/event-stream")) {
    failed(`POST /v1/execute (streamed): content-type ${ctype}`);
    await streamed.data.cancel();
} else {
    const out = { stdout: "", stderr: "" };
    let stdoutEvents = 0;
    let result: ExecuteBody | ErrorBody | undefined;

    for await (const { event, data } of serverSentEvents(streamed.data)) {
        if (result !== undefined) {
            failed(`POST /v1/execute (streamed): event '${event}' after the result`);
        } else if (event === "stdout" || event === "stderr") {
            out[event] += chunkText(JSON.parse(data) as OutputChunk);
            stdoutEvents += event === "stdout" ? 1 : 0;
        } else if (event === "result") {
            result = JSON.parse(data) as ExecuteBody | ErrorBody;
        } else {
            failed(`POST /v1/execute (streamed): an event named '${event}'`);
        }
    }
    if (result === undefined) {
        failed("POST /v1/execute (streamed): the stream ended without a result event");
    } else if ("error" in result) {
        failed(`POST /v1/execute (streamed): the result is an error: ${result.error}`);
    } else if (typeof result.stdout !== "string" || typeof result.exit_code !== "number" || typeof result.sandbox_id !== "string") {
        failed(`POST /v1/execute (streamed): the result is not the 200 body: ${JSON.stringify(result)}`);
    } else if (stdoutEvents === 0 || out.stdout !== result.stdout || out.stderr !== result.stderr) {
        failed(`POST /v1/execute (streamed): the events' output ${JSON.stringify(out)} is not the result's`);
    } else {
        console.log(`streamed stdout_events=${stdoutEvents} stdout=${JSON.stringify(out.stdout)} stderr=${JSON.stringify(out.stderr)} result.exit_code=${result.exit_code}`);
    }
}
