"""MkDocs hooks of the site (mkdocs.yml: hooks).

The generated navigation files (reference/SUMMARY.md, families/SUMMARY.md, written by
pages.py) are read by mkdocs-literate-nav and must not become pages themselves; exclude_docs
only sees the files on disk, so the generated ones are excluded here, after gen-files ran.
"""

from __future__ import annotations

from mkdocs.structure.files import Files, InclusionLevel


def on_files(files: Files, config) -> Files:
    for file in files:
        if file.src_uri == "SUMMARY.md" or file.src_uri.endswith("/SUMMARY.md"):
            file.inclusion = InclusionLevel.EXCLUDED
    return files
