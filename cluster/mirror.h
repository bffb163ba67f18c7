/* SPDX-License-Identifier: MIT */
#pragma once

/* The part of sandboxd-member that mirrors the cluster's members and keys from etcd into this
 * member's sqlite (cluster/mirror.c), for as long as the process runs: its etcd calls on a thread
 * of its own, its retries as timers of event. 0, or -errno (logged). */

typedef struct sd_event sd_event;
typedef struct Config Config;

int mirror_start(sd_event *event, const Config *config);
