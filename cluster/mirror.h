/* SPDX-License-Identifier: MIT */
#pragma once

/* The thread of sandboxd-member that mirrors the cluster's members and keys from etcd into this
 * member's sqlite (cluster/mirror.c); userdata is the member's Config. It runs until the process
 * ends. */
void *mirror_run(void *userdata);
