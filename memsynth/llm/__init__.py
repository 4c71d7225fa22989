"""The LLM call: the unit of caching, limiting, retrying and accounting."""

from memsynth.llm.request import LLMRequest, LLMResponse

__all__ = ["LLMRequest", "LLMResponse"]
