"""Which change caused a recompile: the cause is the failure of the entry that came closest.

Run it with:  build/repl/dynrepl scripts/examples/exact_causes.py
then try      :why-recompile    :guards trim    :events recompile

`project` serves batches of 1, 10, 11 and 15 rows, then its weight grows from 211 to 307 columns.
Against entry 0 (one row) every later call differs in the rows too; the entry that came closest
(dynamic in the rows since the third call) differs only in the weight: that is the cause.
`trim` cuts its input to a length Python reads with .item(): a new length is named by the
variable it was stored to.
"""
import dyn


@dyn.compile
def project(x, w):
    return (x @ w).relu()


@dyn.compile
def trim(x, lens):
    longest = int(lens.max().item())
    return x[:, :longest] * 2


dyn.manual_seed(0)
w = dyn.randn(8, 211)
for rows in (1, 10, 11, 15):
    project(dyn.randn(rows, 8), w)  # size 1 is specialized; 10 -> 11 makes the rows dynamic
project(dyn.randn(15, 8), dyn.randn(8, 307))  # the weight's columns: the closest entry's failure

x = dyn.randn(2, 400)
trim(x, dyn.tensor([3, 25]))
trim(x, dyn.tensor([3, 325]))  # `longest` changed from 25 to 325: its slice becomes dynamic
trim(x, dyn.tensor([3, 100]))  # served by that entry

for e in dyn.debug.events("recompile"):
    c = e["cause"]
    print(f"{e['fn']}[{e['entry']}] from {e['fn']}[{e['closest']}]: {c['key']}"
          f"{' (' + c['from'] + ')' if c['from'] else ''} {c['first']} -> {c['value']}")
print(dyn.debug.counters()["recompiles"], "recompiles")
