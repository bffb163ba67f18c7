/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "lib/macro.h"
#include "nspawn/nspawn-argv.h"
#include "tests/unit/tap.h"

static const char *const command[] = {"/usr/bin/python3", "-I", "/usr/lib/sandboxd/runner.py", "print('a b'); \"$x\"", NULL};

static const NspawnSpec good = {
        .machine = "sandbox-abcdefghijkl",
        .uid_base = 0x100000, /* 1048576 */
        .workspace_bytes = 128ULL << 20,
        .tmp_bytes = 64ULL << 20,
        .nofile = 1024,
        .etc_dir = "/usr/lib/sandboxd/etc",
        .user = "sandbox",
        .command = command,
};

static size_t argv_len(char **v) {
        size_t n = 0;

        while (v[n])
                n++;
        return n;
}

/* The index of the "--" that ends nspawn's options. */
static size_t argv_dashdash(char **v) {
        size_t i = 0;

        while (v[i] && strcmp(v[i], "--") != 0)
                i++;
        return i;
}

static size_t count_option(char **v, size_t end, const char *opt) {
        size_t n = 0;

        for (size_t i = 0; i < end; i++)
                n += strcmp(v[i], opt) == 0;
        return n;
}

static void test_flags(void) {
        static const char *const expected[] = {
                "--quiet",
                "--machine=sandbox-abcdefghijkl",
                "--register=no",
                "--keep-unit",
                "--settings=no",
                "--directory=/",
                "--volatile=yes",
                "--private-network",
                "--private-users=1048576:65536",
                "--private-users-ownership=off",
                "--user=sandbox",
                "--no-new-privileges=yes",
                "--drop-capability=all",
                "--pipe",
                "--as-pid2",
                "--bind-ro=/usr/lib/sandboxd/etc/passwd:/etc/passwd",
                "--bind-ro=/usr/lib/sandboxd/etc/group:/etc/group",
                "--tmpfs=/workspace:mode=1777,size=134217728",
                "--tmpfs=/tmp:mode=1777,size=67108864",
                "--chdir=/workspace",
                "--rlimit=RLIMIT_NOFILE=1024",
                "--rlimit=RLIMIT_CORE=0",
        };
        /* Each of these would hand the sandbox something of the host. */
        static const char *const forbidden_prefixes[] = {
                "--bind=",
                "--ephemeral",
                "--capability",
                "--private-users=pick",
                "--network-",
                "--port",
                "--volatile=no",
                "--volatile=state",
                "--setenv",
                "--console",
                "--boot",
        };
        char **v = NULL;
        size_t dd, n;

        if (!tap_is_int(nspawn_argv(&good, &v), 0, "valid spec builds an argv"))
                return;
        n = argv_len(v);
        dd = argv_dashdash(v);

        tap_is_str(v[0], NSPAWN_BINARY, "argv[0] is %s", NSPAWN_BINARY);
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                tap_is_int(count_option(v, dd, expected[i]), 1, "has %s once, before \"--\"", expected[i]);

        for (size_t i = 0; i < ELEMENTSOF(forbidden_prefixes); i++) {
                size_t found = 0;

                for (size_t k = 1; k < dd; k++)
                        found += strncmp(v[k], forbidden_prefixes[i], strlen(forbidden_prefixes[i])) == 0;
                tap_is_int(found, 0, "no %s option", forbidden_prefixes[i]);
        }

        size_t not_options = 0;
        for (size_t k = 1; k < dd; k++)
                not_options += strncmp(v[k], "--", 2) != 0;
        tap_is_int(not_options, 0, "every argument before \"--\" is a --option=value (no split values)");

        tap_ok(dd < n, "\"--\" ends the options");
        tap_is_int(n - dd - 1, ELEMENTSOF(command) - 1, "the command follows \"--\" with its %zu words", ELEMENTSOF(command) - 1);
        for (size_t i = 0; command[i] && dd + 1 + i < n; i++)
                tap_is_str(v[dd + 1 + i], command[i], "command word %zu verbatim", i);

        v = nspawn_argv_free(v);
        tap_ok(v == NULL, "nspawn_argv_free() returns NULL");
        tap_ok(nspawn_argv_free(NULL) == NULL, "nspawn_argv_free(NULL) is a no-op");
}

static const char *const relative[] = {"python3", NULL};
static const char *const empty_word[] = {"", NULL};
static const char *const no_words[] = {NULL};

typedef struct SpecCase {
        const char *name;
        NspawnSpec spec;
        int expected;
} SpecCase;

#define WITH(...) ({ NspawnSpec _s = good; __VA_ARGS__; _s; })

static void test_specs(void) {
        const SpecCase cases[] = {
                {"uid_base 0x80000 (lowest of the pick range)", WITH(_s.uid_base = 0x80000), 0},
                {"uid_base 0x6fff0000 (highest of the pick range)", WITH(_s.uid_base = 0x6fff0000), 0},
                {"uid_base 0 (the host's root)", WITH(_s.uid_base = 0), -EINVAL},
                {"uid_base 65536 (below the pick range)", WITH(_s.uid_base = 0x10000), -EINVAL},
                {"uid_base 0x70000 (below the pick range)", WITH(_s.uid_base = 0x70000), -EINVAL},
                {"uid_base 0x70000000 (above the pick range)", WITH(_s.uid_base = 0x70000000), -EINVAL},
                {"uid_base 0xffff0000", WITH(_s.uid_base = 0xffff0000U), -EINVAL},
                {"uid_base 0x100001 (not a multiple of 65536)", WITH(_s.uid_base = 0x100001), -EINVAL},
                {"uid_base 0x108000 (not a multiple of 65536)", WITH(_s.uid_base = 0x108000), -EINVAL},
                {"relative command", WITH(_s.command = relative), -EINVAL},
                {"empty command word", WITH(_s.command = empty_word), -EINVAL},
                {"command without words", WITH(_s.command = no_words), -EINVAL},
                {"no command", WITH(_s.command = NULL), -EINVAL},
                {"no machine", WITH(_s.machine = NULL), -EINVAL},
                {"no etc_dir", WITH(_s.etc_dir = NULL), -EINVAL},
                {"no user", WITH(_s.user = NULL), -EINVAL},
                {"no user, the runner confining itself", WITH(_s.user = NULL; _s.runner_confines = true), 0},
                {"a user and the runner confining itself", WITH(_s.runner_confines = true), -EINVAL},
                {"workspace_bytes 0", WITH(_s.workspace_bytes = 0), -EINVAL},
                {"tmp_bytes 0", WITH(_s.tmp_bytes = 0), -EINVAL},
                {"nofile 0", WITH(_s.nofile = 0), -EINVAL},
                {"a read-only image", WITH(_s.image = "/var/lib/machines/x"; _s.image_read_only = true), 0},
                {"read-only, but no image", WITH(_s.image_read_only = true), -EINVAL},
                {"a session's workspace", WITH(_s.workspace_dir = "/run/sandboxd/disks/x"), 0},
                {"a relative workspace", WITH(_s.workspace_dir = "run/sandboxd/disks/x"), -EINVAL},
                {"a workspace with ':'", WITH(_s.workspace_dir = "/run/x:/etc"), -EINVAL},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char **sentinel = (char **) &sentinel, **v = sentinel;
                int r = nspawn_argv(&cases[i].spec, &v);

                if (cases[i].expected == 0)
                        tap_ok(r == 0 && v != sentinel && v[0], "%s: accepted", cases[i].name);
                else
                        tap_ok(r == cases[i].expected && v == sentinel, "%s: -EINVAL, *ret untouched", cases[i].name);
                if (r == 0)
                        v = nspawn_argv_free(v);
        }
}

/* The uid range in the option follows uid_base. */
static void test_uid_option(void) {
        NspawnSpec s = good;
        char **v = NULL;

        s.uid_base = 0x6fff0000;
        if (!tap_is_int(nspawn_argv(&s, &v), 0, "uid_base 0x6fff0000 builds"))
                return;
        tap_is_int(count_option(v, argv_dashdash(v), "--private-users=1878982656:65536"), 1, "--private-users=1878982656:65536");
        v = nspawn_argv_free(v);
}

/* A command longer than the argv has room for fails cleanly (ASan checks nothing leaks). */
static void test_long_command(void) {
        const char *words[201];
        NspawnSpec s = good;
        char **v = NULL, **sentinel = (char **) &sentinel;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(words) - 1; i++)
                words[i] = "/bin/true";
        words[ELEMENTSOF(words) - 1] = NULL;
        s.command = words;
        v = sentinel;
        r = nspawn_argv(&s, &v);
        tap_ok(r == -E2BIG && v == sentinel, "200-word command: -E2BIG, *ret untouched");

        words[3] = NULL;
        r = nspawn_argv(&s, &v);
        tap_ok(r == 0 && v != sentinel && argv_len(v) - argv_dashdash(v) - 1 == 3, "3-word command fits");
        if (r == 0)
                v = nspawn_argv_free(v);
}

/* nspawn rejects a --machine= that is not a valid host name ("Invalid machine name"): so does the spec check. */
static void test_machine_name(void) {
        NspawnSpec s = good;
        char **v = NULL;
        int r;

        s.machine = "not a host name";
        r = nspawn_argv(&s, &v);
        tap_ok(r == -EINVAL, "machine 'not a host name': -EINVAL");
        if (r == 0)
                v = nspawn_argv_free(v);
}

static void test_uid_base(void) {
        static const uint32_t randoms[] = {0, 1, 0x6ff6, 0x6ff7, 0xffffffffU, 12345678};

        for (size_t i = 0; i < ELEMENTSOF(randoms); i++) {
                uint32_t b = nspawn_uid_base(randoms[i]);

                tap_ok(b % 0x10000U == 0 && b >= 0x80000U && b <= 0x6fff0000U, "uid base for %u: 0x%x, a 65536-aligned range in nspawn's space", randoms[i], b);
        }
}

/* A machine's runner: no --user (no getent), and every capability dropped but the six it needs to
 * make sandboxes inside the machine's user namespace. */
static void test_runner_confines(void) {
        NspawnSpec s = good;
        char **v = NULL;
        const char *drop = NULL;
        size_t end;

        s.user = NULL;
        s.runner_confines = true;
        if (!tap_ok(nspawn_argv(&s, &v) == 0, "runner_confines: accepted"))
                return;
        end = argv_dashdash(v);
        for (size_t i = 0; i < end; i++) {
                tap_ok(strncmp(v[i], "--user", 6) != 0, "runner_confines: no %s", v[i]);
                if (strncmp(v[i], "--drop-capability=", 18) == 0)
                        drop = v[i] + 18;
        }
        tap_ok(drop && strcmp(drop, "all") != 0, "runner_confines: a list of capabilities is dropped");
        tap_ok(drop && !strstr(drop, "CAP_SETUID") && !strstr(drop, "CAP_SETGID") && !strstr(drop, "CAP_SETPCAP") &&
                       !strstr(drop, "CAP_SYS_ADMIN") && !strstr(drop, "CAP_SYS_CHROOT") && !strstr(drop, "CAP_NET_ADMIN"),
               "runner_confines: what making a sandbox takes stays, for the sandbox to drop");
        tap_ok(drop && strstr(drop, "CAP_NET_RAW") && strstr(drop, "CAP_KILL") && strstr(drop, "CAP_DAC_OVERRIDE") &&
                       strstr(drop, "CAP_SYS_PTRACE") && strstr(drop, "CAP_CHECKPOINT_RESTORE") && strstr(drop, "CAP_SETFCAP"),
               "runner_confines: the others go, the last one included");
        tap_is_int(count_option(v, end, "--no-new-privileges=yes"), 1, "runner_confines: still no new privileges");
        tap_is_int(count_option(v, end, "--as-pid2"), 0, "runner_confines: the runner is PID 1, no stub init");
        v = nspawn_argv_free(v);
}

/* The runtime image is the root as it is, read-only: no overlay, no host /usr, no host ld.so.cache. */
static void test_image_read_only(void) {
        NspawnSpec s = good;
        char **v = NULL;
        size_t end;

        s.image = "/var/lib/machines/.sandboxd-runtime-0123456789abcdef";
        s.image_read_only = true;
        if (!tap_ok(nspawn_argv(&s, &v) == 0, "image_read_only: accepted"))
                return;
        end = argv_dashdash(v);
        tap_is_int(count_option(v, end, "--directory=/var/lib/machines/.sandboxd-runtime-0123456789abcdef"), 1,
                   "image_read_only: the image is the root");
        tap_is_int(count_option(v, end, "--read-only"), 1, "image_read_only: read-only");
        tap_is_int(count_option(v, end, "--volatile=overlay") + count_option(v, end, "--volatile=yes"), 0,
                   "image_read_only: no volatile root");
        tap_is_int(count_option(v, end, "--bind-ro=/etc/ld.so.cache"), 0, "image_read_only: the image's own ld.so.cache");
        v = nspawn_argv_free(v);

        s.image_read_only = false;
        if (!tap_ok(nspawn_argv(&s, &v) == 0, "image: accepted"))
                return;
        end = argv_dashdash(v);
        tap_is_int(count_option(v, end, "--volatile=overlay"), 1, "image: under an overlay");
        tap_is_int(count_option(v, end, "--read-only"), 0, "image: not --read-only");
        v = nspawn_argv_free(v);
}

/* A session's machine works in its own disk, bound writable, instead of a fresh tmpfs. */
static void test_workspace_dir(void) {
        NspawnSpec s = good;
        char **v = NULL;
        size_t end;

        if (!tap_ok(nspawn_argv(&s, &v) == 0, "no workspace_dir: accepted"))
                return;
        end = argv_dashdash(v);
        tap_is_int(count_option(v, end, "--bind=/run/sandboxd/disks/x:/workspace"), 0, "no workspace_dir: no bind");
        v = nspawn_argv_free(v);

        s.workspace_dir = "/run/sandboxd/disks/x";
        if (!tap_ok(nspawn_argv(&s, &v) == 0, "workspace_dir: accepted"))
                return;
        end = argv_dashdash(v);
        tap_is_int(count_option(v, end, "--bind=/run/sandboxd/disks/x:/workspace"), 1, "workspace_dir: bound writable on /workspace");
        for (size_t i = 0; i < end; i++)
                if (strncmp(v[i], "--tmpfs=/workspace", 18) == 0)
                        tap_ok(false, "workspace_dir: no tmpfs on /workspace, got %s", v[i]);
        v = nspawn_argv_free(v);
}

int main(void) {
        test_workspace_dir();
        test_image_read_only();
        test_uid_base();
        test_runner_confines();
        test_flags();
        test_specs();
        test_uid_option();
        test_long_command();
        test_machine_name();
        return tap_done();
}
