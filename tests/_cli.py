"""Running the ``freshcore`` command inside a test (imported by the tests of each subcommand)."""

import io
from pathlib import Path

from freshcore.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(args, capsys):
    """``freshcore *args``: its exit status, what it wrote to the output stream and to standard error."""
    out = io.StringIO()
    status = main(args, out=out)
    return status, out.getvalue(), capsys.readouterr().err
