## The C side of the agent channel (rules to the interpreter, events back).
