# Makefile: builds libhogtrain.a, the hogtrain command, the tools, the tests and the benchmarks.
# SPDX-License-Identifier: BSD-2-Clause
#
# `make help` lists the targets. Build folders: build/ (normal), build-asan/,
# build-tsan/. CFLAGS from the command line are honoured; the flags hogtrain
# needs are added with `override`, so they cannot be dropped by accident.

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
CFLAGS  ?= -O2 -g
SANITIZE ?=
# On x86-64 the code is built for x86-64-v2 (SSSE3, SSE4.2, POPCNT: Intel
# since Nehalem, AMD since Bulldozer): the libsvm parser gathers digits with
# pshufb. ARCH= builds for the plain x86-64 baseline (an SSE2 parser path;
# `make asan` tests that one).
ifeq ($(shell uname -m),x86_64)
ARCH    ?= -march=x86-64-v2
endif

VERSION_MAJOR := $(shell sed -n 's/^\#define HOG_VERSION_MAJOR \([0-9]*\)/\1/p' include/hogtrain.h)
VERSION_MINOR := $(shell sed -n 's/^\#define HOG_VERSION_MINOR \([0-9]*\)/\1/p' include/hogtrain.h)
VERSION_PATCH := $(shell sed -n 's/^\#define HOG_VERSION_PATCH \([0-9]*\)/\1/p' include/hogtrain.h)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
        -Wformat=2 -Wdouble-promotion
ifeq ($(CI),true)
WARN += -Werror
endif

override CFLAGS += $(ARCH) -std=c11 -D_GNU_SOURCE -pthread -Iinclude $(WARN) -MMD -MP
# What the library needs (hogtrain.pc's Libs.private), and what our own
# programs link besides: jemalloc replaces the allocator of the whole
# process, a choice for the command to make, never for a program that links
# the library.
LDLIBS_DEPS := -lopenblas -lhwloc -luring -lzmq -lzstd -lz -lm -pthread
ifeq ($(SANITIZE),)
ALLOC_LIB := -ljemalloc
else
override CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
override LDFLAGS += -fsanitize=$(SANITIZE)
ALLOC_LIB :=
endif
LDLIBS := $(LDLIBS_DEPS) $(ALLOC_LIB)
# ALLOC_FAULTS=1 (make asan, make alloc-faults) compiles in the allocation
# failures on demand of src/util/util_alloc.c and routes every malloc, calloc,
# realloc and posix_memalign of our objects through them; never in a release.
ifneq ($(ALLOC_FAULTS),)
override CFLAGS += -DHOG_ALLOC_FAULTS
override LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign
endif

LIB_SRC  := $(wildcard src/util/*.c src/etl/*.c src/pool/*.c src/net/*.c src/train/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
TOOL_SRC := $(wildcard tools/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
RACE_SRC := $(wildcard tests/race_*.c)
BENCH_SRC := $(wildcard bench/*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
# The shared library is built from a second set of objects, position
# independent and with every symbol hidden but the public header's (its
# declarations carry default visibility); a version script exports hog_*
# only. Its soname carries the major version: a program linked to it keeps
# working with every later library of that major version.
PIC_OBJ  := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
SONAME   := libhogtrain.so.$(VERSION_MAJOR)
SHLIB    := $(BUILD)/libhogtrain.so.$(VERSION)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libhogtrain.a
BIN      := $(BUILD)/hogtrain
TOOLS    := $(TOOL_SRC:tools/%.c=$(BUILD)/tools/%)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
RACES    := $(RACE_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
QUICK_TESTS := $(filter-out $(BUILD)/tests/test_accuracy $(BUILD)/tests/test_cli,$(TESTS))

.PHONY: all deps test python-test check check-layers asan alloc-faults tsan fuzz bench bench-tools bench-check demo install \
	uninstall clean help symbols tools man install-docs uninstall-docs

## all: build libhogtrain.a, libhogtrain.so, the hogtrain command and the tools (the default)
all: $(LIB) $(SHLIB) $(BIN) tools

tools: $(TOOLS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/libhogtrain.map: Makefile
	@mkdir -p $(@D)
	@printf '%s\n' 'HOGTRAIN_$(VERSION_MAJOR) {' '    global: hog_*;' '    local: *;' '};' > $@

# Linked with its dependencies and -z defs, so that a program needs
# nothing but -lhogtrain; jemalloc is not one of them (see LDLIBS_DEPS).
$(SHLIB): $(PIC_OBJ) $(BUILD)/libhogtrain.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(SONAME) -Wl,--version-script,$(BUILD)/libhogtrain.map -Wl,-z,defs \
	    -o $@ $(PIC_OBJ) $(LDLIBS_DEPS)
	ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libhogtrain.so

# The command uses only include/hogtrain.h, as any program linking the
# library would: make check-layers checks its includes, flags and calls.
$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

# Tools, tests and benchmarks are compiled and linked in one step; DEPFLAGS
# writes the headers each includes into BINARY.d, so editing one rebuilds
# the programs that use it.
DEPFLAGS = -MF $@.d -MT $@

$(BUILD)/tools/%: tools/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/test_%: tests/test_%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Isrc $(LDFLAGS) -o $@ $< $(LIB) -lcriterion $(LDLIBS)

# Stress programs in plain C: ThreadSanitizer cannot run under Criterion.
$(BUILD)/tests/race_%: tests/race_%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The benchmark programs may use the private headers (and tests/deny_io.h).
$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Isrc -Itests $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

## deps: install the Debian packages hogtrain needs (does nothing when they are present)
deps:
	@sh tools/install-deps.sh

## test: install what is missing, build, and run every test (unit, end to end, accuracy, the layer check, the bench harness)
test: deps
	@$(MAKE) --no-print-directory all $(TESTS) $(BENCH_BIN) symbols check-layers
	@sh tests/run-tests.sh $(BUILD) $(TESTS) tests/check-layers-test.sh tests/nodes-test.sh \
	    tests/crash-test.sh tests/faults-test.sh tests/checkpoint-test.sh tests/stream-test.sh tests/docs-test.sh \
	    tests/predict-test.sh \
	    tests/embed-test.sh tests/python-test.sh tests/pip-test.sh
	@sh bench/check.sh $(BUILD)

## python-test: build, then run the Python package's tests (python/tests, pytest) against build/libhogtrain.so
python-test: all
	@sh tests/run-tests.sh $(BUILD) tests/python-test.sh

## check: build and run the quick unit tests only
check:
	@$(MAKE) --no-print-directory all $(QUICK_TESTS)
	@sh tests/run-tests.sh $(BUILD) $(QUICK_TESTS)

## asan: build in build-asan/ with AddressSanitizer and UBSan, for the x86-64 baseline (ARCH=), and run the tests and the allocation failures
ASAN_VARS := BUILD=build-asan SANITIZE=address,undefined ARCH= ALLOC_FAULTS=1
asan: deps
	@$(MAKE) --no-print-directory $(ASAN_VARS) all
	@$(MAKE) --no-print-directory $(ASAN_VARS) $(TEST_SRC:tests/%.c=build-asan/tests/%)
	@sh tests/run-tests.sh build-asan $(TEST_SRC:tests/%.c=build-asan/tests/%) tests/alloc-fail-test.sh

## alloc-faults: build in build-asan/ (as make asan does) and make each allocation of convert, train, predict and info fail in turn
alloc-faults: deps
	@$(MAKE) --no-print-directory $(ASAN_VARS) all
	@sh tests/run-tests.sh build-asan tests/alloc-fail-test.sh

## tsan: build in build-tsan/ with ThreadSanitizer and run the multi-threaded stress programs
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build-tsan SANITIZE=thread all $(RACE_SRC:tests/%.c=build-tsan/tests/%)
	@set -e; for t in $(RACE_SRC:tests/%.c=build-tsan/tests/%); do TSAN_OPTIONS=halt_on_error=1 $$t; done
	@TSAN_OPTIONS=halt_on_error=1 build-tsan/tests/race_hogwild two-nodes

## fuzz: build the fuzz targets (text parsers and reader, binary dataset, model and ratings readers, frame decoder) with clang's libFuzzer and run each for FUZZ_SECONDS (20)
FUZZ_SECONDS ?= 20
fuzz: deps
	@sh tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS)

## check-layers: fail if a file of src/ includes or calls across the layer rules of CONTRIBUTING.md, or files call each other in a loop
PYTHON3 ?= /usr/bin/python3
check-layers: $(LIB_OBJ) $(CLI_OBJ)
	@$(PYTHON3) tools/check-layers.py --build $(BUILD) --cflags '$(CFLAGS)'

## symbols: fail if libhogtrain.a exports a symbol without the hog_ prefix, or libhogtrain.so other than the functions of hogtrain.h
symbols: $(LIB) $(SHLIB)
	@bad=$$(nm -g --defined-only $(LIB) | awk 'NF == 3 && $$2 ~ /[A-TV-Z]/ { print $$3 }' | grep -v '^hog_' || true); \
	if [ -n "$$bad" ]; then echo "unprefixed exported symbols in $(LIB):"; echo "$$bad"; exit 1; fi; \
	echo "symbols: every exported symbol of $(LIB) starts with hog_"
	@nm -D --defined-only $(SHLIB) | awk '$$2 != "A" { sub(/@.*/, "", $$3); print $$3 }' | sort -u > $(BUILD)/symbols.so.txt; \
	grep -oE '^[a-z].*[ *](hog_[a-z0-9_]+)\(' include/hogtrain.h | grep -oE 'hog_[a-z0-9_]+\($$' | tr -d '(' | sort -u > $(BUILD)/symbols.h.txt; \
	if ! cmp -s $(BUILD)/symbols.so.txt $(BUILD)/symbols.h.txt; then \
	    echo "$(SHLIB) exports (<) other than the functions hogtrain.h declares (>):"; \
	    diff $(BUILD)/symbols.so.txt $(BUILD)/symbols.h.txt; exit 1; fi; \
	echo "symbols: $(SHLIB) exports the $$(wc -l < $(BUILD)/symbols.h.txt) functions of hogtrain.h and nothing else"

## bench: the quick benchmark suite (bench/run --quick all: threads, sparsity, size, etl, peers) into results/RUN-ID/
bench: deps all bench-tools
	@sh bench/run --quick --build $(BUILD) all

## bench-tools: build the benchmark programs (bench/*.c) into $(BUILD)/bench/
bench-tools: $(BENCH_BIN)

## bench-check: end-to-end test of the benchmark harness (a quick threads study, about 15 s)
bench-check: all bench-tools
	@sh bench/check.sh $(BUILD)

## demo: install what is missing, fetch Fashion-MNIST and train a softmax model on every core
demo: deps all
	@sh datasets/fashion-mnist.sh $(BUILD)
	$(BIN) train datasets/fashion-mnist/train.hgd --test datasets/fashion-mnist/test.hgd \
	    --loss softmax --normalized 0 --epochs 10 --step 0.01 --decay 0.7 --l2 1e-4 \
	    -o datasets/fashion-mnist/model.hog --report datasets/fashion-mnist/report.json

$(BUILD)/hogtrain.pc: Makefile include/hogtrain.h
	@mkdir -p $(@D)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: hogtrain' 'Description: lock-free multicore SGD trainer' 'Version: $(VERSION)' \
	  'Libs: -L$${libdir} -lhogtrain' 'Libs.private: $(LDLIBS_DEPS)' 'Cflags: -I$${includedir}' > $@

# Where Debian's python3 finds packages installed under PREFIX (for /usr/local:
# /usr/local/lib/python3.X/dist-packages).
PYTHON_DIR = $(PREFIX)/lib/python$(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages

## install: install the libraries (static, shared and its links), hogtrain.h, the command, hogtrain.pc and the Python package under $(DESTDIR)$(PREFIX)
install: all $(BUILD)/hogtrain.pc
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libhogtrain.so
	install -m 644 include/hogtrain.h $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/hogtrain.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -d $(DESTDIR)$(PYTHON_DIR)/hogtrain
	install -m 644 python/hogtrain/*.py $(DESTDIR)$(PYTHON_DIR)/hogtrain/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

## man: the man pages, made by help2man from each command's --help, into $(BUILD)/man/
MAN_PAGES := hogtrain hogtrain-convert hogtrain-train hogtrain-train-mf hogtrain-tune hogtrain-predict hogtrain-info hogtrain-export hogtrain-keygen
man: $(BIN) tools/make-man.sh
	@sh tools/make-man.sh $(BIN) $(BUILD)/man

# install and uninstall also take the man pages and the bash completion
install: install-docs
uninstall: uninstall-docs
install-docs: man
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(MAN_PAGES:%=$(BUILD)/man/%.1) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 tools/hogtrain-completion.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/hogtrain
uninstall-docs:
	rm -f $(MAN_PAGES:%=$(DESTDIR)$(PREFIX)/share/man/man1/%.1) \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/hogtrain

## uninstall: remove what install put there
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libhogtrain.a $(DESTDIR)$(PREFIX)/include/hogtrain.h \
	      $(DESTDIR)$(PREFIX)/bin/hogtrain $(DESTDIR)$(PREFIX)/lib/pkgconfig/hogtrain.pc \
	      $(DESTDIR)$(PREFIX)/lib/$(notdir $(SHLIB)) $(DESTDIR)$(PREFIX)/lib/$(SONAME) \
	      $(DESTDIR)$(PREFIX)/lib/libhogtrain.so
	rm -rf $(DESTDIR)$(PYTHON_DIR)/hogtrain

## clean: remove the build folders
clean:
	rm -rf build build-asan build-tsan build-fuzz

## help: list the targets
help:
	@sed -n 's/^## //p' Makefile

-include $(LIB_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(addsuffix .d,$(TOOLS) $(TESTS) $(RACES) $(BENCH_BIN))
