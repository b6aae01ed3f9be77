"""dyn.onnx (torch.onnx): importable, so that a program that imports it runs; dyn has no ONNX
exporter, and export() says so instead of failing on a missing name."""


class OnnxExporterError(RuntimeError):
    """Raised by export(): dyn cannot write ONNX graphs."""


def export(model, args=(), f=None, *posargs, **kwargs):
    raise OnnxExporterError(
        "torch.onnx.export: dyn has no ONNX exporter, so nothing was written"
        + (f" to {f!r}" if isinstance(f, str) else "")
        + "; run the program with `dynrepl --real-torch` (PyTorch's exporter), or save the weights with "
        "torch.save(model.state_dict(), path)")


def is_in_onnx_export():
    return False
