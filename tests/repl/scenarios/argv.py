"""Prints what a script run with :run FILE ARGS sees."""
import sys

print("argv:", sys.argv)
print("name:", __name__)
