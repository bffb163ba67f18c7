/* SPDX-License-Identifier: MIT */
#pragma once

/* The messages between the unprivileged processes (workers, pool manager) and the broker, the one
 * process that keeps root to talk to systemd. One request, one reply, each one SOCK_SEQPACKET
 * message of fixed layout; file descriptors travel alongside (SCM_RIGHTS). */

#include <stddef.h>
#include <stdint.h>

#include "lib/error-count.h"
#include "nspawn/unit-name.h"

#define BROKER_SOCKET "/run/sandboxd/broker.sock"
#define BROKER_MAGIC 0x73626b36U /* "sbk6": bump on any change of layout */
/* A tool call's input (its JSON: module, function, args) at most; the route caps bodies at 1 MiB. */
#define BROKER_INPUT_MAX (2U << 20)

/* The tool runner, bind-mounted into a tool sandbox; it prints the marker once it is up, then its
 * reply (reference: replies are capped at 8 MiB). */
#define TOOLRUNNER_PATH "/run/sandboxd/toolrunner.py"
/* The static program that installs the code's filter before the image's interpreter, and the filter. */
#define TOOL_CONFINE_PATH "/run/sandboxd/sandboxd-confine"
#define TOOL_FILTER_PATH "/run/sandboxd/seccomp.bpf"
#define TOOL_READY_MARKER "READY\n"
#define TOOL_MAX_REPLY_BYTES (8U << 20)
/* A tool call's timeout at most: the API's own bound (validate_call_limits), checked here again. */
#define BROKER_TOOL_TIMEOUT_MAX_S 120U
/* How long a tool sandbox may take to print its ready marker at most: SANDBOXD_CALL_READY_TIMEOUT_S's
 * upper bound (lib/config.c), which the clients do not read. */
#define BROKER_TOOL_READY_MAX_S 600U

typedef enum BrokerOp {
        BROKER_START_WARM = 1, /* fd: the listening socket the runner gets as stdin */
        BROKER_RUN_TOOL,       /* fd: a memfd holding the input; the reply carries a memfd back */
        BROKER_KILL,
        BROKER_RESET_FAILED,
        BROKER_LIST, /* the reply carries a memfd of n_units BrokerUnit records */
        /* A session's machine (id "session-…"), on the session's own disk: made by SESSION_CREATE
         * (which refuses one that exists), kept until SESSION_DELETE; SESSION_START refuses a disk
         * that is gone. fd: the listening socket the runner gets as stdin. */
        BROKER_SESSION_START,
        BROKER_SESSION_STOP,   /* the machine killed and gone, its disk unmounted: kept */
        BROKER_SESSION_DELETE, /* the same, and the disk removed */
        BROKER_SESSION_CREATE, /* a new disk formatted, then as SESSION_START */
        /* Every session the host holds anything of (a machine unit, a mounted disk, a disk image, a
         * UID range), whatever the database says: the reply carries a memfd of n_units
         * BrokerSession records. The pool manager's sweep removes those without a row. */
        BROKER_SESSION_LIST,
        _BROKER_OP_MAX,
} BrokerOp;

typedef struct BrokerRequest {
        uint32_t magic;
        uint32_t op;
        char id[SANDBOX_ID_MAX];  /* "machine-<12 of [a-z2-7]>" or "tool-<…>"; empty for LIST */
        char request_id[64];      /* RUN_TOOL: tags the unit's journal lines */
        char image[80];           /* RUN_TOOL: an image name under the image directory */
        uint32_t timeout_s;       /* RUN_TOOL: the call's timeout, once the tool is ready */
} BrokerRequest;

typedef struct BrokerUnit {
        char id[SANDBOX_ID_MAX];
        char state[16]; /* systemd's ActiveState */
} BrokerUnit;

typedef struct BrokerSession {
        char id[SANDBOX_ID_MAX]; /* "session-…" */
        char state[16];          /* its machine unit's ActiveState; "" when it has none */
        uint8_t mounted;         /* its disk's mount unit is loaded */
        uint8_t disk;            /* its disk image exists */
        uint8_t uid_range;       /* it holds a UID range */
} BrokerSession;

typedef struct BrokerReply {
        int32_t error;     /* 0, or a negative errno */
        char message[256]; /* why, when error is set */
        /* RUN_TOOL: the memfd holds reply_len bytes of stdout, then diag_len of stderr. */
        char result[48];
        int32_t exit_code; /* systemd's ExecMainCode and ExecMainStatus of the unit */
        int32_t exit_status;
        uint64_t duration_usec;
        uint64_t cpu_usec;
        uint64_t memory_peak_bytes;
        uint64_t reply_len;
        uint64_t diag_len;
        uint8_t reply_truncated;
        uint8_t ready;
        uint8_t killed_unready;
        uint8_t killed_timeout;
        /* LIST, SESSION_LIST: how many records (all of them) the memfd holds. */
        uint32_t n_units;
} BrokerReply;

/* Where a session's disk is mounted while its machine runs: SESSION_DISK_DIR/<the id's 12 characters>. */
#define SESSION_DISK_DIR "/run/sandboxd/disks"

/* A unit id of the kind prefix names ("machine", "tool" or "session"): the prefix, a dash, and exactly the
 * 12 characters unit_name_sandbox_id() makes. NULL prefix: a machine or a tool (what BROKER_LIST
 * lists; sessions' machines are the sessions' business). Pure. */
int broker_id_valid(const char *id, const char *prefix);

/* Checks a request as it came off the socket (size bytes): magic, op, and for that op every field,
 * NUL-terminated and well formed. 0 or -EINVAL (-EPROTO: not even a request). Pure. */
int broker_request_check(const BrokerRequest *req, size_t size);

/* How long a client waits for the broker's reply to op before it gives up (-ETIMEDOUT): above the
 * longest the broker itself waits on systemd for that op, so that a slow but working broker still
 * answers. timeout_s: RUN_TOOL's call timeout. Microseconds. Pure. */
uint64_t broker_op_timeout_usec(BrokerOp op, unsigned timeout_s);

/* A failed call's counter for GET /metrics (r < 0): the broker was not reached or not understood,
 * or failed to do what was asked. _ERROR_COUNT_NONE for a success, and for a failure that is not the
 * broker's: killing, resetting, stopping or deleting what is gone already (what was asked holds), a
 * tool call on an image that does not exist or has no python3 (the request was wrong). Pure. */
ErrorCount broker_failure_count(BrokerOp op, int r);
