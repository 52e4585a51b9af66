#!/usr/bin/env bash
# scripts/shape.sh [BUILD_DIR]: the shape of the code (issue 20), as numbers for a note.
#
# Run from the repository root after `make` (BUILD_DIR, default build, holds libberth.a and
# the objects BUILD_DIR/obj/src/**.o, BUILD_DIR/obj/{cli,server}/*.o). It reads the tree and
# the objects and writes nothing: no network, no compiler; python3 (standard library), nm and
# ar (binutils). A markdown report on stdout in under a second; the same tree and objects
# give the same report (everything is sorted). It works on src/ by layer (src/base, ...,
# src/backend/{local,kubernetes}) and on the flat src/ of commit 670b432 and older, where a
# file's unit comes from the map FLAT below: the moves of commit 4a983af (rules.c -> plan,
# kube.c -> backend/kubernetes, supervise.c -> backend/local, secret.c -> base).
#
# Units and layers. A file's unit is its folder under src/ (base, spec, plan, render, store,
# backend, service, client), except that src/backend/local/** and src/backend/kubernetes/**
# are units of their own (backend/local, backend/kubernetes; src/backend/*.[ch] is the unit
# backend). A unit's layer is its first component; the layers, low to high:
#     base < spec < plan < render < store < backend < service < client
# A lower layer that calls or includes a higher one goes "up"; backend/local and
# backend/kubernetes calling or including each other is flagged too, in either direction.
#
# Functions (measures 2 and 3), a parser for this code style rather than ctags, which is not
# a dependency (when ctags is installed the report says whether it finds the same ones):
# a line "{" in column 0 opens a function whose signature starts at the nearest line above
# that begins in column 0; the function ends at the next line that begins with "}". The name
# is the identifier before the first "(", attribute macros (BERTH_PRINTF(3, 4)) skipped.
# Comments are blanked first (line numbers kept), string literals kept.
#
# 1. Loops. Symbol graph: file A calls file B when the object of A has an undefined symbol
#    (nm type U) that the object of B defines (any global type: T D B R C W V ...), so a
#    reference to data (an operations table) counts as a call; (n) is the number of distinct
#    symbols. Objects: BUILD_DIR/obj/<file>.o for each src/**/*.c of the tree (objects of
#    files no longer there are ignored; one missing or older than its source is reported).
#    Printed: each file of src/backend/** (and src/service/, src/store/ for context) with the
#    files it calls (those of base/ summed in one entry); the strongly connected components
#    (Tarjan) of more than one file among all src/ files, with the symbols of each edge; the
#    same graph by unit, its upward edges (with their symbols) and its cycles. Include graph:
#    each #include "x" of src/**/*.[ch] resolved as the compiler does (the including file's
#    folder, then -Iinclude -Isrc -Iserver); only headers under src/ make edges (the public
#    include/berth/*.h belongs to no layer); by unit, upward edges (with their lines) and
#    cycles; and the lines of cli/ and server/ that include a header of src/.
#    Not seen: calls through function pointers (the backends' operations are reached through
#    a table, which shows as a data reference to it), static inline functions and macros of
#    headers, calls within one file. Symbols are those of the optimised objects.
# 2. How far resources.mem travels: the files and functions that name the memory request
#    or limit of a run, from the spec to the cgroup write and to the manifest. A line
#    carries it when its code (comments blanked, strings blanked) matches one of
#    CODE_CARRIERS, or one of its string literals matches one of STRING_CARRIERS (the lists
#    below, printed in the report): the member mem (of the spec's resources, the run info,
#    the usage, a demand, a quota, a capacity), a field or variable mem declared, mem_limit,
#    quota_mem, and the strings "mem", "resources.mem.*", the SQL columns, "memory" (the
#    manifest key, the cgroup controller) and the cgroup files that limit memory. Not
#    carriers: what is measured (mem_peak, mem_current, memory.current|peak|events|...) and
#    mem_limit_ratio alone (the function that applies it names resources.mem). Counted:
#    - files: every file with a carrying line (tables and declarations included);
#    - functions naming it: the functions with a carrying line;
#    - + through a table: the functions that name (not as a member) a file-scope table whose
#      initialiser carries it ({"mem", dec_resource, offsetof(berth_resources, mem)}), or a
#      table naming such a table, in the same file (in any file for a global table);
#    separately for src/ (the library: its row is the number for the note), include/
#    (declarations only), cli/ and server/; and src/ without render (spec -> cgroup only).
#    Each file is listed with its functions; "[file scope]" marks carrying lines outside
#    functions. It counts names, not a data flow: a function that handles the value under
#    another name (a parameter called value, a decoder called through a table's function
#    pointer, a generic emitter) is missed, and one that names mem for the machine's
#    capacity, a policy's limits or a project's quota is counted (most of them compare the
#    run's value with it; node_fit.c's own_cgroups and cgroup_mem read the machine's).
# 3. Largest files (lines of .c and .h) and functions (lines from the first line of the
#    signature to the closing brace, both included), top 5 of src/, cli/ and server/ each.
# 4. Exports: the global defined symbols of BUILD_DIR/libberth.a (nm -g --defined-only, any
#    type), all and those without the berth_ prefix, and which of the latter the objects of
#    cli/ and server/ use. Archive members that match no source file of the tree (left by
#    an older layout: ar rcs adds and replaces, never removes) are reported: make clean.
#    Since the archive is one object (libberth.a.o, internal names localised), that one
#    member is expected.
# 5. Files (.c, .h) and lines (newlines) per folder of src/, in the flat layout per unit
#    too; lines of cli/, server/ and include/.
set -eu
BUILD=${1:-build}
[ -d src ] && [ -d include/berth ] || { echo "shape: run from the repository root" >&2; exit 2; }
[ -f "$BUILD/libberth.a" ] && [ -d "$BUILD/obj/src" ] ||
	{ echo "shape: no $BUILD/libberth.a or $BUILD/obj/src (run make)" >&2; exit 2; }
command -v nm >/dev/null && command -v ar >/dev/null && command -v python3 >/dev/null ||
	{ echo "shape: needs nm, ar (binutils) and python3" >&2; exit 2; }
export LC_ALL=C
exec python3 - "$BUILD" <<'PY'
import os, re, subprocess, sys, shutil
from collections import defaultdict

BUILD = sys.argv[1]
LAYERS = ["base", "spec", "plan", "render", "store", "backend", "service", "client"]
# flat src/ (670b432 and older): file stem -> unit, after the moves of commit 4a983af
FLAT = {
    "backend": "backend", "backend_internal": "backend",
    "kube": "backend/kubernetes", "kubeconfig": "backend/kubernetes", "kubernetes": "backend/kubernetes",
    "cgroup": "backend/local", "local": "backend/local", "supervise": "backend/local",
    "arena": "base", "banned": "base", "curl_dl": "base", "dl": "base", "error": "base",
    "internal": "base", "names": "base", "secret": "base", "util": "base", "version": "base",
    "client": "client",
    "explain": "plan", "merge": "plan", "node_fit": "plan", "rules": "plan", "policy": "plan",
    "policy_internal": "plan",
    "emit": "render", "render": "render", "render_internal": "render",
    "auth": "service", "batch": "service", "project": "service",
    "quantity": "spec", "spec": "spec", "spec_internal": "spec", "validate": "spec", "yaml": "spec",
    "store": "store",
}
# measure 2: what carries a run's memory request or limit. CODE_CARRIERS: regular expressions
# on the code with comments removed and string literals blanked; STRING_CARRIERS: on the
# contents of each string literal.
CODE_CARRIERS = [
    (r"(?:\.|->)mem\b", "member mem (resources, run info, usage, demand, quota, capacity)"),
    (r"\b(?:berth_resource|berth_quantity|berth_qty|int64_t)\s+(?:\*?\w+\s*,\s*)*\*?mem\b",
     "a field or variable mem declared (berth_resources.mem of the spec, ...)"),
    (r"\bmem_limit\b", "mem_limit (run info, cgroup limits)"),
    (r"\bquota_mem\b", "quota_mem (what a run counts against its quota)"),
]
STRING_CARRIERS = [
    (r"\b(?:quota_)?mem(?:_limit)?\b",
     'the word mem ("mem", "resources.mem.limits", "limits.mem"), SQL columns mem, mem_limit, quota_mem'),
    (r"^memory$", '"memory" (the manifest key; the cgroup controller)'),
    (r"^memory\.(?:max|swap\.max|limit_in_bytes|memsw\.limit_in_bytes)$", "the cgroup files that limit memory"),
]
CODE_RE = re.compile("|".join("(?:%s)" % c for c, _ in CODE_CARRIERS))
STRING_RE = re.compile("|".join("(?:%s)" % c for c, _ in STRING_CARRIERS))
LITERAL_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"')

def carries(line):
    if CODE_RE.search(LITERAL_RE.sub('""', line)):
        return True
    return any(STRING_RE.search(m[1:-1]) for m in LITERAL_RE.findall(line))

def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()

def files_under(top, exts=(".c", ".h")):
    out = []
    for d, subdirs, names in os.walk(top):
        subdirs.sort()
        out += [os.path.join(d, n) for n in names if n.endswith(exts)]
    return sorted(out)

SRC = files_under("src")
FLAT_LAYOUT = any(os.path.dirname(p) == "src" and p.endswith(".c") for p in SRC)

def unit(path):
    rel = os.path.relpath(path, "src")
    parts = rel.split(os.sep)
    if len(parts) == 1:
        return FLAT.get(os.path.splitext(rel)[0], "?")
    if parts[0] == "backend" and len(parts) > 2:
        return "backend/" + parts[1]
    return parts[0]

def layer(u):
    top = u.split("/")[0]
    return LAYERS.index(top) if top in LAYERS else -1

def short(path):
    return os.path.relpath(path, "src") if path.startswith("src/") else path

def bad_edge(a, b):
    """Why unit a depending on unit b breaks the layering ("" when it does not)."""
    if {a, b} == {"backend/local", "backend/kubernetes"}:
        return "local <-> kubernetes"
    la, lb = layer(a), layer(b)
    if la < 0 or lb < 0:
        return "unknown unit"
    return "up (%s < %s)" % (LAYERS[la], LAYERS[lb]) if la < lb else ""

def strip_comments(text):
    """The text with comments blanked (newlines kept), strings and chars untouched."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)

NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")
ATTR_RE = re.compile(r"\b[A-Z][A-Z0-9_]*\s*\([^()]*\)")   # BERTH_PRINTF(3, 4) before a name

def functions(lines):
    """[(name, first, last)] (1-based, inclusive) for the code style of berth."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].rstrip() == "{":
            s = i - 1
            while s > 0 and lines[s][:1] in (" ", "\t"):
                s -= 1
            m = NAME_RE.search(ATTR_RE.sub(" ", " ".join(lines[s:i])))
            e = i + 1
            while e < len(lines) and not lines[e].startswith("}"):
                e += 1
            out.append((m.group(1) if m else "?", s + 1, e + 1))
            i = e
        i += 1
    return out

CODE, FUNCS, NLINES = {}, {}, {}
ALL = SRC + files_under("include") + files_under("cli") + files_under("server")
for p in ALL:
    t = read(p)
    NLINES[p] = t.count("\n")
    CODE[p] = strip_comments(t).split("\n")
    FUNCS[p] = functions(CODE[p]) if p.endswith(".c") else []

def table(rows, head):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")

try:
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True).stdout.strip() or "?"
except OSError:
    rev = "?"
print("# Shape of the code: %s (%s layout), objects of %s" %
      (rev, "flat src/" if FLAT_LAYOUT else "src/ by layer", BUILD))
print()

# ---- 1. loops -------------------------------------------------------------------------
CFILES = [p for p in SRC if p.endswith(".c")]
objs, missing, stale = {}, [], []
for p in CFILES:
    o = os.path.join(BUILD, "obj", p[:-2] + ".o")
    if not os.path.exists(o):
        missing.append(p)
    else:
        objs[o] = p
        if os.path.getmtime(o) < os.path.getmtime(p):
            stale.append(p)
if missing:
    print("**warning**: no object for %s" % ", ".join(missing))
if stale:
    print("**warning**: object older than its source: %s" % ", ".join(stale))
nm = subprocess.run(["nm", "-A"] + sorted(objs), capture_output=True, text=True, check=True).stdout
defs, undefs = defaultdict(set), defaultdict(set)
definer = {}
for line in nm.splitlines():
    o, _, rest = line.partition(":")
    f = rest.split()
    if len(f) < 2:
        continue
    typ, sym = f[-2], f[-1]
    if typ == "U":
        undefs[objs[o]].add(sym)
    elif typ.isupper():
        defs[objs[o]].add(sym)
        definer.setdefault(sym, objs[o])
calls = defaultdict(lambda: defaultdict(set))   # file -> file -> symbols
for a in CFILES:
    for s in undefs[a]:
        b = definer.get(s)
        if b and b != a:
            calls[a][b].add(s)

def sccs(nodes, edges):
    index, low, on, stack, out, k = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = k[0]; k[0] += 1
        stack.append(v); on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(c for c in out if len(c) > 1)

print("## 1. Loops")
print()
print("Symbol graph (file A -> file B: A uses symbols B defines; (n) distinct symbols; the files")
print("of base/ in one entry). Files of backend/ (and service/, store/ for context):")
print()
for a in CFILES:
    if unit(a).split("/")[0] not in ("backend", "service", "store"):
        continue
    bs = sorted(calls[a], key=lambda b: (layer(unit(b)), b))
    base = [b for b in bs if unit(b) == "base"]
    outs = (["base/* (%d files, %d)" % (len(base), sum(len(calls[a][b]) for b in base))] if base else []) + \
        ["%s (%d)" % (short(b), len(calls[a][b])) for b in bs if unit(b) != "base"]
    print("- `%s` [%s] -> %s" % (short(a), unit(a), ", ".join(outs) or "nothing"))
print()
cyc = sccs(CFILES, {a: set(calls[a]) for a in calls})
print("Cycles among src/ files (strongly connected, > 1 file): %d" % len(cyc))
for c in cyc:
    print("- " + " <-> ".join("`%s`" % short(p) for p in c))
    for a in c:
        for b in c:
            if b in calls[a]:
                print("  - `%s` -> `%s`: %s" % (short(a), short(b), " ".join(sorted(calls[a][b])[:6]) +
                                                (" ..." if len(calls[a][b]) > 6 else "")))

def unit_graph(file_edges):
    g = defaultdict(lambda: defaultdict(int))
    for a, bs in file_edges.items():
        for b, n in bs.items():
            if unit(a) != unit(b):
                g[unit(a)][unit(b)] += n
    return g

def print_units(g, what, detail):
    units = sorted({u for u in g} | {v for u in g for v in g[u]}, key=lambda u: (layer(u), u))
    for u in units:
        if g.get(u):
            print("- %s -> %s" % (u, ", ".join("%s (%d)" % (v, g[u][v])
                                                for v in sorted(g[u], key=lambda v: (layer(v), v)))))
    bad = [(u, v, bad_edge(u, v)) for u in sorted(g) for v in sorted(g[u]) if bad_edge(u, v)]
    ucyc = sccs(set(g) | {v for u in g for v in g[u]}, {u: set(g[u]) for u in g})
    print()
    print("%s going up or across local/kubernetes: %d%s" % (what, len(bad), "" if bad else "."))
    for u, v, why in bad:
        print("- %s -> %s (%d): %s" % (u, v, g[u][v], why))
        for d in detail(u, v):
            print("  - " + d)
    print("%s cycles among units: %d%s" % (what, len(ucyc), "" if ucyc else "."))
    for c in ucyc:
        print("- " + " <-> ".join(c))
    return bad, ucyc

print()
print("Unit graph from symbols (n symbols):")
print()
def sym_detail(u, v):
    return ["`%s` -> `%s`: %s" % (short(a), short(b), " ".join(sorted(calls[a][b])))
            for a in sorted(calls) for b in sorted(calls[a]) if unit(a) == u and unit(b) == v]
print_units(unit_graph({a: {b: len(s) for b, s in bs.items()} for a, bs in calls.items()}), "Calls", sym_detail)

INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

def resolve(p, name):
    for d in (os.path.dirname(p), "include", "src", "server"):
        t = os.path.normpath(os.path.join(d, name))
        if os.path.exists(t):
            return t
    return None

inc = defaultdict(lambda: defaultdict(int))
inc_lines = defaultdict(list)
front = []   # cli/ and server/ including headers of src/
for p in ALL:
    for ln, line in enumerate(CODE[p], 1):
        m = INC_RE.match(line)
        t = m and resolve(p, m.group(1))
        if not t or not t.startswith("src/") or t == p:
            continue
        if p.startswith("src/"):
            inc[p][t] += 1
            if unit(p) != unit(t):
                inc_lines[(unit(p), unit(t))].append("%s:%d %s" % (short(p), ln, m.group(1)))
        elif p.startswith(("cli/", "server/")):
            front.append("%s:%d %s" % (p, ln, m.group(1)))
print()
print("Unit graph from #include (n include lines of src/ headers):")
print()
print_units(unit_graph(inc), "Includes", lambda u, v: inc_lines[(u, v)])
print("cli/ and server/ including headers of src/ (not include/berth/): %d%s" % (len(front), "" if front else "."))
for l in front:
    print("- " + l)
print()

# ---- 2. resources.mem -----------------------------------------------------------------
print("## 2. How far resources.mem travels")
print()
print("Carriers, in code (comments removed, strings blanked):")
for c, why in CODE_CARRIERS:
    print("- `%s`: %s" % (c, why))
print("and in string literals:")
for c, why in STRING_CARRIERS:
    print("- `%s`: %s" % (c, why))
print()
TABLE_RE = re.compile(r"(\w+)\s*(?:\[[^\]]*\]\s*)*=")

def in_function(p, i):
    return next((f for f in FUNCS[p] if f[1] <= i <= f[2]), None)

def names(t, text):
    """Whether text (code, strings blanked) names t itself, not a member t of something."""
    return re.search(r"(?<!\.)(?<!->)\b%s\b" % re.escape(t), LITERAL_RE.sub('""', text)) is not None

def table_of(p, i):
    """The name of the file-scope initialised object (a table) line i is in, or None."""
    s = i
    while s > 1 and CODE[p][s - 1][:1] in (" ", "\t", "", "{"):
        s -= 1
    m = TABLE_RE.search(CODE[p][s - 1].split("{")[0])
    return m.group(1) if m else None

direct, scope, tables = {}, {}, {}   # tables: (file, name) -> global?
for p in ALL:
    hit = [i for i, l in enumerate(CODE[p], 1) if carries(l)]
    if not hit:
        continue
    direct[p] = sorted({in_function(p, i) for i in hit} - {None}, key=lambda f: f[1])
    scope[p] = any(in_function(p, i) is None for i in hit)
    for i in hit:
        t = None if in_function(p, i) else table_of(p, i)
        if t:
            tables[(p, t)] = t in definer
# a table that names a carrying table carries too (nested field tables), to a fixed point
while True:
    more = {}
    for p in ALL:
        for i, l in enumerate(CODE[p], 1):
            if in_function(p, i):
                continue
            for (tp, t), glob in tables.items():
                if (tp == p or glob) and names(t, l):
                    u = table_of(p, i)
                    if u and u != t and (p, u) not in tables:
                        more[(p, u)] = u in definer
    if not more:
        break
    tables.update(more)
via = defaultdict(list)   # file -> [(function, table)]
for p in ALL:
    for f in FUNCS[p]:
        if f in direct.get(p, ()):
            continue
        body = "\n".join(CODE[p][f[1] - 1:f[2]])
        t = next((t for (tp, t), glob in sorted(tables.items()) if (tp == p or glob)
                  and names(t, body)), None)
        if t:
            via[p].append((f, t))
files = sorted(set(direct) | set(via))
rows = []
for area in ("src", "include", "cli", "server", None):
    ps = [p for p in files if area is None or p.startswith(area + "/")]
    rows.append(("%s/" % area if area else "**all**", len(ps), sum(len(direct.get(p, ())) for p in ps),
                 sum(len(via[p]) for p in ps),
                 len({unit(p) for p in ps}) if area == "src" else "-"))
table(rows, ["area", "files", "functions naming it", "+ through a table", "units"])
print()
nr = [p for p in files if p.startswith("src/") and unit(p) != "render"]
print("src/ without render (spec -> cgroup write only): %d files, %d + %d functions" % (
    len(nr), sum(len(direct.get(p, ())) for p in nr), sum(len(via[p]) for p in nr)))
print("Tables that carry it: %s" % ", ".join("%s (%s)" % (t, short(p)) for p, t in sorted(tables)))
print()
for p in sorted(files, key=lambda p: (not p.startswith("src/"), layer(unit(p)) if p.startswith("src/") else 0, p)):
    names = [f[0] for f in direct.get(p, ())] + (["[file scope]"] if scope.get(p) else [])
    names += ["%s (via %s)" % (f[0], t) for f, t in via[p]]
    tag = (" [%s]" % unit(p)) if p.startswith("src/") else ""
    print("- `%s`%s %d+%d: %s" % (p, tag, len(direct.get(p, ())), len(via[p]), ", ".join(names)))
ct = shutil.which("ctags")
if ct:
    got, want = set(), set()
    cs = [p for p in ALL if p.endswith(".c")]
    r = subprocess.run([ct, "-x", "--c-kinds=f", "--language-force=C"] + cs, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split(None, 4)
        if len(f) >= 4 and f[1] == "function":
            got.add((f[3], f[0], int(f[2])))
        elif len(f) >= 3 and f[1].isdigit():   # exuberant ctags: name line file text
            got.add((f[2], f[0], int(f[1])))
    for p in cs:
        for name, first, last in FUNCS[p]:
            # ctags gives the line of the name; ours is the first line of the signature
            want.add((p, name, next(i for i in range(first, last + 1) if re.search(r"\b%s\s*\(" % re.escape(name), CODE[p][i - 1]))))
    print()
    print("Function parser vs %s: %d functions here, %d from ctags, %d in both" %
          (os.path.basename(ct), len(want), len(got), len(want & got)))
    for x in sorted(want ^ got)[:10]:
        print("  - %s %s:%s %s" % ("only here:" if x in want else "only ctags:", x[0], x[2], x[1]))
print()

# ---- 3. largest -----------------------------------------------------------------------
print("## 3. Largest files and functions (lines)")
print()
for area in ("src", "cli", "server"):
    ps = [p for p in ALL if p.startswith(area + "/")]
    top_f = sorted(ps, key=lambda p: (-NLINES[p], p))[:5]
    fn = sorted(((l - f + 1, p, n) for p in ps for n, f, l in FUNCS[p]), key=lambda x: (-x[0], x[1], x[2]))[:5]
    print("- %s/ files: %s" % (area, ", ".join("`%s` %d" % (short(p), NLINES[p]) for p in top_f)))
    print("- %s/ functions: %s" % (area, ", ".join("`%s` (%s) %d" % (n, short(p), l) for l, p, n in fn)))
print()

# ---- 4. exports -----------------------------------------------------------------------
print("## 4. Exported symbols of %s/libberth.a" % BUILD)
print()
lib = os.path.join(BUILD, "libberth.a")
members = subprocess.run(["ar", "t", lib], capture_output=True, text=True, check=True).stdout.split()
known = {os.path.basename(p)[:-2] + ".o" for p in CFILES}
# the Makefile makes the objects one (libberth.a.o, ld -r) before archiving it
extra = sorted(set(members) - known - {"libberth.a.o"})
if extra:
    print("**warning**: members of no source file of this tree (an older layout?): %s" % " ".join(extra))
out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
syms = {}
for line in out.splitlines():
    f = line.split()
    if len(f) >= 2 and not line.endswith(":"):
        syms[f[-1]] = f[-2]
odd = sorted(s for s in syms if not s.startswith("berth_"))
print("Global defined symbols: %d; without the berth_ prefix: %d" % (len(syms), len(odd)))
if odd:
    print()
    print(", ".join("`%s` %s" % (s, syms[s]) for s in odd))
fe = sorted(os.path.join(d, n) for top in ("cli", "server") for d, _, ns in os.walk(os.path.join(BUILD, "obj", top))
            for n in ns if n.endswith(".o"))
used = defaultdict(set)
if fe:
    for line in subprocess.run(["nm", "-A", "-u"] + fe, capture_output=True, text=True, check=True).stdout.splitlines():
        o, _, rest = line.partition(":")
        f = rest.split()
        if f and f[-1] in syms and not f[-1].startswith("berth_"):
            used[f[-1]].add(os.path.relpath(o, os.path.join(BUILD, "obj")).split(os.sep)[0])
print()
print("Of those, used by the objects of cli/ and server/: %d%s" % (len(used), "" if used else "."))
if used:
    print(", ".join("`%s` (%s)" % (s, "+".join(sorted(used[s]))) for s in sorted(used)))
print()

# ---- 5. files per folder --------------------------------------------------------------
print("## 5. Files and lines of src/")
print()
def per(key):
    g = defaultdict(lambda: [0, 0, 0])
    for p in SRC:
        k = key(p)
        g[k][0 if p.endswith(".c") else 1] += 1
        g[k][2] += NLINES[p]
    return [(k, a, b, c) for k, (a, b, c) in sorted(g.items(), key=lambda kv: (layer(kv[0]) if kv[0] in FLAT.values() else -1, kv[0]))]
rows = per(lambda p: os.path.dirname(os.path.relpath(p, "src")) or ".")
rows.append(("**total**", sum(r[1] for r in rows), sum(r[2] for r in rows), sum(r[3] for r in rows)))
table(rows, ["folder", ".c", ".h", "lines"])
if FLAT_LAYOUT:
    print()
    table(per(unit), ["unit (flat map)", ".c", ".h", "lines"])
print()
print("Lines of cli/: %d, server/ (.c, .h): %d, include/: %d" % tuple(
    sum(NLINES[p] for p in ALL if p.startswith(a + "/")) for a in ("cli", "server", "include")))
PY
