# Everything bootstraps a virtual environment in .venv from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test explore bench bench-robot clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,bench,view]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/fabrik demo

test: $(STAMP)
	$(BIN)/python -m pytest

# the test suite with newly drawn property-test examples (make test draws the same ones every run)
explore: $(STAMP)
	FABRIK_EXPLORE=1 $(BIN)/python -m pytest

# the runs behind the first two tables of docs/results.md (about 2 minutes)
bench: $(STAMP)
	$(BIN)/fabrik bench chain --methods all --json benchmarks/results/table1_all.json --plot docs/img
	$(BIN)/fabrik bench tracking --methods all --steps 1000 --json benchmarks/results/tracking.json --plot docs/img

# the robot tables of docs/arms.md (needs ../shared/data/urdf; TRAC-IK and ikpy from the bench extra)
URDF_DIR ?= ../shared/data/urdf
bench-robot: $(STAMP)
	$(BIN)/fabrik bench robot $(URDF_DIR)/panda.urdf --tip panda_hand --json benchmarks/results/robot_panda.json --plot docs/img
	$(BIN)/fabrik bench robot $(URDF_DIR)/ur5.urdf --tip tool0 --json benchmarks/results/robot_ur5.json --plot docs/img

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
