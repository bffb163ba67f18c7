/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* What one sandbox needs from systemd-nspawn. All strings are borrowed. */
typedef struct NspawnSpec {
        const char *machine;      /* sandbox id: the container's host name; [a-z0-9-] */
        uint32_t uid_base;        /* first host UID of the container's 65536, a multiple of 65536 */
        uint64_t workspace_bytes; /* size cap of the writable working directory */
        uint64_t tmp_bytes;       /* size cap of /tmp */
        unsigned nofile;          /* RLIMIT_NOFILE inside */
        const char *etc_dir;      /* host directory with passwd and group naming the sandbox user */
        const char *user;         /* that user (NULL with runner_confines) */
        /* The payload is sandboxd-runner, the machine's PID 1 (no stub init), which makes a sandbox
         * for each execution and confines the code in it: the sandbox user, no capabilities,
         * sandboxd's system-call filter. nspawn then leaves it the capabilities that takes, inside
         * the machine's user namespace, instead of running it as user, and the unit must tell
         * nspawn not to compile its own filter (SYSTEMD_SECCOMP=0, see sandbox.c): the runner
         * installs the machine's own on itself first thing. */
        bool runner_confines;
        const char *const *command; /* argv run inside, NULL-terminated; [0] absolute */
        /* NULL: the host's /usr under a fresh tmpfs root. Else a machine image directory, run
         * read-only: under a tmpfs overlay, or as it is with image_read_only (then every mount point
         * must exist in it). */
        const char *image;
        bool image_read_only;
        const char *const *bind_ro; /* extra read-only binds "SRC:DST", NULL-terminated, or NULL */
        /* A session's machine: this host directory (its own disk, mounted) is the working directory,
         * writable and kept, in place of a fresh tmpfs. NULL for every other machine. */
        const char *workspace_dir;
} NspawnSpec;

#define NSPAWN_BINARY "/usr/bin/systemd-nspawn"
#define NSPAWN_WORKDIR "/workspace"
#define NSPAWN_UID_RANGE 0x10000U

/* Builds the systemd-nspawn argv (argv[0] included) into *ret, a NULL-terminated array of strings the
 * caller frees with nspawn_argv_free(). -EINVAL for a spec nspawn would reject, -ENOMEM. Pure. */
int nspawn_argv(const NspawnSpec *spec, char ***ret);

char **nspawn_argv_free(char **argv);

/* A sandbox's 65536-UID range from a random number: a multiple of 65536 in nspawn's "pick" space
 * (0x80000 … 0x6fff0000), so that no two sandboxes likely share UIDs. Pure. */
uint32_t nspawn_uid_base(uint32_t random);
