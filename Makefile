# rdma.fabric: the two commands are `make lab` (the main job on the built-in lab) and
# `make test` (every test). Both install what they need first.
SHELL := /bin/bash
export CONTAINERS_CONF := $(CURDIR)/lab/containers.conf
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python

.PHONY: help lab lab-destroy test deps venv image unit sanity lint molecule journey bench bench-opensm bench-scale scale scale-destroy changelog build docs ee clean

help:
	@echo "make lab          converge the built-in lab (simulated GPU nodes in podman containers)"
	@echo "make lab-destroy  remove the lab containers"
	@echo "make test         every test: unit, ansible-test sanity, ansible-lint, yamllint, docs lint, EE, Molecule"
	@echo "make molecule SCENARIO=name   one Molecule scenario"
	@echo "make journey      the journey over the lab: make lab, every feature, each fault named and cleared"
	@echo "make docs         the collection's HTML docs (build/docs/build/html/index.html)"
	@echo "make ee           the execution environment image and the drift check run in it"
	@echo "make bench-opensm OpenSM failover on ibsim fat trees of 36 to 2048 HCAs (a benchmark, not a test)"
	@echo "make scale N=64   the scale lab: N light nodes (lab/scale.sh); make scale-destroy removes them"
	@echo "make bench-scale  fleet-size benchmark on the scale lab, N=16,64,200 (a benchmark, not a test); NODES=16,64 PAIRS=3"
	@echo "                  its profile: lab/scale/profile_run.py (cProfile, every worker), docs/scale.md \"Where the controller's time goes\""

lab:
	@lab/lab.sh up

lab-destroy:
	@lab/lab.sh down

test:
	@lab/test.sh all

deps:
	@lab/install-deps.sh

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	@lab/venv.sh

image: deps
	@lab/image.sh >/dev/null

unit sanity lint molecule journey bench build ee:
	@lab/test.sh $@ $(SCENARIO)

docs: venv
	@lab/docs.sh build

# A benchmark on the host (ibsim-utils, opensm, infiniband-diags, libumad2sim0, gcc), never
# part of `make test`: SIZES="36:36 64:2048" DRILLS=3 (tests/ibsim/fattree_bench.sh).
bench-opensm:
	@tests/ibsim/fattree_bench.sh

# The scale lab and its benchmark, never part of `make test` (README "Fleet scale"):
# NODES=16,64,200 PAIRS=3 TRANSPORT=ssh|podman BENCH_ARGS="--cases ping,drift:forks=50".
scale:
	@lab/scale.sh up $(or $(N),16)

scale-destroy:
	@lab/scale.sh down

SCALE_NODES := 16,64,200
bench-scale:
	@lab/scale.sh bench --nodes $(or $(NODES),$(SCALE_NODES)) --pairs $(or $(PAIRS),3) \
	  --transport $(or $(TRANSPORT),ssh) $(BENCH_ARGS)

clean:
	rm -rf .cache build *.tar.gz
