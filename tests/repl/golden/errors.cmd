-i --no-color scripts/examples/recompiles.py
:grpah f
:xyzzy
:
:help gaphs
:help a b
:graphs a b
:graph nosuch
:graph f[9].0
:graph f[0].7
:graph f[0] extra
:diff f[0]
:diff f[0] f[9]
:diff f[0].0 nosuch
:dot nosuch
:dot f /nonexistent-dir/x.dot
:dot f /tmp
:dot f /dev/full
:render
:render f[0].0 picture.txt
:render nosuch /tmp/dynrepl_golden_nosuch.svg
:render --diff f[0]
:report
:report /nonexistent-dir/r.html
:report /tmp
:report ''
:report /dev/full
:render f[0].0 /nonexistent-dir/x.svg
:render f[0].0 /dev/null/x.png
:break
:break nosuch
:break cache-hit
:break recompile f extra
:delete
:delete x
:delete 1abc
:delete 2.5
:delete 5
:continue
:where
:reset now
:run
:run /nonexistent/script.py
:events compile f g
:guards nosuch
:why-recompile nosuch
:breaks nosuch
:stats x
:breaks f g
:guards f g
:why-recompile f g
:dot f x.dot extra
:where now
:continue now
:events recompile compile f
:breakpoints x
:quit now
print("still here")
