// repr() of a tensor, laid out the way PyTorch prints tensors.
#pragma once
#include <string>

#include "core/tensor.h"

namespace dyn {

// "tensor([1., 2.])"; `suffixes` (e.g. "requires_grad=True") are appended as PyTorch does.
std::string format_tensor(const Tensor& t, const std::string& extra_suffix = {});

}  // namespace dyn
