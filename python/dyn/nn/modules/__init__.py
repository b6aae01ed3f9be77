"""dyn.nn.modules: every nn.Module class, one file per family (as torch.nn.modules)."""
from .module import Module  # noqa: F401
from .activation import (  # noqa: F401
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU,
    ReLU, ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
    Tanhshrink, Threshold,
)
from .attention import MultiheadAttention  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from .fold import Fold  # noqa: F401
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten, Unfold  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss,
    KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss,
    SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
)
from .normalization import (  # noqa: F401
    GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm, LocalResponseNorm, RMSNorm,
)
from .padding import *  # noqa: F401,F403
from .pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from .upsampling import PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401

__all__ = sorted(name for name, value in globals().items() if isinstance(value, type) and issubclass(value, Module))
