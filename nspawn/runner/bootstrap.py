# SPDX-License-Identifier: MIT
# What every code process of a sandbox runs. The zygote (zygote.c) compiles this file in once, into a
# namespace of its own, so no sandbox compiles it; the -c command it was started with reaches it as
# sys._sandboxd_run (ZYGOTE_COMMAND) and leaves no name behind.
#
# It waits on fd 3 for "LANGUAGE POLICY\n", then "LENGTH\n", the code and the bytes of standard input
# (zygote-proto.h), which become a file that is its fd 0.
# - node: the process becomes node at once, running node-bootstrap.js, which reads the rest of fd 3
#   and runs the code as `node -e CODE` does. The runner may send the first line ahead of the
#   request: then node has started before the code arrives.
# - bash: the process becomes `bash -c CODE`.
# Both with the signal dispositions an exec from a shell would give them.
# - python: it runs the code with exec() in __main__'s namespace, at module level, under the import
#   policy if the request asks for it. Then it ends the way Py_FinalizeEx() does, in its order, for
#   everything a program can see: the exception printed through sys.excepthook, the SystemExit status,
#   non-daemon threads joined, atexit, standard streams flushed, sys.last_* dropped, __main__ and the
#   modules the code imported cleared (finalizers, generators, files left open), garbage collected,
#   KeyboardInterrupt ending in SIGINT. It leaves out the rest, freeing every object the interpreter
#   started with: in a process forked from the zygote that only copies pages the kernel is about to
#   free, and cost three quarters of an execution's CPU. The excepthook it installs (while the code
#   does not install its own) drops its own frames from tracebacks. What is left to see: one frame
#   above the code's (sys._getframe(1)).
#
# In a session sandbox (zygote-proto.h) the first line names a session's process instead: a python,
# node or bash that runs one code after another, in the state the earlier ones left, and writes each
# one's status on fd 4; or an exec command for /bin/sh -c.
#
# _allow_path (the import policy's allow-list) and _node_bootstrap (node-bootstrap.js) are defined by
# the zygote before this file runs.
import os, sys


def _read_allow_list():
    # Read in the zygote, once: every sandbox has the list without a read. None given (a runner
    # without --import-allow): a policy asked for refuses every import.
    if not _allow_path:
        return frozenset()
    try:
        with open(_allow_path) as f:
            return frozenset(w for w in (line.split("#")[0].strip() for line in f) if w)
    except OSError as e:
        # Fails closed (every import refused), and says so in the machine's journal.
        print("sandboxd-zygote: the import policy's allow-list cannot be read: %s" % e, file=sys.stderr)
        return frozenset()


_allowed = _read_allow_list()
del _read_allow_list


def _egress_prepare():
    # The environment of code that asked for network, made in the zygote, once, after the preloaded
    # modules (zygote-setup.py calls this, and so has anything they set in it): set in a
    # sandbox name by name, it cost a millisecond and more of each execution's start (each new
    # object and string a page the process copies from the zygote's). Its only way out is the
    # egress proxy, on the sandbox's own loopback (the runner's socket, relayed outside), named
    # where pip, npm, curl, requests and urllib look; the sandbox's own loopback stays direct.
    # pip installs into the code's own home (--user, or by itself: the image is read-only) without
    # Debian's refusal of an "externally managed" Python: nothing here is the system's to break.
    # The operator's CA bundle (SANDBOXD_EGRESS_CA_BUNDLE, bound at MACHINE_EGRESS_CA when the
    # machine started, before this zygote) is named for OpenSSL and Python's ssl, requests and pip,
    # curl, node and npm.
    global _egress_items, _egress_data
    proxy, local = b"http://127.0.0.1:3128", b"localhost,127.0.0.1,::1"
    extra = {k: proxy for k in (b"HTTP_PROXY", b"HTTPS_PROXY", b"http_proxy", b"https_proxy", b"npm_config_proxy",
                                 b"npm_config_https_proxy")}
    extra.update({b"NO_PROXY": local, b"no_proxy": local, b"PIP_BREAK_SYSTEM_PACKAGES": b"1"})
    ca = b"/run/sandboxd-egress/ca.pem"
    if os.path.isfile(ca):
        extra.update((k, ca) for k in (b"SSL_CERT_FILE", b"REQUESTS_CA_BUNDLE", b"PIP_CERT", b"CURL_CA_BUNDLE",
                                       b"NODE_EXTRA_CA_CERTS", b"npm_config_cafile"))
    # os.environ's mapping, whole, for a sandbox to take as it is (None where this Python keeps it
    # otherwise: then set name by name).
    current = getattr(os.environ, "_data", None)
    before = current if isinstance(current, dict) else {}
    data = {**current, **extra} if isinstance(current, dict) else None
    # glibc keeps every NAME=VALUE that setenv() made and finds it again: made here, before any
    # fork, then this environment put back as it was (a name the operator set, --setenv, keeps its
    # value for code without network), a sandbox's os.putenv() only links it in.
    for k, v in extra.items():
        os.putenv(k, v)
        if k in before:
            os.putenv(k, before[k])
        else:
            os.unsetenv(k)
    _egress_items, _egress_data = tuple(extra.items()), data


_egress_items, _egress_data = (), None


# A session's bash: each code evaluated in the shell itself, so that cd, variables, exports and
# functions persist; its $? on the done pipe. The runner's descriptors move out of the code's way
# (62, 63). read -N counts characters: in the C locale, those are the bytes LENGTH counts. The loop
# in the code's way: `break` or `continue` end the code early (the one-turn for), and what the code
# itself defines as read, printf or eval is not called (builtin).
_BASH_SESSION = r"""exec 62>&4 63<&3 3<&- 4>&-
while IFS= builtin read -r __sandboxd_n <&63; do
  LC_ALL=C IFS= builtin read -r -N "$__sandboxd_n" __sandboxd_code <&63
  for __sandboxd_once in 1; do builtin eval "$__sandboxd_code"; done
  builtin printf '%d\n' "$?" >&62
done
"""


def _sandboxd_run():
    main = sys._getframe(1).f_globals
    modules_before = set(sys.modules)
    caught = []

    def excepthook(t, v, tb):
        # Our frames out of the chain, wherever they are (the import policy's sit at its end).
        kept = []
        while tb is not None:
            if tb.tb_frame.f_code not in mine:
                kept.append(tb)
            tb = tb.tb_next
        for a, b in zip(kept, kept[1:] + [None]):
            a.tb_next = b
        tb = kept[0] if kept else None
        if v is not None:
            v.__traceback__ = tb
        if getattr(sys, "last_value", None) is v:
            sys.last_traceback = tb
        sys.__excepthook__(t, v, tb)

    def flush_std():
        ok = True
        for name in ("stdout", "stderr"):
            f = getattr(sys, name, None)
            if f is None or getattr(f, "closed", False):
                continue
            try:
                f.flush()
            except BaseException:
                if name == "stdout":
                    ok = False
                    sys.unraisablehook(sys.UnraisableHookArgs((*sys.exc_info(), None, None)))
        return ok

    def clear(d):
        # As the interpreter clears a module at exit: underscored names first, __builtins__ last.
        for first in (True, False):
            for k in list(d):
                if isinstance(k, str) and k != "__builtins__" and (k.startswith("_") and not k.startswith("__")) == first:
                    d[k] = None

    def exit_status(e):
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xff if -2**63 <= code < 2**63 else 255
        err = getattr(sys, "stderr", None)
        if err is not None:
            try:
                err.write(str(code) + "\n")
            except BaseException:
                pass
        return 1

    def end():
        # What Py_FinalizeEx does that a program can see, in its order; the rest (freeing every
        # object the interpreter started with) is left to the kernel, which frees the process whole.
        # It ends the process whatever happens on the way: the interpreter's own finalization would
        # free (and so copy) every page of the zygote's.
        status = 1
        try:
            status = finish()
        finally:
            os._exit(status)

    def print_uncaught(e):
        # As the interpreter prints an exception that ends a program: kept in sys.last_*, through
        # sys.excepthook, and through the default one should that fail too.
        sys.last_type, sys.last_value, sys.last_traceback = type(e), e, e.__traceback__
        try:
            sys.excepthook(type(e), e, e.__traceback__)
        except BaseException as h:
            print("Error in sys.excepthook:", file=sys.stderr)
            sys.__excepthook__(type(h), h, h.__traceback__)
            print("\nOriginal exception was:", file=sys.stderr)
            sys.__excepthook__(type(e), e, e.__traceback__)

    def finish():
        # What it needs after the modules the code imported are cleared, taken first: gc, atexit
        # and signal may be among them.
        import _signal, atexit, gc
        collect, run_exitfuncs = gc.collect, atexit._run_exitfuncs
        sig, SIGINT, SIG_DFL, kill, getpid = _signal.signal, _signal.SIGINT, _signal.SIG_DFL, os.kill, os.getpid
        status, sigint = 0, False
        e = caught.pop() if caught else None
        if isinstance(e, SystemExit):
            status = exit_status(e)
        elif e is not None:
            print_uncaught(e)
            status, sigint = 1, isinstance(e, KeyboardInterrupt)
        e = None
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()
        run_exitfuncs()
        if not flush_std():
            status = 120
        # The interpreter forgets the last exception first: what its frames held can be finalized.
        sys.last_type = sys.last_value = sys.last_traceback = None
        clear(main)
        for name in reversed(list(sys.modules)):
            if name not in modules_before and name != "__main__":
                m = sys.modules.get(name)
                # Modules only: sys.modules may hold other objects (a class's __dict__ is read-only).
                if m is not None and type(getattr(m, "__dict__", None)) is dict:
                    clear(m.__dict__)
        collect()
        if not flush_std():
            status = 120
        if sigint:
            sig(SIGINT, SIG_DFL)
            kill(getpid(), SIGINT)
        return status

    def become(argv):
        # As a shell would exec it: the signals this interpreter ignores (SIGPIPE, SIGXFSZ) back to
        # their defaults. A program that cannot be run ends as a shell's does: 127.
        import _signal
        for s in (_signal.SIGPIPE, _signal.SIGXFSZ):
            _signal.signal(s, _signal.SIG_DFL)
        try:
            os.execv(argv[0], [os.path.basename(argv[0])] + argv[1:])
        except OSError as e:
            os.write(2, ("sandboxd: %s: %s\n" % (argv[0], e.strerror)).encode())
        os._exit(127)

    def line():
        # One line of fd 3, byte by byte: what follows it may be another program's to read.
        out = b""
        while not out.endswith(b"\n"):
            c = os.read(3, 1)
            if not c:
                os._exit(0)
            out += c
        return out[:-1]

    def stdin_file():
        # Standard input: a file of the sandbox's /tmp, empty until written.
        fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
        os.dup2(fd, 0)
        os.close(fd)

    def reseed():
        # Every sandbox is a copy of the zygote, and so would be every generator state the zygote
        # holds: one tenant's draws would repeat the next one's. Reseeded here from the kernel, before
        # any code runs, only what is imported already (an import now would cost every sandbox).
        # random's global generator: the interpreter's own at-fork hook (PyOS_AfterFork_Child)
        # reseeds it in an execution's sandbox, but a session's processes are forked from its init
        # in C, past that hook, so it is reseeded here for every process alike. default_rng() and
        # SeedSequence() draw fresh OS entropy at each call, uuid4 and secrets read the kernel each
        # time.
        rnd = sys.modules.get("random")
        if rnd is not None:
            rnd.seed()
        # numpy's global RandomState (what np.random.* and pandas' and scipy's random_state=None
        # use) is seeded once, at import: 256 bits from the kernel (init_by_array), about 30 us, a
        # fifth of np.random.seed()'s.
        npr, np = sys.modules.get("numpy.random"), sys.modules.get("numpy")
        if npr is not None and np is not None:
            npr.seed(np.frombuffer(os.urandom(32), dtype=np.uint32))
        # OpenSSL 3 reseeds its generators when getpid() changes; a sandbox's code process can
        # have the zygote's pid number in its own PID namespace, so new entropy goes in by hand.
        ssl = sys.modules.get("_ssl")
        if ssl is not None:
            ssl.RAND_add(os.urandom(32), 32.0)
        # tempfile's name generator is made anew when getpid() changes, for the same reason not
        # enough: dropped, so that the next name comes from a generator made in this sandbox.
        tempfile = sys.modules.get("tempfile")
        if tempfile is not None:
            tempfile._name_sequence = None

    def proxy_environment():
        # The execution asked for network: the environment made for it in the zygote
        # (_egress_prepare()), put in place of os.environ's and in the C environment that node,
        # bash and every program the code starts take with them.
        if not _egress_items:
            _egress_prepare()
        if _egress_data is not None:
            os.environ._data = _egress_data
        else:
            for k, v in _egress_items:
                os.environ[os.fsdecode(k)] = os.fsdecode(v)
        for k, v in _egress_items:
            os.putenv(k, v)

    def run():
        try:
            reseed()
            language, policy, *more = line().split(b" ")
            if b"egress" in more:
                proxy_environment()
            if language in SESSION:
                SESSION[language]()
            if language == b"node":
                # node reads the rest itself (node-bootstrap.js), once it has started.
                stdin_file()
                become(["/usr/bin/node", "--experimental-vm-modules", "-e", _node_bootstrap])
            with os.fdopen(3, "rb") as f:
                data = f.read()
            n, _, rest = data.partition(b"\n")
            src, stdin = rest[:int(n)], rest[int(n):]
            stdin_file()
            view = memoryview(stdin)
            while view:
                view = view[os.write(0, view):]
            os.lseek(0, 0, os.SEEK_SET)
            if language == b"bash":
                become(["/bin/bash", "-c", src])
            text = src.decode("utf-8", "surrogateescape")
            sys.orig_argv[2:] = [text]
            del data, rest, src, stdin, view
            code = compile(text, "<string>", "exec")
            if sys.version_info >= (3, 13):
                # As `python3 -c` does from 3.13 on: a traceback shows the code's own lines. Its
                # means is private: a Python without it shows none, as before.
                import linecache
                register = getattr(linecache, "_register_code", None)
                if register:
                    register(code, text, "<string>")
            if policy == b"curated":
                guard_imports()
            exec(code, main)
        except BaseException as e:
            caught.append(e)
        end()

    def guard_imports():
        # A convenience for callers, not the boundary (the kernel is): an import the snippet makes of
        # a module not on the allow-list raises ForbiddenImportError, by statement, __import__ or
        # importlib. A module's own imports pass: an allowed library may use what the snippet may not.
        import builtins, importlib
        allowed = _allowed

        class ForbiddenImportError(ImportError):
            pass

        ForbiddenImportError.__module__ = "builtins"
        ForbiddenImportError.__qualname__ = "ForbiddenImportError"
        builtins.ForbiddenImportError = ForbiddenImportError
        real_import, real_import_module, modules = builtins.__import__, importlib.import_module, sys.modules
        ours = sys._getframe(0).f_globals

        def by_module(g):
            # A module's own code, or ours (end() imports atexit and gc).
            if g is ours:
                return True
            name = g.get("__name__") if isinstance(g, dict) else None
            m = modules.get(name) if isinstance(name, str) and name != "__main__" else None
            return m is not None and getattr(m, "__dict__", None) is g

        def check(name, g):
            if isinstance(name, str) and name.partition(".")[0] not in allowed and not by_module(g):
                raise ForbiddenImportError("import of module '%s' is not allowed" % name, name=name)

        def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0:
                check(name, sys._getframe(1).f_globals)
            return real_import(name, globals, locals, fromlist, level)

        def guarded_import_module(name, package=None):
            if isinstance(name, str) and not name.startswith("."):
                check(name, sys._getframe(1).f_globals)
            return real_import_module(name, package)

        builtins.__import__ = importlib.__import__ = guarded_import
        importlib.import_module = guarded_import_module
        mine.update((check.__code__, guarded_import.__code__, guarded_import_module.__code__))

    # A session's processes (zygote-proto.h): long-lived interpreters that run one code after
    # another, as notebook cells, in the state the earlier ones left; and exec commands.
    def read_exact(n):
        out = bytearray()
        while len(out) < n:
            c = os.read(3, n - len(out))
            if not c:
                os._exit(0)
            out += c
        return bytes(out)

    def user_site():
        # An earlier run's `pip install --user` made the user's site directory after this
        # interpreter started, which site.py looked for only then: added now, as a new interpreter
        # would have it, so that what was installed imports.
        import site
        path = site.getusersitepackages()
        if site.ENABLE_USER_SITE and path not in sys.path and os.path.isdir(path):
            site.addsitedir(path)
            __import__("importlib").invalidate_caches()

    def session_python():
        # Each code with exec() in __main__'s namespace; its end (an exception printed as the
        # interpreter prints it: 1; SystemExit's status) is its status on fd 4, and the interpreter
        # lives on. The runner's descriptors are not the code's subprocesses' to inherit.
        os.set_inheritable(3, False)
        os.set_inheritable(4, False)
        while True:
            text = read_exact(int(line())).decode("utf-8", "surrogateescape")
            status = 0
            try:
                user_site()
                exec(compile(text, "<string>", "exec"), main)
            except SystemExit as e:
                status = exit_status(e)
            except BaseException as e:
                print_uncaught(e)
                status = 1
            e = text = None
            if not flush_std():
                status = 120
            os.write(4, b"%d\n" % status)

    def session_node():
        # node-bootstrap.js, told by its argument to serve a session.
        become(["/usr/bin/node", "--experimental-vm-modules", "-e", _node_bootstrap, "session"])

    def session_bash():
        become(["/bin/bash", "-c", _BASH_SESSION])

    def session_exec():
        with os.fdopen(3, "rb") as f:
            data = f.read()
        n, _, rest = data.partition(b"\n")
        os.close(4)
        become(["/bin/sh", "-c", rest[:int(n)]])

    SESSION = {b"session-python": session_python, b"session-node": session_node, b"session-bash": session_bash,
               b"exec": session_exec}
    mine = {sys._getframe(1).f_code, sys._getframe(0).f_code, run.__code__, reseed.__code__, session_python.__code__}
    sys.excepthook = excepthook
    run()

