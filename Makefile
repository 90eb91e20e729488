# needle — see README.md. Targets: all (build/needle), check, test, bench, install,
# clean, test-vllm, bench-peers.

CC       ?= cc
CXX      ?= g++
PREFIX   ?= /usr/local
BUILD    ?= build
VERSION  := 0.1.0
# The build's identity: the commit it was built from (`git describe`, "-dirty"
# with uncommitted changes), or the version number outside a git checkout.
DESCRIBE := $(or $(shell git describe --always --dirty 2>/dev/null),$(VERSION))

PKGS     := libcurl libcjson libpcre2-8 libpng openssl sentencepiece libutf8proc
OPT      ?= -O2 -g
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
DEFS     := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DNEEDLE_VERSION='"$(VERSION)"'
INCS     := -Iharness -I.
CFLAGS   += -std=c11 $(OPT) $(WARN) $(DEFS) $(INCS) $(SAN)
CXXFLAGS += -std=c++17 $(OPT) $(WARN) $(DEFS) $(INCS) $(SAN)
LDLIBS   += $(PKGLIBS) -lstdc++ -lm

# Resolved lazily: pkg-config exists only once the set-up step has run.
# libcurl and OpenSSL are compiled against but not linked: harness/net/curlapi.c
# loads libcurl at the first HTTP request and harness/base/io.c libcrypto at the
# first SHA-256 (or the first template integer beyond 64 bits, jinja_bigint),
# so the commands that need neither do not pay for mapping them. The unit tests call OpenSSL themselves and link it.
PKGCFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKGLIBS   = $(shell pkg-config --libs $(filter-out libcurl openssl,$(PKGS)) 2>/dev/null)
SSLLIBS   = $(shell pkg-config --libs openssl 2>/dev/null)

CSRC     := $(wildcard harness/*/*.c generators/*.c)
CXXSRC   := $(wildcard harness/*/*.cc)
OBJ      := $(CSRC:%.c=$(BUILD)/obj/%.o) $(CXXSRC:%.cc=$(BUILD)/obj/%.o) \
            $(BUILD)/obj/gen/embedded.o $(BUILD)/obj/gen/version.o
LIBOBJ   := $(filter-out $(BUILD)/obj/harness/cli/%,$(OBJ))
CLIOBJ   := $(filter $(BUILD)/obj/harness/cli/%,$(OBJ))
EMBEDDED := $(wildcard fixtures/templates/* generators/data/* docs/*.md)
UNITSRC  := $(wildcard tests/unit/test_*.c)
UNITBIN  := $(UNITSRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPSTAMP := $(BUILD)/.deps-system

.PHONY: all check test bench install clean deps deps-test deps-slurm asan demo fuzz test-vllm bench-peers FORCE
all: $(BUILD)/needle

# The set-up step: installs Debian packages (as root) or says what to run.
$(DEPSTAMP): tests/setup.sh
	sh tests/setup.sh system
	@mkdir -p $(@D) && touch $@
deps: $(DEPSTAMP)
deps-test: $(DEPSTAMP)
	sh tests/setup.sh npm
	sh tests/setup.sh py $(BUILD)/venv-py
	sh tests/setup.sh consumers
# Slurm and MUNGE for tests/cli/slurm.sh (a private single-node cluster).
deps-slurm: $(DEPSTAMP)
	sh tests/setup.sh slurm

$(BUILD)/obj/%.o: %.c | $(DEPSTAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKGCFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/%.o: %.cc | $(DEPSTAMP)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(PKGCFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/gen/embedded.c: tests/embed.sh $(EMBEDDED)
	@mkdir -p $(@D)
	sh tests/embed.sh templates=fixtures/templates data=generators/data docs=docs > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@
# Rewritten only when the commit changed, so a build of the same tree relinks
# nothing (base/version.h).
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(@D)
	@printf 'const char version_describe[] = "%s";\n' '$(DESCRIBE)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/gen/version.o: $(BUILD)/gen/version.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

# Only the tool (harness/cli/) prints or exits: the library is not built while
# one of its objects references a symbol that writes to the terminal or ends
# the process (fortified builds call the __*_chk twins; gcc turns a printf of
# a constant into puts or putchar). Writing to a FILE the caller passes in
# (fwrite, fputs) is the caller's choice and allowed.
LIBBANNED := printf vprintf fprintf vfprintf puts putchar exit _exit _Exit \
             stdout stderr __printf_chk __vprintf_chk __fprintf_chk __vfprintf_chk \
             _ZSt4cout _ZSt4cerr
$(BUILD)/libneedle.a: $(LIBOBJ)
	@nm -uA $^ | awk -v banned="$(LIBBANNED)" \
		'BEGIN { n = split(banned, b, " "); for (i = 1; i <= n; i++) ban[b[i]] = 1 } \
		 ($$NF in ban) { sub(/:$$/, "", $$1); bad = 1; \
			print "error: library object " $$1 " references " $$NF ": only harness/cli/ prints or exits" } \
		 END { exit bad }' >&2
	rm -f $@ && ar rcs $@ $^
$(BUILD)/needle: $(CLIOBJ) $(BUILD)/libneedle.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/libneedle-cli.a: $(filter-out $(BUILD)/obj/harness/cli/main.o,$(CLIOBJ))
	rm -f $@ && ar rcs $@ $^
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libneedle.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKGCFLAGS) -Itests/unit -o $@ $< $(BUILD)/libneedle.a $(LDLIBS) $(SSLLIBS)
# The tool's own parts (option tables, the live line) are tested beside the
# library, not in it.
$(BUILD)/tests/test_cli $(BUILD)/tests/test_progress: $(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libneedle-cli.a $(BUILD)/libneedle.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKGCFLAGS) -Itests/unit -o $@ $< $(BUILD)/libneedle-cli.a $(BUILD)/libneedle.a $(LDLIBS) $(SSLLIBS)

# The quick layer (docs/testing.md): the unit tests and the CLI tests not
# marked "# slow:", with what `make demo` installs and nothing more.
check: all $(UNITBIN) deps-test
	sh tests/run.sh --fast $(BUILD)

# Every layer: unit tests, CLI tests, end-to-end tests against the loopback
# reference server (and a private Slurm), then the unit tests again under
# ASan/UBSan.
test: all $(UNITBIN) deps-test deps-slurm asan
	sh tests/run.sh $(BUILD) $(BUILD)/asan

# The sub-make shares this build's set-up stamp, so `make -j` never runs two
# apt-get at once.
asan: $(DEPSTAMP)
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan DEPSTAMP=$(DEPSTAMP) OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		$(BUILD)/asan/needle $(UNITBIN:$(BUILD)/%=$(BUILD)/asan/%)

# libFuzzer runs of tests/fuzz/fuzz_*.c, FUZZ_SECONDS each, with a clang
# ASan/UBSan build of the library in $(BUILD)/fuzz (`make test` replays the
# same targets with gcc through tests/cli/fuzz.sh).
FUZZ_SECONDS ?= 60
fuzz:
	sh tests/setup.sh fuzz
	$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=clang CXX=clang++ OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		$(BUILD)/fuzz/libneedle.a $(BUILD)/fuzz/libneedle-cli.a
	sh tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

bench: all deps-test
	sh tests/bench/run.sh $(BUILD)

demo: all deps-test
	sh tests/demo.sh $(BUILD)

# needle against the real vLLM (its CPU build, random weights) on loopback,
# installed into $(BUILD)/venv-vllm on first use (docs/vllm.md);
# bench-peers puts the peers' bench clients beside needle on the same
# server. Neither is part of `make test`.
test-vllm: all deps-test
	env NEEDLE=$(abspath $(BUILD))/needle BUILD=$(abspath $(BUILD)) TESTS=$(CURDIR)/tests \
		sh tests/vllm/run.sh
bench-peers: all deps-test
	env NEEDLE=$(abspath $(BUILD))/needle BUILD=$(abspath $(BUILD)) TESTS=$(CURDIR)/tests \
		sh tests/vllm/peers.sh

# The binary, the shipped suites (where the installed binary looks for them,
# harness/cli/shipped.h), the Grafana dashboard, the manual page and shell completion, the last two
# rendered by the binary from its own option tables.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/needle/suites \
		$(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BUILD)/needle $(DESTDIR)$(PREFIX)/bin/needle
	install -m 644 suites/*.json $(DESTDIR)$(PREFIX)/share/needle/suites/
	install -d $(DESTDIR)$(PREFIX)/share/needle/dashboards
	install -m 644 dashboards/*.json $(DESTDIR)$(PREFIX)/share/needle/dashboards/
	$(BUILD)/needle man > $(DESTDIR)$(PREFIX)/share/man/man1/needle.1
	$(BUILD)/needle completion bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/needle
	$(BUILD)/needle completion zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_needle

clean:
	rm -rf $(BUILD)

-include $(OBJ:.o=.d)
