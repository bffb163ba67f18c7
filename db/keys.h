/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sqlite3 sqlite3;
typedef struct QuotaUse QuotaUse;

/* The longest list of images a key may be given: some 15 names of 64 characters. */
#define API_KEY_IMAGES_MAX 1024

/* The longest egress list a key may be given (lib/egress.h's EGRESS_KEY_TEXT_MAX). */
#define API_KEY_EGRESS_MAX 4096
#define API_KEY_EGRESS_NONE "none"

/* An API key's row (schema.sql, steps 9 and 10). */
typedef struct ApiKey {
        char name[65];          /* API_KEY_NAME_MAX + 1 */
        char token_sha256[65];  /* API_KEY_HASH_SIZE: lower-case hex */
        int64_t max_concurrent; /* 0: no limit (NULL in sqlite) */
        int64_t executions_per_minute;
        int64_t cpu_seconds_per_day;
        int64_t max_sessions;        /* its active sessions */
        int64_t max_paused_sessions; /* its sessions kept, active or paused (each may be paused) */
        int64_t session_disk_bytes;  /* its kept sessions' disks, each SANDBOXD_SESSION_DISK_BYTES */
        char created_at[32];
        char revoked_at[32]; /* "" while it is in force */
        char images[API_KEY_IMAGES_MAX + 1]; /* the tool images it may call, "a,b"; "": every one (NULL in sqlite) */
        /* What its requests' code may reach (lib/egress.h), entries separated by commas, within the
         * operator's egress.allow; "none": nothing; "": all the operator allows (NULL in sqlite). */
        char egress[API_KEY_EGRESS_MAX + 1];
} ApiKey;

/* Adds a key (created_at and revoked_at are sqlite's): -EEXIST when its name, revoked or not, or its
 * hash is taken already. */
int db_key_add(sqlite3 *db, const ApiKey *key);

/* Every key (only those in force: active_only), by name: *ret (malloc'd, the caller's) gets *ret_n. */
int db_key_list(sqlite3 *db, bool active_only, ApiKey **ret, size_t *ret_n);

/* The key in force whose token_sha256 is this one, into *ret: 0, or -ENOENT when there is none. */
int db_key_find(sqlite3 *db, const char *token_sha256, ApiKey *ret);

/* The images the key in force of that name may call ("" for every tool image) into ret (size bytes):
 * 0, or -ENOENT when no key of that name is in force. */
int db_key_images(sqlite3 *db, const char *name, char *ret, size_t size);

/* The egress list of the key in force of that name ("" for the operator's whole list, "none") into
 * ret (size bytes): 0, or -ENOENT when no key of that name is in force. */
int db_key_egress(sqlite3 *db, const char *name, char *ret, size_t size);

/* A key as a cluster's registry has it (cluster/key-record.h), made or replaced whole, revoked_at and
 * created_at too: sandboxd-member's mirror of etcd's keys. -EEXIST when another key has its hash. */
int db_key_put(sqlite3 *db, const ApiKey *key);

/* Revokes a key: -ENOENT when there is none of that name, -EALREADY when it is revoked already. */
int db_key_revoke(sqlite3 *db, const char *name);

/* The key in force of that name: -ENOENT when there is none (or it is revoked). */
int db_key_get(sqlite3 *db, const char *name, ApiKey *ret);

/* Marks a request just begun as work that executions-per-minute counts (KEY_WINDOW_EXECUTIONS),
 * once. */
int db_request_set_rated(sqlite3 *db, const char *request_id);
/* Counts n more uses of executions-per-minute to a request: an MCP request's JSON-RPC requests (a
 * batch's), its tool call's rated work. */
int db_request_add_rated(sqlite3 *db, const char *request_id, int64_t n);
/* Marks a request begun as something else (an MCP tool call) as an execution, and one more use of
 * executions-per-minute. */
int db_request_set_execution(sqlite3 *db, const char *request_id);

/* The key's requests in flight (no status yet). */
int db_key_in_flight(sqlite3 *db, const char *name, int64_t *ret);

/* What counts against a key's windowed quotas, oldest first: *ret (malloc'd, the caller's) gets
 * *ret_n uses started in the last window_s seconds, each with its age. */
typedef enum KeyWindow {
        KEY_WINDOW_EXECUTIONS, /* rated work let in (executions, session creates, uploads, pauses, a batch's JSON-RPC requests), 1 each */
        KEY_WINDOW_CPU,        /* runs with CPU time recorded, and sessions' CPU between runs (session_usage), their CPU ms each */
} KeyWindow;
int db_key_uses(sqlite3 *db, const char *name, KeyWindow what, int64_t window_s, QuotaUse **ret, size_t *ret_n);

/* Their sum alone: what is checked first, the uses read only when it reaches the limit. */
int db_key_used(sqlite3 *db, const char *name, KeyWindow what, int64_t window_s, int64_t *ret);
