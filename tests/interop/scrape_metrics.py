"""Scrapes a Prometheus endpoint and parses it with the reference parser of the
`prometheus_client` package (the Prometheus text format, as a Prometheus server reads it).

    python scrape_metrics.py http://127.0.0.1:7380/metrics
    {"content_type": "...", "samples": [{"name": ..., "labels": {...}, "value": ...}, ...]}

Exits 1 with the parser's message when the exposition does not parse.
"""

import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main():
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as r:
        content_type = r.headers.get("Content-Type", "")
        text = r.read().decode("utf-8")
    samples = []
    types = {}
    try:
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for s in family.samples:
                samples.append({"name": s.name, "labels": s.labels, "value": s.value})
    except Exception as e:  # the parser raises ValueError and others on bad input
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
    print(json.dumps({"content_type": content_type, "types": types, "samples": samples}))


if __name__ == "__main__":
    main()
