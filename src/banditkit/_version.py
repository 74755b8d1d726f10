"""The package version, in a module of its own: what creates a live experiment stores it
without importing the package root (whose type-only imports reach every subpackage)."""

__version__ = "0.1.0"
