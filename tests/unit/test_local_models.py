"""The embedded LLM's model files: split parts are joined in numeric order (part10 after part9, not
after part1) and the result must match the pinned size and sha256, else it is refused."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from chat.local_models import MODELS, LocalModel, ModelMismatch, _split, assemble, installed_file, model_path


def fake_model(wheels: Path, parts: int, *, shuffle_pins: bool = False) -> LocalModel:
    """``parts`` wheels like the PyPI split packages, each holding a distinct chunk."""
    wheels.mkdir(parents=True)
    chunks = [f"chunk {n:02d};".encode() * 100 for n in range(1, parts + 1)]
    for n, chunk in enumerate(chunks, 1):
        with zipfile.ZipFile(wheels / f"fake_model_part{n}-1.0-py3-none-any.whl", "w") as whl:
            whl.writestr(f"fake_model_part{n}/data/part{n:02d}.bin", chunk)
            whl.writestr(f"fake_model_part{n}-1.0.dist-info/METADATA", "Name: x\n")
    joined = b"".join(reversed(chunks) if shuffle_pins else chunks)
    split = _split("fake-model-part", "1.0", tuple("0" * 64 for _ in chunks))
    return LocalModel("fake", "Fake", split, len(joined), hashlib.sha256(joined).hexdigest())


def test_parts_are_joined_in_numeric_order_and_checked(tmp_path: Path) -> None:
    model = fake_model(tmp_path / "fake.wheels", 12)
    seen: list[int] = []
    path = assemble(model, tmp_path / "fake.wheels", seen.append)
    assert path == model_path(model, tmp_path) and path.stat().st_size == model.size
    assert path.read_bytes().startswith(b"chunk 01;") and path.read_bytes().endswith(b"chunk 12;")
    assert seen[-1] == model.size
    assert installed_file(model, tmp_path) == path


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    model = fake_model(tmp_path / "fake.wheels", 3, shuffle_pins=True)  # pinned: another order
    with pytest.raises(ModelMismatch, match="expected"):
        assemble(model, tmp_path / "fake.wheels")
    assert not list(tmp_path.glob("*.gguf")) and not list(tmp_path.glob("*.partial"))
    assert installed_file(model, tmp_path) is None


def test_every_model_pins_each_wheel_and_numbers_its_parts_in_order() -> None:
    for model in MODELS.values():
        lines = model.requirements().splitlines()
        assert len(lines) == len(model.parts)
        for n, (line, part) in enumerate(zip(lines, model.parts, strict=True), 1):
            assert line == f"{part.requirement} --hash=sha256:{part.wheel_sha256}"
            assert len(part.wheel_sha256) == 64 and len(model.sha256) == 64
            if len(model.parts) > 1:
                assert part.name.endswith(f"part{n}") and part.member.endswith(f"part{n:02d}.bin")


def test_the_setting_offers_exactly_the_known_models() -> None:
    from typing import get_args

    from settings import LocalLLMSettings

    offered = get_args(LocalLLMSettings.model_fields["local_llm_model"].annotation)
    assert set(offered) == set(MODELS)
    assert LocalLLMSettings.model_fields["local_llm_model"].default in MODELS
