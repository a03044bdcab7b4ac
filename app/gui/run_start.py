"""What a run from the window needs before its loop starts: a model that answers
(``check_model`` raises ``NoModelAnswers`` with what to do), and the session's screen
parser in the shape the agent loop takes (``SessionParser``, shared by the run and the
macro replay).  No Qt; it builds no run (``app.compose`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.gui.session import Session
from vision.types import Screen, ScreenParse

if TYPE_CHECKING:
    from agent.llm.base import LLMClient
    from app.settings import Settings


class NoModelAnswers(RuntimeError):
    """Start found no model to talk to; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def check_model(settings: Settings, model: str, client: LLMClient | None = None) -> None:
    """Raise ``NoModelAnswers`` unless the configured LLM server answers and has ``model``."""
    from agent.llm.base import LLMError

    own = client is None
    if client is None:
        from app.compose import make_client

        client = make_client(settings, model=model)
    where = getattr(client, "host", "") or getattr(client, "base_url", "") or "the LLM server"
    try:
        models = client.list_models()
    except LLMError as exc:
        raise NoModelAnswers(
            f"No model answers at {where}: Start needs a running model.",
            f"{exc}\n\nWhat to do: start the model server (for Ollama: `ollama serve`, then "
            f"`ollama pull {model or 'MODEL'}`), or start the built-in model on the Models tab, "
            "or point Tapwise at another server in File ▸ Settings (Ctrl+,); then press Start again.") from None
    finally:
        if own:
            close = getattr(client, "close", None)
            if close is not None:
                close()
    if not models:
        raise NoModelAnswers(
            f"The server at {where} answers but has no model yet.",
            f"What to do: download one (for Ollama: `ollama pull {model or 'llama3.2'}`), or start the "
            "built-in model on the Models tab; then press Start again.")
    if model and not any(m == model or m.split(":")[0] == model for m in models):
        raise NoModelAnswers(
            f"The server at {where} has no model “{model}”.",
            "What to do: pick one of its models in the Model box: " + ", ".join(models[:12]))


class SessionParser:
    """Hands the runner the session's parser, built on first use (on the runner's thread)."""

    def __init__(self, session: Session) -> None:
        self._s = session

    def parse(self, screen: Screen, *args: Any, **kwargs: Any) -> ScreenParse:
        return self._s.parse_screen(screen, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s.parser(), name)
