"""Docstrings assembled from shared pieces (one text for one parameter)."""

import re

__all__ = ["fill_doc"]

_FIELD = re.compile(r"\{(\w+)\}")


def fill_doc(**pieces):
    """Return a decorator replacing ``{name}`` fields of a docstring by given pieces.

    Only the named fields are replaced, so other braces (dicts in examples) need no
    escaping. A piece of several lines is indented like the line of its field.

    Parameters
    ----------
    **pieces : str
        The texts, by field name.

    Returns
    -------
    decorator : callable
        Sets the filled docstring on the decorated object and returns it.
    """
    def fill(match, indent):
        name = match.group(1)
        if name not in pieces:
            return match.group(0)
        return pieces[name].strip("\n").replace("\n", "\n" + indent)

    def decorate(obj):
        lines = []
        for line in (obj.__doc__ or "").split("\n"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(_FIELD.sub(lambda m, indent=indent: fill(m, indent), line))
        obj.__doc__ = "\n".join(lines)
        return obj

    return decorate
