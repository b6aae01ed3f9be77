"""dyn.distributed (torch.distributed) for one process: dyn runs on one machine's CPU, so a process
group can only have one member. init_process_group(world_size=1) works, and the collectives are
what they are for one process (all_reduce leaves the tensor as it is, all_gather copies it); a
larger world raises saying so. Without a group, the calls raise PyTorch's errors, so programs that
check is_initialized() or the RANK variable take their one-process path, as they do on a laptop."""
import contextlib
import datetime
import enum
import os

import dyn

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
_group = None  # the default group while one is initialized


class Backend(str):
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name):
        name = name.lower()
        if name not in ("gloo", "nccl", "mpi", "ucc", "cpu:gloo"):
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, name)


class ReduceOp(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ProcessGroup:
    def __init__(self, backend):
        self._backend = backend

    def rank(self):
        return 0

    def size(self):
        return 1

    def __repr__(self):
        return f"<dyn.distributed.ProcessGroup of one process ({self._backend})>"


GroupMember = type("GroupMember", (), {"WORLD": None, "NON_GROUP_MEMBER": -100})


def is_available():
    return True


def is_initialized():
    return _group is not None


def is_gloo_available():
    return True


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_torchelastic_launched():
    return "TORCHELASTIC_RUN_ID" in os.environ


def _default():
    if _group is None:
        raise ValueError(_NOT_INITIALIZED)
    return _group


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """One process: world_size (given, or WORLD_SIZE from the environment) must be 1."""
    global _group
    if _group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if world_size in (-1, None):
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank in (-1, None):
        rank = int(os.environ.get("RANK", "0"))
    if world_size != 1 or rank != 0:
        raise RuntimeError(f"dyn runs one process on the CPU: init_process_group(world_size={world_size}, "
                           f"rank={rank}) needs a group of {world_size} processes. Run the program as one process "
                           "(without torchrun, or with --nproc_per_node=1), or under --real-torch")
    name = backend or "gloo"
    if name == "nccl":
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    _group = ProcessGroup(Backend(name))
    GroupMember.WORLD = _group


def destroy_process_group(group=None):
    global _group
    _default()
    _group = None
    GroupMember.WORLD = None


def get_rank(group=None):
    _default()
    return 0


def get_world_size(group=None):
    _default()
    return 1


def get_backend(group=None):
    return str(_default()._backend)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False):
    g = _default()
    if ranks is not None and list(ranks) != [0]:
        raise ValueError(f"new_group(ranks={list(ranks)}): the world has one process, rank 0")
    return g


def barrier(group=None, async_op=False, device_ids=None):
    _default()
    return _Done() if async_op else None


class _Done:
    """The handle of a collective that finished: it had one process to wait for."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def _collective(async_op):
    _default()
    return _Done() if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """One process: the reduction of one tensor is the tensor (AVG of one is itself too)."""
    return _collective(async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    return _collective(async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    return _collective(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _default()
    if len(tensor_list) != 1:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors; the world has 1 process")
    with dyn.no_grad():
        tensor_list[0].copy_(tensor)
    return _Done() if async_op else None


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _default()
    with dyn.no_grad():
        output_tensor.copy_(input_tensor.reshape(output_tensor.shape))
    return _Done() if async_op else None


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    return all_gather_into_tensor(output, input, group, async_op)


def all_gather_object(object_list, obj, group=None):
    _default()
    object_list[0] = obj


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    _default()


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    if gather_list:
        return all_gather(gather_list, tensor, group, async_op)
    return _collective(async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _default()
    if scatter_list:
        with dyn.no_grad():
            tensor.copy_(scatter_list[0])
    return _Done() if async_op else None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    _default()


default_pg_timeout = datetime.timedelta(minutes=30)


@contextlib.contextmanager
def _nothing():
    yield


__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "get_backend", "new_group", "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter_tensor", "all_gather_object", "broadcast_object_list", "gather",
           "scatter", "monitored_barrier", "ReduceOp", "Backend", "ProcessGroup", "GroupMember"]
