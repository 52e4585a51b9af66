#!/usr/bin/env python3
"""tests/differential.py BERTH: one check, everywhere (issue 23).

For every run spec of examples/ (with examples/policy/config.yaml) and of
tests/data/render/*/ (with its policy.yaml, else the built-in policy), the
verdict and the errors (file, position, path, message) of every face agree:
  local backend:      validate --backend local, explain --backend local,
                      run --dry-run, and the server's validate route;
  kubernetes backend: validate --backend kubernetes, explain --backend
                      kubernetes, and render.
The project's secrets are the store's (none): the CLI's faces get --secrets=.
Prints "ok differential NAME" / "FAIL differential NAME: ..." per spec.
"""
import glob, json, os, re, shutil, subprocess, sys, tempfile, time, urllib.request, urllib.error

berth = os.path.abspath(sys.argv[1])
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tmp = tempfile.mkdtemp()
env = dict(os.environ, BERTH_HOME=os.path.join(tmp, "home"))
for k in ("BERTH_CONFIG", "BERTH_SERVER", "BERTH_TOKEN"):
    env.pop(k, None)


def cli(args, cwd):
    p = subprocess.run([berth] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def errors_of_lines(text):
    return [l for l in text.splitlines() if l and ": warning: " not in l and not l.startswith("berth: ")]


FREE_DISK = re.compile(r"(the machine has )[0-9]+[A-Za-z]*( free)")


def verdict(rc):
    return "valid" if rc == 0 else "refused" if rc == 2 else "error %d" % rc


def explain_errors(out):
    errs, dec, i = [], json.JSONDecoder(), 0
    out = out.strip()
    while i < len(out):
        d, j = dec.raw_decode(out, i)
        errs += [l for l in d.get("refused", []) if ": warning: " not in l]
        i = j
        while i < len(out) and out[i].isspace():
            i += 1
    return errs


def fmt(p):
    at = p.get("file", "")
    if p.get("line"):
        at += ":%d:%d" % (p["line"], p.get("column", 0))
    return "%s: %s%s" % (at, p["path"] + ": " if p.get("path") else "", p["message"])


class Server:
    def __init__(self, cwd, policy):
        self.log = open(os.path.join(tmp, "serve.log"), "a+")
        args = [berth, "serve", "--listen", "127.0.0.1:0"] + (["--config", policy] if policy else [])
        self.p = subprocess.Popen(args, cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
        self.port = None
        for _ in range(200):
            line = self.p.stderr.readline()
            m = re.search(r"\(port (\d+)\)", line)
            if m:
                self.port = m.group(1)
                break
            if not line and self.p.poll() is not None:
                break

    def validate(self, name, text, project):
        url = "http://127.0.0.1:%s/api/v1/projects/%s/validate?file=%s" % (
            self.port, project, urllib.request.quote(name))
        req = urllib.request.Request(url, data=text, method="POST",
                                     headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, body = r.status, json.load(r)
        except urllib.error.HTTPError as e:
            status, body = e.code, json.load(e)
        probs = body.get("problems", body.get("error", {}).get("problems", []))
        probs = [fmt(p) for p in probs if p.get("severity") != "warning"]
        return ("valid" if status == 200 else "refused" if status in (400, 422) else "error %d" % status), probs

    def stop(self):
        self.p.terminate()
        self.p.wait()


token = subprocess.run([berth, "token", "create", "--project", "*", "--role", "admin"], env=env,
                       capture_output=True, text=True).stdout.strip()

# (cwd, policy relative to cwd or None, [spec paths relative to cwd])
groups = []
ex = os.path.join(root, "examples")
specs = sorted(os.path.relpath(f, ex) for f in glob.glob(ex + "/*.yaml") + glob.glob(ex + "/seeds/*.yaml")
               + glob.glob(ex + "/broken/*.yaml"))
groups.append((ex, "policy/config.yaml", specs))
for d in sorted(glob.glob(os.path.join(root, "tests/data/render/*/"))):
    if os.path.exists(os.path.join(d, "spec.yaml")):
        groups.append((d, "policy.yaml" if os.path.exists(os.path.join(d, "policy.yaml")) else None, ["spec.yaml"]))

passed = failed = 0
for cwd, policy, specs in groups:
    server = Server(cwd, policy)
    config = ["--config", policy] if policy else []
    for spec in specs:
        name = os.path.relpath(os.path.join(cwd, spec), root)
        text = open(os.path.join(cwd, spec), "rb").read()
        m = re.search(rb"^project:\s*([a-z0-9-]+)", text, re.M)
        project = m.group(1).decode() if m else "default"
        faces = {}
        rc, out, err = cli(["validate", spec, "--backend", "local", "--secrets="] + config, cwd)
        faces["validate"] = (verdict(rc), errors_of_lines(err))
        rc, out, err = cli(["explain", spec, "--backend", "local", "--secrets=", "-o", "json"] + config, cwd)
        faces["explain"] = (verdict(rc), explain_errors(out) if out.strip() else errors_of_lines(err))
        rc, out, err = cli(["run", spec, "--dry-run"] + config, cwd)
        faces["run --dry-run"] = (verdict(rc), errors_of_lines(err))
        # a policy the server refuses to start with: every CLI face refuses it too
        if server.port:
            faces["server validate"] = server.validate(spec, text, project)
        kfaces = {}
        rc, out, err = cli(["validate", spec, "--backend", "kubernetes", "--secrets="] + config, cwd)
        kfaces["validate"] = (verdict(rc), errors_of_lines(err))
        rc, out, err = cli(["explain", spec, "--backend", "kubernetes", "--secrets=", "-o", "json"] + config, cwd)
        kfaces["explain"] = (verdict(rc), explain_errors(out) if out.strip() else errors_of_lines(err))
        rc, out, err = cli(["render", spec, "--secrets=", "--run-id", "t1"] + config, cwd)
        kfaces["render"] = (verdict(rc), errors_of_lines(err))
        bad = []
        # the machine's free disk is read when each face asks: it moves between two faces
        # while anything else writes to the disk, and is not what they could disagree on
        for fs in (faces, kfaces):
            for f, v in fs.items():
                fs[f] = (v[0], [FREE_DISK.sub(r"\1N\2", e) for e in v[1]])
        for label, fs in (("local", faces), ("kubernetes", kfaces)):
            first = next(iter(fs))
            for f, v in fs.items():
                # the same problems; a face may order a stream's documents' apart
                if (v[0], sorted(v[1])) != (fs[first][0], sorted(fs[first][1])):
                    bad.append("%s: %s says %s %s, %s says %s %s" % (label, first, fs[first][0], fs[first][1],
                                                                     f, v[0], v[1]))
        if bad:
            failed += 1
            print("FAIL differential %s: %s" % (name, "; ".join(bad)))
        else:
            passed += 1
            print("ok differential %s (local: %s, kubernetes: %s)" % (name, faces["validate"][0], kfaces["render"][0]))
    server.stop()
shutil.rmtree(tmp, ignore_errors=True)
