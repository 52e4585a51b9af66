#!/usr/bin/env python3
"""Instructions per spec of `berth render`, by phase, from two callgrind profiles.

    bench/render_phases.py N PROFILE_N PROFILE_1 [LABEL]

PROFILE_N and PROFILE_1 are callgrind outputs of the same command over N specs and
over 1 (bench/render.sh makes them): each phase's per-spec count is
(inclusive Ir over N specs - over 1 spec) / (N - 1), read with callgrind_annotate.
Prints one Markdown table row per phase: | phase | instructions per spec | share |.

The phases are berth's functions (inclusive):
  libfyaml       fy_parser_parse, fy_parser_event_free, fy_token_get_text and the
                 parser's making, resetting and destroying
  reader         the rest of parse_docs: berth's node tree, the UTF-8 check (and, where
                 a stream is read one document at a time, without the document's use:
                 stream_doc)
  decode         decode_spec (where it is inlined: spec_doc less validate, or
                 spec_parse less the reading and validate)
  validate       berth_spec_validate
  plan           berth_run_plan
  objects        render_objects (every time a run's objects are made)
  writing        emit_yaml and emit_json
  other          the rest: reporting, the command's own work
Standard library only.
"""

import re
import subprocess
import sys

PHASES = [
    ("libfyaml (parser events, scalar text)", ["fy_parser_parse", "fy_parser_event_free",
                                               "fy_token_get_text", "fy_parser_create",
                                               "fy_parser_destroy", "fy_parser_reset",
                                               "fy_diag_create", "fy_diag_destroy"]),
    ("decode (nodes into a run spec)", ["decode_spec"]),
    ("validate", ["berth_spec_validate"]),
    ("plan (policy merge and rules)", ["berth_run_plan"]),
    ("building objects", ["render_objects"]),
    ("writing YAML/JSON", ["emit_yaml", "emit_json"]),
]

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+?):(\S+?)(?:'\d+)?\s+\[")


def inclusive(path):
    """{function: inclusive Ir} of the outermost calls (no 'N recursion levels)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    total = None
    fns = {}
    for line in out.splitlines():
        if total is None and "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
            continue
        m = LINE.match(line)
        if not m or "'" in line.split("[")[0].split(":")[-1]:
            continue
        ir, fn = int(m.group(1).replace(",", "")), m.group(3)
        fns[fn] = max(fns.get(fn, 0), ir)
    return total or 0, fns


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    n = int(argv[1])
    tn, fn_n = inclusive(argv[2])
    t1, fn_1 = inclusive(argv[3])

    def per(names):
        return sum(fn_n.get(f, 0) - fn_1.get(f, 0) for f in names) / (n - 1)

    total = (tn - t1) / (n - 1)
    rows = []
    fy = per(PHASES[0][1])
    reader = per(["parse_docs"]) - fy - per(["stream_doc"])
    rows.append(PHASES[0][0:1] + (fy,))
    rows.append(("reader (berth's node tree, UTF-8 check)", reader))
    for name, fns in PHASES[1:]:
        v = per(fns)
        if fns == ["decode_spec"] and not v and per(["spec_doc"]):
            # decode_spec inlined into spec_doc (a document of a stream, decoded and
            # validated as it is read)
            v = per(["spec_doc"]) - per(["berth_spec_validate"])
        elif fns == ["decode_spec"] and not v:
            # decode_spec inlined into spec_parse (a whole file parsed, then decoded)
            v = per(["spec_parse"]) - per(["berth_yaml_parse_with"]) - per(["berth_spec_validate"])
        rows.append((name, v))
    rows.append(("other (reporting, the command)", total - sum(r[1] for r in rows)))
    rows.append(("total", total))
    for name, v in rows:
        print(f"| {name} | {round(v):,} | {100 * v / total:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
