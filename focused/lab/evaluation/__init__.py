"""Evaluation of crawlers on labelled offline webs (seed 003): ``focused evaluate``."""

from focused.lab.evaluation.evaluate import add_arguments, evaluate, run

__all__ = ["add_arguments", "evaluate", "run"]
