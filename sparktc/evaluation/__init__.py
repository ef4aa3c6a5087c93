"""Evaluation: from decisions to the numbers the papers print. Contingency-table measures with micro
and macro averages (``metrics``), ranking measures P@K, R@K, RP@K and nDCG@K (``ranking``), Yang & Liu's
significance tests (``significance``), a test set's predictions counted in one pass into contingency tables
(``counting``), the category sets averages are taken over (``category_sets``),
``metrics.json`` assembled over every set (``summary``), ``report.md`` with its tables and plots
(``report``), the house style every plot is drawn in (``figures``), what a notebook shows of an evaluated run
(``notebook``), the per-category contingency tables in the layout of LYRL2004's online appendix 15
(``appendix_tables``), the comparison of k runs as Yang & Liu's Tables 2-3 and Figures 4-5
(``comparison_report``), and what a trained rule does on its own training documents (``training_decisions``).
"""

__all__ = ["appendix_tables", "category_sets", "comparison_report", "counting", "figures", "metrics", "notebook",
           "ranking", "report", "significance", "summary", "training_decisions"]
