"""The metric module: trec_eval-exact measures (see :func:`evaluate`)."""
