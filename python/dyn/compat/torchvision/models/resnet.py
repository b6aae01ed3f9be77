"""ResNet (He et al., 2015) as torchvision builds it: the same modules, attribute names and
initialization, so `model.state_dict()` keys match torchvision's (conv1.weight, bn1.running_mean,
layer1.0.conv1.weight, ..., fc.bias). Weights are random unless a state_dict is loaded."""
from dyn import nn


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class _ResidualBlock(nn.Module):
    """What BasicBlock and Bottleneck share: torchvision's constructor arguments, and relu(main branch + x,
    through downsample when there is one)."""

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        self._make_branch(inplanes, planes, stride, groups, base_width, dilation, norm_layer or nn.BatchNorm2d)
        # registered after the branch, as torchvision does: the order of children() and of state_dict keys
        self.downsample = downsample
        self.stride = stride

    def _add_identity(self, out, x):
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class BasicBlock(_ResidualBlock):
    expansion = 1

    def _make_branch(self, inplanes, planes, stride, groups, base_width, dilation, norm_layer):
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        return self._add_identity(self.bn2(self.conv2(out)), x)


class Bottleneck(_ResidualBlock):
    expansion = 4

    def _make_branch(self, inplanes, planes, stride, groups, base_width, dilation, norm_layer):
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self._add_identity(self.bn3(self.conv3(out)), x)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, tuple(getattr(nn, n) for n in ("BatchNorm2d", "GroupNorm") if hasattr(nn, n))):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        x = x.flatten(1)
        return self.fc(x)


class _Weights:
    """torchvision's weight enums: named, but dyn does not download them."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class ResNet18_Weights:
    IMAGENET1K_V1 = DEFAULT = _Weights("ResNet18_Weights.IMAGENET1K_V1")


class ResNet50_Weights:
    IMAGENET1K_V1 = _Weights("ResNet50_Weights.IMAGENET1K_V1")
    IMAGENET1K_V2 = DEFAULT = _Weights("ResNet50_Weights.IMAGENET1K_V2")


def _resnet(name, block, layers, weights, pretrained, progress=True, **kwargs):
    if weights is not None or pretrained:
        raise NotImplementedError(
            f"{name}(weights={weights or 'pretrained'}): dyn does not download pretrained weights; build "
            f"{name}() and load a state_dict saved from torchvision with model.load_state_dict(torch.load(path))")
    return ResNet(block, layers, **kwargs)


def resnet18(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet18", BasicBlock, [2, 2, 2, 2], weights, pretrained, progress, **kwargs)


def resnet34(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet34", BasicBlock, [3, 4, 6, 3], weights, pretrained, progress, **kwargs)


def resnet50(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet50", Bottleneck, [3, 4, 6, 3], weights, pretrained, progress, **kwargs)


def resnet101(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet101", Bottleneck, [3, 4, 23, 3], weights, pretrained, progress, **kwargs)


def resnet152(*, weights=None, progress=True, pretrained=False, **kwargs):
    return _resnet("resnet152", Bottleneck, [3, 8, 36, 3], weights, pretrained, progress, **kwargs)
