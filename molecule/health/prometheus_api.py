"""The end-to-end scenario's eyes on a real Prometheus, through its HTTP API only.

  prometheus_api.py alerts URL STATE T0 TIMEOUT MATCHER...
      Poll /api/v1/alerts every 0.5 s until every alert MATCHER (a JSON object of labels, e.g.
      '{"alertname": "RdmaFabricHealthError", "host": "health-roce"}') is in STATE (pending, firing)
      or, for STATE resolved, is gone (Prometheus lists only pending and firing alerts). Prints JSON
      {MATCHER: {"pending": s, "firing": s, "resolved": s}}: the seconds from T0 (Unix time) at which
      each state was first seen (a state not seen is absent). Exit 1 on timeout, with what was seen.
  prometheus_api.py queries URL DASHBOARD VARS_JSON MUST_HAVE_DATA_JSON
      Every PromQL expression of the Grafana dashboard (panels' targets[].expr, the templating
      queries), its variables replaced by VARS_JSON ({"host": ".*"}; $__rate_interval and friends
      by Grafana's defaults), as Grafana sends it: an instant target through /api/v1/query, a
      graph's through /api/v1/query_range over the last 10 minutes. Prints one JSON line per
      query; exit 1 when one is not "success", or when a panel titled in MUST_HAVE_DATA_JSON gives
      no series.
Standard library only.
"""
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}


def get(url, path, params=None):
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    try:
        with urllib.request.urlopen(url.rstrip("/") + path + query, timeout=10) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError as exc:  # a bad query answers 400 with a JSON error body
        return json.loads(exc.read().decode() or '{"status": "error", "error": "HTTP %d"}' % exc.code)


def matches(alert, matcher):
    labels = alert.get("labels", {})
    return all(labels.get(k) == v for k, v in matcher.items())


def watch_alerts(url, state, t0, timeout, matchers):
    seen = dict((json.dumps(m, sort_keys=True), {}) for m in matchers)
    deadline = time.time() + timeout
    while True:
        now = time.time()
        alerts = get(url, "/api/v1/alerts").get("data", {}).get("alerts", [])
        done = True
        for key in seen:
            mine = [a for a in alerts if matches(a, json.loads(key))]
            for alert in mine:
                seen[key].setdefault(alert["state"], round(now - t0, 1))
            if state == "resolved":
                if mine:
                    done = False
                else:
                    seen[key].setdefault("resolved", round(now - t0, 1))
            elif state not in seen[key]:
                done = False
        if done:
            return 0, seen
        if now > deadline:
            seen["active_alerts"] = [dict(a["labels"], state=a["state"]) for a in alerts]
            return 1, seen
        time.sleep(0.5)


def expand(expr, variables):
    for name, value in list(GRAFANA_INTERVALS.items()) + list(variables.items()):
        expr = re.sub(r"\$\{%s(:[a-z]+)?\}|\$%s\b" % (name, name), lambda m, v=value: v, expr)
    return expr


def dashboard_queries(dashboard):
    """(title, expr) of every PromQL expression the dashboard holds, nested rows included."""
    out = []

    def panels(items):
        for panel in items:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    out.append((panel.get("title", ""), target["expr"], bool(target.get("instant"))))
            panels(panel.get("panels", []))

    panels(dashboard.get("panels", []))
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var.get("query")
            text = query.get("query", "") if isinstance(query, dict) else (query or "")
            found = re.match(r"^\s*label_values\((.*),\s*\w+\)\s*$", text)
            if found:  # Grafana's label_values(EXPR, LABEL): EXPR is PromQL
                out.append(("variable " + var["name"], found.group(1), True))
            elif text.startswith("query_result("):
                out.append(("variable " + var["name"], text[len("query_result("):-1], True))
    return out


def check_queries(url, path, variables, must_have_data):
    with open(path, encoding="utf-8") as handle:
        dashboard = json.load(handle)
    rc = 0
    now = time.time()
    for title, expr, instant in dashboard_queries(dashboard):
        query = expand(expr, variables)
        if instant:
            answer = get(url, "/api/v1/query", {"query": query, "time": now})
        else:
            answer = get(url, "/api/v1/query_range", {"query": query, "start": now - 600, "end": now, "step": 2})
        series = len(answer.get("data", {}).get("result", [])) if answer.get("status") == "success" else None
        ok = answer.get("status") == "success" and (series or title not in must_have_data)
        rc |= 0 if ok else 1
        print(json.dumps({"panel": title, "query": query, "instant": instant, "status": answer.get("status"), "series": series,
                          "error": answer.get("error"), "ok": bool(ok)}))
    return rc


def main(argv):
    if len(argv) >= 5 and argv[0] == "alerts":
        rc, seen = watch_alerts(argv[1], argv[2], float(argv[3]), float(argv[4]), [json.loads(m) for m in argv[5:]])
        print(json.dumps(seen))
        return rc
    if len(argv) == 5 and argv[0] == "queries":
        return check_queries(argv[1], argv[2], json.loads(argv[3]), json.loads(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
