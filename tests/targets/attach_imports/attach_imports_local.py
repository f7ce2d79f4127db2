"""A module of the program's own directory, imported at its start-up."""
NAME = "local-module"
