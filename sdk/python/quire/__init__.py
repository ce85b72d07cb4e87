"""quire's prompts in Python: a prompt cache (TTL, If-None-Match
revalidation, event-stream refresh, stale-if-error, fallbacks) and local
rendering with exactly the server's Mustache engine.

    from quire import Client
    client = Client("http://127.0.0.1:8080", token=os.environ["QUIRE_TOKEN"])
    with client.prompts(ttl=60, events=True) as prompts:
        out = prompts.render("demo/greeting", {"name": "Ann"})
        print(out["rendered"])
"""

from .client import VERSION, Answer, Client
from .errors import QuireError
from .messages import to_langchain, to_openai_messages
from .prompts import PromptCache
from .render import MAX_DEPTH, MAX_OUTPUT, Template, missing_error, parse_template, placeholder_messages, render_prompt

__version__ = VERSION

__all__ = [
    "Client",
    "Answer",
    "PromptCache",
    "QuireError",
    "Template",
    "parse_template",
    "render_prompt",
    "missing_error",
    "placeholder_messages",
    "to_openai_messages",
    "to_langchain",
    "MAX_OUTPUT",
    "MAX_DEPTH",
    "VERSION",
    "__version__",
]
