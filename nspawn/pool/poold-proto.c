/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/pool/poold-proto.h"

static const struct {
        const char *verb;
        unsigned words; /* after the verb */
} verbs[_POOLD_OP_MAX] = {
        [POOLD_CLAIM] = {"claim", 1},
        [POOLD_RELEASE] = {"release", 2},
        [POOLD_TURN] = {"turn", 2},
        [POOLD_DONE] = {"done", 0},
        [POOLD_SWEEP] = {"sweep", 0},
        [POOLD_SESSIONS] = {"sessions", 0},
        [POOLD_WATCH] = {"watch", 0},
};

/* The next word of [*p, end) into buf: -EBADMSG unless it is plain and fits, and is followed by one
 * space or the end. */
static int next_word(const char **p, const char *end, char *buf, size_t size) {
        size_t n = 0;

        while (*p + n < end && (*p)[n] != ' ')
                n++;
        if (n == 0 || n >= size)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", (*p)[i]) || (*p)[i] == 0)
                        return -EBADMSG;
        memcpy(buf, *p, n);
        buf[n] = 0;
        *p += n;
        if (*p < end) {
                (*p)++; /* the space */
                if (*p == end)
                        return -EBADMSG;
        }
        return 0;
}

int poold_msg_parse(const char *line, size_t len, PooldMsg *ret) {
        const char *p = line, *end = line + len;
        char verb[16], number[16];
        PooldMsg m = {};
        int op = -1;

        if (len >= POOLD_LINE_MAX || next_word(&p, end, verb, sizeof(verb)) < 0)
                return -EBADMSG;
        for (int i = 0; i < _POOLD_OP_MAX; i++)
                if (strcmp(verb, verbs[i].verb) == 0)
                        op = i;
        if (op < 0)
                return -EBADMSG;
        m.op = (PooldOp) op;
        if (verbs[op].words >= 1 && next_word(&p, end, m.word, sizeof(m.word)) < 0)
                return -EBADMSG;
        if (m.op == POOLD_RELEASE && next_word(&p, end, m.word2, sizeof(m.word2)) < 0)
                return -EBADMSG;
        if (m.op == POOLD_TURN) {
                char *e = NULL;
                unsigned long v;

                if (next_word(&p, end, number, sizeof(number)) < 0 || number[0] < '1' || number[0] > '9')
                        return -EBADMSG;
                v = strtoul(number, &e, 10);
                if (*e != 0 || v > 65536)
                        return -EBADMSG;
                m.number = (unsigned) v;
        }
        if (p != end)
                return -EBADMSG;
        *ret = m;
        return 0;
}

int poold_claim_reply_parse(const char *line, char *ret_id, size_t id_size, char *ret_socket, size_t socket_size, int64_t *ret_executions,
                            char *reason, size_t size) {
        char id[POOLD_WORD_MAX], socket[256];
        int64_t executions;
        int n = -1;

        if (strcmp(line, "full") == 0)
                return -ENOSPC;
        if (strncmp(line, "failing ", 8) == 0) {
                (void) snprintf(reason, size, "%s", line + 8);
                return -EHOSTDOWN;
        }
        if (sscanf(line, "machine %63[a-z0-9-] %255[a-zA-Z0-9_./-] %" SCNd64 "%n", id, socket, &executions, &n) != 3 || n < 0 ||
            line[n] != 0 || executions < 0 || strlen(id) >= id_size || strlen(socket) >= socket_size)
                return -EBADMSG;
        memcpy(ret_id, id, strlen(id) + 1);
        memcpy(ret_socket, socket, strlen(socket) + 1);
        *ret_executions = executions;
        return 0;
}

void poold_pool_line_format(const PoolCountsLine *c, char *buf, size_t size) {
        (void) snprintf(buf, size, "pool %u %u %u %u %u %u", c->ready, c->claimed, c->starting, c->waiting, c->max, c->sessions);
}

int poold_pool_line_parse(const char *line, PoolCountsLine *ret) {
        unsigned *fields[] = {&ret->ready, &ret->claimed, &ret->starting, &ret->waiting, &ret->max, &ret->sessions};
        unsigned v[ELEMENTSOF(fields)];
        const char *p = line;

        if (strncmp(p, "pool", 4) != 0)
                return -EBADMSG;
        p += 4;
        /* Each number after one space, digits only (strtoul() would take a sign or white space). */
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                unsigned long x;
                char *end;

                if (*p != ' ' || p[1] < '0' || p[1] > '9')
                        return -EBADMSG;
                errno = 0;
                x = strtoul(p + 1, &end, 10);
                if (errno != 0 || x > UINT_MAX)
                        return -EBADMSG;
                v[i] = (unsigned) x;
                p = end;
        }
        if (*p != 0)
                return -EBADMSG;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                *fields[i] = v[i];
        return 0;
}
