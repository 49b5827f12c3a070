"""Sphinx configuration of nbagent's documentation (MyST pages, pydata theme)."""

project = "nbagent"
author = "nbagent contributors"
extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx_copybutton",
    "autodoc_traits",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
nb_execution_mode = "off"
