/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>
#include <systemd/sd-journal.h>

#include "lib/journal-entry.h"
#include "lib/macro.h"
#include "lib/time-util.h"
#include "lib/utf8.h"

DEFINE_JSON_CLEANUP

uint64_t entry_realtime(sd_journal *j) {
        uint64_t usec = 0;

        return sd_journal_get_realtime_usec(j, &usec) >= 0 ? usec : 0;
}

int entry_to_json(sd_journal *j, struct json_object **ret) {
        cleanup_json struct json_object *o = json_object_new_object();
        const void *data;
        char when[48];
        size_t len;
        int r;

        if (!o)
                return -ENOMEM;
        SD_JOURNAL_FOREACH_DATA(j, data, len) {
                const char *d = data, *eq = memchr(d, '=', len);
                struct json_object *v;
                char name[128];

                if (!eq || d[0] == '_' || (size_t) (eq - d) >= sizeof(name))
                        continue;
                if (!utf8_valid((const uint8_t *) eq + 1, len - (size_t) (eq - d) - 1))
                        continue;
                memcpy(name, d, (size_t) (eq - d));
                name[eq - d] = 0;
                v = json_object_new_string_len(eq + 1, (int) (len - (size_t) (eq - d) - 1));
                if (!v || json_object_object_add(o, name, v) < 0)
                        return -ENOMEM;
        }
        format_time_iso(entry_realtime(j), when, sizeof(when));
        r = json_object_object_add(o, "time", json_object_new_string(when));
        if (r < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

const char *entry_get(struct json_object *entry, const char *field) {
        struct json_object *v;

        /* Entries may come from another member (cluster/logs-ask.h): anything but a string is none. */
        if (!json_object_object_get_ex(entry, field, &v) || !json_object_is_type(v, json_type_string))
                return "";
        return json_object_get_string(v);
}

const char *entry_priority_name(const char *priority) {
        static const char *const names[] = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"};

        if (strlen(priority) != 1 || priority[0] < '0' || priority[0] > '7')
                return "?";
        return names[priority[0] - '0'];
}
