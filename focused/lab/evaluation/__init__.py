"""Evaluation of crawlers on labelled offline webs (Srinivasan et al. 2005): ``focused evaluate``
(:mod:`focused.cli.evaluate`)."""

from focused.lab.evaluation.evaluate import evaluate

__all__ = ["evaluate"]
