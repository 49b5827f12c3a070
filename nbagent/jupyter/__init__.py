"""nbagent in IPython and Jupyter: ``%load_ext``, the session of a kernel, its
settings, the magics, the display of a run, widgets, autoloading and the command line."""
