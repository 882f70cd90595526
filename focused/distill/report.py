"""A distiller run for people (``focused hubs``, ``focused distill``) and for machines (--json)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from focused.distill.job import Distillation


def as_json(crawl: str, result: Distillation) -> dict[str, Any]:
    out = asdict(result)
    for name in ("hubs", "top_authorities"):
        out[name] = [{"url": url, "score": round(score, 6)} for url, score in out[name]]
    out["authorities_found"], out["authorities"] = out["authorities"], out.pop("top_authorities")
    return {"crawl": crawl, **out}


def format_result(crawl: str, result: Distillation) -> str:
    lines = [
        f"Crawl {crawl}: {result.pages:,} pages, {result.authorities:,} authorities "
        f"(R >= {result.rho:.3f}), {result.edges:,} hub -> authority links between servers, "
        f"{result.iterations} rounds, {result.seconds:.2f} s",
    ]
    for title, ranked in (("Hubs", result.hubs), ("Authorities", result.top_authorities)):
        lines.append(f"{title}:")
        lines += [f"  {i:>3}  {score:.4f}  {url}" for i, (url, score) in enumerate(ranked, 1)]
        if not ranked:
            lines.append("  (none yet: no links between servers into relevant pages)")
    return "\n".join(lines)
