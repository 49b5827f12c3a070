"""The notebook the user sees: nbagent's JupyterLab extension and the kernel's end of it.

``labextension/`` is the extension (installed into ``share/jupyter/labextensions`` with the
package); :mod:`~nbagent.frontend.channel` is the comm it answers on, and
:mod:`~nbagent.tools.notebook.frontend` reads, edits and fills notebooks through it.
"""
