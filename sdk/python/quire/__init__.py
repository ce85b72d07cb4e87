"""quire's prompts in Python: a prompt cache (TTL, If-None-Match
revalidation, event-stream refresh, stale-if-error, fallbacks) and local
rendering with exactly the server's Mustache engine."""

from .errors import QuireError
from .render import MAX_DEPTH, MAX_OUTPUT, Template, missing_error, parse_template, placeholder_messages, render_prompt

__version__ = "1.3.0"

__all__ = ["QuireError", "Template", "parse_template", "render_prompt", "missing_error", "placeholder_messages", "MAX_OUTPUT", "MAX_DEPTH", "__version__"]
