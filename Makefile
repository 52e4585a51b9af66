# berth - build, test, fuzz.
#
#   make            build/berth and build/libberth.a (optimised, warnings are errors)
#   make test       every test tier under ASan + UBSan; ends with "N passed, N failed"
#                   (TIERS="server load": those tiers only; tests/run.sh lists them)
#   make check      the fast tiers (unit, golden, render, cli), in seconds
#   make valgrind   the unit tests under valgrind (no sanitizers)
#   make fuzz       longer fuzz runs (FUZZ_SECONDS each, default 60)
#   make demo       the main job on the local backend (see README)
#   make man        build/berth.1, the manual page (berth help --man)

CC       ?= cc
PKGS     := libfyaml sqlite3 libsodium libseccomp libmicrohttpd libcurl
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
WARN     := -Wall -Wextra -Werror -Wpedantic -Wshadow -Wformat=2 -Wstrict-prototypes \
            -Wmissing-prototypes -Wvla -Wnull-dereference -Wimplicit-fallthrough \
            -Wno-unused-parameter
# libpq's header only: the store loads libpq when it opens a PostgreSQL store (src/store/pq_dl.h)
CPPFLAGS := -Iinclude -Isrc -Iserver -Ibuild/gen -D_POSIX_C_SOURCE=200809L -DBERTH_VERSION='"$(VERSION)"' \
            -DBERTH_UI_GZ='"build/ui"' $(shell pkg-config --cflags $(PKGS) gnutls libpq)
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 $(WARN) -fno-strict-aliasing
LDLIBS   := $(shell pkg-config --libs $(PKGS))
# the berth binary links neither libcurl nor libmicrohttpd: it loads them when it
# talks HTTP (src/base/curl_dl.h, server/mhd_dl.h), so that the processes that do not
# (render, run, each run's supervisor) start without their 30 libraries
BIN_PKGS := libfyaml sqlite3 libsodium
BIN_LIBS := $(shell pkg-config --libs $(BIN_PKGS)) -lpthread
# and it has the three it uses in it, from their archives where the system has them
# (make STATIC_LIBS= links them shared): a berth process maps and relocates no shared
# object of theirs, and the forks of a local run (its supervisor, its init, its command)
# copy fewer mappings: 0.25 ms of every berth command, 0.5 ms of a local launch here
BIN_ARCHIVES := $(foreach l,fyaml sqlite3 sodium,$(shell $(CC) -print-file-name=lib$(l).a))
STATIC_LIBS ?= $(if $(filter lib%.a,$(BIN_ARCHIVES)),,1)
ifeq ($(STATIC_LIBS),1)
BIN_LIBS := -Wl,-Bstatic $(shell pkg-config --libs-only-l $(BIN_PKGS)) -Wl,-Bdynamic -Wl,--as-needed \
            $(filter-out $(shell pkg-config --libs-only-l $(BIN_PKGS)),$(shell pkg-config --static --libs $(BIN_PKGS))) \
            -Wl,--no-as-needed -lpthread
endif

LIB_SRC  := $(sort $(shell find src -name '*.c'))
LIB_HDR  := $(sort $(shell find src -name '*.h'))
CLI_SRC  := $(wildcard cli/*.c) $(wildcard server/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
HEADERS  := $(wildcard include/berth/*.h)

B  := build
BT := build/test
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all test check fuzz fuzz-build valgrind demo examples clean bench man
all: $(B)/berth $(B)/libberth.a

# the manual page, made of the verbs' help (berth help --man): man -l build/berth.1
man: $(B)/berth.1
$(B)/berth.1: $(B)/berth
	$(B)/berth help --man > $@.tmp && mv $@.tmp $@

# ---- optimised build ------------------------------------------------------
$(B)/obj/%.o: %.c | $(B)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# libberth.a is the library's objects made one (ld -r), whose only global
# names are berth_*: the public API (include/berth/) and the two entries the
# berth binary needs (berth_dl_load, berth_local_supervise). Internal helpers
# (store_*, local_*, o_map, ...) are localised, so they can never clash with
# a program that links libberth; the unit tests link the objects instead.
OBJCOPY ?= objcopy
define one_archive
	rm -f $@ $@.o
	$(LD) -r -o $@.o $^
	$(OBJCOPY) --wildcard --keep-global-symbol='berth_*' --keep-global-symbol='__*' $@.o
	$(AR) rcs $@ $@.o
	rm -f $@.o
endef

$(B)/libberth.a: $(LIB_SRC:%.c=$(B)/obj/%.o)
	$(one_archive)

$(B)/berth: $(CLI_SRC:%.c=$(B)/obj/%.o) $(B)/libberth.a
	$(CC) $(CFLAGS) -o $@ $^ $(BIN_LIBS)

# the OpenAPI document is compiled into the server (.incbin in server/openapi.c)
$(B)/obj/server/openapi.o $(BT)/obj/server/openapi.o: server/openapi.json
# and so is the web UI (.incbin in server/ui.c), each file also gzip-compressed, for
# the browsers that accept it (every one): gzip -9n, no name or time in it, so the
# same bytes every build; in build/ui whatever the build (BERTH_UI_GZ)
UI_FILES := $(wildcard web/*.html web/*.js web/*.css)
UI_GZ    := $(UI_FILES:web/%=build/ui/%.gz)
build/ui/%.gz: web/%
	@mkdir -p $(dir $@)
	gzip -9nc $< >$@.tmp && mv $@.tmp $@
$(B)/obj/server/ui.o $(BT)/obj/server/ui.o: $(UI_FILES) $(UI_GZ)

$(B):
	@mkdir -p $@

# the seccomp filter of a local run's processes, made into BPF by libseccomp
# when berth is built (tools/seccomp_filter.c), not by each run's supervisor
GEN_SECCOMP := build/gen/seccomp_filter.h
$(GEN_SECCOMP): tools/seccomp_filter.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 $(WARN) -o build/gen/seccomp_filter $< $(shell pkg-config --cflags --libs libseccomp)
	build/gen/seccomp_filter >$@.tmp && mv $@.tmp $@
$(B)/obj/src/backend/local/isolation.o $(BT)/obj/src/backend/local/isolation.o: $(GEN_SECCOMP)

# ---- test build: ASan + UBSan, fault injection ---------------------------
TCFLAGS := -O1 -g $(SAN) -std=c11 $(WARN) -DBERTH_FAULT_INJECTION
$(BT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(TCFLAGS) -MMD -MP -c $< -o $@

$(BT)/libberth.a: $(LIB_SRC:%.c=$(BT)/obj/%.o)
	$(one_archive)

$(BT)/berth: $(CLI_SRC:%.c=$(BT)/obj/%.o) $(BT)/libberth.a
	$(CC) $(TCFLAGS) -o $@ $^ $(BIN_LIBS)

$(BT)/%: $(BT)/obj/tests/unit/%.o $(BT)/obj/tests/unit/t.o $(LIB_SRC:%.c=$(BT)/obj/%.o)
	$(CC) $(TCFLAGS) -o $@ $^ $(LDLIBS)

UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BT)/%)
# the unit tests' objects are kept (make deletes a pattern rule's intermediates,
# and make check would compile them all again each time)
.SECONDARY: $(UNIT_SRC:%.c=$(BT)/obj/%.o) $(BT)/obj/tests/unit/t.o

# every public header must compile on its own (C11, pedantic)
$(BT)/headers.ok: $(HEADERS)
	@mkdir -p $(BT)
	@for h in $(HEADERS); do \
	  printf '#include "%s"\n#include "%s"\nint main(void){return 0;}\n' $${h#include/} $${h#include/} > $(BT)/hdr.c; \
	  $(CC) -Iinclude -std=c11 $(WARN) -fsyntax-only $(BT)/hdr.c || { echo "header $$h does not compile alone"; exit 1; }; \
	done; touch $@

test: $(UNIT_BIN) $(BT)/berth $(BT)/headers.ok fuzz-build
	@tests/run.sh $(BT) $(TIERS)

check: $(UNIT_BIN) $(BT)/berth $(BT)/headers.ok
	@tests/run.sh $(BT) unit golden render cli

# the unit and golden tiers again, under valgrind, in a build without sanitizers
valgrind:
	@$(MAKE) --no-print-directory BT=build/vg SAN= $(UNIT_SRC:tests/unit/%.c=build/vg/%) build/vg/berth
	@tests/run.sh build/vg --valgrind

# ---- fuzzing (clang libFuzzer) --------------------------------------------
FUZZ_CC    := clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11 $(CPPFLAGS)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,$(BT)/%,$(wildcard tests/fuzz/fuzz_*.c))
$(BT)/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRC) $(LIB_HDR) $(HEADERS) $(GEN_SECCOMP)
	@mkdir -p $(BT)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRC) $(LDLIBS)
# the server's request path: its sources too (the daemon is a stand-in in the target)
SERVER_SRC := $(wildcard server/*.c)
$(BT)/fuzz_http: tests/fuzz/fuzz_http.c $(LIB_SRC) $(SERVER_SRC) $(LIB_HDR) $(wildcard server/*.h) \
		 $(HEADERS) server/openapi.json $(UI_FILES) $(UI_GZ) $(GEN_SECCOMP)
	@mkdir -p $(BT)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRC) $(SERVER_SRC) $(LDLIBS)
fuzz-build: $(FUZZ_BIN)
FUZZ_SECONDS ?= 60
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); mkdir -p $(BT)/corpus/$$n; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=5 -rss_limit_mb=2048 $(BT)/corpus/$$n tests/fuzz/corpus/$$n || exit 1; done

demo: all
	@scripts/demo.sh

# what berth renders for the examples with the example policy (checked by make test)
examples: all
	@mkdir -p examples/rendered
	@for f in examples/*.yaml; do \
	  build/berth render $$f --config examples/policy/config.yaml --run-id x1 > examples/rendered/$$(basename $$f) || exit 1; \
	done

# the benchmarks of bench/README.md, side by side with what users would use
# instead; installs what they need (scripts/deps-bench.sh), then writes
# docs/performance.md (bench/report.sh)
bench: all
	@scripts/deps-bench.sh
	@mkdir -p build/bench
	bench/render.sh
	bench/server.sh
	bench/list.sh
	bench/kube.sh
	bench/launch.sh
	bench/memory.sh
	bench/report.sh

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
