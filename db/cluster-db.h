/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "lib/usage-record.h"

typedef struct sqlite3 sqlite3;

/* The cluster's members as etcd's registry has them (schema.sql, step 17), which sandboxd-member
 * mirrors: each one's record, cluster/member-record.h's JSON, by name. */
int db_cluster_member_put(sqlite3 *db, const char *name, const char *record);
int db_cluster_member_delete(sqlite3 *db, const char *name);
/* After the registry is read whole again: the rows of every member not in names (a JSON list of
 * strings) gone, of members (db_cluster_members_keep()), their sessions (..._sessions_keep(): the
 * lists and the sessions' counts) or their use of the keys (..._usage_keep()). Read first and
 * pruned after, the tables are never empty meanwhile. */
int db_cluster_members_keep(sqlite3 *db, const char *names);
int db_cluster_sessions_keep(sqlite3 *db, const char *names);
int db_cluster_usage_keep(sqlite3 *db, const char *names);

/* Every record, into *ret (an array of n strings; the caller frees each and the array). */
int db_cluster_members(sqlite3 *db, char ***ret, size_t *ret_n);

/* The other members' sessions (schema.sql, step 18): member's list (cluster/session-record.h), made
 * or replaced whole; removed when its record went. */
int db_cluster_sessions_put(sqlite3 *db, const char *member, const char *record);
int db_cluster_sessions_delete(sqlite3 *db, const char *member);

/* Every member's list, into *ret (as db_cluster_members()). */
int db_cluster_sessions(sqlite3 *db, char ***ret, size_t *ret_n);

/* The other members' use of the keys (schema.sql, step 19), which the quota checks add to this
 * member's own: member's rows of one group made anew, in one transaction: the usage record's kinds
 * (in_flight, exec, cpu), or (sessions) sessions_active and sessions_paused. */
int db_cluster_usage_replace(sqlite3 *db, const char *member, bool sessions, const UsageRow *rows, size_t n);

/* This member's own use of each key in force, as its usage record says it (lib/usage-record.h):
 * requests in flight, rated work in the last minute by second, CPU in the last day by minute. */
int db_usage_local(sqlite3 *db, UsageRow **ret, size_t *ret_n);
