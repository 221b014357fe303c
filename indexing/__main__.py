"""``python -m indexing …``: queue and run full-text and embedding work; exits non-zero on failure."""

from __future__ import annotations

import logging

import click

from indexing import commands


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log every step.")
def cli(verbose: bool) -> None:
    """Index papers for search: PDFs (full text) and abstracts, into Chroma and the BM25 index."""
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, format="%(levelname)s %(message)s")


for _command in commands.COMMANDS:
    cli.add_command(_command)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
