# SPDX-License-Identifier: MIT
# What the zygote (zygote-python.c) runs once in the interpreter it initialised, before it forks any
# sandbox. Run as a script in __main__, it only defines _sandboxd_setup; the zygote then calls it,
# popping it from __main__ as it does (no name is left behind, as after python3's own start-up).
#
# The zygote is not linked with libpython (it loads the image's own at run time, whichever version):
# everything it did through the C API, beyond starting the interpreter and running its main, is here.
# The build puts bootstrap.py and node-bootstrap.js in place of the two markers, as string literals.


def _sandboxd_setup(allow_path, preload):
    import sys

    # The bootstrap, compiled once here, in a namespace of its own; the -c command finds its
    # function in sys (ZYGOTE_COMMAND, zygote-proto.h).
    namespace = {"__builtins__": __builtins__, "_allow_path": allow_path, "_node_bootstrap": "@NODE_BOOTSTRAP@"}
    exec(compile("@BOOTSTRAP@", "<string>", "exec"), namespace)
    sys._sandboxd_run = namespace["_sandboxd_run"]

    # The modules every sandbox of this machine finds imported already: paid once per machine, their
    # pages shared copy-on-write. One that fails is said in the machine's journal and left to the
    # snippets to import.
    for name in filter(None, preload.split(",")):
        try:
            __import__(name)
        except BaseException:
            print("sandboxd-zygote: could not preload %s:" % name, file=sys.stderr)
            sys.excepthook(*sys.exc_info())
    # The environment of code with network, made now that nothing else is to change the zygote's.
    namespace["_egress_prepare"]()

    def _immortalize(gc):
        """Makes every object the zygote holds immortal, as CPython 3.12 and 3.13 make their static
        objects: Py_INCREF and Py_DECREF then never write its reference count. A sandbox is a fork of the
        zygote, and every such write would copy a page (a copy-on-write fault, the largest cost of an
        execution). The objects were never to be freed anyway: the zygote lives as long as its machine,
        and a sandbox's process ends without freeing them. Other versions lay the count out otherwise:
        they are left as they are."""
        import sys

        if sys.implementation.name != "cpython" or sys.version_info[:2] not in ((3, 12), (3, 13)) or sys.maxsize < 2**32 or \
                getattr(sys, "_is_gil_enabled", lambda: True)() is False:
            return
        modules = set(sys.modules)
        try:
            import ctypes
        except ImportError:  # an image without it: the counts are written, as before
            return

        # The reference count is the object's first word; immortal is UINT_MAX (_Py_IMMORTAL_REFCNT on
        # 64 bits), which Py_INCREF's 32-bit increment overflows to 0 and so leaves as it is.
        immortal = 0xFFFFFFFF
        word = ctypes.c_ssize_t.from_address
        # An object already immortal was seen (or is one of CPython's own): no set of what was
        # seen, which for a machine's data interpreter would hold some million entries.
        todo = gc.get_objects()
        while todo:
            more = []
            for o in todo:
                count = word(id(o))
                if count.value < immortal:
                    count.value = immortal
                    more.append(o)
            todo = [r for o in more for r in gc.get_referents(o)]
        for name in set(sys.modules) - modules:
            del sys.modules[name]

    # Everything made so far goes to the collector's permanent generation: no collection in a
    # sandbox walks (and so copies) the zygote's pages. gc leaves sys.modules again, as python3 -c
    # has not imported it.
    import gc

    gc.collect()
    _immortalize(gc)
    gc.freeze()
    del sys.modules["gc"]

