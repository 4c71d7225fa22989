"""The LLM call: the unit of caching, limiting, retrying and accounting.

May import: `warehouse`, `core`. It knows no simulator, no recipe and no build: an
endpoint is a URL and a key, whoever serves it.
"""

from memsynth.llm.request import LLMRequest, LLMResponse

__all__ = ["LLMRequest", "LLMResponse"]
