# mrc-srv6 — one entry point for everything. `make demo` and `make test` create .venv when missing.
# Real p4c / simple_switch_grpc are used when they are on PATH; softswitch otherwise.

PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
STAMP      := $(VENV)/.installed
OUT        := out
# Real p4c + simple_switch_grpc when both are on PATH (PTF targets), softswitch otherwise.
P4C        := $(shell command -v p4c 2>/dev/null)
HAVE_BMV2  := $(and $(P4C),$(shell command -v simple_switch_grpc 2>/dev/null))
JOBS       ?= 2

SHELL_VENV := .venv-shell
GRPC_ADDR  ?= 127.0.0.1:9559
DEVICE_ID  ?= 0
P4INFO     ?=
CONFIG     ?=
comma      := ,

.PHONY: install test test-slow lint bench eval eval-medium demo demo-fabric clean ptf ptf-veth tna shell shell-venv

# The transport's per-packet modules compiled with mypyc (mrc_transport/compiled.py): cached by
# the hash of their sources, so a no-op when nothing changed; without a C compiler or mypyc, one
# warning line and the Python transport.
install: $(STAMP)
	$(PY) -m mrc_transport build --optional

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

lint: install
	$(VENV)/bin/ruff check .

test: install lint shell-venv
	$(PY) -m pytest -n $(JOBS) tests

test-slow: install
	$(PY) -m pytest -n $(JOBS) -m slow tests

bench: install
	$(PY) -m bench.run

# The scenario matrix (scenarios/matrix/, issue 23): every class at two seeds in every mode, the
# table of bytes lost, connections lost, p99 and time to steady goodput, and the invariants mrc
# must hold (emulation/invariants.py); exits 1 on any breach. Out of `make test`: minutes long.
# The programs in C on the native fabric core where a C compiler is (the same report.json as
# the Python engine's: bench/engine_identity.py), else the Python engine with one warning.
eval: install
	$(VENV)/bin/mrc-ctl sweep scenarios/matrix/*.yaml --seeds 1-2 --jobs $(JOBS) --invariants \
		--engine auto --fabric native -o $(OUT)/eval

# The same classes on the 32-NIC medium fabric (scenarios/matrix-medium/generate.py): about
# 15 minutes on 2 cores, so not part of eval.
eval-medium: install
	$(VENV)/bin/mrc-ctl sweep scenarios/matrix-medium/*.yaml --seeds 1-2 --jobs $(JOBS) \
		--invariants --engine auto --fabric native -o $(OUT)/eval-medium

# The demo: compile the fabric switch and the MRC NIC (P4Info + IR JSON; also with p4c when it is
# on PATH), then emulate the tiny fabric in virtual time with both programs on every device: a
# ring all-reduce with a T0-T1 cable cut mid-collective, in every mode (ecmp, spray, mrc, mrc
# without the controller), and write the report. --check fails the demo unless mrc delivers every
# byte with a p99 completion time below ecmp's. `make demo-fabric` is the earlier walk-through
# (STF trace, fabric sizing, a packet over every path, one MRC write with a cable cut).
DEMO_SCENARIO ?= scenarios/ring-link-cut.yaml

demo: install
	mkdir -p $(OUT)/bmv2
	$(VENV)/bin/softswitch compile p4src/switch/srv6_switch.p4 --p4info $(OUT)/srv6_switch.p4info.txtpb --ir $(OUT)/srv6_switch.json
	$(if $(P4C),$(P4C) --target bmv2 --arch v1model --p4runtime-files $(OUT)/bmv2/srv6_switch.p4info.txtpb -o $(OUT)/bmv2 p4src/switch/srv6_switch.p4)
	$(VENV)/bin/softswitch compile p4src/nic/mrc_nic.p4 --p4info $(OUT)/mrc_nic.p4info.txtpb --ir $(OUT)/mrc_nic.json
	$(if $(P4C),$(P4C) --target bmv2 --arch v1model --p4runtime-files $(OUT)/bmv2/mrc_nic.p4info.txtpb -o $(OUT)/bmv2 p4src/nic/mrc_nic.p4)
	$(VENV)/bin/mrc-ctl emulate $(DEMO_SCENARIO) -o $(OUT)/demo --check

demo-fabric: install
	mkdir -p $(OUT)
	$(VENV)/bin/softswitch stf tests/p4/usid_forward.p4 tests/stf/usid_forward.stf --log-console \
		> $(OUT)/stf-trace.log || (cat $(OUT)/stf-trace.log; false)
	tail -25 $(OUT)/stf-trace.log
	$(VENV)/bin/mrc-ctl topo generate --planes 8 --radix 512 -o $(OUT)/fabric-131k.yaml
	$(VENV)/bin/mrc-ctl topo size $(OUT)/fabric-131k.yaml
	$(PY) -m controller.demo topologies/tiny.yaml

# p4runtime-shell pins protobuf < 3.21 and ipython 7, so it lives in its own venv.
shell-venv: $(SHELL_VENV)/.installed

$(SHELL_VENV)/.installed:
	test -x $(SHELL_VENV)/bin/python || $(PYTHON) -m venv $(SHELL_VENV)
	$(SHELL_VENV)/bin/python -m pip install -q --upgrade pip
	$(SHELL_VENV)/bin/python -m pip install -q p4runtime-shell==0.0.6
	touch $@

# An interactive p4runtime-shell on a running switch (softswitch run or simple_switch_grpc);
# with P4INFO=... CONFIG=... it also pushes that pipeline first.
shell: shell-venv
	$(SHELL_VENV)/bin/python -m p4runtime_sh --grpc-addr $(GRPC_ADDR) --device-id $(DEVICE_ID) \
		--election-id 0,1 $(if $(P4INFO),--config $(P4INFO)$(comma)$(CONFIG))

# PTF suites (ptf_tests/suites.py says which program and switch options each runs with).
# `make ptf` uses nanomsg ports (no root); `make ptf-veth` veth pairs (root). The target is BMv2
# (p4c + simple_switch_grpc) when both are on PATH, softswitch otherwise; TARGET=... overrides.
# ARCH=tna runs the same tests on the suites' TNA programs, on softswitch (BMv2 has no TNA);
# PTF_SUITES defaults to every suite with a program for ARCH.
# Logs and pcaps: out/ptf/<suite>-<target>[-tna]/.
ARCH                ?= v1model
TARGET              ?= $(if $(filter tna,$(ARCH)),softswitch,$(if $(HAVE_BMV2),bmv2,softswitch))
PTF_ARGS            ?=
PTF_SUITES          ?=
PTF_RUN              = $(PY) -m ptf_tests.runner --target $(TARGET) --arch $(ARCH)
PTF_SUITE_LIST       = $(or $(PTF_SUITES),$$($(PY) -m ptf_tests.suites --arch $(ARCH)))

ptf: install
	set -e; suites="$(PTF_SUITE_LIST)"; for s in $$suites; do $(PTF_RUN) --suite $$s $(PTF_ARGS); done

ptf-veth: install
	set -e; suites="$(PTF_SUITE_LIST)"; \
	for s in $$suites; do $(PTF_RUN) --veth --suite $$s $(PTF_ARGS); done

# The TNA variants of the switch and the NIC, into out/tna/<program>/: with bf-p4c when it is on
# PATH, as Stratum builds them (bf-p4c's output folder: <program>.conf, bfrt.json,
# pipe/context.json, pipe/tofino.bin, and the P4Info with the standard externs, which
# `mrc-ctl tofino-config` packs), with softswitch otherwise (its P4Info, the same names, and IR).
BF_P4C              := $(shell command -v bf-p4c 2>/dev/null)
TNA_PROGRAMS        := p4src/switch/tna/srv6_switch.p4 p4src/nic/tna/mrc_nic.p4
# The device's PCIe CPU port (packet-in/out); empty keeps the programs' 255 (defines.p4).
TOFINO_CPU_PORT     ?=
TNA_DEFINES          = $(if $(TOFINO_CPU_PORT),-DCPU_PORT_ID=$(TOFINO_CPU_PORT))

tna: install
	@set -e; for prog in $(TNA_PROGRAMS); do \
	  name=$$(basename $$prog .p4); dir=$(OUT)/tna/$$name; \
	  if [ ! -f $$prog ]; then echo "make tna: $$prog does not exist yet, skipped"; continue; fi; \
	  mkdir -p $$dir; \
	  if [ -n "$(BF_P4C)" ]; then \
	    set -- $(BF_P4C) --arch tna -g $(TNA_DEFINES) --p4runtime-files $$dir/p4info.txt \
	      --p4runtime-force-std-externs -o $$dir $$prog; \
	  else \
	    set -- $(VENV)/bin/softswitch compile --arch tna $(TNA_DEFINES) $$prog \
	      --p4info $$dir/p4info.txt --ir $$dir/$$name.json; \
	  fi; \
	  echo "+ $$*"; "$$@"; \
	done

clean:
	rm -rf $(OUT) .pytest_cache .ruff_cache build *.egg-info $(SHELL_VENV)
