/* SPDX-License-Identifier: MIT */
/* The zygote's interpreter, by dlopen(): zygote-python.h.
 *
 * The functions called, and the one structure passed by value (PyStatus), are those of the C API
 * documented for embedding since Python 3.8, unchanged since. PyConfig is only ever handled by
 * pointer, in room far larger than any version's: its layout differs from one version to the next,
 * and no field of it is read or written here. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lib/macro.h"
#include "nspawn/runner/zygote-python.h"

/* zygote-setup.py, with bootstrap.py and node-bootstrap.js in it: ZYGOTE_SETUP (generated). */
#include "nspawn/runner/zygote-setup.h"

#define PYTHON_LINK "/usr/bin/python3"

/* Python's PyStatus (cpython/initconfig.h), as every version since 3.8 lays it out. */
typedef struct PyStatusABI {
        int type; /* 0: ok; 1: an error; 2: an exit */
        const char *func;
        const char *err_msg;
        int exitcode;
} PyStatusABI;

static struct {
        void (*config_init_python)(void *config);
        PyStatusABI (*config_set_bytes_argv)(void *config, ssize_t argc, char *const *argv);
        PyStatusABI (*initialize_from_config)(const void *config);
        void (*config_clear)(void *config);
        void (*exit_status_exception)(PyStatusABI status);
        int (*run_simple_string_flags)(const char *command, void *flags);
        void (*before_fork)(void);
        void (*after_fork_child)(void);
        void (*after_fork_parent)(void);
        int (*run_main)(void);
} py;

/* Python 3.13's PyConfig is under 600 bytes; 3.8's under 400. */
static alignas(max_align_t) unsigned char config_room[16384];

/* The library's name: /usr/bin/python3 is a link to python3.N, whose library is libpython3.N. */
static int library_name(char *buf, size_t size) {
        char *path = realpath(PYTHON_LINK, NULL);
        const char *base, *minor;
        int n;

        if (!path)
                return -errno;
        base = strrchr(path, '/') + 1;
        minor = strncmp(base, "python3.", 8) == 0 ? base + 8 : NULL;
        if (!minor || !*minor || strspn(minor, "0123456789") != strlen(minor)) {
                free(path);
                return -ENOEXEC;
        }
        n = snprintf(buf, size, "libpython3.%s.so.1.0", minor);
        free(path);
        return n > 0 && (size_t) n < size ? 0 : -ENAMETOOLONG;
}

#define LOAD(field, name)                                                                     \
        do {                                                                                  \
                *(void **) &py.field = dlsym(h, name);                                        \
                if (!py.field) {                                                              \
                        (void) fprintf(stderr, "sandboxd-zygote: %s has no %s\n", lib, name); \
                        return -ENOSYS;                                                       \
                }                                                                             \
        } while (0)

int python_load(void) {
        char lib[64];
        void *h;
        int r;

        r = library_name(lib, sizeof(lib));
        if (r < 0) {
                (void) fprintf(stderr, "sandboxd-zygote: %s does not name a Python 3 of its own: %s\n", PYTHON_LINK, strerror(-r));
                return r;
        }
        /* RTLD_GLOBAL: extension modules (numpy's, pandas') find the interpreter's symbols in the
         * process, as they do in python3 itself. */
        h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
                (void) fprintf(stderr, "sandboxd-zygote: %s (the runtime image needs the package of that name): %s\n", lib, dlerror());
                return -ENOENT;
        }
        LOAD(config_init_python, "PyConfig_InitPythonConfig");
        LOAD(config_set_bytes_argv, "PyConfig_SetBytesArgv");
        LOAD(initialize_from_config, "Py_InitializeFromConfig");
        LOAD(config_clear, "PyConfig_Clear");
        LOAD(exit_status_exception, "Py_ExitStatusException");
        LOAD(run_simple_string_flags, "PyRun_SimpleStringFlags");
        LOAD(before_fork, "PyOS_BeforeFork");
        LOAD(after_fork_child, "PyOS_AfterFork_Child");
        LOAD(after_fork_parent, "PyOS_AfterFork_Parent");
        LOAD(run_main, "Py_RunMain");
        return 0;
}

void python_initialize(int argc, char **argv) {
        PyStatusABI st;

        py.config_init_python(config_room);
        st = py.config_set_bytes_argv(config_room, argc, argv);
        if (st.type == 0)
                st = py.initialize_from_config(config_room);
        py.config_clear(config_room);
        if (st.type != 0) {
                py.exit_status_exception(st); /* prints and exits, as python3 does */
                _exit(EXIT_FAILURE);
        }
}

static char *hex(char *out, const char *s) {
        static const char digits[] = "0123456789abcdef";

        for (; *s; s++) {
                *out++ = digits[(unsigned char) *s >> 4];
                *out++ = digits[(unsigned char) *s & 15];
        }
        return out;
}

int python_setup(const char *allow_path, const char *preload) {
        /* The arguments go in as hexadecimal: no quoting of a path can go wrong. */
        static const char head[] = "__import__('__main__').__dict__.pop('_sandboxd_setup')(__import__('os').fsdecode(bytes.fromhex('",
                          middle[] = "')), bytes.fromhex('", tail[] = "').decode())";
        cleanup_free char *call = malloc(sizeof(head) + sizeof(middle) + sizeof(tail) + 2 * (strlen(allow_path) + strlen(preload)));
        char *p;

        if (!call || py.run_simple_string_flags(ZYGOTE_SETUP, NULL) < 0)
                return -1;
        p = stpcpy(call, head);
        p = hex(p, allow_path);
        p = stpcpy(p, middle);
        p = hex(p, preload);
        (void) stpcpy(p, tail);
        return py.run_simple_string_flags(call, NULL) < 0 ? -1 : 0;
}

void python_before_fork(void) {
        py.before_fork();
}

void python_after_fork_child(void) {
        py.after_fork_child();
}

void python_after_fork_parent(void) {
        py.after_fork_parent();
}

int python_run_main(void) {
        return py.run_main();
}
