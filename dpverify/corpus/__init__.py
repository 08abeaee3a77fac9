"""Published privacy claims as data (corpus/*.jsonl) and their certified audit."""

from .audit import AuditRow, audit
from .claims import CorpusClaim, load_corpus

__all__ = ["AuditRow", "CorpusClaim", "audit", "load_corpus"]
