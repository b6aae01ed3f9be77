"""dyn.optim: PyTorch's optimizers (SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop, Adamax, NAdam,
RAdam, Rprop, ASGD, LBFGS) and their state, one file per optimizer as in torch.optim; the base
class and the float-order helpers are in optimizer.py (Note [float order])."""
from .optimizer import Optimizer, required  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .asgd import ASGD  # noqa: F401
from . import lr_scheduler  # noqa: E402,F401
