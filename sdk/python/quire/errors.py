"""Errors mirror the API's error answer {error, code, details, request_id}."""

from __future__ import annotations

from typing import Any, Optional


class QuireError(Exception):
    """An error answer of the server, or a local render's error worded as
    the server's. status is the HTTP status, 0 when the server was not
    reached at all."""

    def __init__(self, status: int = 0, code: str = "", message: str = "", details: Optional[dict[str, Any]] = None, request_id: str = ""):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details if details is not None else {}
        self.request_id = request_id

    @property
    def unreachable(self) -> bool:
        """No connection, a timeout, or a 5xx: cached prompts stay in use."""
        return self.status == 0 or self.status >= 500

    def __str__(self) -> str:
        if self.code:
            return f"quire: {self.status} {self.code}: {self.message}"
        return f"quire: {self.status}: {self.message}"

    def __repr__(self) -> str:
        return f"QuireError(status={self.status!r}, code={self.code!r}, message={self.message!r}, details={self.details!r})"
