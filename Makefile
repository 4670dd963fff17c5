# Everything bootstraps a virtual environment in .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/fabrik demo

test: $(STAMP)
	$(BIN)/python -m pytest

# the runs behind the first two tables of docs/results.md (about 2 minutes)
bench: $(STAMP)
	$(BIN)/fabrik bench chain --methods all --json benchmarks/results/table1_all.json --plot docs/img
	$(BIN)/fabrik bench tracking --methods all --steps 1000 --json benchmarks/results/tracking.json --plot docs/img

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
