"""Evaluation of crawlers on labelled offline webs (seed 003): ``focused evaluate``
(:mod:`focused.cli.evaluate`)."""

from focused.lab.evaluation.evaluate import evaluate

__all__ = ["evaluate"]
