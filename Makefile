# SPDX-License-Identifier: MIT
# sandboxd. `make run` brings the service up on $(LISTEN), `make test` runs every test.

# Plain `make` builds everything: the binaries, the filter, sandboxctl and the unit tests.
.DEFAULT_GOAL := build-all

LISTEN  ?= 127.0.0.1:8080
# Where `make install` puts sandboxd: /usr/local by default; the Debian package (make deb) is built
# with PREFIX=/usr and UNITDIR=/lib/systemd/system. LIBDIR is compiled into the binaries (the
# default of SANDBOXD_LIB_DIR) and written into the units and scripts at install time.
PREFIX  ?= /usr/local
LIBDIR  := $(PREFIX)/lib/sandboxd
UNITDIR := $(PREFIX)/lib/systemd/system
SBINDIR := $(PREFIX)/sbin
SYSUSERSDIR := $(PREFIX)/lib/sysusers.d
TMPFILESDIR := $(PREFIX)/lib/tmpfiles.d
MANDIR  := $(PREFIX)/share/man
DOCDIR  := $(PREFIX)/share/doc/sandboxd
DATADIR := $(PREFIX)/share/sandboxd
ETCDIR  := /etc/sandboxd
# The services whose binaries `make test` builds with sanitizers.
SANITIZED_UNITS := sandbox-api.service sandboxd-broker.service sandboxd-poold.service sandboxd-member.service

# Debian packages the build, the service and the tests need. prometheus (about 100 MB) for its
# promtool, which checks GET /metrics: it also installs a Prometheus server, which Debian enables.
# Debian 12 and 13 alike: their names differ only for nginx (Debian 13 has no nginx-light).
DIST_CODENAME := $(shell . /etc/os-release 2>/dev/null && echo "$$VERSION_CODENAME")
NGINX_PACKAGE := $(if $(filter bookworm,$(DIST_CODENAME)),nginx-light,nginx)
DEB_PACKAGES := build-essential gcc make pkg-config libc6-dev libfcgi-dev libjson-c-dev libsystemd-dev libsqlite3-dev libssl-dev \
                systemd systemd-container dbus $(NGINX_PACKAGE) python3 sqlite3 util-linux \
                bats jq curl bubblewrap mmdebstrap clang libclang-rt-dev libseccomp-dev \
                procps shellcheck clang-format clang-tidy file python3-jsonschema prometheus dpkg-dev debhelper \
                libcurl4-openssl-dev squid-openssl haproxy dnsmasq-base etcd-server etcd-client

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
           -Wpointer-arith -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough \
           -Wno-missing-field-initializers
HARDEN  := -fno-common -fstack-protector-strong -D_FORTIFY_SOURCE=3
CFLAGS  ?= -O2 -g
BUILD   := build
PKGS    := libsystemd json-c sqlite3 libcrypto
ifdef SANITIZE
BUILD   := build/san
HARDEN  := -fno-common
CFLAGS  := -O1 -g -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -I. -MMD -MP $(WARN) $(HARDEN) $(CFLAGS) \
             -DSANDBOXD_DEFAULT_LIB_DIR='"$(LIBDIR)"' $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

objs = $(patsubst %.c,$(BUILD)/%.o,$(1))

# What every binary may link: no HTTP, no FastCGI.
LIB_SRCS    := lib/b64.c lib/utf8.c lib/error.c lib/config.c lib/fd-util.c lib/log.c lib/time-util.c lib/path-util.c \
               lib/image-name.c lib/signal-util.c lib/daemon.c lib/settings.c lib/env-file.c
# The workers' and the pool manager's side of the broker and of the pool.
CLIENT_SRCS := nspawn/broker/broker-client.c nspawn/broker/broker-async.c nspawn/pool/pool.c nspawn/pool/pool-retire.c nspawn/pool/pool-socket.c lib/stream-frame.c nspawn/pool/session-usage.c nspawn/unit-name.c \
               nspawn/pool/poold-proto.c lib/fd-wait.c
DB_SRCS     := lib/session-state.c db/db.c db/mcp-db.c db/requests.c db/pool-db.c db/sessions.c db/session-revoke.c db/metrics-db.c db/keys.c db/cluster-db.c lib/error-count.c lib/quota.c

# sandboxd-fcgi: the FastCGI master and its workers (user sandboxd).
FCGI_SRCS   := fcgi/main.c fcgi/event-stream.c fcgi/http-accept.c fcgi/audit.c fcgi/auth.c fcgi/request.c fcgi/reply.c fcgi/route.c fcgi/route-handlers.c fcgi/route-execute.c fcgi/egress-check.c fcgi/egress-link.c fcgi/machine-claim.c \
               fcgi/route-pool.c fcgi/route-call.c fcgi/route-runtimes.c fcgi/route-openapi.c fcgi/route-metrics.c fcgi/metrics.c \
               fcgi/route-sessions.c fcgi/route-session-files.c fcgi/session-view.c fcgi/session-call.c fcgi/mcp.c fcgi/mcp-rpc.c fcgi/mcp-args.c fcgi/mcp-tools.c fcgi/session-machine.c fcgi/session-quota.c fcgi/session-route.c fcgi/tool-manifest.c fcgi/validate.c lib/egress.c lib/json-syntax.c \
               fcgi/worker-slots.c fcgi/worker.c fcgi/inflight.c fcgi/live-settings.c nspawn/pool/poold-client.c \
               nspawn/runner-request.c nspawn/sandbox-result.c lib/cgroup-util.c nspawn/broker/broker-proto.c \
               $(CLIENT_SRCS) $(DB_SRCS) lib/b64.c lib/utf8.c lib/error.c lib/config.c lib/fd-util.c lib/log.c \
               lib/time-util.c lib/path-util.c lib/image-name.c lib/signal-util.c lib/daemon.c lib/settings.c lib/env-file.c lib/api-key.c lib/json-util.c lib/language.c \
               cluster/member-record.c cluster/session-record.c lib/socket-util.c
# sandboxd-broker: the only client of systemd (root); libc and libsystemd only.
BROKER_SRCS := nspawn/broker/broker.c lib/listen-util.c lib/socket-util.c nspawn/broker/broker-bus.c nspawn/broker/broker-spec.c nspawn/broker/broker-machine.c \
               nspawn/broker/broker-tool.c nspawn/broker/broker-session.c nspawn/broker/broker-proto.c nspawn/broker/uid-range.c nspawn/broker/session-list.c nspawn/sandbox.c nspawn/sandbox-wait.c nspawn/sandbox-result.c lib/cgroup-util.c \
               nspawn/nspawn-argv.c nspawn/unit-name.c lib/config.c lib/error.c lib/utf8.c lib/fd-util.c lib/log.c \
               lib/time-util.c lib/image-name.c lib/signal-util.c lib/daemon.c lib/settings.c lib/env-file.c
# sandboxd-poold: the pool manager (user sandboxd); libc, libsystemd and sqlite.
POOLD_SRCS  := nspawn/pool/poold.c lib/listen-util.c lib/cgroup-util.c nspawn/pool/poold-machines.c nspawn/pool/poold-writes.c nspawn/pool/conn-state.c lib/machine-state.c nspawn/pool/poold-cpu.c nspawn/pool/poold-sessions.c nspawn/pool/poold-queue.c nspawn/pool/sweep.c nspawn/broker/broker-proto.c lib/image-name.c $(CLIENT_SRCS) $(DB_SRCS) lib/config.c lib/error.c lib/utf8.c lib/fd-util.c lib/log.c \
               lib/time-util.c lib/signal-util.c lib/daemon.c lib/settings.c lib/env-file.c
# sandboxd-runner: a machine's PID 1, on the host's /usr read-only; libc and json-c only.
RUNNER_SRCS := nspawn/runner/runner.c lib/stream-frame.c nspawn/runner/runner-args.c nspawn/runner/runner-common.c nspawn/runner/runner-exec.c \
               nspawn/runner/runner-session.c nspawn/runner/proc-stat.c nspawn/runner-request.c lib/json-util.c lib/language.c nspawn/runner/session-files.c nspawn/runner/cgroup.c lib/cgroup-util.c lib/b64.c lib/error.c lib/utf8.c lib/fd-util.c lib/time-util.c lib/path-util.c
# sandboxd-zygote: the interpreter that forks every sandbox of a machine; libc, and at run time the
# runtime image's own libpython (zygote-python.c).
ZYGOTE_SRCS := nspawn/runner/zygote.c nspawn/runner/zygote-python.c lib/fd-util.c
# sandboxd-egress-acl: the egress proxy's (Squid's) helper that decides by name; libc only.
EGRESS_ACL_SRCS := nspawn/egress/egress-acl.c lib/egress.c lib/fd-util.c
# sandboxd-egress: the relay between sandboxes and the egress proxy (user sandboxd); libc,
# libsystemd and json-c.
EGRESS_SRCS := nspawn/egress/egress-relay.c lib/listen-util.c lib/socket-util.c lib/env-file.c nspawn/egress/egress-pipe.c nspawn/egress/egress-audit.c nspawn/egress/audit-line.c lib/egress.c lib/fd-util.c lib/time-util.c lib/log.c lib/error.c lib/utf8.c
# sandboxd-member: a host's part in a cluster (user sandboxd): its record in etcd, the front's agent
# check; libsystemd, json-c, sqlite and libcurl. sandboxd-front-watch: the front's, etcd's members
# into HAProxy; json-c and libcurl.
MEMBER_SRCS := cluster/member.c cluster/mirror.c cluster/follow.c lib/backoff.c lib/socket-util.c cluster/member-record.c cluster/key-record.c cluster/session-record.c lib/usage-record.c lib/json-util.c \
               cluster/logs-ask.c lib/journal-entry.c cluster/etcd.c nspawn/pool/poold-proto.c nspawn/unit-name.c $(DB_SRCS) lib/b64.c lib/config.c lib/error.c \
               lib/utf8.c lib/fd-util.c lib/log.c lib/time-util.c lib/signal-util.c lib/daemon.c lib/settings.c lib/env-file.c
WATCH_SRCS  := cluster/front-watch.c cluster/follow.c lib/backoff.c lib/env-file.c cluster/haproxy-cli.c lib/socket-util.c cluster/member-record.c lib/json-util.c cluster/etcd.c nspawn/unit-name.c lib/b64.c lib/error.c lib/utf8.c \
               lib/fd-util.c lib/log.c lib/time-util.c
# sandboxctl: the administrator's command (root, on the host): the API, the journal, the keys.
CTL_SRCS    := $(wildcard ctl/*.c) lib/session-state.c lib/machine-state.c lib/journal-entry.c cluster/logs-ask.c cluster/etcd.c cluster/member-record.c lib/socket-util.c cluster/key-record.c lib/json-util.c lib/b64.c nspawn/unit-name.c lib/error.c lib/egress.c lib/utf8.c lib/time-util.c lib/fd-util.c lib/config.c lib/env-file.c lib/settings.c lib/api-key.c \
               db/db.c db/keys.c db/session-revoke.c lib/error-count.c
SRCS        := $(sort $(FCGI_SRCS) $(BROKER_SRCS) $(POOLD_SRCS) $(RUNNER_SRCS) $(CTL_SRCS) $(EGRESS_ACL_SRCS) $(EGRESS_SRCS) $(MEMBER_SRCS) $(WATCH_SRCS))
BINARIES    := sandboxd-fcgi sandboxd-broker sandboxd-poold sandboxd-runner sandboxd-zygote sandboxd-confine sandboxd-egress-acl sandboxd-egress \
               sandboxd-member sandboxd-front-watch

# Each unit test links its own test program and the modules it tests, nothing else.
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test-*.c))
TEST_LIBS    = $(shell pkg-config --libs json-c sqlite3 libcurl libsystemd 2>/dev/null)
$(BUILD)/tests/test-b64:          $(call objs,lib/b64.c)
$(BUILD)/tests/test-utf8:         $(call objs,lib/utf8.c)
$(BUILD)/tests/test-json-syntax:  $(call objs,lib/json-syntax.c)
$(BUILD)/tests/test-json-util:    $(call objs,lib/json-util.c)
$(BUILD)/tests/test-stream-frame: $(call objs,lib/stream-frame.c)
$(BUILD)/tests/test-event-stream: $(call objs,fcgi/event-stream.c fcgi/http-accept.c lib/b64.c lib/utf8.c)
$(BUILD)/tests/test-http-accept: $(call objs,fcgi/http-accept.c)
$(BUILD)/tests/test-event-stream: TEST_LIBS += -lfcgi
$(BUILD)/tests/test-reply:         $(call objs,fcgi/reply.c fcgi/event-stream.c fcgi/http-accept.c lib/b64.c lib/utf8.c)
$(BUILD)/tests/test-reply: TEST_LIBS += -lfcgi
$(BUILD)/tests/test-config:       $(call objs,lib/config.c)
$(BUILD)/tests/test-fd-util:      $(call objs,lib/fd-util.c)
$(BUILD)/tests/test-fd-wait:      $(call objs,lib/fd-wait.c lib/time-util.c)
$(BUILD)/tests/test-cgroup-util:  $(call objs,lib/cgroup-util.c)
$(BUILD)/tests/test-worker-slots: $(call objs,fcgi/worker-slots.c)
$(BUILD)/tests/test-inflight:     $(call objs,fcgi/inflight.c fcgi/route.c fcgi/session-route.c fcgi/validate.c lib/egress.c lib/json-syntax.c nspawn/broker/broker-proto.c nspawn/unit-name.c lib/image-name.c lib/b64.c lib/utf8.c lib/error.c lib/path-util.c lib/json-util.c lib/language.c)
$(BUILD)/tests/test-path-util:    $(call objs,lib/path-util.c)
$(BUILD)/tests/test-image-name:   $(call objs,lib/image-name.c)
$(BUILD)/tests/test-egress:       $(call objs,lib/egress.c)
$(BUILD)/tests/test-audit-line:   $(call objs,nspawn/egress/audit-line.c)
$(BUILD)/tests/test-validate:     $(call objs,fcgi/validate.c lib/egress.c lib/json-syntax.c lib/b64.c lib/utf8.c lib/error.c lib/path-util.c lib/json-util.c lib/language.c)
$(BUILD)/tests/test-runner-args:  $(call objs,nspawn/runner/runner-args.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-proc-stat:    $(call objs,nspawn/runner/proc-stat.c)
$(BUILD)/tests/test-runner-request: $(call objs,nspawn/runner-request.c fcgi/validate.c lib/egress.c lib/json-syntax.c lib/b64.c lib/utf8.c lib/error.c lib/path-util.c lib/json-util.c lib/language.c)
$(BUILD)/tests/test-error:        $(call objs,lib/error.c lib/utf8.c)
$(BUILD)/tests/test-route:        $(call objs,fcgi/route.c)
$(BUILD)/tests/test-broker-proto: $(call objs,nspawn/broker/broker-proto.c nspawn/unit-name.c lib/image-name.c lib/error-count.c)
$(BUILD)/tests/test-unit-name:    $(call objs,nspawn/unit-name.c)
$(BUILD)/tests/test-etcd:         $(call objs,cluster/etcd.c lib/b64.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-member-record: $(call objs,cluster/member-record.c lib/socket-util.c lib/json-util.c nspawn/unit-name.c)
$(BUILD)/tests/test-key-record:  $(call objs,cluster/key-record.c lib/json-util.c)
$(BUILD)/tests/test-session-record: $(call objs,cluster/session-record.c lib/session-state.c lib/json-util.c nspawn/unit-name.c)
$(BUILD)/tests/test-usage-record: $(call objs,lib/usage-record.c lib/json-util.c)
$(BUILD)/tests/test-haproxy-cli:  $(call objs,cluster/haproxy-cli.c lib/fd-util.c lib/socket-util.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-socket-util:  $(call objs,lib/socket-util.c)
$(BUILD)/tests/test-backoff:     $(call objs,lib/backoff.c)
$(BUILD)/tests/test-follow:      $(call objs,cluster/follow.c lib/backoff.c)
$(BUILD)/tests/test-logs-ask:    $(call objs,cluster/logs-ask.c lib/journal-entry.c lib/time-util.c lib/utf8.c)
$(BUILD)/tests/test-nspawn-argv:  $(call objs,nspawn/nspawn-argv.c)
$(BUILD)/tests/test-pool-socket:   $(call objs,nspawn/pool/pool-socket.c lib/stream-frame.c lib/fd-wait.c lib/time-util.c)
$(BUILD)/tests/test-poold-proto:  $(call objs,nspawn/pool/poold-proto.c)
$(BUILD)/tests/test-poold-queue:  $(call objs,nspawn/pool/poold-queue.c)
$(BUILD)/tests/test-poold-cpu:    $(call objs,nspawn/pool/poold-cpu.c)
$(BUILD)/tests/test-broker-async: $(call objs,nspawn/broker/broker-async.c nspawn/broker/broker-proto.c nspawn/unit-name.c lib/image-name.c lib/error-count.c lib/fd-util.c lib/time-util.c)
$(BUILD)/tests/test-usage-ask:    $(call objs,nspawn/pool/session-usage.c nspawn/pool/pool-socket.c lib/stream-frame.c lib/fd-wait.c lib/fd-util.c lib/time-util.c)
$(BUILD)/tests/test-string-table: $(call objs,lib/session-state.c lib/machine-state.c nspawn/pool/conn-state.c)
$(BUILD)/tests/test-poold-writes: $(call objs,nspawn/pool/poold-writes.c lib/session-state.c db/db.c db/requests.c db/pool-db.c db/sessions.c db/metrics-db.c db/keys.c lib/error-count.c lib/quota.c lib/time-util.c)
$(BUILD)/tests/test-db:           $(call objs,lib/session-state.c db/db.c db/requests.c db/pool-db.c db/sessions.c db/metrics-db.c db/keys.c lib/error-count.c lib/quota.c lib/time-util.c)
$(BUILD)/tests/test-session-route: $(call objs,fcgi/session-route.c fcgi/validate.c lib/egress.c lib/json-syntax.c nspawn/broker/broker-proto.c nspawn/unit-name.c lib/image-name.c lib/b64.c lib/utf8.c lib/error.c lib/path-util.c lib/json-util.c lib/language.c)
$(BUILD)/tests/test-mcp-rpc:      $(call objs,fcgi/mcp-rpc.c lib/b64.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-mcp-args:     $(call objs,fcgi/mcp-args.c lib/b64.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-mcp-db:       $(call objs,db/db.c db/mcp-db.c db/requests.c db/metrics-db.c lib/error-count.c lib/time-util.c)
$(BUILD)/tests/test-metrics:      $(call objs,fcgi/metrics.c)
$(BUILD)/tests/test-pool-retire:  $(call objs,nspawn/pool/pool-retire.c)
$(BUILD)/tests/test-error-count:  $(call objs,lib/error-count.c)
$(BUILD)/tests/test-api-key:      $(call objs,lib/api-key.c)
$(BUILD)/tests/test-api-key:      TEST_LIBS += $(shell pkg-config --libs libcrypto 2>/dev/null)
$(BUILD)/tests/test-tool-manifest: $(call objs,fcgi/tool-manifest.c lib/fd-util.c)
$(BUILD)/tests/test-quota:        $(call objs,lib/quota.c)
$(BUILD)/tests/test-uid-range:    $(call objs,nspawn/broker/uid-range.c)
$(BUILD)/tests/test-session-revoke: $(call objs,lib/session-state.c db/db.c db/requests.c db/pool-db.c db/sessions.c db/session-revoke.c db/metrics-db.c db/keys.c lib/error-count.c lib/quota.c lib/time-util.c)
$(BUILD)/tests/test-session-usage: $(call objs,nspawn/pool/session-usage.c nspawn/pool/pool-socket.c lib/stream-frame.c lib/fd-wait.c lib/time-util.c)
$(BUILD)/tests/test-env-file:     $(call objs,lib/env-file.c)
$(BUILD)/tests/test-settings:     $(call objs,lib/settings.c lib/env-file.c)
$(BUILD)/tests/test-ctl-http:     $(call objs,ctl/http.c lib/error.c lib/utf8.c)
$(BUILD)/tests/test-ctl-text:     $(call objs,ctl/language.c ctl/usage.c ctl/format.c lib/env-file.c lib/time-util.c)

.PHONY: all deps unit check-unit e2e test test-slow install uninstall run stop clean lint shellcheck style tidy hdr-check \
        test-cluster images fuzz openapi-check openapi-client man-check mcp-clients

all: $(addprefix $(BUILD)/,$(BINARIES)) $(BUILD)/seccomp.bpf $(BUILD)/seccomp-machine.bpf $(BUILD)/sandboxctl $(BUILD)/tests/wait-gone

.PHONY: build-all
build-all: all $(UNIT_TESTS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/db/db.o: db/schema.sql

# The objects with LIBDIR compiled in are rebuilt when it changes (another PREFIX).
$(BUILD)/lib/config.o $(BUILD)/tests/unit/test-config.o: $(BUILD)/libdir.txt
$(BUILD)/libdir.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(LIBDIR)' | cmp -s - $@ || echo '$(LIBDIR)' >$@
.PHONY: FORCE

$(BUILD)/sandboxd-fcgi: $(call objs,$(FCGI_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd json-c sqlite3 libcrypto 2>/dev/null) -lfcgi -pthread

$(BUILD)/sandboxd-broker: $(call objs,$(BROKER_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd 2>/dev/null)

# Not a unit test: it starts units under systemd (tests/bats/broker.bats runs it).
$(BUILD)/tests/wait-gone: $(call objs,tests/bus/wait-gone.c nspawn/sandbox-wait.c lib/time-util.c)
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd 2>/dev/null)

$(BUILD)/sandboxd-poold: $(call objs,$(POOLD_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd sqlite3 2>/dev/null)

$(BUILD)/sandboxctl: $(call objs,$(CTL_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd json-c sqlite3 libcurl libcrypto 2>/dev/null)

$(BUILD)/sandboxd-member: $(call objs,$(MEMBER_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd json-c sqlite3 libcurl 2>/dev/null) -pthread

$(BUILD)/sandboxd-front-watch: $(call objs,$(WATCH_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd json-c libcurl 2>/dev/null) -pthread

$(BUILD)/sandboxd-egress-acl: $(call objs,$(EGRESS_ACL_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/sandboxd-egress: $(call objs,$(EGRESS_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd json-c 2>/dev/null)

$(BUILD)/sandboxd-runner: $(call objs,$(RUNNER_SRCS))
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs json-c 2>/dev/null)

# Never sanitized: every allocation of the interpreter would go through ASan's allocator and its
# quarantine, inside a machine's memory limit. Its own C is small and unit-free; the e2e suites
# exercise it.
ZYGOTE_CFLAGS = -std=gnu11 -D_GNU_SOURCE -I. -I$(BUILD)/gen -MMD -MP $(WARN) -fno-common -fstack-protector-strong -D_FORTIFY_SOURCE=3 -O2 -g
$(BUILD)/zygote/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ZYGOTE_CFLAGS) -c -o $@ $<

# What the zygote runs once (zygote-setup.py) with what the sandboxes run before the code, in Python
# and in JavaScript, in it as string literals: one C string, checked to compile.
$(BUILD)/gen/nspawn/runner/zygote-setup.h: nspawn/runner/zygote-setup.py nspawn/runner/bootstrap.py nspawn/runner/node-bootstrap.js
	@mkdir -p $(dir $@)
	/usr/bin/python3 -c 'import json, sys; \
	    setup, boot, node = (open(f).read() for f in sys.argv[1:]); \
	    compile(boot, sys.argv[2], "exec"); \
	    setup = setup.replace("\"@BOOTSTRAP@\"", repr(boot)).replace("\"@NODE_BOOTSTRAP@\"", repr(node)); \
	    compile(setup, sys.argv[1], "exec"); \
	    print("static const char ZYGOTE_SETUP[] = %s;" % json.dumps(setup))' $^ >$@.tmp
	mv $@.tmp $@
$(BUILD)/zygote/nspawn/runner/zygote-python.o: $(BUILD)/gen/nspawn/runner/zygote-setup.h

$(BUILD)/sandboxd-zygote: $(patsubst %.c,$(BUILD)/zygote/%.o,$(ZYGOTE_SRCS))
	$(CC) -o $@ $^

# The warm sandboxes' system-call filter, compiled once here rather than by nspawn in each sandbox.
$(BUILD)/seccomp-gen: $(call objs,nspawn/runner/seccomp-gen.c)
	$(CC) $(LDFLAGS) -o $@ $^ -lseccomp

# What a tool call's sandbox starts the image's interpreter through: static, as it runs on the
# agent's tree and its libc; and never sanitized, as a sanitizer's runtime cannot link statically.
$(BUILD)/sandboxd-confine: nspawn/runner/confine.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) -fno-common -fstack-protector-strong -D_FORTIFY_SOURCE=3 -O2 -g -static -o $@ $<

$(BUILD)/seccomp.bpf: $(BUILD)/seccomp-gen nspawn/runner/seccomp-allow nspawn/runner/seccomp-expand
	nspawn/runner/seccomp-expand nspawn/runner/seccomp-allow >$(BUILD)/seccomp-allow.txt
	$(BUILD)/seccomp-gen $(BUILD)/seccomp-allow.txt $@

# The runner's and the zygote's: the code's list and what making a sandbox takes (seccomp-allow-machine).
$(BUILD)/seccomp-machine.bpf: $(BUILD)/seccomp-gen nspawn/runner/seccomp-allow nspawn/runner/seccomp-allow-machine nspawn/runner/seccomp-expand
	{ nspawn/runner/seccomp-expand nspawn/runner/seccomp-allow && \
	  nspawn/runner/seccomp-expand nspawn/runner/seccomp-allow-machine; } >$(BUILD)/seccomp-machine.txt
	$(BUILD)/seccomp-gen --machine $(BUILD)/seccomp-machine.txt $@

$(BUILD)/tests/test-%: $(BUILD)/tests/unit/test-%.o
	$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS)

# Keep the tests' objects: their .d files name them.
.SECONDARY:

# What the end-to-end suites call on besides the service itself and what a build needs: with the
# package's Build-Depends, what a test VM installs (tests/vm/build-disk). make deps's others (the
# linters, clang for the fuzzer, npm for the API's validator) are minutes of a VM's build for tools
# it does not run: deps-names checks there that the release has every one of them, by name.
TEST_RUN_PACKAGES := build-essential bats jq curl sqlite3 python3 procps file prometheus util-linux

.PHONY: deps-names vm-guest-deps
deps-names:
	apt-get install --simulate -q $(DEB_PACKAGES) npm >/dev/null
	@echo "deps-names: this release has every package make deps installs"

vm-guest-deps: deps-names
	DEBIAN_FRONTEND=noninteractive apt-get satisfy -y -q --no-install-recommends \
	    "$$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/{/^Build-Depends:/{s/^Build-Depends://;p;d};/^[A-Z]/d;p}' debian/control | tr -d '\n' | sed 's/,[[:space:]]*$$//')"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(TEST_RUN_PACKAGES)

deps:
	@if ! dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | grep -qv 'install ok installed' && \
	    [ "$$(dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | wc -l)" -eq "$(words $(DEB_PACKAGES))" ]; then \
		echo "deps: all Debian packages present"; \
	else \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(DEB_PACKAGES); \
	fi
	@# npm, for the OpenAPI validator (make openapi-check): Debian's, unless the host has one already
	@# (a node installed otherwise would clash with Debian's npm package).
	@command -v npm >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm; }

unit:
	$(MAKE) SANITIZE=address,undefined unit-run

.PHONY: unit-run
unit-run: $(UNIT_TESTS)
	prove --exec '' $(UNIT_TESTS)

# One unit test under the sanitizers: make check-unit T=b64 builds and runs tests/unit/test-b64.c.
check-unit:
	@[ -f tests/unit/test-$(T).c ] || { echo "usage: make check-unit T=NAME (tests/unit/test-NAME.c)" >&2; exit 2; }
	$(MAKE) SANITIZE=address,undefined build/san/tests/test-$(T)
	build/san/tests/test-$(T)

# libFuzzer over the request parser and the pure modules under it, for a bounded time. clang, not
# $(CC): gcc has no -fsanitize=fuzzer. The sources are compiled here, not linked from build/, whose
# objects carry no fuzzer coverage. libFuzzer adds new inputs to its first corpus directory, so that
# is a copy under build/ and tests/fuzz/corpus only seeds it; a crashing input lands in build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_SRCS    := tests/fuzz/fuzz-request.c fcgi/validate.c lib/egress.c lib/json-syntax.c nspawn/runner-request.c fcgi/session-route.c lib/b64.c lib/utf8.c lib/error.c \
                lib/path-util.c lib/image-name.c nspawn/broker/broker-proto.c nspawn/unit-name.c lib/api-key.c lib/json-util.c lib/language.c \
                fcgi/mcp-rpc.c fcgi/mcp-args.c

build/fuzz/fuzz-request: $(FUZZ_SRCS) fcgi/validate.h nspawn/runner-request.h lib/json-limits.h fcgi/session-route.h lib/b64.h lib/utf8.h lib/error.h lib/path-util.h lib/image-name.h fcgi/messages.h \
                         lib/macro.h nspawn/broker/broker-proto.h nspawn/unit-name.h lib/api-key.h fcgi/mcp-rpc.h fcgi/mcp-args.h fcgi/route.h
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 -std=gnu11 -D_GNU_SOURCE \
	    -I. $(WARN) $(shell pkg-config --cflags json-c libcrypto) -o $@ $(FUZZ_SRCS) $(shell pkg-config --libs json-c libcrypto)

fuzz: build/fuzz/fuzz-request
	@mkdir -p build/fuzz/corpus
	cp tests/fuzz/corpus/* build/fuzz/corpus/
	build/fuzz/fuzz-request -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz/ build/fuzz/corpus tests/fuzz/corpus

UNITS := sandboxd.target sandbox.slice sandbox-api.socket sandbox-api.service sandboxd-broker.socket \
         sandboxd-broker.service sandboxd-poold.socket sandboxd-poold.service sandboxd-nginx.service \
         sandboxd-egress.socket sandboxd-egress.service sandboxd-egress-proxy.service sandboxd-egress-front.service \
         sandboxd-member.service sandboxd-front-watch.service

# The paths of this install written into the units and the scripts.
INSTALL_SED := sed -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@UNITDIR@|$(UNITDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
               -e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g'
# Whatever manual pages docs/man holds, each in the section its name ends with.
MANPAGES := $(wildcard docs/man/*.[1-8])

install: all
	install -d $(DESTDIR)$(LIBDIR)/etc $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(ETCDIR) $(DESTDIR)$(SYSUSERSDIR) \
	    $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(ETCDIR)/nginx-metrics.d $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/demo-agent
	install -m 0644 units/sandboxd.sysusers $(DESTDIR)$(SYSUSERSDIR)/sandboxd.conf
	install -m 0644 units/sandboxd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/sandboxd.conf
	if [ -z "$(DESTDIR)" ]; then systemd-sysusers $(SYSUSERSDIR)/sandboxd.conf && \
	    systemd-tmpfiles --create $(TMPFILESDIR)/sandboxd.conf; fi
	install -m 0755 $(addprefix $(BUILD)/,$(BINARIES)) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(BUILD)/seccomp.bpf $(BUILD)/seccomp-machine.bpf $(DESTDIR)$(LIBDIR)/
	install -m 0644 nspawn/runner/toolrunner.py nspawn/runner/import-allow.list nspawn/images/runtime*.list $(DESTDIR)$(LIBDIR)/
	install -m 0644 docs/openapi.json nspawn/egress/squid.conf.in nspawn/egress/haproxy.cfg.in nspawn/egress/egress-list.lua $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/front/errors
	install -m 0644 cluster/haproxy.cfg $(DESTDIR)$(LIBDIR)/front/haproxy.cfg.in
	install -m 0644 cluster/errors/*.http $(DESTDIR)$(LIBDIR)/front/errors/
	$(INSTALL_SED) cluster/sandboxd-front-setup >$(DESTDIR)$(LIBDIR)/sandboxd-front-setup
	chmod 0755 $(DESTDIR)$(LIBDIR)/sandboxd-front-setup
	$(INSTALL_SED) nspawn/egress/sandboxd-egress-setup >$(DESTDIR)$(LIBDIR)/sandboxd-egress-setup
	chmod 0755 $(DESTDIR)$(LIBDIR)/sandboxd-egress-setup
	install -m 0644 nspawn/runner/passwd nspawn/runner/group $(DESTDIR)$(LIBDIR)/etc/
	for u in $(UNITS); do $(INSTALL_SED) units/$$u >$(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	$(INSTALL_SED) units/sandboxd-host >$(DESTDIR)$(SBINDIR)/sandboxd-host
	$(INSTALL_SED) nspawn/images/sandboxd-image >$(DESTDIR)$(SBINDIR)/sandboxd-image
	chmod 0755 $(DESTDIR)$(SBINDIR)/sandboxd-host $(DESTDIR)$(SBINDIR)/sandboxd-image
	install -m 0755 $(BUILD)/sandboxctl $(DESTDIR)$(SBINDIR)/sandboxctl
	install -m 0644 nspawn/images/demo-agent/* $(DESTDIR)$(DATADIR)/demo-agent/
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/
	for m in $(MANPAGES); do s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
	    install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done
	sed 's/@LISTEN@/$(LISTEN)/' nginx/sandboxd.conf >$(DESTDIR)$(ETCDIR)/nginx.conf
	# The settings are the administrator's once installed: a new install keeps them.
	[ -e $(DESTDIR)$(ETCDIR)/sandboxd.conf ] || install -m 0644 units/sandboxd.conf $(DESTDIR)$(ETCDIR)/sandboxd.conf

# Leaves /etc/sandboxd/sandboxd.conf (the administrator's settings) and the records in /var/lib/sandboxd.
uninstall: stop
	rm -rf $(DESTDIR)$(LIBDIR) $(DESTDIR)$(ETCDIR)/nginx.conf $(DESTDIR)$(SYSUSERSDIR)/sandboxd.conf \
	    $(DESTDIR)$(TMPFILESDIR)/sandboxd.conf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)
	-rmdir $(DESTDIR)$(ETCDIR)/nginx-metrics.d 2>/dev/null
	rm -f $(DESTDIR)$(SBINDIR)/sandboxd-host $(DESTDIR)$(SBINDIR)/sandboxd-image $(DESTDIR)$(SBINDIR)/sandboxctl $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))

# Up on $(LISTEN), then one request to show it works. The images are built the first time (a few
# minutes) and reused after.
run: deps install images
	$(SBINDIR)/sandboxd-host up
	@tests/wait-http $(LISTEN)
	@echo '$$ curl -s -X POST http://$(LISTEN)/v1/execute -H "content-type: application/json" -d '"'"'{"code":"print(2**32)"}'"'"
	@curl -s -X POST http://$(LISTEN)/v1/execute -H 'content-type: application/json' -d '{"code":"print(2**32)"}'

# The machine images: the runtime image every execution runs on (from nspawn/images/runtime.list and
# /etc/sandboxd/runtime.list.d/*.list), and the demo agent for POST /v1/call. Base trees are built
# once per package list and cached; an unchanged image is not rebuilt.
images: install
	$(SBINDIR)/sandboxd-image runtime
	$(SBINDIR)/sandboxd-image build demo-agent nspawn/images/demo-agent

# The Debian package, build/sandboxd_<version>_<arch>.deb, built by Debian's tooling (debian/) in a
# copy of the tree under build/deb, so that debhelper's clean-up and output stay out of the checkout.
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version)
DEB_ARCH    = $(shell dpkg-architecture -q DEB_HOST_ARCH)
DEB_FILE    = build/sandboxd_$(DEB_VERSION)_$(DEB_ARCH).deb
.PHONY: deb
deb:
	rm -rf build/deb build/sandboxd_*.deb
	mkdir -p build/deb/sandboxd
	tar --exclude=./build --exclude=./.git -cf - . | tar -C build/deb/sandboxd -xf -
	cd build/deb/sandboxd && dpkg-buildpackage -b -us -uc
	cp build/deb/sandboxd_$(DEB_VERSION)_$(DEB_ARCH).deb build/
	@if command -v lintian >/dev/null; then lintian --info $(DEB_FILE) || true; fi
	@echo "deb: $(DEB_FILE)"

stop:
	@if [ -x $(SBINDIR)/sandboxd-host ]; then $(SBINDIR)/sandboxd-host down; fi

E2E_SUITES ?= tests/bats
e2e: mcp-clients
	SANDBOXD_URL=http://$(LISTEN) bats $(E2E_SUITES)

# Everything CI runs: dependencies, build, unit tests under sanitizers, the fuzzer, the stack with
# sanitized workers, bats; the stack is taken down whatever happened, and any failure fails it.
# E2E_BEFORE, empty by default, is a command run just before the end-to-end suites: .ci/run waits
# there for the VMs' disks it builds meanwhile, as some suites measure the host's idle CPU (the
# pool's CPU gate holds executions beyond the CPUs while the host is busy).
E2E_BEFORE ?=
test: deps
	$(MAKE) lint
	$(MAKE) mcp-clients
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) fuzz FUZZ_SECONDS=30
	$(MAKE) test-egress-proxy
	$(MAKE) install
	$(MAKE) images
	# The end-to-end suites run against services built with ASan and UBSan, in their hardened units.
	# LeakSanitizer needs ptrace, which those units' system-call filters forbid: leaks are left to
	# the unit tests.
	$(MAKE) SANITIZE=address,undefined install
	for u in $(SANITIZED_UNITS); do mkdir -p /etc/systemd/system/$$u.d && \
	    printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' >/etc/systemd/system/$$u.d/zz-sanitizers.conf; done
	# The sanitizer check reads the journal from before the stack starts: start-up reports count too.
	$(MAKE) stop
	$(E2E_BEFORE)
	since=$$(date +@%s.%6N); status=0; \
	    { $(SBINDIR)/sandboxd-host up && tests/wait-http $(LISTEN) && $(MAKE) e2e; } || status=$$?; \
	    tests/check-sanitizers "$$since" || status=1; $(MAKE) stop || status=$$?; \
	    for u in $(SANITIZED_UNITS); do rm -f /etc/systemd/system/$$u.d/zz-sanitizers.conf; done; \
	    tests/check-down || status=1; exit $$status
	# The package's build skips the unit tests its rules run: they ran above, on this very tree.
	DEB_BUILD_OPTIONS=nocheck $(MAKE) test-deb

# The egress chain on its own (tests/egress/proxy.bats): Debian's Squid with sandboxd's squid.conf
# and helper for tunnels, Debian's HAProxy with sandboxd's haproxy.cfg for plain HTTP, and the
# relay, in network namespaces the suite makes, with hosts of its own for every address it names.
# Some 20 seconds; no stack needed.
.PHONY: test-egress-proxy
test-egress-proxy: $(BUILD)/sandboxd-egress-acl $(BUILD)/sandboxd-egress
	BUILD=$(BUILD) bats tests/egress/proxy.bats

# The Debian package on this host, in place of the /usr/local install: built, installed (a running
# service), the execute suite against it, removed (nothing left running) and purged (no state left),
# by tests/check-deb. Then the /usr/local install and its images are back, the images rebuilt from
# the base trees' cache that check-deb keeps (no download).
.PHONY: test-deb
test-deb: deb
	$(MAKE) uninstall
	status=0; LISTEN=$(LISTEN) tests/check-deb $(DEB_FILE) || status=$$?; \
	    $(MAKE) images || status=1; exit $$status

# The slow suites. test-modes: the end-to-end suites again with a machine per execution
# (SANDBOXD_EXECUTIONS_PER_MACHINE=1, as before machines served several), but for the sessions' (a
# session's machine is its own, whatever that setting); some 12 minutes. test-load (several
# minutes): 1,000 executions at concurrency 16 mixed with timeouts and bombs, on a stack of its
# own, in the default mode. CI runs test-load and the VMs after make test (.ci/run says why not
# test-modes).
SESSION_SUITES := tests/bats/sessions.bats tests/bats/runner-session.bats
MODE_UNITS := sandbox-api.service sandboxd-broker.service sandboxd-poold.service
test-slow: test-modes test-load

.PHONY: test-modes test-load
test-modes: deps
	$(MAKE) install
	for u in $(MODE_UNITS); do mkdir -p /etc/systemd/system/$$u.d && \
	    printf '[Service]\nEnvironment=SANDBOXD_EXECUTIONS_PER_MACHINE=1\n' >/etc/systemd/system/$$u.d/zz-mode.conf; done
	$(MAKE) stop
	$(SBINDIR)/sandboxd-host up
	tests/wait-http $(LISTEN)
	status=0; $(MAKE) e2e E2E_SUITES="$(filter-out $(SESSION_SUITES),$(wildcard tests/bats/*.bats))" || status=$$?; \
	    $(MAKE) stop || status=$$?; \
	    for u in $(MODE_UNITS); do rm -f /etc/systemd/system/$$u.d/zz-mode.conf; done; \
	    tests/check-down || status=1; exit $$status

# A session run of 10 minutes streamed through nginx to its end (tests/stream-long), on a stack of
# its own; CI runs it beside the VMs, as it mostly waits.
.PHONY: test-stream-long
# Several hosts on this one: three members, each a whole stack in a network namespace of its own
# with its own private systemd; three etcd; HAProxy and the watcher in front (tests/cluster). About
# N minutes; nothing of the host's own stack may run meanwhile (it is stopped first).
test-cluster: deps
	$(MAKE) install
	$(MAKE) images
	$(MAKE) stop
	status=0; SANDBOXD_FRONT_WATCH=$(LIBDIR)/sandboxd-front-watch bats tests/cluster/cluster.bats || status=$$?; \
	    tests/cluster/down-all || status=1; tests/check-down || status=1; exit $$status

test-stream-long: deps
	$(MAKE) install
	$(MAKE) stop
	$(SBINDIR)/sandboxd-host up
	tests/wait-http $(LISTEN)
	status=0; SANDBOXD_URL=http://$(LISTEN) tests/stream-long || status=$$?; $(MAKE) stop || status=$$?; \
	    tests/check-down || status=1; exit $$status

test-load: deps
	$(MAKE) install
	$(MAKE) stop
	$(SBINDIR)/sandboxd-host up
	tests/wait-http $(LISTEN)
	status=0; tests/load/load.py --url http://$(LISTEN) || status=$$?; $(MAKE) stop || status=$$?; \
	    tests/check-down || status=1; exit $$status

# sandboxd on Debian DIST (bookworm or trixie) as administrators have it, systemd as PID 1 and
# cgroup v2, in a qemu VM with no network: its disk built from Debian packages with this tree's
# `make deps` and `make deb`, then inside, the package installed, end-to-end suites, a reboot,
# remove and purge (tests/vm/run). KVM where it runs a guest, software emulation otherwise.
VM_PACKAGES := qemu-system-x86 mmdebstrap e2fsprogs util-linux
.PHONY: vm-deps test-vm test-vms
vm-deps:
	@dpkg-query -W -f='$${Status}\n' $(VM_PACKAGES) 2>/dev/null | grep -c 'install ok installed' | grep -qx $(words $(VM_PACKAGES)) || \
	    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(VM_PACKAGES); }

test-vm: vm-deps
	@case "$(DIST)" in bookworm | trixie) ;; *) echo "usage: make test-vm DIST=bookworm|trixie" >&2; exit 2 ;; esac
	tests/vm/run $(DIST)

# Both releases at once, as CI runs them (tests/vm/run-all).
test-vms: vm-deps
	tests/vm/run-all bookworm trixie

# Static checks, before anything is built: shellcheck, every header on its own, clang-format, the
# API's description.
lint: shellcheck bats-lint hdr-check style openapi-check openapi-client man-check tidy

# The manual pages, by groff with every warning (a misspelt macro, a bad escape) an error.
man-check:
	@for m in docs/man/*.[0-9]; do out=$$(groff -man -ww -z "$$m" 2>&1) && [ -z "$$out" ] || \
		{ printf '%s\n' "$$out"; echo "man-check: $$m has roff errors" >&2; exit 1; }; done
	@echo "man-check: docs/man is clean"

# docs/openapi.json, the API's one description (served as GET /v1/openapi.json, and what the bats
# suites check every response against), by an OpenAPI 3.1 validator: Debian has none for 3.1, so
# one from npm, at a fixed version, installed under build/ with the machine's node and npm. Then its
# schemas as JSON Schema 2020-12, which the OpenAPI meta-schema leaves unchecked, and its $refs.
OPENAPI_VALIDATOR := @seriousme/openapi-schema-validator@2.11.0
OPENAPI_VALIDATE  := build/npm/node_modules/.bin/validate-api

build/npm/.installed-$(subst /,_,$(OPENAPI_VALIDATOR)):
	@mkdir -p build/npm
	npm install --prefix build/npm --no-audit --no-fund --no-save $(OPENAPI_VALIDATOR)
	touch $@

openapi-check: build/npm/.installed-$(subst /,_,$(OPENAPI_VALIDATOR))
	@$(OPENAPI_VALIDATE) docs/openapi.json >build/openapi-check.out || { cat build/openapi-check.out; \
		echo "openapi-check: docs/openapi.json is not a valid OpenAPI 3.1 document" >&2; exit 1; }
	tests/bats/openapi-check.py --document
	@echo "openapi-check: docs/openapi.json is valid OpenAPI 3.1"

# A client generated from docs/openapi.json the way a caller would make one (openapi-typescript, then
# openapi-fetch), compiled with the document's types: tests/openapi-client/client.ts uses the
# fields a caller reads, so a document that lacks one fails here. The end-to-end suites run it
# against the service (openapi.bats). Pinned versions, from npm, under build/.
OPENAPI_CLIENT := build/openapi-client

$(OPENAPI_CLIENT)/.installed: tests/openapi-client/package.json
	@mkdir -p $(OPENAPI_CLIENT)
	cp tests/openapi-client/package.json $(OPENAPI_CLIENT)/
	npm install --prefix $(OPENAPI_CLIENT) --no-audit --no-fund
	touch $@

openapi-client: $(OPENAPI_CLIENT)/.installed
	cp tests/openapi-client/client.ts tests/openapi-client/tsconfig.json $(OPENAPI_CLIENT)/
	$(OPENAPI_CLIENT)/node_modules/.bin/openapi-typescript docs/openapi.json -o $(OPENAPI_CLIENT)/sandboxd.d.ts
	$(OPENAPI_CLIENT)/node_modules/.bin/tsc -p $(OPENAPI_CLIENT)
	@echo "openapi-client: a client generated from docs/openapi.json compiles"

# MCP clients nobody here wrote, which tests/bats/mcp-clients.bats runs against /mcp: the official
# TypeScript SDK, whose Client tests/mcp/client.js drives, and the protocol's conformance suite
# (tests/mcp/conformance). Pinned in tests/mcp/package.json, from npm, under build/ with the
# machine's node and npm. The conformance suite runs on node 20.18.1 or later (Debian 13's, not
# Debian 12's 18); its later versions than the pinned one need node 22.
MCP_CLIENTS := build/npm-mcp

$(MCP_CLIENTS)/.installed: tests/mcp/package.json
	@mkdir -p $(MCP_CLIENTS)
	cp tests/mcp/package.json $(MCP_CLIENTS)/
	npm install --prefix $(MCP_CLIENTS) --no-audit --no-fund
	touch $@

mcp-clients: $(MCP_CLIENTS)/.installed

# Every shell script in the tree (by its first line) and the bats suites with their helpers.
SHELL_SCRIPTS = $(shell git ls-files --cached --others --exclude-standard | while read -r f; do \
	case "$$(head -c 64 "$$f" 2>/dev/null | head -n 1)" in ('#!'*sh|'#!'*bats) echo "$$f";; esac; done) \
	$(wildcard tests/bats/*.bash)

shellcheck:
	shellcheck -x $(SHELL_SCRIPTS)

# No bats check that cannot fail: "a && b" on a line that is not a test's last ignores a's failure.
# The checker first proves on its sample that it flags exactly the lines marked BAD there.
.PHONY: bats-lint
bats-lint:
	@want=$$(awk '/^ *# BAD$$/ { printf "%d ", NR + 1 }' tests/lint/andand-sample.bats); \
	    got=$$(tests/lint/bats-andand tests/lint/andand-sample.bats | cut -d: -f2 | tr '\n' ' '); \
	    [ -n "$$want" ] && [ "$$got" = "$$want" ] || { echo "bats-lint: the checker flagged lines '$$got' of its sample, not '$$want'" >&2; exit 1; }
	tests/lint/bats-andand tests/bats/*.bats tests/egress/*.bats tests/cluster/*.bats

# clang-format on the C lines changed since STYLE_BASE: by default where this branch left main (on
# main itself, what is not committed yet). Not the whole tree: it is not clang-format clean as it
# stands, and reformatting it is a change of its own. git clang-format --diff exits 0 whatever it
# finds (clang-format 14): a diff in its output is the failure.
STYLE_BASE ?= $(shell git merge-base HEAD main 2>/dev/null || echo HEAD)

style:
	@out=$$(git clang-format --extensions c,h --diff $(STYLE_BASE)) || exit 1; \
	if printf '%s\n' "$$out" | grep -q '^diff '; then \
		printf '%s\n' "$$out"; echo "style: clang-format would change the lines above" >&2; exit 1; \
	fi; echo "style: $$out (since $(STYLE_BASE))"

# One clang-tidy per file: given several, clang-tidy 14's va_list checker loses track of va_start
# after the first file and reports every later va_list as uninitialized. Each file its own target
# also lets make -j check them side by side.
TIDY_FILES := $(addprefix tidy/,$(SRCS))
tidy: $(TIDY_FILES)
.PHONY: $(TIDY_FILES)
$(TIDY_FILES): tidy/%:
	@clang-tidy --quiet $* -- $(ALL_CFLAGS)

hdr-check:
	@for h in $$(git ls-files '*.h'); do \
		echo "#include \"$$h\"" | $(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -x c -fsyntax-only - || exit 1; done

clean:
	rm -rf build

-include $(patsubst %.c,$(BUILD)/%.d,$(SRCS) nspawn/runner/seccomp-gen.c $(wildcard tests/unit/test-*.c) tests/bus/wait-gone.c)
-include $(patsubst %.c,$(BUILD)/zygote/%.d,$(ZYGOTE_SRCS))
