"""The paper's experiments: Table 1 (single chain), tracking, Table 2 (reconstruction)."""
