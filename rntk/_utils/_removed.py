"""The public names removed in 0.4: an error that names what replaces each."""

__all__ = ["removed_attribute"]


def removed_attribute(module, name, removed):
    """Return the ``AttributeError`` of a module's ``__getattr__`` for ``name``.

    Parameters
    ----------
    module : str
        The module's name.
    name : str
        The attribute asked for.
    removed : dict
        Names removed from the module's API, each with what replaces it.

    Returns
    -------
    error : AttributeError
        Naming the replacement when ``name`` was removed; the usual message otherwise.
    """
    if name in removed:
        return AttributeError(f"{module}.{name} was removed from the public API in 0.4; "
                              f"use {removed[name]}")
    return AttributeError(f"module {module!r} has no attribute {name!r}")
