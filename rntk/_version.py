"""The package version (read by setup.cfg without importing the package)."""

__version__ = "0.4.0"
