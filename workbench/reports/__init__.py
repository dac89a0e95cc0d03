"""Reports: tables (text, CSV, Markdown, LaTeX, JSON) and SVG plots over the service results."""
