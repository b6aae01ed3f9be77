"""torchvision.models: ResNet family."""
from .resnet import (  # noqa: F401
    ResNet, BasicBlock, Bottleneck, resnet18, resnet34, resnet50, resnet101, resnet152, ResNet18_Weights,
    ResNet50_Weights,
)
