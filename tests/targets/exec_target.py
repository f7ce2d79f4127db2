"""Target that blocks inside code run by exec()/eval(), in several shapes
(argv[1]):
  exec     exec(src) whose function sleeps while exec is on the stack
  later    a function defined by exec(), called after exec returned
  forged   exec of code compiled with a forged stdlib file name
  eval     eval() of an expression that sleeps
  dataclass  a dataclass __init__ (stdlib-generated code) calling __post_init__
Each prints READY right before blocking.  LINE comments mark the lines the
integration tests expect."""
import dataclasses
import sys
import time

SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 60

SRC = """
def from_exec(seconds):
    print("READY", flush=True)
    time.sleep(seconds)
from_exec(SECONDS)
"""


def ready_sleep(seconds):
    print("READY", flush=True)
    time.sleep(seconds)  # LINE:ready_sleep


def run_exec():
    exec(SRC, {"time": time, "SECONDS": SECONDS})  # LINE:exec


def run_later():
    ns = {"time": time}
    exec(SRC.replace("from_exec(SECONDS)", ""), ns)
    ns["from_exec"](SECONDS)  # LINE:later


def run_forged():
    code = compile(SRC, "/usr/lib/python3.11/os.py", "exec")
    exec(code, {"time": time, "SECONDS": SECONDS})  # LINE:forged


def run_eval():
    eval("ready_sleep(SECONDS)")  # LINE:eval


@dataclasses.dataclass
class Config:
    seconds: float

    def __post_init__(self):
        ready_sleep(self.seconds)  # LINE:post_init


def run_dataclass():
    Config(SECONDS)  # LINE:dataclass


MODES = {"exec": run_exec, "later": run_later, "forged": run_forged, "eval": run_eval,
         "dataclass": run_dataclass}

if __name__ == "__main__":
    MODES[sys.argv[1]]()  # LINE:main
