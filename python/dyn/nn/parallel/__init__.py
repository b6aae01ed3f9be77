"""dyn.nn.parallel (torch.nn.parallel): DataParallel and DistributedDataParallel for dyn's one
CPU process. Both wrap the module as `.module` (so state_dict keys start with "module.", as
PyTorch's) and call it; DistributedDataParallel needs init_process_group first, as in PyTorch,
and with one process its gradient all-reduce is the gradient itself."""
import contextlib

import dyn

from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        if process_group is None:
            dyn.distributed.get_rank()  # PyTorch's error when no group was initialized
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.device_ids = list(device_ids or [])
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Skips the gradient all-reduce while it lives; with one process there is none to skip."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        return contextlib.nullcontext()

    def register_comm_hook(self, state, hook):
        pass

    def _set_static_graph(self):
        self.static_graph = True


__all__ = ["DataParallel", "DistributedDataParallel"]
