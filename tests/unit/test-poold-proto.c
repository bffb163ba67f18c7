/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "nspawn/pool/poold-proto.h"
#include "tests/unit/tap.h"

static void test_parse(void) {
        static const struct {
                const char *line;
                int ret;
                PooldOp op;
                const char *word, *word2;
                unsigned number;
        } cases[] = {
                {"claim python", 0, POOLD_CLAIM, "python", "", 0},
                {"claim node", 0, POOLD_CLAIM, "node", "", 0},
                {"release none python", 0, POOLD_RELEASE, "none", "python", 0},
                {"release memory_limit node", 0, POOLD_RELEASE, "memory_limit", "node", 0},
                {"turn session-abcdefghijkl 3", 0, POOLD_TURN, "session-abcdefghijkl", "", 3},
                {"done", 0, POOLD_DONE, "", "", 0},
                {"sweep", 0, POOLD_SWEEP, "", "", 0},
                {"sessions", 0, POOLD_SESSIONS, "", "", 0},
                {"watch", 0, POOLD_WATCH, "", "", 0},
                {"watch now", -EBADMSG, 0, NULL, NULL, 0},
                /* Hostile or malformed: refused whole. */
                {"", -EBADMSG, 0, NULL, NULL, 0},
                {"claim", -EBADMSG, 0, NULL, NULL, 0},
                {"claim ", -EBADMSG, 0, NULL, NULL, 0},
                {"claim  python", -EBADMSG, 0, NULL, NULL, 0},
                {"claim python extra", -EBADMSG, 0, NULL, NULL, 0},
                {"claim Python", -EBADMSG, 0, NULL, NULL, 0},
                {"claim ../etc", -EBADMSG, 0, NULL, NULL, 0},
                {"claim python\n", -EBADMSG, 0, NULL, NULL, 0},
                {"release none", -EBADMSG, 0, NULL, NULL, 0},
                {"turn session-x", -EBADMSG, 0, NULL, NULL, 0},
                {"turn session-x 0", -EBADMSG, 0, NULL, NULL, 0},
                {"turn session-x -1", -EBADMSG, 0, NULL, NULL, 0},
                {"turn session-x 65537", -EBADMSG, 0, NULL, NULL, 0},
                {"turn session-x 3x", -EBADMSG, 0, NULL, NULL, 0},
                {"done now", -EBADMSG, 0, NULL, NULL, 0},
                {"fork", -EBADMSG, 0, NULL, NULL, 0},
                {"claim aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -EBADMSG, 0, NULL, NULL, 0},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                PooldMsg m = {};
                int r = poold_msg_parse(cases[i].line, strlen(cases[i].line), &m);

                tap_is_int(r, cases[i].ret, "'%s': %s", cases[i].line, cases[i].ret == 0 ? "parses" : "refused");
                if (r < 0 || cases[i].ret < 0)
                        continue;
                tap_ok(m.op == cases[i].op && strcmp(m.word, cases[i].word) == 0 && strcmp(m.word2, cases[i].word2) == 0 &&
                               m.number == cases[i].number,
                       "'%s': its words", cases[i].line);
        }
        /* An embedded NUL ends nothing: the length says where the line ends. */
        {
                PooldMsg m;

                tap_is_int(poold_msg_parse("claim py\0thon", 13, &m), -EBADMSG, "an embedded NUL is refused");
        }
}

static void test_claim_reply(void) {
        char id[64], socket[256], reason[64] = "";
        int64_t executions = -1;

        tap_is_int(poold_claim_reply_parse("machine machine-abc /run/sandboxd/pool/machine-abc.sock 3", id, sizeof(id), socket, sizeof(socket),
                                           &executions, reason, sizeof(reason)),
                   0, "a machine");
        tap_ok(strcmp(id, "machine-abc") == 0 && strcmp(socket, "/run/sandboxd/pool/machine-abc.sock") == 0 && executions == 3, "its id, socket, executions");
        tap_is_int(poold_claim_reply_parse("full", id, sizeof(id), socket, sizeof(socket), &executions, reason, sizeof(reason)), -ENOSPC, "full");
        tap_is_int(poold_claim_reply_parse("failing no image", id, sizeof(id), socket, sizeof(socket), &executions, reason, sizeof(reason)),
                   -EHOSTDOWN, "failing");
        tap_is_str(reason, "no image", "failing: its reason");
        tap_is_int(poold_claim_reply_parse("machine machine-abc /x 3 extra", id, sizeof(id), socket, sizeof(socket), &executions, reason, sizeof(reason)),
                   -EBADMSG, "trailing words are refused");
        tap_is_int(poold_claim_reply_parse("machine machine-abc /x -1", id, sizeof(id), socket, sizeof(socket), &executions, reason, sizeof(reason)),
                   -EBADMSG, "negative executions are refused");
        tap_is_int(poold_claim_reply_parse("machine machine-abc /x 3", id, 4, socket, sizeof(socket), &executions, reason, sizeof(reason)),
                   -EBADMSG, "an id that does not fit is refused");
        tap_is_int(poold_claim_reply_parse("turn", id, sizeof(id), socket, sizeof(socket), &executions, reason, sizeof(reason)), -EBADMSG,
                   "another answer is refused");
}

static void test_pool_line(void) {
        static const char *const bad[] = {"pool 1 2 3 4 5", "pool 1 2 3 4 5 6 7", "pool 1 2 3 4 5 -6", "pool 1 2 3 4 5 +6",
                                          "pool 1 2 3 4 5 x", "pool 1 2 3 4 5 6 ", "pol 1 2 3 4 5 6", "",
                                          "pool 1 2 3 4 5 99999999999"};
        PoolCountsLine c = {3, 1, 2, 0, 128, 7}, back = {};
        char line[POOLD_LINE_MAX];

        poold_pool_line_format(&c, line, sizeof(line));
        tap_is_str(line, "pool 3 1 2 0 128 7", "pool line formatted");
        tap_is_int(poold_pool_line_parse(line, &back), 0, "... and parsed back");
        tap_ok(back.ready == 3 && back.claimed == 1 && back.starting == 2 && back.waiting == 0 && back.max == 128 && back.sessions == 7,
               "... the same counts");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                tap_is_int(poold_pool_line_parse(bad[i], &back), -EBADMSG, "pool line '%s' refused", bad[i]);
}

int main(void) {
        test_parse();
        test_pool_line();
        test_claim_reply();
        return tap_done();
}
