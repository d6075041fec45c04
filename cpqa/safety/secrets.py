"""Secrets kept out of logs: every log record made in the process is rewritten so the configured keys (and anything
shaped like a key) never reach a handler."""

from __future__ import annotations

import logging
import re

from cpqa.config import Settings

_SECRET_SHAPES = re.compile(
    r"(?P<lead>(?:api[_-]?key|x-api-key|authorization)[\"']?\s*[=:]\s*[\"']?(?:bearer\s+)?)[^\s&\"',;]+"
    r"|sk-ant-[A-Za-z0-9_-]{8,}",
    re.IGNORECASE,
)


class SecretRedactor(logging.Filter):
    """Rewrites log records so configured secrets (and anything shaped like a key) never reach a handler."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "[REDACTED]")
        return _SECRET_SHAPES.sub(lambda m: (m.group("lead") or "") + "[REDACTED]", text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: keep the template, drop the arguments
            message, record.args = str(record.msg), None
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


_REDACTOR = SecretRedactor()
_installed = False


def install_log_redaction(settings: Settings) -> SecretRedactor:
    """Redact ``settings``' secrets from every log record made from now on, by any logger (httpx logs request
    URLs, which carry NCBI's api_key). Idempotent; later calls add further secrets."""
    global _installed
    _REDACTOR.secrets.update(settings.secrets())
    if not _installed:
        previous = logging.getLogRecordFactory()

        def factory(*args, **kwargs) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            _REDACTOR.filter(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True
    return _REDACTOR


__all__ = ["SecretRedactor", "install_log_redaction"]
