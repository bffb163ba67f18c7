/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* The cluster's members as etcd's registry has them (schema.sql, step 17), which sandboxd-member
 * mirrors: each one's record, cluster/member-record.h's JSON, by name. */
int db_cluster_member_put(sqlite3 *db, const char *name, const char *record);
int db_cluster_member_delete(sqlite3 *db, const char *name);
/* Every row gone: before the registry is read whole again. */
int db_cluster_members_clear(sqlite3 *db);

/* Every record, into *ret (an array of n strings; the caller frees each and the array). */
int db_cluster_members(sqlite3 *db, char ***ret, size_t *ret_n);

/* The other members' sessions (schema.sql, step 18): member's list (cluster/session-record.h), made
 * or replaced whole; removed when its record went. */
int db_cluster_sessions_put(sqlite3 *db, const char *member, const char *record);
int db_cluster_sessions_delete(sqlite3 *db, const char *member);
int db_cluster_sessions_clear(sqlite3 *db);

/* Every member's list, into *ret (as db_cluster_members()). */
int db_cluster_sessions(sqlite3 *db, char ***ret, size_t *ret_n);
