"""Evaluation: from decisions to the numbers the papers print. Contingency-table measures with micro
and macro averages (``metrics``), ranking measures P@K, R@K, RP@K and nDCG@K (``ranking``), Yang & Liu's
significance tests (``significance``), the category sets averages are taken over (``category_sets``),
``metrics.json`` assembled over every set (``summary``), and ``report.md`` with its tables and plots
(``report``)."""

__all__ = ["category_sets", "metrics", "ranking", "report", "significance", "summary"]
