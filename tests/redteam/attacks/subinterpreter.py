"""A sub-interpreter runs code the agent never armed (row 35)."""
from rtlib import CTX, done, try_

code = f"import os; os.system({CTX['marker_prog'] + ' ' + CTX['marker']!r}); print(open({CTX['secret']!r}).read())"


def sub():
    try:
        import _xxsubinterpreters as si
    except ImportError:
        import _interpreters as si
    i = si.create()
    si.run_string(i, code)
    return "ran"


try_("subinterpreter", sub)
done()
