/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "lib/image-name.h"
#include "lib/macro.h"
#include "tests/unit/tap.h"

static void test_image_name(void) {
        static const struct {
                const char *ref;
                const char *name; /* NULL: -EINVAL */
        } cases[] = {
                {"registry.example/agent-x:abc123", "agent-x"},
                {"registry.us-east1-a.example.com/cai-ab12cd-my-agent:abc123", "cai-ab12cd-my-agent"},
                {"demo-agent", "demo-agent"},
                {"host:5000/team/agent@sha256:0123", "agent"},
                {"a/b/My_Agent.v2", "My_Agent.v2"},
                {"", NULL},
                {"registry/", NULL},
                {"registry/..:v1", NULL},
                {"registry/.hidden", NULL},
                {"registry/-x", NULL},
                {"registry/a b", NULL},
                {"registry/:tag", NULL},
                {"x/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL}, /* 65 bytes */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char name[80] = "";
                int r = image_name_from_ref(cases[i].ref, name, sizeof(name));

                if (cases[i].name)
                        tap_ok(r == 0 && strcmp(name, cases[i].name) == 0, "image '%s' -> '%s' (got '%s')", cases[i].ref, cases[i].name, name);
                else
                        tap_is_int(r, -EINVAL, "image '%s' is refused", cases[i].ref);
        }
}

int main(void) {
        test_image_name();
        return tap_done();
}
