"""Plots and pictures (matplotlib, imported lazily so the core imports fast)."""
