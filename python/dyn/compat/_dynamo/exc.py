"""torch._dynamo.exc: the exceptions programs catch from torch.compile, as dyn raises them."""
from ..._compile import InvalidBackend  # noqa: F401
from _dyn import GraphBreakError as Unsupported  # noqa: F401
