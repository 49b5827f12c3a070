"""The tools that work in the kernel's Python: RunCode, ListVariables and
InspectVariable, and the short descriptions of values they give."""
