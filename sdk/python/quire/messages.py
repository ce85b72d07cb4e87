"""Helpers that hand a rendered prompt to a model API."""

from __future__ import annotations

from typing import Any


def _messages(rendered: dict) -> list[dict]:
    if rendered.get("messages") is not None:
        return [{"role": m["role"], "content": m["content"]} for m in rendered["messages"]]
    return [{"role": "user", "content": rendered["rendered"]}]


def to_openai_messages(rendered: dict) -> dict[str, Any]:
    """A rendered prompt (the answer of render(), local or the server's) as
    an OpenAI chat completions request: {model, messages, **model_params}.
    A chat prompt's messages are passed as they are; a text prompt becomes
    one user message."""
    out: dict[str, Any] = {**(rendered.get("model_params") or {}), "messages": _messages(rendered)}
    if rendered.get("model"):
        out["model"] = rendered["model"]
    return out


def to_langchain(rendered: dict) -> list:
    """A rendered prompt as LangChain messages (SystemMessage, HumanMessage,
    AIMessage, ChatMessage for other roles). Needs langchain_core: an
    ImportError names it when it is not installed."""
    try:
        from langchain_core import messages as lc
    except ImportError as e:
        raise ImportError("to_langchain needs langchain_core: pip install langchain-core") from e
    kinds = {"system": lc.SystemMessage, "user": lc.HumanMessage, "assistant": lc.AIMessage}
    out = []
    for m in _messages(rendered):
        kind = kinds.get(m["role"])
        out.append(kind(content=m["content"]) if kind else lc.ChatMessage(role=m["role"], content=m["content"]))
    return out
