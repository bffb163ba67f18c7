// SPDX-License-Identifier: MIT
// A client of sandboxd made from its OpenAPI document alone: openapi-typescript turns
// docs/openapi.json into sandboxd.d.ts, and openapi-fetch calls the service with those types, so a
// field the document lacks, or names otherwise, does not compile.
//
//   node out/client.js [URL]   runs print(2**32), then lists the pool; exits 1 on any error.
//   With SANDBOXD_TOKEN set, it sends that API key (the document's bearer scheme).
import createClient from "openapi-fetch";
import type { paths } from "./sandboxd.js";

declare const process: { argv: string[]; env: Record<string, string | undefined>; exitCode?: number };

const baseUrl = process.argv[2] ?? process.env.SANDBOXD_URL ?? "http://127.0.0.1:8080";
const token = process.env.SANDBOXD_TOKEN;
const client = createClient<paths>({ baseUrl, headers: token ? { Authorization: `Bearer ${token}` } : {} });

const run = await client.POST("/v1/execute", { body: { code: "print(2**32)", language: "python", timeout_s: 10 } });
if (run.error || !run.data) {
    console.error(`POST /v1/execute: ${run.response.status}: ${run.error?.error}`);
    process.exitCode = 1;
} else {
    const { stdout, exit_code, usage } = run.data;
    console.log(`stdout=${JSON.stringify(stdout)} exit_code=${exit_code} cpu_ms=${usage.cpu_ms} memory_peak_bytes=${usage.memory_peak_bytes}`);
}

const pool = await client.GET("/v1/pool");
if (pool.error || !pool.data) {
    console.error(`GET /v1/pool: ${pool.response.status}`);
    process.exitCode = 1;
} else {
    console.log(`warm=${pool.data.warm} target=${pool.data.target}`);
}
