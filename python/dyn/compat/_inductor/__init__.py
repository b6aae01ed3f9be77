"""torch._inductor: its config is accepted; dyn's backend has its own settings."""


class _Config:
    coordinate_descent_tuning = False
    triton = type("triton", (), {"cudagraphs": False})()
    fx_graph_cache = False


config = _Config()
