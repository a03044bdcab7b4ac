"""``app.compose`` assembles every run the same way: from the user's settings (plus
flags) to the client, the planner bundle, the parser configuration, the run settings and
the knowledge, with a real store, a real virtual phone and the scripted LLM server."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from agent.events import Finished
from agent.grounding.assessment import Assessor
from agent.grounding.base import ElementGrounder
from agent.grounding.ladder import LadderGrounder
from agent.latent import FusedEstimator
from agent.llm.ollama_client import OllamaClient
from agent.llm.openai_client import OpenAIClient
from agent.planners.registry import PLANNER_NAMES as AGENT_PLANNERS
from agent.runner import drive
from agent.types import ActionType, Autonomy, EpisodeStatus
from app import compose
from app.settings import AgentSettings, LLMSettings, Settings
from app.storage import Store
from evaluation.scripted_model import ScriptedLLMServer
from phone.virtual.phone import VirtualPhone


def test_one_planner_list_holds_every_agent_planner_and_prompt2task():
    names = [p.name for p in compose.PLANNERS]
    assert len(names) == len(set(names)) and all(p.label for p in compose.PLANNERS)
    assert set(AGENT_PLANNERS) | {"prompt2task", "adapter"} == set(names)
    assert compose.check_planner(" VT ") == "visiontasker" and compose.check_planner("coa") == "chain"
    with pytest.raises(ValueError, match="prompt2task"):
        compose.check_planner("telepathy")


def test_prompt2task_is_the_latent_planner_with_the_grounding_ladder_and_the_assessor():
    client = OllamaClient(model="m", host="http://127.0.0.1:9")
    bundle = compose.planner_bundle("prompt2task", client)
    assert bundle.planner.name == "zeroshot+" and bundle.planner.uses_latent
    assert isinstance(bundle.grounder, LadderGrounder) and isinstance(bundle.assessor, Assessor)


def test_the_assessor_comes_with_confident_autonomy_and_fused_estimation_on_request():
    client = OllamaClient(model="m", host="http://127.0.0.1:9")
    asking = compose.planner_bundle("zeroshot-", client, autonomy="approve_all")
    assert asking.assessor is None and isinstance(asking.grounder, ElementGrounder)
    assert isinstance(compose.planner_bundle("react-", client, autonomy="confident").assessor, Assessor)
    assert isinstance(compose.planner_bundle("cotsc+", client, fused=True).estimator, FusedEstimator)
    assert compose.planner_bundle("zeroshot-", client, fused=True).estimator is None  # no latent state


def test_the_client_follows_the_settings_and_flags_override_them():
    settings = Settings(llm=LLMSettings(backend="openai", openai_base_url="http://127.0.0.1:8999/v1", model="m1",
                                        api_key=SecretStr("sk-test"), retries=4, timeout_s=7))
    client = compose.make_client(settings)
    assert isinstance(client, OpenAIClient) and client.model == "m1" and client.api_key == "sk-test"
    assert client.base_url == "http://127.0.0.1:8999/v1"
    assert client.policy.attempts == 5 and client.policy.timeout_s == 7
    other = compose.make_client(settings, backend="ollama", model="m2", base_url="http://127.0.0.1:1", timeout_s=3)
    assert isinstance(other, OllamaClient) and other.model == "m2" and other.policy.timeout_s == 3
    with pytest.raises(ValueError, match="backend"):
        compose.make_client(settings, backend="telepathy")


def test_run_settings_speak_the_runners_words():
    settings = Settings(agent=AgentSettings(autonomy="approve_all", step_budget=7, sensitive_needs_approval=False),
                        llm=LLMSettings(model="qwen"))
    rs = compose.run_settings(settings)
    assert (rs.mode, rs.max_steps, rs.allow_sensitive, rs.model) == (Autonomy.APPROVE, 7, True, "qwen")
    rs = compose.run_settings(settings, autonomy="confident", max_steps=3, model="other", max_wait_s=0.0)
    assert (rs.mode, rs.max_steps, rs.model, rs.max_wait_s) == (Autonomy.CONFIDENT, 3, "other", 0.0)
    assert compose.parser_config(Settings(vision={"use_hierarchy": "only"})).mode == "tree"
    assert compose.parser_config(Settings(), mode="vision").mode == "vision"


def test_a_built_run_is_stored_learnt_from_and_its_solution_offered_to_the_next_similar_goal(tmp_path):
    steps = ("open Settings", "tap Network & internet", "done")
    with ScriptedLLMServer() as server, Store(tmp_path / "t.db") as store:
        server.on("Next action:", *steps)
        settings = Settings(llm=LLMSettings(ollama_host=server.url, model="scripted-model:latest", retries=0),
                            agent=AgentSettings(screen_evidence=False))  # every step from the scripted model
        request = compose.RunRequest("Open the network settings", planner="zeroshot-", autonomy=Autonomy.AUTO,
                                     constrained=False)
        first = _play(request, settings, store)
        assert first.examples == 0
        assert store.load_episode(_finished(first).episode.id).status is EpisodeStatus.SUCCEEDED
        server.on("Pick exactly one element", *steps)  # VisionTasker's step prompt shows examples
        second = _play(compose.RunRequest("Open network settings", planner="visiontasker", autonomy="auto",
                                          constrained=False), settings, store)
        assert second.examples == 1
        assert "Task: Open the network settings Solution: open the Settings app" in server.prompts("Pick exactly one")[0]


def test_a_built_run_asks_for_replies_shaped_by_the_screen_and_the_phones_apps_by_default(tmp_path):
    with ScriptedLLMServer() as server, Store(tmp_path / "t.db") as store:
        server.on("JSON object", '{"action": {"app": "Settings", "type": "open_app"}}', '{"action": {"type": "complete"}}')
        settings = Settings(llm=LLMSettings(ollama_host=server.url, model="scripted-model:latest", retries=0),
                            agent=AgentSettings(screen_evidence=False))  # every step from the scripted model
        assert settings.agent.constrained_replies
        played = _play(compose.RunRequest("Open Settings", planner="zeroshot-", autonomy="auto"), settings, store)
        first = _finished(played).episode.steps[0]
        assert first.executed is not None and first.executed.app == "Settings"
        assert "reply: structured" in first.proposal.evidence
        schema = server.requests[0].body["format"]
        apps = [v["properties"]["app"] for v in schema["properties"]["action"]["oneOf"] if "app" in v["properties"]]
        assert apps and "Settings" in apps[0]["enum"] and "Clock" in apps[0]["enum"]  # the phone's own apps
        assert all(list(v["properties"])[-1] == "type" for v in schema["properties"]["action"]["oneOf"])


def _play(request, settings, store):
    phone = VirtualPhone()
    try:
        run = compose.build_run(request, settings, device=phone, parser=compose.make_parser(settings, mode="tree"),
                                store=store, max_wait_s=0.0)
        events = list(drive(run.events))
        compose.close_client(run.client)
    finally:
        phone.close()
    return _Played(run.examples, events)


class _Played:
    def __init__(self, examples, events):
        self.examples, self.events = examples, events


def _finished(played) -> Finished:
    fin = played.events[-1]
    assert isinstance(fin, Finished) and fin.status is EpisodeStatus.SUCCEEDED, fin
    return fin


def test_a_model_adapter_chosen_in_the_model_manager_picks_the_planner_of_a_run():
    from app.compose import planner_for_model
    from app.model_prefs import PrefsStore

    prefs = PrefsStore.default()
    assert planner_for_model("zeroshot+", "ui-tars-1.5-7b", prefs) == "zeroshot+"
    prefs.set("ui-tars-1.5-7b", adapter="ui-tars")
    assert planner_for_model("zeroshot+", "ui-tars-1.5-7b", PrefsStore.default()) == "adapter:ui-tars"
    assert planner_for_model("zeroshot+", "ui-tars-1.5-7b") == "zeroshot+", "compose reads no files: no prefs, no override"
    assert planner_for_model("zeroshot+", "llama3.2", prefs) == "zeroshot+"
    prefs.set("ui-tars-1.5-7b", adapter="none")
    assert planner_for_model("zeroshot+", "ui-tars-1.5-7b", prefs) == "zeroshot+"


def test_the_default_planner_fits_the_models_measured_speed(tmp_path):
    from app.compose import planner_for_model, slow_model
    from app.model_prefs import PrefsStore

    prefs = PrefsStore.load(tmp_path / "models.json")
    assert planner_for_model("auto", "qwen2.5-coder-0.5b", prefs) == "visiontasker"  # built-in: slow on a CPU
    assert slow_model("qwen2.5-coder-0.5b", prefs)
    assert planner_for_model("auto", "llama3.2", prefs) == "zeroshot+"  # not measured yet
    prefs.record_speed("llama3.2", 9.0)
    assert planner_for_model("auto", "llama3.2", PrefsStore.load(tmp_path / "models.json")) == "visiontasker"
    assert planner_for_model("cotsc+", "llama3.2", prefs) == "cotsc+"  # the user's own pick stands


def test_a_built_run_of_a_small_built_in_model_acts_on_clear_screen_evidence_unless_the_user_turned_that_off(
        tmp_path):
    """"Open Settings" on the launcher with a small built-in model: the Settings icon is the only
    element the goal names, so the first step is taken without the model, and the run ends on the
    evidence that Settings is open; with screen evidence off the model decides both steps."""
    from app.builtin_model.catalog import default_model

    with ScriptedLLMServer(models=(default_model().alias,)) as server, Store(tmp_path / "t.db") as store:
        server.on("JSON object", '{"action": {"app": "Settings", "type": "open_app"}}', '{"action": {"type": "complete"}}')
        settings = Settings(llm=LLMSettings(ollama_host=server.url, model=default_model().alias, retries=0))
        played = _play(compose.RunRequest("Open Settings", planner="zeroshot-", autonomy="auto"), settings, store)
        steps = _finished(played).episode.steps
        assert steps[0].executed is not None and steps[0].executed.type is ActionType.TAP
        assert steps[-1].proposal is not None and steps[-1].proposal.planner.endswith("+screen")
        assert not server.prompts("JSON object")  # the model was never asked
        off = settings.model_copy(update={"agent": AgentSettings(screen_evidence=False)})
        played = _play(compose.RunRequest("Open Settings", planner="zeroshot-", autonomy="auto"), off, store)
        assert _finished(played).episode.steps[0].executed.app == "Settings"
        assert server.prompts("JSON object")


def test_a_built_run_of_any_other_model_is_never_overruled_by_the_screen_evidence(tmp_path):
    """The same goal with a model that is not a small built-in one: the model is asked every
    step (the evidence only orders its choices and adds notes)."""
    with ScriptedLLMServer() as server, Store(tmp_path / "t.db") as store:
        server.on("JSON object", '{"action": {"app": "Settings", "type": "open_app"}}', '{"action": {"type": "complete"}}')
        settings = Settings(llm=LLMSettings(ollama_host=server.url, model="scripted-model:latest", retries=0))
        played = _play(compose.RunRequest("Open Settings", planner="zeroshot-", autonomy="auto"), settings, store)
        steps = _finished(played).episode.steps
        assert steps[0].executed is not None and steps[0].executed.app == "Settings"  # the model's open_app
        assert all(not s.proposal.planner.endswith(("+screen", "+map")) for s in steps if s.proposal is not None)
        assert server.prompts("JSON object")


def test_a_built_run_on_a_pixel_parse_looks_again_where_the_goal_points_and_says_so():
    """The window's and the MCP path's runs come from ``build_run``: a screen read from pixels
    that shows none of the goal's words is read again, closer; a parser without an OCR
    engine of its own gets no second look."""
    from tests.gui.fakes import ScriptedPhone
    from tests.vision.drawn_pages import faint_target

    with ScriptedLLMServer() as server:
        server.on("Next action:", "tap Clear cache")
        settings = Settings(llm=LLMSettings(ollama_host=server.url, model="scripted-model:latest", retries=0))
        phone = ScriptedPhone()
        phone.next_image, target = faint_target()
        parser = compose.make_parser(settings, mode="vision")
        run = compose.build_run(compose.RunRequest("Clear the cache at the bottom", planner="zeroshot-",
                                                   autonomy="auto", max_steps=1, constrained=False),
                                settings, device=phone, parser=parser, max_wait_s=0.0)
        events = list(drive(run.events))
        compose.close_client(run.client)
    step = events[-1].episode.steps[0]
    assert any("looked again at the bottom of the screen" in n for n in step.proposal.evidence), step.proposal.evidence
    assert step.executed is not None and target.contains(step.executed.touch)
    assert compose.second_look(parser) is not None
    assert compose.second_look(type("OnlyParse", (), {"parse": lambda self, s: None})()) is None
