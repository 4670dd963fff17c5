# Everything bootstraps a virtual environment in .venv from nothing. Times are for a 2-core machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# runs a command, saying every few seconds that it still runs and, at the end, how long it took
STAGE := $(PYTHON) src/fabrik/_progress.py

.PHONY: install demo test explore bench bench-robot bench-batch bench-mocap bench-viewer figures docs-commands clean

install: $(STAMP)

# about 7 minutes once on a quiet 2-core machine: the packages (under a minute with pip's cache),
# then every numba kernel compiled and cached (6.1 minutes); make test then takes about 6 minutes
$(STAMP): pyproject.toml
	@echo "make install: .venv with fabrik and its extras from PyPI (about 2 minutes), then the numba kernels compiled once (about 6 minutes on 2 cores)"
	@$(STAGE) "creating the virtual environment .venv" "" -- $(PYTHON) -m venv $(VENV)
	@$(STAGE) "installing pip" "" -- $(BIN)/python -m pip install --quiet --upgrade pip
	@$(STAGE) "installing fabrik and the packages it needs" "about 2 minutes" -- $(BIN)/python -m pip install --quiet -e ".[test,bench,view]"
	@$(STAGE) "compiling the numba kernels" "about 6 minutes on 2 cores" -- $(BIN)/python -m fabrik.cli.warmup --all
	touch $(STAMP)
	@echo "installed. To call fabrik by name: . $(VENV)/bin/activate   (or run $(BIN)/fabrik)"

# about 10 s once installed (make install compiles its kernels)
demo: $(STAMP)
	$(BIN)/fabrik demo

test: $(STAMP)
	@echo "make test: the whole suite, 5-8 minutes on 2 cores (8 at a load average of 6); a dot per test, the percentage done at each line's end"
	$(BIN)/python -m pytest

# the test suite with newly drawn property-test examples (make test draws the same ones every run)
explore: $(STAMP)
	FABRIK_EXPLORE=1 $(BIN)/python -m pytest

# For maintainers: the runs behind the committed results in benchmarks/results/ and the figures in
# docs/img/ (the docs' own commands write to fabrik-out/ instead). About 4 minutes.
bench: $(STAMP)
	$(BIN)/fabrik bench chain --methods all --json benchmarks/results/table1_all.json --plot docs/img
	$(BIN)/fabrik bench chain --json benchmarks/results/table1_fabrik.json
	$(BIN)/fabrik bench chain --constrained --json benchmarks/results/table1_constrained.json
	$(BIN)/fabrik bench tracking --methods all --steps 1000 --json benchmarks/results/tracking.json --plot docs/img

# the robot tables of docs/arms.md (needs ../shared/data/urdf; TRAC-IK and ikpy from the bench extra); about 5 minutes
URDF_DIR ?= ../shared/data/urdf
bench-robot: $(STAMP)
	$(BIN)/fabrik bench robot $(URDF_DIR)/panda.urdf --tip panda_hand --json benchmarks/results/robot_panda.json --plot docs/img
	$(BIN)/fabrik bench robot $(URDF_DIR)/ur5.urdf --tip tool0 --json benchmarks/results/robot_ur5.json --plot docs/img

# docs/batch.md's table and figures; about 2 minutes
bench-batch: $(STAMP)
	$(BIN)/fabrik bench batch --parts chain --repeats 5 --json benchmarks/results/batch.json --plot docs/img
	$(BIN)/fabrik bench batch --parts skeleton,arm,crowd,float32 --repeats 3 --json benchmarks/results/batch_models.json
	$(BIN)/fabrik bench batch --parts arm --repeats 8 --json benchmarks/results/batch_arm.json

# the motion-capture tables of docs/results.md and docs/arms.md (needs ../shared/data/mocap)
MOCAP_DIR ?= ../shared/data/mocap
bench-mocap: $(STAMP)
	$(BIN)/fabrik reconstruct $(MOCAP_DIR)/cmu_131_01.bvh $(MOCAP_DIR)/cmu_131_02.bvh $(MOCAP_DIR)/cmu_131_03.bvh --json benchmarks/results/reconstruct_cmu_pooled.json
	$(BIN)/fabrik reconstruct $(MOCAP_DIR)/cmu_131_01.bvh $(MOCAP_DIR)/cmu_131_02.bvh $(MOCAP_DIR)/cmu_131_03.bvh --constraints humanoid --methods fabrik,fabrik-constrained,ccd,ccd-constrained,jacobian-transpose,jacobian-transpose-constrained,jacobian-dls,jacobian-dls-constrained,jacobian-svd-dls,jacobian-svd-dls-constrained --json benchmarks/results/reconstruct_cmu_humanoid.json
	$(BIN)/python benchmarks/mocap_sets.py --json benchmarks/results/mocap_sets.json
	$(BIN)/fabrik bench arm $(MOCAP_DIR)/cmu_131_01.bvh $(MOCAP_DIR)/cmu_131_02.bvh $(MOCAP_DIR)/cmu_131_03.bvh --json benchmarks/results/arm_study_cmu.json
	$(BIN)/python benchmarks/limited_best.py --json benchmarks/results/limited_best.json

# docs/viewer.md's loop figures (headless Chromium when installed); about 1.5 minutes
bench-viewer: $(STAMP)
	$(BIN)/python benchmarks/viewer_loop.py $(MOCAP_DIR)/cmu_131_01.bvh --json benchmarks/results/viewer_loop.json

# the documentation's pictures made by the example scripts (fig_viewer needs Debian's chromium-headless-shell)
figures: $(STAMP)
	$(BIN)/python examples/fig_dhm_arm.py docs/img/dhm_arm.png
	$(BIN)/python examples/fig_robot_panda.py $(URDF_DIR)/panda.urdf docs/img/robot_panda.png
	$(BIN)/python examples/fig18_constraints.py --docs
	$(BIN)/python examples/fig_viewer.py docs/img

# every command in the docs' sh blocks run for real in a copy of the project (make test runs the
# quick ones); about 8 minutes (the sum of the lines' stated times)
docs-commands: $(STAMP)
	FABRIK_DOC_COMMANDS=all $(BIN)/python -m pytest tests/project/test_doc_commands.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
