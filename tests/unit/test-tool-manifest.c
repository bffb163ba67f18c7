/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi/tool-manifest.h"
#include "tests/unit/tap.h"

#define GOOD                                                                                                    \
        "{\"sandboxd-tool-image\": 1,\n \"image\": \"demo-agent\",\n \"modules\": {\"agent\": {\"functions\": " \
        "[\"get_weather\", \"add\"], \"path\": \"agent.py\"}, \"pkg.mod\": {\"functions\": [\"f\"], \"path\": \"pkg/mod.py\"}}}\n"

static void test_allows(void) {
        static const struct {
                const char *text, *image, *module, *function;
                int r;
        } cases[] = {
                {GOOD, "demo-agent", "agent", "get_weather", 0},
                {GOOD, "demo-agent", "agent", "add", 0},
                {GOOD, "demo-agent", "pkg.mod", "f", 0},
                {GOOD, "demo-agent", "agent", "undeclared", -ENOSYS},
                {GOOD, "demo-agent", "agent", "", -ENOSYS},
                {GOOD, "demo-agent", "pkg.mod", "get_weather", -ENOSYS}, /* another module's function */
                {GOOD, "demo-agent", "subprocess", "getoutput", -ESRCH},
                {GOOD, "demo-agent", "pkg", "f", -ESRCH},
                {GOOD, "other-agent", "agent", "add", -ENOENT}, /* a manifest of another image */
                {"", "demo-agent", "agent", "add", -ENOENT},
                {"not json", "demo-agent", "agent", "add", -ENOENT},
                {"[]", "demo-agent", "agent", "add", -ENOENT},
                {"{\"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": [\"add\"]}}}", "demo-agent", "agent", "add", -ENOENT},
                {"{\"sandboxd-tool-image\": 2, \"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": [\"add\"]}}}", "demo-agent",
                 "agent", "add", -ENOENT},
                {"{\"sandboxd-tool-image\": \"1\", \"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": [\"add\"]}}}", "demo-agent",
                 "agent", "add", -ENOENT},
                {"{\"sandboxd-tool-image\": 1, \"image\": \"demo-agent\", \"modules\": []}", "demo-agent", "agent", "add", -ENOENT},
                {"{\"sandboxd-tool-image\": 1, \"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": \"add\"}}}", "demo-agent",
                 "agent", "add", -ESRCH},
                {"{\"sandboxd-tool-image\": 1, \"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": [1, \"add\"]}}}", "demo-agent",
                 "agent", "add", 0},
                {"{\"sandboxd-tool-image\": 1, \"image\": \"demo-agent\", \"modules\": {\"agent\": {\"functions\": [\"add\"]}}} {}", "demo-agent",
                 "agent", "add", -ENOENT}, /* trailing bytes */
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int(tool_manifest_allows(cases[i].text, strlen(cases[i].text), cases[i].image, cases[i].module, cases[i].function),
                           cases[i].r, "manifest %zu: %s.%s of '%s'", i, cases[i].module, cases[i].function, cases[i].image);
}

static void test_check(void) {
        char dir[] = "/tmp/test-tool-manifest.XXXXXX", path[256];
        FILE *f;

        if (!mkdtemp(dir)) {
                tap_ok(false, "a directory for published manifests");
                return;
        }
        (void) snprintf(path, sizeof(path), "%s/demo-agent.json", dir);
        f = fopen(path, "w");
        if (f) {
                (void) fputs(GOOD, f);
                (void) fclose(f);
        }
        tap_is_int(tool_manifest_check(dir, "demo-agent", "agent", "add"), 0, "published: a declared function");
        tap_is_int(tool_manifest_check(dir, "demo-agent", "agent", "undeclared"), -ENOSYS, "published: an undeclared one");
        tap_is_int(tool_manifest_check(dir, "sandboxd-runtime", "subprocess", "getoutput"), -ENOENT, "no manifest: no tool image");
        tap_is_int(tool_manifest_check(dir, "..", "agent", "add"), -ENOENT, "'..' is no image");
        tap_is_int(tool_manifest_check(dir, ".demo-agent", "agent", "add"), -ENOENT, "a hidden name is no image");
        tap_is_int(tool_manifest_check(dir, "x/../demo-agent", "agent", "add"), -ENOENT, "a path is no image");
        (void) snprintf(path, sizeof(path), "%s/linked.json", dir);
        tap_ok(symlink("demo-agent.json", path) == 0, "a manifest published as a link");
        tap_is_int(tool_manifest_check(dir, "linked", "agent", "add"), -ENOENT, "  is not followed");
        (void) unlink(path);
        (void) snprintf(path, sizeof(path), "%s/demo-agent.json", dir);
        (void) unlink(path);
        (void) rmdir(dir);
}

static void test_listed(void) {
        static const struct {
                const char *list, *image;
                bool listed;
        } cases[] = {
                {"", "demo-agent", true}, /* no list: every tool image */
                {"demo-agent", "demo-agent", true},
                {"a,demo-agent,b", "demo-agent", true},
                {"a,b", "demo-agent", false},
                {"demo", "demo-agent", false},
                {"demo-agent-2", "demo-agent", false},
                {"a,demo-agen", "demo-agent", false},
                {"demo-agent,", "demo-agent", true},
                {",", "demo-agent", false},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                tap_is_int(tool_image_listed(cases[i].list, cases[i].image), cases[i].listed, "'%s' on the list '%s'", cases[i].image,
                           cases[i].list);
}

int main(void) {
        test_allows();
        test_check();
        test_listed();
        return tap_done();
}
