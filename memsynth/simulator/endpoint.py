"""memsynth's simulator as an endpoint for one build or session: started on a free loopback
port by the layer that chose `--llm simulator`, and handed to the LLM layer."""

from __future__ import annotations

from memsynth.generation.session import SIMULATOR_API_KEY, Endpoint
from memsynth.simulator.server import MODEL_ID, Simulator, SimulatorThread


def start_endpoint(latency_ms: float = 0.0) -> Endpoint:
    """A fresh simulator serving on loopback, as an `Endpoint` (its `stop` ends it)."""
    thread = SimulatorThread(Simulator(latency_ms=latency_ms)).start()
    return Endpoint(base_url=thread.base_url, api_key=SIMULATOR_API_KEY, model=MODEL_ID, stop=thread.stop)


def endpoint_for(llm: str, latency_ms: float = 0.0) -> Endpoint | None:
    """The simulator for `--llm simulator`; None (the config's endpoint) otherwise."""
    return start_endpoint(latency_ms) if llm == "simulator" else None
