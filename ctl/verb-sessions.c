/* SPDX-License-Identifier: MIT */
/* sandboxctl sessions [rm ID...]: the sessions the API lists (GET /v1/sessions), and deleting
 * them (DELETE /v1/sessions/ID: the machine and every file go). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "ctl/api.h"
#include "ctl/ctl.h"
#include "lib/macro.h"
#include "lib/session-state.h"
#include "nspawn/unit-name.h"

DEFINE_JSON_CLEANUP

static void help(FILE *f) {
        (void) fputs("Usage: sandboxctl sessions [--json]\n"
                     "       sandboxctl sessions rm ID...\n"
                     "\n"
                     "Lists the sessions (GET /v1/sessions): id, state, when made and last used (UTC),\n"
                     "runs, idle seconds before a pause, and when that comes. rm deletes sessions\n"
                     "(DELETE /v1/sessions/ID): their machines and every file of theirs.\n"
                     "\n"
                     "Options:\n"
                     "      --json  the API's answer as it is (rm: one answer per line)\n"
                     "  -h, --help  this text\n",
                     f);
}

static const char *field(struct json_object *o, const char *name) {
        struct json_object *v;

        return json_object_object_get_ex(o, name, &v) ? json_object_get_string(v) : "-";
}

static int sessions_list(const CtlOptions *o, bool json) {
        cleanup_json struct json_object *answer = NULL;
        struct json_object *list;

        if (ctl_api(o, "GET", "/v1/sessions", NULL, 0, &answer, NULL) < 0)
                return EXIT_FAILURE;
        if (!json_object_object_get_ex(answer, "sessions", &list) || !json_object_is_type(list, json_type_array))
                return ctl_fail("GET /v1/sessions: no list of sessions in the answer");
        if (json) {
                puts(json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                return EXIT_SUCCESS;
        }
        printf("%-20s  %-7s  %-20s  %-20s  %5s  %6s  %s\n", "SESSION", "STATE", "CREATED", "LAST USED", "RUNS", "TTL", "PAUSES AT");
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                struct json_object *s = json_object_array_get_idx(list, i);
                bool active = session_state_from_string(field(s, "state")) == SESSION_ACTIVE;

                printf("%-20s  %-7s  %-20s  %-20s  %5s  %5ss  %s\n", field(s, "session_id"), field(s, "state"), field(s, "created_at"),
                       field(s, "last_used"), field(s, "run_count"), field(s, "ttl_s"), active ? field(s, "expires_at") : "-");
        }
        printf("%zu session%s\n", json_object_array_length(list), json_object_array_length(list) == 1 ? "" : "s");
        return EXIT_SUCCESS;
}

/* A session id as the API makes them (nspawn/unit-name.h); anything else would be another path. */
static bool is_session_id(const char *s) {
        return session_id_valid(s);
}

static int sessions_rm(const CtlOptions *o, int argc, char *argv[], bool json) {
        int ret = EXIT_SUCCESS;

        if (argc == 0)
                return ctl_usage("sessions", "rm needs the id of a session");
        for (int i = 0; i < argc; i++)
                if (!is_session_id(argv[i]))
                        return ctl_usage("sessions", "'%s' is not a session id (session-XXXXXXXXXXXX, or session-MEMBER-XXXXXXXXXXXX)", argv[i]);
        for (int i = 0; i < argc; i++) {
                cleanup_json struct json_object *answer = NULL;
                char path[64];

                (void) snprintf(path, sizeof(path), "/v1/sessions/%s", argv[i]);
                if (ctl_api(o, "DELETE", path, NULL, 0, &answer, NULL) < 0) {
                        ret = EXIT_FAILURE;
                        continue;
                }
                if (json)
                        puts(json_object_to_json_string_ext(answer, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
                else
                        printf("%s: %s\n", field(answer, "session_id"), field(answer, "state"));
        }
        return ret;
}

int verb_sessions(const CtlOptions *o, int argc, char *argv[]) {
        static const struct option options[] = {
                {"json", no_argument, NULL, 'j'},
                {"help", no_argument, NULL, 'h'},
                {},
        };
        bool json = o->json;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        return ctl_usage("sessions", "bad option");
                }
        if (optind == argc)
                return sessions_list(o, json);
        if (strcmp(argv[optind], "rm") == 0)
                return sessions_rm(o, argc - optind - 1, argv + optind + 1, json);
        return ctl_usage("sessions", "unknown subcommand '%s' (there is: rm)", argv[optind]);
}
