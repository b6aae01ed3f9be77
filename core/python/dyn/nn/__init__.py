"""dyn.nn: neural-network building blocks (functional API for now)."""
from . import functional  # noqa: F401
