"""fibersync-report: plots, comparisons and an HTML report from fibersync results.

Library use::

    from fibersync_report.load import load_results
    from fibersync_report.compare import compare, format_table
    from fibersync_report.html import build_report
    from fibersync_report.trace import check_trace

    results = load_results(["results/"])
    build_report(results, "results/report")
"""

__version__ = "0.1.0"
