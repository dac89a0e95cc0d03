"""Use cases that join the store to the pure core: import, pool, judge, adjudicate, evaluate."""
