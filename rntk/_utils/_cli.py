"""Argument types shared by the command-line programs (``python -m rntk``, ``rntk-ucr``)."""

import argparse


def int_arg(text):
    """Parse an integer; an argparse error names the text."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def n_jobs_arg(text):
    """Parse a thread count: >= 1, or negative (-1: all cores); 0 is refused."""
    n = int_arg(text)
    if n == 0:
        raise argparse.ArgumentTypeError("must be a number of threads >= 1, or negative "
                                         "(-1: all cores); got 0")
    return n
