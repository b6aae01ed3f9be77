"""A do-nothing stand-in for matplotlib (installed on neither side): every attribute is a callable
that returns another do-nothing object, so `plt.figure().add_subplot(111).matshow(a)` and the like
run and draw nothing. Programs that plot import `pyplot` / `ticker` from here instead."""


class _NoOp:
    def __call__(self, *args, **kwargs):
        return _NoOp()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _NoOp()


pyplot = _NoOp()
ticker = _NoOp()
