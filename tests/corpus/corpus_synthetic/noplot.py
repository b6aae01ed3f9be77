"""A do-nothing stand-in for matplotlib (installed on neither side): every attribute is a callable
that returns another do-nothing object, so `plt.figure().add_subplot(111).matshow(a)` and the like
run and draw nothing; `fig, axes = plt.subplots(1, 2)` unpacks and `axes[0]` indexes, as with
matplotlib. Programs that plot import `pyplot` / `ticker` from here instead."""


class _NoOp:
    def __call__(self, *args, **kwargs):
        return _NoOp()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _NoOp()

    def __getitem__(self, key):
        return _NoOp()


class _Pyplot(_NoOp):
    def subplots(self, *args, **kwargs):
        return _NoOp(), _NoOp()


pyplot = _Pyplot()
ticker = _NoOp()
