"""The languages talkie speaks: English (the source text) and Czech (a PO catalog).

Code writes English and wraps it: `_("Sign in")`, `ngettext("{n} thread", "{n} threads", n)`,
and `N_("…")` for text defined before the language is known (module constants), translated
where it is shown with `_(CONSTANT)`. Placeholders are `str.format` names, so a translation can
move them. The catalogs live in `talkie_tui/locales/<language>/*.po`.

The language is one per process, chosen at start (`choose_language`) and again once a
server's manifest is known; every layer may translate, none may choose.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from talkie_tui.i18n.catalog import PLURAL_RULES, Catalog

LANGUAGES: dict[str, str] = {"en": "English", "cs": "Čeština"}
"""Each language the UI speaks, by code, with its own name for itself."""
SOURCE_LANGUAGE = "en"
LANGUAGE_SETTINGS = ("auto", *LANGUAGES)
_UNSET_LOCALES = ("", "C", "POSIX")

_current = SOURCE_LANGUAGE


def catalog_dir(language: str) -> Path:
    """Where the PO files of `language` are."""
    from importlib import resources  # with tempfile and shutil: only once Czech is spoken

    return Path(str(resources.files("talkie_tui") / "locales" / language))


@cache
def catalog(language: str) -> Catalog:
    """The catalog of `language` (empty for English, the source text)."""
    if language == SOURCE_LANGUAGE:
        return Catalog(language)
    return Catalog.from_files(language, sorted(catalog_dir(language).glob("*.po")))


def use_language(language: str) -> None:
    """Speak `language` from now on (an unknown code means English)."""
    global _current
    _current = language if language in LANGUAGES else SOURCE_LANGUAGE


def current_language() -> str:
    """The code of the language the UI speaks now."""
    return _current


def _(message: str) -> str:
    """`message` in the current language."""
    if _current == SOURCE_LANGUAGE:
        return message
    return catalog(_current).gettext(message)


def pgettext(context: str, message: str) -> str:
    """`message` in the current language, where the same English needs another translation."""
    if _current == SOURCE_LANGUAGE:
        return message
    return catalog(_current).gettext(message, context)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form for `count` items in the current language (Czech has three)."""
    return catalog(_current).ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Mark `message` for translation where it is defined; `_()` translates it where shown."""
    return message


def language_of(locale: str | None) -> str | None:
    """The language code of a locale name ("cs_CZ.UTF-8", "cs-CZ", "en") if we speak it."""
    if not locale:
        return None
    code = locale.split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def system_language(environ: Mapping[str, str] | None = None) -> str | None:
    """The user's language from LANGUAGE / LC_ALL / LC_MESSAGES / LANG, as gettext reads them.

    None when the locale is unset or C/POSIX (common over SSH and in containers), or is a
    language we do not speak.
    """
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        locale = env.get(name, "")
        if locale:
            if locale.split(".")[0] in _UNSET_LOCALES:
                return None  # gettext ignores LANGUAGE under the C locale too
            break
    else:
        return None
    for preferred in env.get("LANGUAGE", "").split(":"):
        if language := language_of(preferred):
            return language
    return language_of(locale)


def choose_language(
    setting: str | None, manifest_locale: str | None, environ: Mapping[str, str] | None = None
) -> str:
    """The UI language: the setting, else the system's, else the server's, else English."""
    if setting in LANGUAGES:
        return str(setting)
    return system_language(environ) or language_of(manifest_locale) or SOURCE_LANGUAGE


def accept_language() -> str:
    """An `Accept-Language` value asking servers for the UI's language, English second."""
    if _current == SOURCE_LANGUAGE:
        return SOURCE_LANGUAGE
    return f"{_current}, {SOURCE_LANGUAGE};q=0.5"


__all__ = [
    "LANGUAGES",
    "LANGUAGE_SETTINGS",
    "N_",
    "PLURAL_RULES",
    "_",
    "accept_language",
    "catalog",
    "choose_language",
    "current_language",
    "language_of",
    "ngettext",
    "pgettext",
    "system_language",
    "use_language",
]
