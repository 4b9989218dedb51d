"""MyST's per-parse document, made cheap, is still MyST's: the same default settings, and no
settings object shared between two documents."""

from __future__ import annotations

from atlas.i18n import mystdoc


def test_the_patched_document_has_mysts_settings_and_its_own_copy() -> None:
    assert mystdoc.install() and mystdoc.install()  # installing twice keeps one patch
    from myst_parser.mdit_to_docutils import base

    assert base.make_document is mystdoc.make_document
    first, second = base.make_document(), base.make_document("page.md")
    theirs = mystdoc.ORIGINAL()

    def plain(settings) -> dict:  # a DependencyList compares by identity: compare its type
        found = dict(vars(settings))
        found["record_dependencies"] = type(found["record_dependencies"])
        return found

    assert plain(first.settings) == plain(theirs.settings)
    assert first.settings is not second.settings
    first.settings.report_level = 5
    first.settings._config_files.append("x")
    assert second.settings.report_level == theirs.settings.report_level
    assert second.settings._config_files == theirs.settings._config_files
    assert second["source"] == "page.md"
