# Every target creates .venv itself when missing; only Python 3.11+ and make are needed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PROTO_SRC := $(wildcard proto/arena/v1/*.proto)
PROTO_OUT := sdk/arena_sdk/_proto

.PHONY: help install test docs demo demo-web web-bench bench bench-queue scale scale-inflight proto clean fairness fairness-swiss ab-tests chaos chaos-cluster

help:
	@echo "make demo   - real Take 5 and Taki round robins between sample bot processes; prints both ladders and the web pages' URL"
	@echo "make demo-web - the same, then keeps the arena and its web pages up until Ctrl-C (or: make demo WEB=1)"
	@echo "make test   - run the test suite (starts its own redis-server and bot processes)"
	@echo "make docs   - build the documentation site into site/ (offline; open site/index.html, or /docs of arena web)"
	@echo "make bench  - the performance ratios (referee vs gRPC echo, bot CPU, queue vs direct), engines, storage, ladder answer time (100k matches)"
	@echo "make bench-queue - the queue's own cost per match alone (queued vs direct, and its Redis work by itself)"
	@echo "make scale  - tournament wall time and matches/s with 1 and 2 workers, deadlines 50 and 1000 ms"
	@echo "make scale-inflight [SIZE=quick] - one worker process holding 50..800 matches against bots that think 500 ms"
	@echo "make proto  - regenerate the Python code from proto/"
	@echo "make ab-tests - matches until the SPRT decides, and its error rates: field vs head to head vs paired (house bots)"
	@echo "make chaos  - Take 5 and Taki round robins while workers, referee and Redis are SIGKILLed; nothing lost?"
	@echo "make chaos-cluster - the same on a private 3-master Redis Cluster, its masters SIGKILLed and restarted"

# Quiet: -qq keeps pip to errors, PYTHONWARNINGS silences the build backend's notices (setuptools' "Editable
# installation" banner), which would otherwise come back whenever the stamp is older than a pyproject.toml.
$(STAMP): pyproject.toml sdk/pyproject.toml
	@echo "installing the arena into $(VENV) (the first run only; a minute or two)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@PYTHONWARNINGS=ignore $(PY) -m pip install -qq --upgrade pip
	@PYTHONWARNINGS=ignore $(PY) -m pip install -qq -e ./sdk -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# The documentation site (mkdocs.yml). --strict: a broken link, a missing page or an unresolved API reference fails.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build

docs: $(STAMP)
	$(MKDOCS) --strict

# The project's own folders: a bot a reader saved in the checkout (the README's my_bot.py) is not linted here.
LINTED := arena sdk sample_bots starters tests tools

test: $(STAMP)
	$(PY) -m ruff check $(LINTED)
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m mypy
	$(MKDOCS) --strict --quiet
	$(PY) -m pytest -q

demo: $(STAMP)
	DEMO_WEB=$(WEB) $(PY) tools/demo.py

# demo-web builds the documentation site first, so the pages serve it under /docs.
demo-web: docs
	DEMO_WEB=1 $(PY) tools/demo.py

# The web pages' answer time (ladder, bot, tournament, match pages) beside the gRPC reads they wrap, same run.
web-bench: $(STAMP)
	$(PY) tools/web_bench.py

bench: $(STAMP)
	$(PY) tools/bench.py

bench-queue: $(STAMP)
	$(PY) tools/bench_queue.py

scale: $(STAMP)
	$(PY) tools/scale.py

# Decisions/s against the ideal, the event loop's lag, faults and CPU per step of matches in flight (SIZE=quick: a
# shorter run of 50, 200 and 400).
SIZE ?= full
scale-inflight: $(STAMP)
	$(PY) tools/scale_inflight.py --size $(SIZE)

# Matches until the batch fit separates bots of known strength: duplicate vs rotated vs random deals (issue 10).
fairness: $(STAMP)
	$(PY) tools/fairness.py

# Matches until the SPRT decides and its error rates: field, head to head and the paired test with house bots.
ab-tests: $(STAMP)
	$(PY) tools/ab_tests.py

# Swiss vs random pairing of bots of known strength: Spearman rho of the final and fitted orders vs the true order.
fairness-swiss: $(STAMP)
	$(PY) tools/swiss_fairness.py

# Generated code is committed; tests/test_proto_fresh.py fails when it differs from what this target writes.
proto: $(STAMP)
	$(PY) tools/gen_proto.py $(PROTO_OUT)

# A real arena in a temporary folder; prints kills by kind, matches re-run, lost (0), duplicates (0) and whether each
# ladder equals its rebuild; exit code 1 when a check fails. CHAOS_KILLS=N kills of each kind (default 3).
chaos: $(STAMP)
	$(PY) tools/chaos.py

# The same on a private 3-master Redis Cluster (appendonly); each Redis kill restarts one master in turn.
chaos-cluster: $(STAMP)
	$(PY) tools/chaos.py --cluster

clean:
	rm -rf $(VENV) .arena .pytest_cache .hypothesis site
