"""Sphinx configuration of the API reference of the library ``dropedge_core`` and its PyG front end.

Build (warnings are errors, as CI should run it):

    python -m sphinx -W --keep-going -n -b html docs/api /tmp/api-html

``docs/api/build.sh`` runs exactly this. autodoc reads the docstrings (PyG's Google
style: Args, Raises, Example) through napoleon; nothing is written into the repository.
"""
import os
import sys

# the library (library/dropedge_core) ahead of any installed copy
sys.path.insert(0, os.path.abspath(os.path.join(__file__, "..", "..", "..", "library")))

project = "dropedge_core: the DropEdge++ library"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.intersphinx"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings give each type (PyG's way)
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# offline builds: names of torch/PyG are left as plain text, not looked up
intersphinx_mapping: dict = {}
nitpicky = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
