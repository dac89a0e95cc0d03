"""workbench: pooling, relevance judging and trec_eval-exact evaluation for IR campaigns."""

__version__ = "0.2.0"  # CHANGELOG.md says what each version brought
