#!/usr/bin/env python3
"""webhook_schedule_check.py <repo>

The retry schedule the reference pages tell partners against the one the
webhooks module uses: the default waits of modules/webhooks/schedule.hpp
(kDefaultScheduleMs) and of the directive's default in
lua-free-config/webhooks_conf.cpp (kDefaultSchedule, what nginx runs when
mr_webhook_schedule is not set), and every sentence of docs/api-reference.md
and of docs/openapi.yaml (the webhooks section) that gives the schedule:
"The first attempt goes out at once; each retry waits <w>, ... and <w> after
the failed attempt before it (<n> attempts in about <h> hours)".
"""
import pathlib
import re
import sys

UNITS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000}
SENTENCE = re.compile(
    r"first\s+attempt\s+goes\s+out\s+at\s+once;\s+each\s+retry\s+waits\s+(?P<waits>.+?)\s+after\s+the\s+failed"
    r"\s+attempt\s+before\s+it\s+\((?P<n>\d+)\s+attempts\s+in\s+about\s+(?P<hours>[\d.]+)\s+hours\)", re.S)


def cpp_array(text, name):
    m = re.search(name + r"\s*=\s*\{([^}]*)\}", text)
    if not m:
        sys.exit(f"webhook_schedule_check: no {name} = {{...}} found")
    return [int(v.replace("'", "")) for v in m.group(1).replace("\n", " ").split(",") if v.strip()]


def waits_ms(text):
    out = []
    for part in re.split(r",\s*|\s+and\s+", " ".join(text.split())):
        m = re.fullmatch(r"(\d+)\s*(ms|s|min|h)", part.strip())
        if not m:
            raise ValueError(f"cannot read the wait {part!r}")
        out.append(int(m.group(1)) * UNITS[m.group(2)])
    return out


def main():
    repo = pathlib.Path(sys.argv[1])
    module = cpp_array((repo / "modules/webhooks/schedule.hpp").read_text(), "kDefaultScheduleMs")
    directive = cpp_array((repo / "lua-free-config/webhooks_conf.cpp").read_text(), "kDefaultSchedule")
    problems = []
    if directive != module:
        problems.append(f"the directive's default {directive} is not the module's {module}")
    if module[0] != 0:
        problems.append(f"the module's first wait is {module[0]} ms, the docs say at once")
    span_hours = sum(module) / 3_600_000
    sentences = 0
    for page in ("docs/api-reference.md", "docs/openapi.yaml"):
        text = (repo / page).read_text()
        # YAML block text is indented: compare words, not line breaks.
        flat = " ".join(text.split())
        found = list(SENTENCE.finditer(flat))
        if not found:
            problems.append(f"{page}: no sentence giving the retry schedule")
        for m in found:
            sentences += 1
            try:
                docs = [0] + waits_ms(m.group("waits"))
            except ValueError as err:
                problems.append(f"{page}: {err}")
                continue
            if docs != module:
                problems.append(f"{page}: the schedule {docs} (ms) is not the module's {module}")
            if int(m.group("n")) != len(module):
                problems.append(f"{page}: {m.group('n')} attempts, the module makes {len(module)}")
            if abs(float(m.group("hours")) - span_hours) > 0.05:
                problems.append(f"{page}: about {m.group('hours')} hours, the module's span is {span_hours:.2f}")
        # The wording the docs had before: "retried at once, then after 5 s".
        if re.search(r"retried\s+at\s+once", flat):
            problems.append(f"{page}: says a failed attempt is retried at once")
    for p in problems:
        print(f"webhook_schedule_check: {p}")
    print(f"webhook_schedule_check: module schedule {module} ms ({span_hours:.1f} h), {sentences} sentences "
          f"in the docs, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
