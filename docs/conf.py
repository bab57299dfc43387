"""Sphinx configuration of the irdialog documentation.

Build it from the repository root (``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery (``examples/plot_*.py``) runs during the build, on the data bundled with the
package, so an example that no longer runs fails the build.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document the irdialog of this checkout
# The examples read the small samples bundled with the package, whatever the environment says.
os.environ.pop("IRDIALOG_DATA", None)
os.environ.setdefault("MPLBACKEND", "Agg")

import irdialog  # noqa: E402

project = "irdialog"
author = "the irdialog developers"
copyright = "the irdialog developers"  # noqa: A001 - Sphinx's name
release = irdialog.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.extlinks",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "gallery.md", "gallery", "**/*.md"]
root_doc = "index"
default_role = "py:obj"

# API reference: one page per public name, generated from docs/api.rst's autosummary tables.
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
add_module_names = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# :repo:`BENCHMARKS.md <BENCHMARKS.md>` links to a file of the repository. The project has no
# public address yet: until it has one, the links lead from the pages of the user guide, as
# built into docs/_build/html, to the files of the checkout they were built from.
REPOSITORY_URL = os.environ.get("IRDIALOG_DOCS_REPOSITORY_URL", "../../../../")
extlinks = {"repo": (REPOSITORY_URL + "%s", "%s")}

# Links to the libraries irdialog builds on stay plain text: the build reads nothing from the
# network.
intersphinx_mapping: dict = {}

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("irdialog",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"irdialog": None},
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "show_memory": False,
    "download_all_examples": False,
}

html_theme = "pydata_sphinx_theme"
html_title = f"irdialog {release}"
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_show_sourcelink = False
html_context = {"default_mode": "light"}


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out the members an estimator inherits from scikit-learn (get_params,
    set_fit_request, Pipeline's methods...): scikit-learn documents them, and their
    docstrings link into its own documentation."""
    target = getattr(obj, "fget", obj)
    if (getattr(target, "__module__", None) or "").startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
