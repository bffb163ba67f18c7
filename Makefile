# SPDX-License-Identifier: MIT
# sandboxd. `make run` brings the service up on $(LISTEN), `make test` runs every test.

LISTEN  ?= 127.0.0.1:8080
PREFIX  ?= /usr/local
LIBDIR  := $(PREFIX)/lib/sandboxd
UNITDIR := $(PREFIX)/lib/systemd/system
SBINDIR := $(PREFIX)/sbin
SYSUSERSDIR := $(PREFIX)/lib/sysusers.d
ETCDIR  := /etc/sandboxd
SANITIZER_DROPIN_DIR := /etc/systemd/system/sandbox-api.service.d

# Debian packages the build, the service and the tests need.
DEB_PACKAGES := gcc make pkg-config libc6-dev libfcgi-dev libjson-c-dev libsystemd-dev libsqlite3-dev \
                systemd systemd-container dbus nginx-light python3 sqlite3 util-linux \
                bats jq curl bubblewrap mmdebstrap clang libclang-rt-14-dev libseccomp-dev \
                procps shellcheck clang-format

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
           -Wpointer-arith -Wundef -Wwrite-strings -Wvla -Wimplicit-fallthrough \
           -Wno-missing-field-initializers
HARDEN  := -fno-common -fstack-protector-strong -D_FORTIFY_SOURCE=3
CFLAGS  ?= -O2 -g
BUILD   := build
PKGS    := libsystemd json-c sqlite3
ifdef SANITIZE
BUILD   := build/san
HARDEN  := -fno-common
CFLAGS  := -O1 -g -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -I. -Ifcgi -MMD -MP $(WARN) $(HARDEN) $(CFLAGS) \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lfcgi

# Pure modules: unit-tested, no bus, no journal.
PURE_SRCS := fcgi/b64.c fcgi/utf8.c fcgi/validate.c fcgi/config.c fcgi/route.c fcgi/broker-proto.c fcgi/fd-util.c \
             nspawn/unit-name.c nspawn/nspawn-argv.c
SRCS      := $(PURE_SRCS) fcgi/main.c fcgi/log.c fcgi/request.c fcgi/reply.c fcgi/route-execute.c \
             fcgi/route-pool.c fcgi/route-call.c fcgi/poold.c fcgi/broker.c fcgi/broker-client.c nspawn/sandbox.c nspawn/pool.c db/db.c db/requests.c db/pool.c
OBJS      := $(SRCS:%.c=$(BUILD)/%.o)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test-*.c))

.PHONY: all deps unit check-unit e2e test test-slow install uninstall run stop clean lint shellcheck style tidy hdr-check \
        images fuzz

all: $(BUILD)/sandboxd-fcgi $(BUILD)/sandboxd-runner $(BUILD)/seccomp.bpf

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/db/db.o: db/schema.sql

$(BUILD)/sandboxd-fcgi: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# The runner inside warm sandboxes: json-c and libc only (it runs on the host's /usr, read-only).
$(BUILD)/sandboxd-runner: $(BUILD)/nspawn/runner/runner.o $(BUILD)/fcgi/b64.o $(BUILD)/fcgi/fd-util.o
	$(CC) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs json-c 2>/dev/null)

# The warm sandboxes' system-call filter, compiled once here rather than by nspawn in each sandbox.
$(BUILD)/seccomp-gen: nspawn/runner/seccomp-gen.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -lseccomp

$(BUILD)/seccomp.bpf: $(BUILD)/seccomp-gen nspawn/runner/seccomp-allow nspawn/runner/seccomp-expand
	nspawn/runner/seccomp-expand nspawn/runner/seccomp-allow >$(BUILD)/seccomp-allow.txt
	$(BUILD)/seccomp-gen $(BUILD)/seccomp-allow.txt $@

# Unit tests link the module under test and the pure modules; db tests also link db/ (in memory).
$(BUILD)/tests/test-%: tests/unit/test-%.c $(PURE_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/db/db.o $(BUILD)/db/requests.o $(BUILD)/db/pool.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

deps:
	@if ! dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | grep -qv 'install ok installed' && \
	    [ "$$(dpkg-query -W -f='$${Status}\n' $(DEB_PACKAGES) 2>/dev/null | wc -l)" -eq "$(words $(DEB_PACKAGES))" ]; then \
		echo "deps: all Debian packages present"; \
	else \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(DEB_PACKAGES); \
	fi

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
FUZZ_SRCS    := tests/fuzz/fuzz-request.c fcgi/validate.c fcgi/b64.c fcgi/utf8.c fcgi/broker-proto.c

build/fuzz/fuzz-request: $(FUZZ_SRCS) fcgi/validate.h fcgi/b64.h fcgi/utf8.h fcgi/messages.h fcgi/macro.h fcgi/broker-proto.h
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 -std=gnu11 -D_GNU_SOURCE \
	    -I. -Ifcgi $(WARN) $(shell pkg-config --cflags json-c) -o $@ $(FUZZ_SRCS) $(shell pkg-config --libs json-c)

fuzz: build/fuzz/fuzz-request
	@mkdir -p build/fuzz/corpus
	cp tests/fuzz/corpus/* build/fuzz/corpus/
	build/fuzz/fuzz-request -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz/ build/fuzz/corpus tests/fuzz/corpus

install: all
	install -d $(DESTDIR)$(LIBDIR)/etc $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(ETCDIR) $(DESTDIR)/var/lib/sandboxd \
	    $(DESTDIR)$(SYSUSERSDIR)
	install -m 0644 units/sandboxd.sysusers $(DESTDIR)$(SYSUSERSDIR)/sandboxd.conf
	if [ -z "$(DESTDIR)" ]; then \
		systemd-sysusers $(SYSUSERSDIR)/sandboxd.conf && \
		install -d -o sandboxd -g sandboxd -m 0700 /var/lib/sandboxd/db && \
		if [ -e /var/lib/sandboxd/sandboxd.db ] && [ ! -e /var/lib/sandboxd/db/sandboxd.db ]; then \
			mv /var/lib/sandboxd/sandboxd.db* /var/lib/sandboxd/db/; \
		fi; \
		chown -R sandboxd:sandboxd /var/lib/sandboxd/db; \
	fi
	install -m 0755 $(BUILD)/sandboxd-fcgi $(BUILD)/sandboxd-runner $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(BUILD)/seccomp.bpf $(DESTDIR)$(LIBDIR)/
	rm -f $(DESTDIR)$(LIBDIR)/runner.py
	install -m 0644 nspawn/runner/toolrunner.py $(DESTDIR)$(LIBDIR)/
	install -m 0644 nspawn/runner/passwd nspawn/runner/group $(DESTDIR)$(LIBDIR)/etc/
	install -m 0644 units/sandboxd.target units/sandbox.slice units/sandbox-api.socket \
	    units/sandbox-api.service units/sandboxd-nginx.service $(DESTDIR)$(UNITDIR)/
	install -m 0755 units/sandboxd-host $(DESTDIR)$(SBINDIR)/sandboxd-host
	install -m 0755 nspawn/images/sandboxd-image $(DESTDIR)$(SBINDIR)/sandboxd-image
	sed 's/@LISTEN@/$(LISTEN)/' nginx/sandboxd.conf >$(DESTDIR)$(ETCDIR)/nginx.conf

uninstall: stop
	rm -rf $(DESTDIR)$(LIBDIR) $(DESTDIR)$(ETCDIR)/nginx.conf $(DESTDIR)$(SBINDIR)/sandboxd-host $(DESTDIR)$(SYSUSERSDIR)/sandboxd.conf
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,sandboxd.target sandbox.slice sandbox-api.socket sandbox-api.service sandboxd-nginx.service)

# Up on $(LISTEN), then one request to show it works.
run: deps install
	$(SBINDIR)/sandboxd-host up
	@tests/wait-http $(LISTEN)
	@echo '$$ curl -s -X POST http://$(LISTEN)/v1/execute -H "content-type: application/json" -d '"'"'{"code":"print(2**32)"}'"'"
	@curl -s -X POST http://$(LISTEN)/v1/execute -H 'content-type: application/json' -d '{"code":"print(2**32)"}'

# Machine images for POST /v1/call: the demo agent (the base tree is built once and cached).
images: install
	$(SBINDIR)/sandboxd-image build demo-agent nspawn/images/demo-agent

stop:
	@if [ -x $(SBINDIR)/sandboxd-host ]; then $(SBINDIR)/sandboxd-host down; fi

e2e:
	SANDBOXD_URL=http://$(LISTEN) bats tests/bats

# Everything CI runs: dependencies, build, unit tests under sanitizers, the fuzzer, the stack with
# sanitized workers, bats; the stack is taken down whatever happened, and any failure fails it.
test: deps
	$(MAKE) lint
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) fuzz FUZZ_SECONDS=30
	$(MAKE) install
	$(MAKE) images
	# The end-to-end suites run against workers built with ASan and UBSan, in their hardened unit.
	# LeakSanitizer needs ptrace, which that unit's system-call filter forbids: leaks are left to
	# the unit tests.
	$(MAKE) SANITIZE=address,undefined install
	mkdir -p $(SANITIZER_DROPIN_DIR)
	printf '[Service]\nEnvironment=ASAN_OPTIONS=detect_leaks=0\n' >$(SANITIZER_DROPIN_DIR)/zz-sanitizers.conf
	# The sanitizer check reads the journal from before the stack starts: start-up reports count too.
	$(MAKE) stop
	since=$$(date +@%s.%6N); status=0; \
	    { $(SBINDIR)/sandboxd-host up && tests/wait-http $(LISTEN) && $(MAKE) e2e; } || status=$$?; \
	    tests/check-sanitizers "$$since" || status=1; $(MAKE) stop || status=$$?; \
	    rm -f $(SANITIZER_DROPIN_DIR)/zz-sanitizers.conf; tests/check-down || status=1; exit $$status

# The load test (several minutes): 1,000 executions at concurrency 16 mixed with timeouts and
# bombs, on a stack of its own. CI runs it after make test.
test-slow: deps
	$(MAKE) install
	$(MAKE) stop
	$(SBINDIR)/sandboxd-host up
	tests/wait-http $(LISTEN)
	status=0; tests/load/load.py --url http://$(LISTEN) || status=$$?; $(MAKE) stop || status=$$?; \
	    tests/check-down || status=1; exit $$status

# Static checks, before anything is built: shellcheck, every header on its own, clang-format.
lint: shellcheck hdr-check style

# Every shell script in the tree (by its first line) and the bats suites with their helpers.
SHELL_SCRIPTS = $(shell git ls-files --cached --others --exclude-standard | while read -r f; do \
	case "$$(head -c 64 "$$f" 2>/dev/null | head -n 1)" in ('#!'*sh|'#!'*bats) echo "$$f";; esac; done) \
	$(wildcard tests/bats/*.bash)

shellcheck:
	shellcheck -x $(SHELL_SCRIPTS)

# clang-format on the C lines changed since STYLE_BASE: by default where this branch left main (on
# main itself, what is not committed yet). Not the whole tree: it is not clang-format clean as it
# stands, and reformatting it is a change of its own. git clang-format --diff exits 0 whatever it
# finds (clang-format 14): a diff in its output is the failure.
STYLE_BASE ?= $(shell git merge-base HEAD main 2>/dev/null || echo HEAD)

style:
	@out=$$(git clang-format --diff $(STYLE_BASE)) || exit 1; \
	if printf '%s\n' "$$out" | grep -q '^diff '; then \
		printf '%s\n' "$$out"; echo "style: clang-format would change the lines above" >&2; exit 1; \
	fi; echo "style: $$out (since $(STYLE_BASE))"

tidy:
	clang-tidy $(SRCS) -- $(ALL_CFLAGS)

hdr-check:
	@for h in fcgi/*.h nspawn/*.h db/*.h; do \
		echo "#include \"$$h\"" | $(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -x c -fsyntax-only - || exit 1; done

clean:
	rm -rf build

-include $(OBJS:.o=.d)
