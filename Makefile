# SPDX-License-Identifier: MIT
# rocemu: a plain GNU Makefile. Objects go under build/ (build/san with SAN=1).
#   make            library, the rocemu tool and the tests
#   make check      every test          make demo    the main job
#   make bench      speed figures       make fuzz    libFuzzer, bounded
#   make rxe-check  rocemu against Linux rxe in qemu guests (tests/rxe/);
#                   make check runs it last (RXE=0 leaves it out); the
#                   captures it retakes go under build/ (make golden-rxe:
#                   into pcaps/)
#   make rxe-bench  perftest on rxe and on rocemu in the same guests
#   make suite-compare  rdma-core's test suite, rxe against rocemu
#   make install PREFIX=... DESTDIR=...   make uninstall (the same)
#   make help       every target, one line each
#   SAN=1 builds with AddressSanitizer and UBSan; V=1 shows the commands.
#   TSAN=1 builds with ThreadSanitizer (build/tsan).

.DEFAULT_GOAL := all

## help: this list
help:
	@echo "rocemu: make TARGET (README.md; docs/install-layout.md for install)"
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(firstword $(MAKEFILE_LIST)) | \
	  awk -F'\t' '{ printf "  %-14s %s\n", $$1, $$2 }'
	@echo "  variables: PREFIX DESTDIR (install), SAN=1 TSAN=1 (sanitizer builds)," \
	  "RXE=0 (no rxe lab), V=1 (commands shown)"
.SUFFIXES:
.SECONDARY:

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
VERSION := 0.1.0

ifeq ($(SAN),1)
BUILD := build/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
else
BUILD := build
SANFLAGS :=
endif

# TSAN=1: ThreadSanitizer in build/tsan. gcc puts its runtime into the
# drop-in .so too; programs built without it get it preloaded
# (tests/lib/verbs_env.sh). The first race report ends the program with 66.
ifeq ($(TSAN),1)
ifeq ($(SAN),1)
$(error SAN=1 and TSAN=1 cannot be combined)
endif
BUILD := build/tsan
# clang leaves the runtime out of shared objects: the .so would not link.
CC := gcc
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
export TSAN_OPTIONS ?= halt_on_error=1 exitcode=66 second_deadlock_stack=1
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Debian packages the build, the tests and the tools need.
DEB_PKGS := gcc make libc6-dev pkg-config libpcap-dev check uthash-dev \
	zlib1g-dev libisal-dev libibverbs-dev tshark python3 clang libclang-rt-14-dev \
	iproute2 ibverbs-utils perftest python3-pyverbs librsvg2-bin \
	librdmacm1 librdmacm-dev rdmacm-utils libfabric-bin bubblewrap ucx-utils \
	libucx-dev openmpi-bin libopenmpi-dev golang-go
# ... and those the rxe lab needs besides (tests/rxe/): without them
# make check skips the lab and says why.
RXE_LAB_PKGS := qemu-system-x86 busybox-static cpio kmod tcpdump iproute2 \
	rdma-core ibverbs-providers ibverbs-utils perftest python3-pyverbs
RXE ?= 1

PKG_LIBS := libpcap zlib libisal
override CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-fPIC -pthread -Iinclude -Iproto -Iemu -Iconformance/engine $(SANFLAGS) $(CFLAGS)
override LDFLAGS := -pthread $(SANFLAGS) $(LDFLAGS)
DEPFLAGS = -MMD -MP

PROTO_SRC := $(wildcard proto/*.c)
# Capture analysis on top of the codec: flows, the rule checker, ladders.
ANALYZE_SRC := $(wildcard analyze/*.c)
# The library is built from the device's layer folders (docs/architecture.md: "Where
# things are"); the tool and the drop-in from theirs, on the public API.
EMU_LAYERS := core obj wire engine cm world
EMU_LIB_SRC := $(foreach l,$(EMU_LAYERS),$(wildcard emu/$(l)/*.c))
VERBS_SRC := $(wildcard emu/verbs/*.c)
# The librdmacm.so.1 drop-in, on the public API and libibverbs.so.1's.
RDMACM_SRC := $(wildcard emu/rdmacm/*.c)
# 1: its connection calls use the device's CM (include/rocemu/ibcm.h,
# built from emu/cm); 0: they fail with ENOSYS. On when emu/cm is there.
RDMACM_CM ?= $(if $(wildcard emu/cm/*.c),1,0)
# The conformance engine (conformance/engine, on the codec only) is part
# of the tool; emu/cli reaches it through conform.h alone (tests/lint/layers.py).
CONFORM_SRC := $(wildcard conformance/engine/*.c)
TOOL_SRC := $(wildcard emu/cli/*.c) $(CONFORM_SRC)
CHECK_SRC := $(wildcard tests/unit/check_*.c)
LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(PROTO_SRC) $(ANALYZE_SRC) \
	$(EMU_LIB_SRC))
TOOL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TOOL_SRC))
CHECK_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CHECK_SRC))

LIB := $(BUILD)/lib/librocemu.a
VERBS_SO := $(BUILD)/lib/libibverbs.so.1
VERBS_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(VERBS_SRC))
RDMACM_SO := $(BUILD)/lib/librdmacm.so.1
RDMACM_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(RDMACM_SRC))
ROCEMU := $(BUILD)/bin/rocemu
CHECK_BIN := $(BUILD)/tests/check_rocemu
MKCAP := $(BUILD)/tests/mkcap
PCAP_EDIT := $(BUILD)/tests/pcap_edit
# fuzz_cm's seeds: the cm suite's known-answer MADs
CM_SEEDS := $(BUILD)/tests/cm_seeds
BENCH := $(BUILD)/tests/bench_proto
# 10^7 corrupted datagrams at a flow, none accepted (docs/icrc.md)
ICRC_FLOOD := $(BUILD)/tests/icrc_flood
BENCH_DEV := $(BUILD)/tests/bench_device
BENCH_NET := $(BUILD)/tests/bench_net
BENCH_UDP := $(BUILD)/tests/bench_udp
BENCH_SCALE := $(BUILD)/tests/bench_scale
# explain mode's cost, off and on (docs/explain.md)
BENCH_EXPLAIN := $(BUILD)/tests/bench_explain
# The golden-capture scenarios' own verbs program (tests/rxe/scenarios.sh):
# linked against the system's libibverbs, as it is on an rxe machine.
RXE_PROBE := $(BUILD)/tests/rxe/rxe_probe
# The lab's UD program for traffic class, flow label and the GRH (part gid).
UD_GRH := $(BUILD)/tests/rxe/ud_grh
# The conformance suite's agent: verbs and librdmacm, built against the system's
# libibverbs and librdmacm (at run time LD_LIBRARY_PATH may pick rocemu's drop-ins).
AGENT := $(BUILD)/bin/rocemu-agent
AGENT_SRC := $(wildcard conformance/agent/*.c)
DEPS_OK := $(BUILD)/.deps-ok
RXE_DEPS_OK := $(BUILD)/.rxe-deps-ok

.PHONY: all deps rxe-deps check pyverbs rxe-check rxe-bench suite-compare demo golden golden-rxe bench bench-docs fuzz install uninstall help clean FORCE
## all: the library, the tool, the agent, the drop-in and the tests' programs (the default)
all: $(ROCEMU) $(CHECK_BIN) $(MKCAP) $(PCAP_EDIT) $(CM_SEEDS) $(BENCH) $(ICRC_FLOOD) $(BENCH_DEV) $(BENCH_NET) $(BENCH_UDP) $(BENCH_SCALE) \
	$(BENCH_EXPLAIN) $(VERBS_SO) $(RDMACM_SO) $(RXE_PROBE) $(UD_GRH) $(AGENT)

# Installs what is missing when run as root; otherwise names the command.
# $(call install_debs,PACKAGES)
define install_debs
	$(Q)missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
	    grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "rocemu: installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq --no-install-recommends $$missing \
	      >/dev/null || exit 1; \
	  else \
	    echo "rocemu: missing Debian packages:$$missing" >&2; \
	    echo "run:  sudo apt-get install -y$$missing" >&2; \
	    exit 1; \
	  fi; \
	fi
	$(Q)mkdir -p $(@D) && touch $@
endef

## deps: the Debian packages the build and the tests need (installs them as root)
deps: $(DEPS_OK)
$(DEPS_OK):
	$(call install_debs,$(DEB_PKGS))

## rxe-deps: the Debian packages the rxe lab needs besides
rxe-deps: $(RXE_DEPS_OK)
$(RXE_DEPS_OK):
	$(call install_debs,$(RXE_LAB_PKGS))

PKG_CFLAGS = $(shell pkg-config --cflags $(PKG_LIBS))
PKG_LDLIBS = $(shell pkg-config --libs $(PKG_LIBS))
CHECK_LDLIBS = $(shell pkg-config --libs check) -lm

$(BUILD)/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The drop-in: rdma-core's ABI with its symbol versions, rocemu behind it.
$(VERBS_SO): $(VERBS_OBJ) $(LIB_OBJ) emu/verbs/libibverbs.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libibverbs.so.1 \
	  -Wl,--version-script=emu/verbs/libibverbs.map -Wl,-z,defs \
	  -o $@ $(VERBS_OBJ) $(LIB_OBJ) $(PKG_LDLIBS)

# The rdma_cm drop-in: librdmacm's ABI with its symbol versions, linked
# against the drop-in above (one device per process, the CM in it).
$(RDMACM_SO): $(RDMACM_OBJ) $(VERBS_SO) emu/rdmacm/librdmacm.map
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,librdmacm.so.1 \
	  -Wl,--version-script=emu/rdmacm/librdmacm.map -Wl,-z,defs \
	  -o $@ $(RDMACM_OBJ) -L$(@D) -l:libibverbs.so.1

# cm_glue.o is rebuilt when RDMACM_CM changes (the file holds its value,
# rewritten only when it differs).
$(BUILD)/emu/rdmacm/cm_glue.o: override CFLAGS += -DROCEMU_RDMACM_CM=$(RDMACM_CM)
$(BUILD)/emu/rdmacm/cm_glue.o: $(BUILD)/rdmacm-cm.value
$(BUILD)/rdmacm-cm.value: FORCE
	@mkdir -p $(@D) && echo $(RDMACM_CM) | cmp -s - $@ || echo $(RDMACM_CM) >$@

# The version rocemu --version prints; rebuilt when the Makefile changes.
$(BUILD)/emu/cli/rocemu.o: override CFLAGS += -DROCEMU_VERSION='"$(VERSION)"'
$(BUILD)/emu/cli/rocemu.o: Makefile

$(ROCEMU): $(TOOL_OBJ) $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LDLIBS)

# rocemu impair's rules and frame edits are unit-tested (tests/unit/check_impair.c)
IMPAIR_UNIT_OBJ := $(BUILD)/emu/cli/impair_rule.o $(BUILD)/emu/cli/impair_frame.o
$(CHECK_BIN): $(CHECK_OBJ) $(IMPAIR_UNIT_OBJ) $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LDLIBS) $(PKG_LDLIBS)

# The tests' programs (tests/tools/) and make bench's (tests/bench/), each
# from one source; all go to $(BUILD)/tests/.
$(MKCAP) $(PCAP_EDIT) $(ICRC_FLOOD) $(CM_SEEDS): $(BUILD)/tests/%: $(BUILD)/tests/tools/%.o $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LDLIBS)

$(BENCH) $(BENCH_DEV) $(BENCH_NET) $(BENCH_UDP) $(BENCH_SCALE) $(BENCH_EXPLAIN): $(BUILD)/tests/%: $(BUILD)/tests/bench/%.o $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LDLIBS)

$(RXE_PROBE) $(UD_GRH): $(BUILD)/tests/rxe/%: tests/rxe/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	  -Wstrict-prototypes -Wmissing-prototypes -o $@ $< -libverbs

$(AGENT): Makefile
$(AGENT): $(AGENT_SRC) conformance/agent/agent.h | $(DEPS_OK)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
	  -Wstrict-prototypes -Wmissing-prototypes -o $@ $(AGENT_SRC) -lrdmacm -libverbs \
	  -DROCEMU_VERSION='"$(VERSION)"'

# ---- man pages ----------------------------------------------------------
# Made from each command's --help (the usage text in C is their one
# source) and man/rocemu-dropin.7.txt, into $(BUILD)/man/man1 and man7.
MAN_DIR := $(BUILD)/man
.PHONY: man
## man: the man pages, from each command's --help, into $(BUILD)/man
man: $(MAN_DIR)/.stamp
all: man
$(MAN_DIR)/.stamp: $(ROCEMU) $(AGENT) tools/mkman.py man/rocemu-dropin.7.txt
	@$(if $(Q),echo "  MAN     $(MAN_DIR)")
	$(Q)rm -rf $(MAN_DIR) && python3 tools/mkman.py --rocemu $(ROCEMU) \
	  --agent $(AGENT) --dropin man/rocemu-dropin.7.txt --out $(MAN_DIR)
	@touch $@

# ---- the rule book's table ----------------------------------------------
# docs/rules.md is made from rocemu check --rules, the scenarios' covers
# lines and the tests' assertions; the rules_doc test fails when stale.
.PHONY: rules-doc
## rules-doc: regenerate docs/rules.md, the table of rules checked and tested
rules-doc: $(ROCEMU)
	$(Q)python3 tools/mkrules.py --rocemu $(ROCEMU) --out docs/rules.md

# ---- tests --------------------------------------------------------------
# Each test that binds addresses runs in a network namespace of its own
# where it can (tests/lib/isolated.sh): runs side by side do not collide.
ISOLATED := tests/lib/isolated.sh
## check: every test in tests/TESTLIST, then the rxe lab (T=NAME: one test; RXE=0: no lab)
check: all
	$(Q)python3 tests/run_tests.py $(BUILD) $(if $(T),--only $(T))
ifneq ($(T),)
	@echo "rxe lab: skipped (T=$(T))"
else ifneq ($(SAN)$(TSAN),)
	@echo "rxe lab: skipped under SAN=1 or TSAN=1 (the guest runs the plain" \
	  "build: make rxe-check)"
else ifeq ($(RXE),0)
	@echo "rxe lab: skipped (RXE=0)"
else
	$(Q)if $(MAKE) -s --no-print-directory rxe-deps; then \
	  tests/rxe/check.sh --or-skip $(BUILD); \
	else echo "rxe lab: skipped: its Debian packages are missing (above)"; fi
endif

# ---- Linux rxe in a qemu guest: the referee (tests/rxe/) ----------------
# The captures it retakes go to $(BUILD)/rxe/pcaps, the tree is left as it
# was; make golden-rxe takes them into pcaps/.
## rxe-check: rocemu against Linux rxe in qemu guests (tests/rxe/; about 8 min; RXE_PARTS=cm: one part)
rxe-check: all $(RXE_PROBE) $(UD_GRH) rxe-deps
	$(Q)RXE_PARTS='$(RXE_PARTS)' tests/rxe/check.sh $(BUILD)

# The golden captures' rxe side retaken in the lab (two guests) straight
# into pcaps/rxe (and pcaps/rocemu/loss.pcap), compared with pcaps/rocemu:
# review them with git diff and commit them (docs/install-layout.md).
## golden-rxe: retakes pcaps/rxe in the rxe lab, into the tree: review, then commit
golden-rxe: all $(RXE_PROBE) rxe-deps
	$(Q)tests/rxe/parts.sh $(BUILD)
	$(Q)tests/rxe/golden_lab.sh $(BUILD) pcaps

# perftest on rxe and on rocemu between the same two guests, with ratios
# (not pass/fail: software emulation on a shared machine)
## rxe-bench: perftest on rxe and on rocemu in the same lab guests
rxe-bench: all rxe-deps
	$(Q)tests/rxe/bench.sh $(BUILD)

# rdma-core's own test suite (python3-pyverbs) on rocemu, with its defaults
# and with --gid 1: nothing may fail, and every test the recorded rxe run
# passes must pass.
## pyverbs: rdma-core's test suite (python3-pyverbs) on rocemu
pyverbs: all
	$(Q)$(ISOLATED) tests/verbs/pyverbs.sh $(BUILD)

# rdma-core's own test suite (python3-pyverbs) on rocemu here and on rxe in
# a lab guest, compared test by test (make rxe-check ends with it).
## suite-compare: rdma-core's test suite, rxe in a lab guest against rocemu
suite-compare: all rxe-deps
	$(Q)tests/rxe/suite.sh $(BUILD)

# ---- the main job -------------------------------------------------------
## demo: the main job: a capture, its dump, its ladder (build/demo.svg); the drop-ins
# The drop-ins too: the learning path's programs (docs/learn.md) run on
# them right after this.
demo: $(ROCEMU) $(VERBS_SO) $(RDMACM_SO)
	$(ROCEMU) demo $(BUILD)/demo.pcap --trace $(BUILD)/demo.trace
	$(ROCEMU) dump $(BUILD)/demo.pcap
	$(ROCEMU) ladder $(BUILD)/demo.pcap --trace $(BUILD)/demo.trace \
	  --svg $(BUILD)/demo.svg
	@echo "the demo's ladder, with its WQEs and CQEs, is in $(BUILD)/demo.svg"
	@echo "the drop-ins are in $(BUILD)/lib: libibverbs.so.1, librdmacm.so.1"
	@echo "next: docs/learn.md, the learning path; its first step:"
	@echo "  export PATH=\$$PWD/$(BUILD)/bin:\$$PATH; rocemu demo"

# ---- golden captures: rocemu's side, regenerated on this host ------------
# Runs every scenario through the drop-in and compares with pcaps/rxe; copy
# $(BUILD)/golden/*.pcap to pcaps/rocemu/ to take the new captures.
## golden: rocemu's side of the golden captures, regenerated under build/golden and compared
golden: $(ROCEMU) $(VERBS_SO) $(RXE_PROBE)
	$(Q)rm -rf $(BUILD)/golden
	$(Q)PATH=$(CURDIR)/$(BUILD)/tests/rxe:$$PATH tests/rxe/scenarios.sh \
	  --lib $(CURDIR)/$(BUILD)/lib rocemu $(BUILD)/golden
	$(Q)python3 tests/rxe/compare.py --rocemu $(ROCEMU) --dirs pcaps/rxe \
	  $(BUILD)/golden

# ---- speed --------------------------------------------------------------
# Every figure is a row with its reference measured in the same run and
# its target (tests/bench/bench_report.py); the rows go to $(BUILD)/bench.json
# and, with make bench-docs, into docs/benchmarks.md's table. The rxe lab's
# perftest comparison joins them where its packages are (RXE=0: not).
BENCH_ROWS := $(BUILD)/bench.rows
## bench: speed figures, each with its reference and target (build/bench.json)
bench: $(BENCH) $(BENCH_DEV) $(BENCH_NET) $(BENCH_UDP) $(BENCH_SCALE) \
	  $(BENCH_EXPLAIN) $(ROCEMU) \
	  $(MKCAP) $(VERBS_SO)
	$(Q)rm -f $(BENCH_ROWS)
	$(Q)export BENCH_JSONL=$(CURDIR)/$(BENCH_ROWS) && \
	  $(BENCH) --rocemu $(ROCEMU) --mkcap $(MKCAP) --work $(BUILD)/bench && \
	  tests/bench/bench_check.sh $(BUILD) && \
	  $(BENCH_DEV) && $(BENCH_EXPLAIN) && $(BENCH_SCALE) && $(BENCH_NET) && \
	  tests/bench/bench_bw.sh $(BUILD) && \
	  tests/bench/bench_verbs.sh $(BUILD) && \
	  tests/bench/ladder_bench.sh $(BUILD) && \
	  tests/bench/bench_replay.sh $(BUILD)
ifeq ($(RXE),1)
	$(Q)if $(MAKE) -s --no-print-directory rxe-deps; then \
	  BENCH_JSONL=$(CURDIR)/$(BENCH_ROWS) tests/rxe/bench.sh $(BUILD); \
	else echo "rxe lab: skipped: its Debian packages are missing (above)"; fi
endif
	$(Q)python3 tests/bench/bench_report.py collect $(BENCH_ROWS) \
	  $(BUILD)/bench.json

# The figures table of docs/benchmarks.md, from the last make bench.
## bench-docs: the figures table of docs/benchmarks.md, from the last make bench
bench-docs:
	$(Q)python3 tests/bench/bench_report.py table docs/benchmarks.md $(BUILD)/bench.json

# ---- fuzzing: clang's libFuzzer, seeded from the bundled captures --------
# Seven targets: the frame decoder; an RC responder in RTS that must never
# touch memory outside its MR; sequences of packets interleaved with
# verbs calls (MRs deregistered mid-message, QPs reset and destroyed, CQs,
# an SRQ, AHs), after which no memory outside a registered MR may be
# touched; whole captures through rocemu replay, as responder and as
# requester (its limits, docs/capture-limits.md, bound each); any bytes
# as a ladder --trace file, laid on the demo's ladder and rendered as text
# and SVG; and rocemu-agent's request lines (its reader, token check,
# splitter, command table and argument parsers, without a device); and
# any bytes as the list of differences (conform and replay's reader, then
# its replay matchers); fuzz_cm any bytes as a CM MAD, decoded, encoded
# and decoded again (seeded with the cm suite's known answers by
# $(CM_SEEDS)). Each
# replays its inputs in tests/fuzz/regress_<name>/ (found bugs, hostile
# lines) first, then runs for FUZZ_SECONDS.
FUZZ_DIR ?= build/fuzz
FUZZ_FLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -Iproto -Iemu -Iconformance/engine -pthread \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_TARGETS := fuzz_frame fuzz_responder fuzz_sequence fuzz_ladder_trace \
	fuzz_replay fuzz_agent_cmd fuzz_diffs fuzz_cm
## fuzz: the libFuzzer targets, FUZZ_SECONDS each
fuzz: $(MKCAP) $(ROCEMU) $(CM_SEEDS) | $(DEPS_OK)
	@mkdir -p $(FUZZ_TARGETS:fuzz_%=$(FUZZ_DIR)/corpus_%)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_frame \
	  tests/fuzz/fuzz_frame.c \
	  $(filter-out proto/pcapio.c proto/pcap_live.c,$(PROTO_SRC)) -lz -lisal
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_responder \
	  tests/fuzz/fuzz_responder.c $(PROTO_SRC) $(EMU_LIB_SRC) -lz -lisal -lpcap
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_sequence \
	  tests/fuzz/fuzz_sequence.c $(PROTO_SRC) $(EMU_LIB_SRC) -lz -lisal -lpcap
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_ladder_trace \
	  -DFUZZ_DEMO_PCAP='"$(FUZZ_DIR)/demo.pcap"' \
	  tests/fuzz/fuzz_ladder_trace.c $(PROTO_SRC) $(ANALYZE_SRC) -lz -lisal \
	  -lpcap
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_replay \
	  tests/fuzz/fuzz_replay.c $(wildcard emu/cli/replay_*.c) \
	  conformance/engine/conform_diffs.c $(PROTO_SRC) \
	  $(ANALYZE_SRC) $(EMU_LIB_SRC) -lz -lisal -lpcap
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -Iconformance/agent -o $(FUZZ_DIR)/fuzz_agent_cmd \
	  tests/fuzz/fuzz_agent_cmd.c conformance/agent/line.c conformance/agent/args.c
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_diffs \
	  tests/fuzz/fuzz_diffs.c conformance/engine/conform_diffs.c $(PROTO_SRC) -lz -lisal -lpcap
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $(FUZZ_DIR)/fuzz_cm \
	  tests/fuzz/fuzz_cm.c proto/cm.c proto/cm_ip.c proto/cm_names.c
	$(Q)$(ROCEMU) demo $(FUZZ_DIR)/demo.pcap \
	  --trace $(FUZZ_DIR)/corpus_ladder_trace/demo.trace >/dev/null
	$(Q)for c in connect reject sidr retry bad; do \
	  $(MKCAP) --cm $(FUZZ_DIR)/cm_$$c.pcap $$c || exit 1; done
	$(Q)$(MKCAP) --seeds $(FUZZ_DIR)/corpus_frame pcaps/rxe/*.pcap \
	  $(FUZZ_DIR)/cm_*.pcap
	$(Q)$(MKCAP) --transport-seeds $(FUZZ_DIR)/corpus_responder \
	  pcaps/rxe/*.pcap $(FUZZ_DIR)/demo.pcap
	$(Q)$(MKCAP) --sequence-seeds $(FUZZ_DIR)/corpus_sequence \
	  pcaps/rxe/*.pcap $(FUZZ_DIR)/demo.pcap
	$(Q)cp pcaps/rxe/*.pcap $(FUZZ_DIR)/demo.pcap $(FUZZ_DIR)/corpus_replay/
	$(Q)python3 tests/fuzz/agent_seeds.py $(FUZZ_DIR)/corpus_agent_cmd \
	  tests/cli/agent_cli.py
	$(Q)cp conformance/differences.md $(FUZZ_DIR)/corpus_diffs/
	$(Q)$(CM_SEEDS) $(FUZZ_DIR)/corpus_cm
	$(Q)pass=0; fail=0; for t in $(FUZZ_TARGETS:fuzz_%=%); do \
	  log=$(FUZZ_DIR)/log_$$t; : >$$log; rc=0; \
	  regress=$$(ls -d tests/fuzz/regress_$$t/* 2>/dev/null | \
	    grep -v '\.md$$'); \
	  if [ -n "$$regress" ]; then \
	    $(FUZZ_DIR)/fuzz_$$t $$regress >>$$log 2>&1 || rc=$$?; \
	    echo "fuzz_$$t: $$(echo $$regress | wc -w) regression inputs" \
	      "replayed"; \
	  fi; \
	  if [ $$rc = 0 ]; then \
	    $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	      -print_final_stats=1 $(FUZZ_DIR)/corpus_$$t >>$$log 2>&1 || \
	      rc=$$?; \
	    echo "fuzz_$$t: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' \
	      $$log)"; \
	  fi; \
	  if [ $$rc = 0 ]; then pass=$$((pass + 1)); else fail=$$((fail + 1)); \
	    sed -n '/ERROR: /,/^$$/p' $$log | head -n 24; \
	    grep 'Running: \|SUMMARY\|Test unit written' $$log | tail -n 2; \
	    echo "fuzz_$$t: FAILED, see $$log"; fi; \
	done; echo "fuzz: $$pass passed, $$fail failed"; [ $$fail = 0 ]

# ---- install ------------------------------------------------------------
# The layout (docs/install-layout.md): INSTALL_FILES holds SOURCE:DEST
# pairs, DEST under $(PREFIX); install and uninstall both read it, and
# install writes what it put in place, man pages included, to
# $(DATADIR)/installed-files, which uninstall removes by. The man pages
# (make man, in $(BUILD)/man) are installed when they have been made.
DATADIR = $(PREFIX)/share/rocemu
# The conformance home's data, in the layout of the source folder.
CONFORM_DATA := $(wildcard conformance/scenarios/*.scn) conformance/differences.md
INSTALL_FILES = $(ROCEMU):bin/rocemu $(AGENT):bin/rocemu-agent \
	$(LIB):lib/librocemu.a $(BUILD)/rocemu.pc:lib/pkgconfig/rocemu.pc \
	$(VERBS_SO):lib/rocemu/libibverbs.so.1 \
	$(RDMACM_SO):lib/rocemu/librdmacm.so.1 \
	$(foreach h,$(wildcard include/rocemu/*.h),$(h):$(h)) \
	$(foreach f,$(CONFORM_DATA),$(f):share/rocemu/$(f))
MANIFEST = share/rocemu/installed-files
INSTALL_ROOT = $(DESTDIR)$(PREFIX)

# The conformance home (rocemu conform's scenarios, the list of differences
# conform and replay read) when run outside a source tree: rebuilt when
# PREFIX changes (the stamp is rewritten only then).
DATADIR_STAMP := $(BUILD)/.datadir
$(DATADIR_STAMP): FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(DATADIR)' ] || echo '$(DATADIR)' >$@
$(BUILD)/emu/cli/cli_home.o: $(DATADIR_STAMP)
$(BUILD)/emu/cli/cli_home.o: override CFLAGS += -DROCEMU_DATADIR='"$(DATADIR)"'
FORCE:

$(BUILD)/rocemu.pc: include/rocemu.pc.in $(DATADIR_STAMP)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< >$@

## install: tool, agent, library, headers, rocemu.pc, drop-in, scenarios, man pages (PREFIX, DESTDIR)
install: $(ROCEMU) $(AGENT) $(LIB) $(VERBS_SO) $(RDMACM_SO) $(BUILD)/rocemu.pc man
	$(Q)set -e; root='$(INSTALL_ROOT)'; list=; \
	for p in $(INSTALL_FILES) \
	  $$(cd $(BUILD) 2>/dev/null && ls man/man1/*.1 man/man7/*.7 2>/dev/null | \
	    sed 's|^\(.*\)$$|$(BUILD)/\1:share/\1|'); do \
	  src=$${p%%:*}; dst=$${p#*:}; mode=644; \
	  case $$dst in bin/*|*.so.*) mode=755 ;; esac; \
	  install -D -m $$mode "$$src" "$$root/$$dst"; \
	  list="$$list$$dst\n"; \
	done; \
	printf "$${list}$(MANIFEST)\n" >"$$root/$(MANIFEST)"; \
	echo "rocemu: installed $$(wc -l <"$$root/$(MANIFEST)") files under $$root"

## uninstall: removes exactly what make install installed (the same PREFIX, DESTDIR)
uninstall:
	$(Q)set -e; root='$(INSTALL_ROOT)'; \
	if [ -f "$$root/$(MANIFEST)" ]; then files=$$(cat "$$root/$(MANIFEST)"); \
	else files="$(foreach p,$(INSTALL_FILES),$(lastword $(subst :, ,$(p))))"; fi; \
	for f in $$files; do \
	  case $$f in /*|*..*) echo "rocemu: $$f: not under $$root" >&2; exit 1 ;; esac; \
	  rm -f "$$root/$$f"; \
	  d=$$(dirname "$$f"); \
	  while [ "$$d" != . ] && rmdir "$$root/$$d" 2>/dev/null; do d=$$(dirname "$$d"); done; \
	done; \
	echo "rocemu: uninstalled from $$root"

## clean: removes build/
clean:
	rm -rf build

-include $(shell find build -name '*.d' -type f 2>/dev/null)
