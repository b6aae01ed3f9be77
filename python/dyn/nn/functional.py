"""dyn.nn.functional: PyTorch's functional ops, composed from dyn's primitive ops.

The implementations live in one file per family (_activation, _linear, _norm, _dropout, _conv,
_pool, _interpolate, _vision, _distance, _loss, _attention); this module is the public namespace that names
them all.
"""
from ._activation import (  # noqa: F401
    celu, elu, gelu, glu, hardsigmoid, hardswish, hardtanh, leaky_relu, log_softmax, logsigmoid, mish, prelu,
    relu, relu6, selu, sigmoid, silu, softmax, softmin, softplus, softsign, tanh, threshold,
)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401
from ._conv import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold, pad, unfold,
)
from ._distance import cosine_similarity, pairwise_distance  # noqa: F401
from ._loss_margin import (  # noqa: F401
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
    multilabel_soft_margin_loss, poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
)
from ._activation import gumbel_softmax, hardshrink, rrelu, softshrink, tanhshrink  # noqa: F401
from ._dropout import dropout, dropout1d, dropout2d, dropout3d  # noqa: F401
from ._interpolate import interpolate  # noqa: F401
from ._vision import affine_grid, grid_sample  # noqa: F401
from ._linear import bilinear, embedding, embedding_bag, linear, one_hot  # noqa: F401
from ._loss import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, huber_loss, kl_div, l1_loss,
    mse_loss, nll_loss, smooth_l1_loss,
)
from ._norm import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, normalize, rms_norm  # noqa: F401
from ._pool import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d,
    adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d, pixel_shuffle,
    pixel_unshuffle,
)
