"""Imported by import_target.py; imports slow_inner at its top level."""
import slow_inner  # LINE:outer  # noqa: F401
