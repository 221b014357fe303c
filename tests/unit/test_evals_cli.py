"""``python -m evals``: a malformed input file or dataset ends a command with its message and exit
status 1, as a bad option does, never with a traceback; the shared options read as each command's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.__main__ import cli


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("qa-retrieval", "expected {question, arxiv_id, pages}"),
        ("check-questions", "expected {question, arxiv_id, pages}"),
        ("qa", "expected {question, arxiv_id, pages, answer}"),
        ("claims", 'expected {"id", "passage", "claim", "supported", "kind"}'),
    ],
)
def test_a_malformed_file_is_reported_with_its_line(tmp_path: Path, command: str, expected: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text("\n{bad\n")  # a blank line is skipped, and counted
    done = CliRunner().invoke(cli, [command, "--file", str(path)])
    assert done.exit_code == 1
    assert f"Error: {path}:2: {expected}" in done.output
    assert "Traceback" not in done.output and not isinstance(done.exception, ValueError)


@pytest.mark.parametrize(("command", "split"), [("retrieval", "test"), ("similarity-floor", "train")])
def test_a_dataset_without_the_split_is_reported(tmp_path: Path, command: str, split: str) -> None:
    done = CliRunner().invoke(cli, [command, "--beir", str(tmp_path)])
    assert done.exit_code == 1
    assert f"Error: no qrels for split {split!r} in {tmp_path}/qrels (found: none)" in done.output


def test_the_shared_options_keep_each_commands_help() -> None:
    retrieval = CliRunner().invoke(cli, ["retrieval", "--help"]).output
    assert "--beir DIRECTORY" in retrieval and "qrels/<split>.tsv" in retrieval and "--cache" in retrieval
    claims = CliRunner().invoke(cli, ["claims", "--help"]).output
    assert "--file FILE" in claims and "evals/claims/README.md" in claims and "[required]" in claims
