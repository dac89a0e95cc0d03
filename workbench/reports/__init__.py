"""Reports rendered from the service results: whole reports (the evaluation report's sections,
pipeline and formats; agreement, query logs, assessors, simulations) as tables (text, CSV,
Markdown, LaTeX, JSON) and SVG plots."""
