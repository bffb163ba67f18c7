/* SPDX-License-Identifier: MIT */
#pragma once

typedef struct Request Request;

/* The journal entry every request gets once it is answered, keyed by its REQUEST_ID. */
#define AUDIT_MESSAGE_ID "8c2f1d5e6a3b4c7d9e0f1a2b3c4d5e6f"

/* Writes the audit entry of req: route, status, sandbox, exit code, duration (measured from the
 * request's start when the handler recorded none), CPU time, error, and the name of the API key it
 * came with (API_KEY; never its token). */
void audit_request(const Request *req);
