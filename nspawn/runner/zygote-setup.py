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

    # Everything made so far goes to the collector's permanent generation: no collection in a
    # sandbox walks (and so copies) the zygote's pages. gc leaves sys.modules again, as python3 -c
    # has not imported it.
    import gc

    gc.collect()
    gc.freeze()
    del sys.modules["gc"]
