#!/usr/bin/env bash
# berth serve, driven over HTTP on loopback (curl): the run lifecycle, auth
# across projects, secrets never shown, 422 with positions, 413, 404, 405,
# the OpenAPI document against the route table, metrics, a full data dir (507,
# /healthz 503; on a small tmpfs when mount is allowed), and recovery after
# kill -9 of the server while runs are being submitted.
# Prints "ok NAME" / "FAIL NAME" per check.
#   tests/server.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tier=server
. "$(cd "$(dirname "$0")" && pwd)/serve_lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN BERTH_STORE
on_test_store || { echo "FAIL $tier store: no database of its own"; exit 1; }
pids=()
# a sleep of this run's own (another test run on this machine has its own): what it
# finds and kills by name is this run's
nap=3600.5$$
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	pkill -f "sleep $nap" 2>/dev/null
	for id in $("$berth" get runs --state Running -o json 2>/dev/null | sed -n 's/.*"id": "\(.*\)".*/\1/p'); do
		"$berth" stop "$id" --grace 0 >/dev/null 2>&1
	done
	[ -n "${mounted:-}" ] && umount -l "$mounted" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 2Gi}
  grace_period: 1
profiles:
  - {id: tiny, resources: {mem: 48Mi}}
projects:
  beta:
    profiles:
      - {id: beta-big, resources: {mem: 64Mi}}
    defaults:
      envs: [{name: TEAM, value: beta}]
    security: {secret_writers: user}
EOF

# stop_project P: every run of project P stopped, and waited for (anonymous: --insecure-local)
stop_project() {
	for id in $(call GET "/api/v1/projects/$1/runs" >/dev/null; json '" ".join(r["id"] for r in d["items"])' <body); do
		call POST "/api/v1/runs/$id/stop?grace=0&wait=true" >/dev/null
	done
}

spec() { # NAME CMD [PROJECT]
	printf 'project: %s\nfunction:\n  name: %s\n  image: busybox\n  command: [sh, -c, %s]\nresources: {cpu: 100m, mem: 32Mi}\n' \
		"${3:-default}" "$1" "'$2'"
}

# ---- tokens, then a server that needs them -------------------------------------------
admin=$("$berth" token create --project '*' --role admin 2>/dev/null)
usera=$("$berth" token create --project alpha --role user 2>/dev/null)
viewa=$("$berth" token create --project alpha --role viewer 2>/dev/null)
adminb=$("$berth" token create --project beta --role admin 2>/dev/null)
if [ -n "$admin" ] && [ -n "$usera" ] && "$berth" token list >out && grep -q 'role: viewer' out &&
	! grep -q "$usera" out && ! store_dump | grep -aq -- "${usera#berth_}"; then
	ok token-create-hashed
else
	fail token-create-hashed "tokens: '$admin' '$usera'"
fi
start
[ -n "${port:-}" ] || { fail start "no port in the log"; cat "$slog"; exit 0; }

# ---- health, metrics, OpenAPI ----------------------------------------------------------
if [ "$(call GET /healthz)" = 200 ] && [ "$(json 'd["status"]' <body)" = ok ]; then
	ok healthz
else
	fail healthz "$(cat body)"
fi
st=$(call GET /api/v1/openapi.json)
"$berth" serve --routes | sort >routes
json '"\n".join(sorted(m.upper()+" "+p for p,o in d["paths"].items() for m in o if m in ("get","post","put","delete","patch")))' <body >documented
if [ "$st" = 200 ] && [ -s routes ] && diff routes documented >out; then
	ok openapi-every-route
else
	fail openapi-every-route "routes (<) and the document (>) differ"
fi
if [ -d "$root/tests/schema/node_modules/@apidevtools/swagger-parser" ]; then
	node "$root/tests/schema/openapi.js" body >out 2>&1 && grep -q '^ok' out && ok openapi-valid ||
		fail openapi-valid "$(cat out)"
else
	echo "skip server openapi-valid (tests/schema has no node_modules: scripts/deps-npm.sh)"
fi

# ---- refusals: 401, 403, 404, 405, 413 -------------------------------------------------
spec hello 'echo hello from $BERTH_RUN_ID' alpha >hello.yaml
s1=$(call POST /api/v1/runs --data-binary @hello.yaml)
grep -q '"unauthorized"' body && h1=$(curl -s -D - -o /dev/null -X POST "$url/api/v1/runs" | grep -ci 'www-authenticate: bearer')
s2=$(call -t berth_not-a-real-token GET /api/v1/runs)
if [ "$s1" = 401 ] && [ "${h1:-0}" = 1 ] && [ "$s2" = 401 ] && grep -q '"error"' body; then
	ok auth-401
else
	fail auth-401 "no token: $s1, bad token: $s2"
fi
s1=$(call -t "$viewa" POST /api/v1/runs --data-binary @hello.yaml)
s2=$(call -t "$adminb" POST /api/v1/projects/alpha/runs --data-binary @hello.yaml)
s3=$(call -t "$usera" PUT /api/v1/projects/alpha/secrets/db -d '{"value": "x"}')
s4=$(call -t "$usera" GET /api/v1/projects/beta/runs)
s5=$(call -t "$usera" POST /api/v1/projects --data '{"name": "gamma"}')
s6=$(call -t "$usera" GET /api/v1/policy)
if [ "$s1$s2$s3$s4$s5$s6" = 403403403403403403 ] && grep -q '"forbidden"' body; then
	ok auth-403-roles-and-projects
else
	fail auth-403-roles-and-projects "viewer run $s1, other project $s2, user secret $s3, other list $s4, project $s5, policy $s6"
fi
# a project's quota: its viewer reads it; another project's token does not; a name that is
# no project's is refused as such
s1=$(call -t "$viewa" GET /api/v1/projects/alpha/quota)
s2=$(call -t "$usera" GET /api/v1/projects/beta/quota)
s3=$(call -t "$admin" GET /api/v1/projects/Bad_Name/quota)
if [ "$s1$s2" = 200403 ] && [ "${s3:0:1}" = 4 ]; then
	ok quota-route-scoped
else
	fail quota-route-scoped "own viewer $s1, other project $s2, bad name $s3"
fi
s1=$(call -t "$admin" GET /api/v1/nothing)
s2=$(call -t "$admin" DELETE /api/v1/projects)
allow=$(curl -s -D - -o /dev/null -X DELETE -H "Authorization: Bearer $admin" "$url/api/v1/projects" | tr -d '\r' | sed -n 's/^Allow: //p')
s3=$(call -t "$admin" GET /api/v1/runs/nosuchrun)
if [ "$s1$s2$s3" = 404405404 ] && [ "$allow" = "GET, POST" ]; then
	ok 404-405
else
	fail 404-405 "route $s1, method $s2 (Allow '$allow'), run $s3"
fi
head -c 3000000 /dev/zero | tr '\0' a >huge
s1=$(call -t "$usera" POST /api/v1/runs --data-binary @huge)
s2=$(call -t "$usera" POST /api/v1/runs -H 'Transfer-Encoding: chunked' --data-binary @huge)
if [ "$s1$s2" = 413413 ] && grep -q '"too-big"' body && kill -0 "$spid"; then
	ok 413-body-cap
else
	fail 413-body-cap "declared $s1, chunked $s2"
fi
# 100,000 nested lists (200 KB): refused at the 65th level with its place, by every route
# that reads a spec, and the server goes on
python3 -c 'print("[" * 100000)' >deep.json
s1=$(call -t "$usera" POST /api/v1/parse --data-binary @deep.json)
where=$(json 'd["error"]["problems"][0]["line"], d["error"]["problems"][0]["column"], d["error"]["code"]' <body 2>/dev/null)
s2=$(call -t "$usera" POST /api/v1/projects/alpha/validate --data-binary @deep.json)
s3=$(call -t "$usera" POST /api/v1/runs --data-binary @deep.json)
s4=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @deep.json)
if [ "$s1$s2$s3$s4" = 413413413413 ] && [ "$where" = "1 65 too-big" ] && [ "$(call GET /healthz)" = 200 ]; then
	ok deep-nesting-413-with-place
else
	fail deep-nesting-413-with-place "parse $s1 ($where), validate $s2, runs $s3, functions $s4"
fi

# ---- 422: every problem, with positions, as the CLI prints them ---------------------------
printf 'project: alpha\nfunction:\n  name: bad\n  command: [x]\nresources:\n  mem: 32Gb\n  cpu: "-1"\nnode_selectr: {a: b}\n' >bad.yaml
st=$(call -t "$usera" POST '/api/v1/runs?file=bad.yaml' --data-binary @bad.yaml)
"$berth" validate bad.yaml 2>cli.txt
json '"\n".join(p["text"] for p in d["error"]["problems"])' <body >api.txt
if [ "$st" = 422 ] && [ "$(json 'len(d["error"]["problems"])' <body)" = 3 ] &&
	[ "$(json 'd["error"]["problems"][0]["line"]' <body)" = 6 ] &&
	[ "$(json 'd["error"]["problems"][0]["column"]' <body)" = 8 ] && diff cli.txt api.txt >out; then
	ok 422-problems-with-positions
else
	fail 422-problems-with-positions "status $st"
fi
"$berth" get runs -o json >out 2>&1
if grep -q '"name": "bad' out; then fail 422-nothing-created "a refused run was stored"; else ok 422-nothing-created; fi
# a spec that is not YAML is refused by the parse, before the store's lock is taken: its place,
# nothing stored, and the server goes on answering
printf 'function:\n  name: broken\n  command: [x\n' >broken.yaml
st=$(call -t "$usera" POST '/api/v1/runs?file=broken.yaml' --data-binary @broken.yaml)
where=$(json 'd["error"]["problems"][0]["file"] + " " + str(d["error"]["problems"][0]["line"])' <body 2>/dev/null)
st2=$(call GET /healthz)
"$berth" get runs -o json >out 2>&1
if [ "$st" = 422 ] && [ "$where" = "broken.yaml 4" ] && [ "$st2" = 200 ] && ! grep -q '"name": "broken' out; then
	ok post-runs-syntax-error
else
	fail post-runs-syntax-error "status $st at $where, then $st2"
fi

# ---- what the web UI asks besides runs: parse, validate with warnings, its files -------
printf 'function: {name: p, command: [a, "1"]}\nresources: {cpu: 2, mem: "1Gi"}\nlabels: {x: true}\n' >parse.yaml
st=$(call -t "$viewa" POST /api/v1/parse --data-binary @parse.yaml)
if [ "$st" = 200 ] && [ "$(json 'd[0]["resources"]["cpu"], d[0]["resources"]["mem"], d[0]["labels"]["x"], d[0]["function"]["command"], len(d)' <body)" = "2 1Gi True ['a', '1'] 1" ]; then
	ok parse-documents-as-data
else
	fail parse-documents-as-data "status $st: $(head -c 300 body)"
fi
printf 'a: [1\n' >unclosed.yaml
s1=$(call -t "$viewa" POST '/api/v1/parse?file=u.yaml' --data-binary @unclosed.yaml)
where=$(json 'd["error"]["problems"][0]["file"], d["error"]["problems"][0]["line"]' <body 2>/dev/null)
s2=$(call POST /api/v1/parse --data-binary @unclosed.yaml)
if [ "$s1" = 422 ] && [ "$where" = "u.yaml 2" ] && [ "$s2" = 401 ]; then
	ok parse-syntax-422-and-401
else
	fail parse-syntax-422-and-401 "bad yaml $s1 at $where, no token $s2"
fi
# seed 004's trailing comma: accepted, with a warning at its place
printf 'project: alpha\nname: "warned",\nfunction: {name: v, command: [x]}\n' >warn.yaml
st=$(call -t "$viewa" POST /api/v1/projects/alpha/validate --data-binary @warn.yaml)
if [ "$st" = 200 ] && [ "$(json 'd["problems"][0]["severity"]' <body)" = warning ] &&
	[ "$(json 'd["problems"][0]["line"]' <body)" = 2 ]; then
	ok validate-warnings-in-body
else
	fail validate-warnings-in-body "status $st: $(head -c 400 body)"
fi
# a profile decides the resources it sets whole: the user's values it overrides are
# named in the create answer's warnings, at the user's place (issue 23)
{ spec tiny true alpha; printf 'profile: tiny\n'; } | sed 's/mem: 32Mi/mem: {requests: 16Mi, limits: 24Mi}/' >tiny.yaml
st=$(call -t "$usera" POST '/api/v1/runs?file=tiny.yaml' --data-binary @tiny.yaml)
warned=$(json '"\n".join(w["text"] for w in d["warnings"])' <body 2>/dev/null)
tid=$(json 'd["id"]' <body 2>/dev/null)
# gone again, so that the project's runs are those the tests below count
[ -n "$tid" ] && tok=$usera wait_final "$tid" >/dev/null && call -t "$usera" DELETE "/api/v1/runs/$tid" >/dev/null
if [ "$st" = 201 ] && grep -q 'tiny.yaml:6:[0-9]*: warning: resources.mem.requests: 16Mi from the run spec is overridden by profile "tiny"' <<<"$warned" &&
	grep -q 'resources.mem.limits: 24Mi from the run spec is overridden by profile "tiny", which decides resources.mem whole' <<<"$warned"; then
	ok create-warns-profile-overrides
else
	fail create-warns-profile-overrides "status $st: $(head -c 600 body)"
fi
# the UI's page and files: compiled in, no token, and a policy that forbids anything
# from elsewhere
st=$(curl -s -D headers -o page.html -w '%{http_code}' "$url/")
s2=$(call GET /ui/app.js)
s3=$(call GET /ui/app.css)
s4=$(call GET /ui/nothing.js)
if [ "$st" = 200 ] && grep -qi '^content-type: text/html' headers && cmp -s page.html "$root/web/index.html" &&
	grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" headers &&
	[ "$s2$s3$s4" = 200200404 ]; then
	ok ui-files
else
	fail ui-files "/ $st, app.js $s2, app.css $s3, unknown $s4"
fi
# compressed for a client that takes gzip (the same bytes once inflated, a third of them
# sent), as written for one that does not or refuses it (q=0)
gzs=$(curl -s -D gz.h -o app.js.gz -w '%{size_download}' -H 'Accept-Encoding: br, gzip;q=0.8' "$url/ui/app.js")
raws=$(curl -s -D raw.h -o app.js -w '%{size_download}' -H 'Accept-Encoding: gzip;q=0' "$url/ui/app.js")
if grep -qi '^content-encoding: gzip' gz.h && grep -qi '^vary: accept-encoding' gz.h && ! grep -qi '^content-encoding' raw.h &&
	gzip -dc app.js.gz | cmp -s - "$root/web/app.js" && cmp -s app.js "$root/web/app.js" && [ "$gzs" -lt $((raws / 2)) ]; then
	ok ui-files-gzip
else
	fail ui-files-gzip "gzip $gzs bytes, raw $raws bytes: $(tr -d '\r' <gz.h | grep -i '^content-' | tr '\n' ' ')"
fi

# ---- the lifecycle of a run -------------------------------------------------------------
st=$(call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @hello.yaml)
id=$(json 'd["id"]' <body 2>/dev/null)
final=$(tok=$usera wait_final "$id")
if [ "$st" = 201 ] && [ "$final" = Succeeded ]; then ok create-to-succeeded; else fail create-to-succeeded "status $st, state $final"; fi
call -t "$viewa" GET "/api/v1/runs/$id/logs" >/dev/null
if grep -qx "hello from $id" body; then ok logs; else fail logs "$(head -3 body)"; fi
call -t "$viewa" GET "/api/v1/runs/$id/spec" >/dev/null
if json 'd["run"]["id"]' <body | grep -qx "$id" && grep -q '"origin"' body; then ok effective-spec-origins; else fail effective-spec-origins "$(head -c 300 body)"; fi
st=$(call -t "$viewa" GET "/api/v1/runs/$id/manifests")
if [ "$st" = 200 ] && json '[o["kind"] for o in (d if isinstance(d, list) else d.get("items", [d]))]' <body | grep -q Job &&
	[ "$(call -t "$viewa" GET "/api/v1/runs/$id/manifests?format=yaml")" = 200 ] && grep -q '^kind: Job' body; then
	ok manifests
else
	fail manifests "status $st: $(head -c 200 body)"
fi
call -t "$viewa" GET "/api/v1/runs/$id/events" >/dev/null
if [ "$(json '",".join(e["kind"] for e in d["items"])' <body)" = "Submitted,Scheduled,Started,Succeeded" ]; then ok events; else fail events "$(cat body)"; fi
s1=$(call -t "$viewa" DELETE "/api/v1/runs/$id")
s2=$(call -t "$usera" DELETE "/api/v1/runs/$id")
s3=$(call -t "$usera" GET "/api/v1/runs/$id")
if [ "$s1$s2$s3" = 403204404 ] && [ ! -d "$BERTH_HOME/runs/$id" ]; then ok delete; else fail delete "viewer $s1, user $s2, after $s3"; fi

# who submitted a run and its labels are kept with it: the token's id (from the server,
# never the spec), in the record and in the list; a berth command's runs are its user's
{ spec labelled true alpha; printf 'labels: {team: vision, stage: dev}
'; } >labelled.yaml
uida=$("$berth" token list -o json | json '[t["id"] for t in d if t["projects"] == "alpha" and t["role"] == "user"][0]')
st=$(call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @labelled.yaml)
lid=$(json 'd["id"]' <body 2>/dev/null)
made=$(json 'd["submitted_by"], d["labels"]' <body 2>/dev/null)
call -t "$viewa" GET "/api/v1/runs/$lid" >/dev/null
got=$(json 'd["submitted_by"], d["labels"]' <body 2>/dev/null)
call -t "$viewa" GET "/api/v1/projects/alpha/runs?limit=5" >/dev/null
listed=$(json '[(r["submitted_by"], r["labels"]) for r in d["items"] if r["id"] == "'"$lid"'"][0]' <body 2>/dev/null)
want="token:$uida {'team': 'vision', 'stage': 'dev'}"
"$berth" run --config policy.yaml hello.yaml >cli.id 2>out
"$berth" get run "$(cat cli.id)" -o json >cli.json 2>>out
cli_by=$(json 'd["submitted_by"], "labels" in d' <cli.json 2>/dev/null)
if [ "$st" = 201 ] && [ "$made" = "$want" ] && [ "$got" = "$want" ] && [ "$listed" = "('token:$uida', {'team': 'vision', 'stage': 'dev'})" ] &&
	[ "$cli_by" = "user:$(id -un) False" ]; then
	ok run-submitted-by-and-labels
else
	fail run-submitted-by-and-labels "status $st; created [$made], got [$got], listed [$listed], want [$want]; cli [$cli_by]"
fi
# gone again, so that the project's runs are those the tests below count
for x in "$lid" "$(cat cli.id)"; do
	[ -n "$x" ] && tok=$usera wait_final "$x" >/dev/null && call -t "$usera" DELETE "/api/v1/runs/$x" >/dev/null
done

# tokens: an admin lists those it may see, never a token's secret; an admin of beta sees
# beta's tokens only (not the "*" one, not alpha's); a user or viewer none
s1=$(call -t "$admin" GET /api/v1/tokens)
all=$(json 'sorted(t["projects"] for t in d["items"])' <body 2>/dev/null)
secret=$(grep -c -e "${admin#berth_}" -e "${usera#berth_}" -e "${adminb#berth_}" body)
s2=$(call -t "$adminb" GET /api/v1/tokens)
beta=$(json 'sorted(t["projects"] + ":" + t["role"] for t in d["items"])' <body 2>/dev/null)
s3=$(call -t "$usera" GET /api/v1/tokens)
s4=$(call -t "$viewa" GET /api/v1/tokens)
if [ "$s1$s2$s3$s4" = 200200403403 ] && [ "$all" = "['*', 'alpha', 'alpha', 'beta']" ] && [ "$secret" = 0 ] &&
	[ "$beta" = "['beta:admin']" ]; then
	ok tokens-route-scoped
else
	fail tokens-route-scoped "admin of * $s1 ($all, secrets $secret), admin of beta $s2 ($beta), user $s3, viewer $s4"
fi
# the policy's per-run limits and defaults, for every token (the UI's profiles page)
st=$(call -t "$viewa" GET /api/v1/profiles)
if [ "$st" = 200 ] && [ "$(json 'd["limits"]["pids"], len(d["defaults"]["fields"]), d["profiles"][0]["id"]' <body)" = "1024 0 tiny" ]; then
	ok profiles-limits-and-defaults
else
	fail profiles-limits-and-defaults "status $st: $(head -c 300 body)"
fi

# a project's view of the policy (projects.beta over the rest): its own profiles and
# defaults, for its token, or ?project= for one that sees it; another project's token gets
# 403 for it, and a run of another project that names beta's profile is refused as unknown
ids='",".join(p["id"] for p in d["profiles"]), d.get("project"), len(d["defaults"]["fields"]), d["choices"]["secret_writers"]'
s1=$(call -t "$viewa" GET /api/v1/profiles); v1=$(json "$ids" <body 2>/dev/null)
s2=$(call -t "$adminb" GET /api/v1/profiles); v2=$(json "$ids" <body 2>/dev/null)
s3=$(call -t "$admin" GET "/api/v1/profiles?project=beta"); v3=$(json "$ids" <body 2>/dev/null)
s4=$(call -t "$admin" GET /api/v1/profiles); v4=$(json "$ids" <body 2>/dev/null)
s5=$(call -t "$viewa" GET "/api/v1/profiles?project=beta")
# beta's users write its secrets (its overlay's secret_writers), alpha's do not write alpha's
userb=$("$berth" token create --project beta --role user 2>/dev/null)
call -t "$userb" GET /api/v1/whoami >/dev/null; wb=$(json 'd["secret_writers"]' <body 2>/dev/null)
call -t "$usera" GET /api/v1/whoami >/dev/null; wa=$(json 'd["secret_writers"]' <body 2>/dev/null)
w1=$(call -t "$userb" PUT /api/v1/projects/beta/secrets/overlay -d '{"value": "x"}')
w2=$(call -t "$userb" DELETE /api/v1/projects/beta/secrets/overlay)
w3=$(call -t "$usera" PUT /api/v1/projects/alpha/secrets/overlay -d '{"value": "x"}')
{ spec bigger 'true' alpha; echo 'profile: beta-big'; } >beta-profile.yaml
s6=$(call -t "$usera" POST /api/v1/runs --data-binary @beta-profile.yaml)
unknown=$(grep -c 'unknown profile \\"beta-big\\" (known: tiny)' body)
# berth profiles --project P with a server: the same view, as a local policy's is printed
"$berth" profiles --server "$url" --token "$admin" --project beta >cli-beta 2>&1
cli=$(head -n 3 cli-beta | tr '\n' '|')
if [ "$cli" = "profiles of project beta||beta-big|" ] && grep -q "defined at .* (projects.beta.profiles)" cli-beta &&
	[ "$s1$s2$s3$s4$s5$s6" = 200200200200403422 ] && [ "$v1" = "tiny None 0 admin" ] &&
	[ "$v2" = "beta-big,tiny beta 1 user" ] && [ "$v3" = "beta-big,tiny beta 1 user" ] && [ "$v4" = "tiny None 0 admin" ] &&
	[ "$unknown" = 1 ] && [ "$wb $wa $w1$w2$w3" = "user admin 204204403" ]; then
	ok profiles-project-view
else
	fail profiles-project-view "alpha $s1 ($v1), beta $s2 ($v2), ?project=beta $s3 ($v3), * $s4 ($v4), alpha ?project=beta $s5, alpha run with beta's profile $s6: $(head -c 300 body); cli: $(head -c 300 cli-beta); secret writers of beta $wb, alpha $wa: beta user $w1/$w2, alpha user $w3"
fi

# a distributed run's logs by worker (?rank=N): one worker's; a rank past the workers 404,
# one that is not digits alone 400; another project's run 404 as without rank
printf 'project: alpha\nfunction:\n  name: ranks\n  image: busybox\n  command: [sh, -c, %s]\naction: job\nreplicas: 2\n' \
	"'echo \"w\$RANK\"'" >ranks.yaml
call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @ranks.yaml >/dev/null
rid=$(json 'd["id"]' <body 2>/dev/null)
rfinal=$(tok=$usera wait_final "$rid")
s1=$(call -t "$viewa" GET "/api/v1/runs/$rid/logs?rank=1")
b1=$(cat body)
s2=$(call -t "$viewa" GET "/api/v1/runs/$rid/logs?rank=2")
bad=
for q in -1 %2B1 %201 0x1 '' 1e0 1000000000 99999999999999999999 1.0; do
	st=$(call -t "$viewa" GET "/api/v1/runs/$rid/logs?rank=$q")
	[ "$st" = 400 ] || bad="$bad [$q] $st"
done
s3=$(call -t "$adminb" GET "/api/v1/runs/$rid/logs")
s4=$(call -t "$adminb" GET "/api/v1/runs/$rid/logs?rank=1")
b4=$(cat body)
s5=$(call -t "$adminb" GET "/api/v1/runs/$rid/logs?rank=x")
if [ "$rfinal" = Succeeded ] && [ "$s1" = 200 ] && [ "$b1" = w1 ] && [ "$s2" = 404 ] && [ -z "$bad" ] &&
	[ "$s3$s4$s5" = 404404404 ] && ! echo "$b4" | grep -qx w1; then
	ok logs-rank
else
	fail logs-rank "$rid $rfinal: rank 1 $s1 [$b1], rank 2 $s2,$bad; other project $s3 $s4 $s5"
fi

# stop: a long run, stopped and waited for; delete refused while it runs
spec sleeper "sleep $nap" alpha >sleeper.yaml
call -t "$usera" POST /api/v1/runs --data-binary @sleeper.yaml >/dev/null
sid=$(json 'd["id"]' <body)
s1=$(call -t "$usera" DELETE "/api/v1/runs/$sid")
s2=$(call -t "$usera" POST "/api/v1/runs/$sid/stop?grace=0&wait=true")
if [ "$s1" = 409 ] && [ "$s2" = 200 ] && [ "$(json 'd["state"]' <body)" = Stopped ] && ! pgrep -f "sleep $nap" >/dev/null; then
	ok stop
else
	fail stop "delete while running $s1, stop $s2: $(json 'd.get("state")' <body)"
fi

# a stop right after the submission (before the supervisor has taken its signals) is a stop
for i in 1 2 3; do
	call -t "$usera" POST /api/v1/runs --data-binary @sleeper.yaml >/dev/null
	sid=$(json 'd["id"]' <body)
	call -t "$usera" POST "/api/v1/runs/$sid/stop?grace=0&wait=true" >/dev/null
	st=$(json 'd["state"] + ": " + d.get("reason", "")' <body)
	[ "${st%%:*}" = Stopped ] || break
done
if [ "${st%%:*}" = Stopped ] && ! pgrep -f "sleep $nap" >/dev/null; then ok stop-at-once; else fail stop-at-once "$st"; fi

# a stop asked again with a shorter grace takes it; asking the same stop again adds no event
spec stubborn 'trap "" TERM; while :; do sleep 0.2; done' alpha >stubborn.yaml
call -t "$usera" POST /api/v1/runs --data-binary @stubborn.yaml >/dev/null
bid=$(json 'd["id"]' <body)
sleep 0.5
call -t "$usera" POST "/api/v1/runs/$bid/stop?grace=86400" >/dev/null
call -t "$usera" POST "/api/v1/runs/$bid/stop?grace=86400" >/dev/null
sleep 0.3
s1=$(call -t "$usera" POST "/api/v1/runs/$bid/stop?grace=0&wait=true")
st=$(json 'd["state"]' <body 2>/dev/null)
call -t "$usera" GET "/api/v1/runs/$bid/events" >/dev/null
stopping=$(json 'len([e for e in d["items"] if e["kind"] == "Stopping"])' <body)
if [ "$s1" = 200 ] && [ "$st" = Stopped ] && [ "$stopping" = 2 ]; then
	ok stop-again-with-a-shorter-grace
else
	fail stop-again-with-a-shorter-grace "stop with grace 0 after 86400: $s1 ($st), Stopping events $stopping"
fi

# logs -f streams while the run writes
spec ticker 'for i in 1 2 3; do echo tick $i; sleep 0.3; done' alpha >ticker.yaml
call -t "$usera" POST /api/v1/runs --data-binary @ticker.yaml >/dev/null
tid=$(json 'd["id"]' <body)
curl -s -N -H "Authorization: Bearer $usera" "$url/api/v1/runs/$tid/logs?follow=true" >follow.txt
if [ "$(cat follow.txt)" = "$(printf 'tick 1\ntick 2\ntick 3')" ]; then ok logs-follow; else fail logs-follow "$(cat follow.txt)"; fi

# paging: every run once, newest first (11 runs of alpha by now)
for i in 1 2 3 4; do call -t "$usera" POST /api/v1/runs --data-binary @hello.yaml >/dev/null; done
seen="" after=""
for _ in 1 2 3 4 5 6 7 8; do
	call -t "$usera" GET "/api/v1/projects/alpha/runs?limit=2${after:+&after=$after}" >/dev/null
	seen="$seen $(json '" ".join(r["id"] for r in d["items"])' <body)"
	after=$(json 'd.get("next", "")' <body)
	[ -n "$after" ] || break
done
all=$(call -t "$usera" GET "/api/v1/projects/alpha/runs?limit=1000" >/dev/null; json '" ".join(r["id"] for r in d["items"])' <body)
if [ "$(echo $seen)" = "$all" ] && [ "$(echo $all | wc -w)" = 11 ]; then ok paging; else fail paging "pages '$seen' vs '$all'"; fi
s1=$(call -t "$adminb" GET "/api/v1/runs")
if [ "$s1" = 200 ] && [ "$(json 'len(d["items"])' <body)" = 0 ]; then ok list-only-own-projects; else fail list-only-own-projects "$s1 $(head -c 200 body)"; fi

# ---- a watch of a project's runs: a change answers at once, nothing holds a worker thread --
call -t "$viewa" GET /api/v1/projects/alpha/runs >/dev/null
rv0=$(json 'd["rv"]' <body)
# more watches than the server has worker threads, all waiting: it still answers
wpids=()
for i in $(seq 12); do
	curl -s -o "w$i.json" -H "Authorization: Bearer $viewa" \
		"$url/api/v1/projects/alpha/runs?watch=true&rv=$rv0&timeout=20" &
	wpids+=($!)
done
curl -s -o wbeta.json -H "Authorization: Bearer $adminb" \
	"$url/api/v1/projects/beta/runs?watch=true&rv=$rv0&timeout=2" &
wpids+=($!)
sleep 0.5
t0=$(date +%s%N)
hs=$(call GET /healthz)
t1=$(date +%s%N)
call -t "$usera" POST /api/v1/runs --data-binary @hello.yaml >/dev/null
wid=$(json 'd["id"]' <body)
t2=$(date +%s%N)
wait "${wpids[@]:0:12}"
t3=$(date +%s%N)
wait "${wpids[12]}"
got=$(json '" ".join(r["id"] for r in d["items"])' <w1.json 2>/dev/null)
rv1=$(json 'd["rv"]' <w1.json 2>/dev/null)
same=$(for i in $(seq 12); do json '" ".join(r["id"] for r in d["items"])' <"w$i.json" 2>/dev/null; done | sort -u | wc -l)
bgot=$(json 'len(d["items"])' <wbeta.json 2>/dev/null)
# what comes after the run has ended: nothing within its timeout (an empty answer, the same
# rv), then a delete
tok=$usera wait_final "$wid" >/dev/null
call -t "$viewa" GET /api/v1/projects/alpha/runs >/dev/null
rv1=$(json 'd["rv"]' <body)
t4=$(date +%s%N)
call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=$rv1&timeout=1" >/dev/null
t5=$(date +%s%N)
quiet=$(json 'len(d["items"]), len(d["deleted"]), d["rv"]' <body)
call -t "$usera" POST "/api/v1/runs/$wid/stop?grace=0&wait=true" >/dev/null
call -t "$usera" DELETE "/api/v1/runs/$wid" >/dev/null
call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=$rv1&timeout=5" >/dev/null
deleted=$(json '" ".join(d["deleted"])' <body)
if [ "$hs" = 200 ] && [ $(((t1 - t0) / 1000000)) -lt 1000 ] && [ "$got" = "$wid" ] && [ "$same" = 1 ] &&
	[ $(((t3 - t2) / 1000000)) -lt 2000 ] && [ "$bgot" = 0 ] && [ "$quiet" = "0 0 $rv1" ] &&
	[ $(((t5 - t4) / 1000000)) -ge 900 ] && [ "$deleted" = "$wid" ]; then
	ok watch-runs
else
	fail watch-runs "healthz $hs in $(((t1 - t0) / 1000000)) ms; watch got '$got' ($same distinct answers) $(((t3 - t2) / 1000000)) ms after the create; beta saw $bgot; quiet: $quiet in $(((t5 - t4) / 1000000)) ms; deleted '$deleted'"
fi
s1=$(call -t "$adminb" GET "/api/v1/projects/alpha/runs?watch=true&rv=0&timeout=1")
s2=$(call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true")
s3=$(call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=-1")
s4=$(call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=0&timeout=301")
s5=$(call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=0&state=Running")
echo 'UPDATE rv SET v = v + 20000;' | store_sql
s6=$(call -t "$viewa" GET "/api/v1/projects/alpha/runs?watch=true&rv=$rv1&timeout=1")
gone=$(json 'd["error"]["code"]' <body 2>/dev/null)
if [ "$s1$s2$s3$s4$s5$s6" = 403400400400400410 ] && [ "$gone" = gone ]; then
	ok watch-refusals
else
	fail watch-refusals "other project $s1, no rv $s2, rv -1 $s3, timeout 301 $s4, with state $s5, an old rv $s6 ($gone)"
fi
# a token revoked while its watch waits is refused at the watch's next wake, not told of
# the project's changes until its timeout
wtok=$("$berth" token create --project alpha --role viewer 2>wtok.err)
wtid=$(sed -n 's/^token \([a-z0-9]*\):.*/\1/p' wtok.err)
call -t "$viewa" GET /api/v1/projects/alpha/runs >/dev/null
rv2=$(json 'd["rv"]' <body)
curl -s -o wrev.json -w '%{http_code}' -H "Authorization: Bearer $wtok" \
	"$url/api/v1/projects/alpha/runs?watch=true&rv=$rv2&timeout=10" >wrev.code &
wrpid=$!
sleep 0.5
"$berth" token revoke "$wtid" >/dev/null 2>&1
call -t "$usera" POST /api/v1/runs --data-binary @hello.yaml >/dev/null
wait "$wrpid"
if [ -n "$wtid" ] && [ "$(cat wrev.code)" = 401 ] && ! grep -q '"items"' wrev.json; then
	ok watch-revoked-token
else
	fail watch-revoked-token "token $wtid: $(cat wrev.code) $(head -c 300 wrev.json)"
fi

# the spec as submitted, for submitting it again (the UI's re-run): the run's own
# document of a stream
{ spec first 'echo 1' alpha; echo '---'; spec second 'echo 2' alpha; } >two.yaml
call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @two.yaml >/dev/null
second=$(json 'd["items"][1]["id"]' <body 2>/dev/null)
s1=$(call -t "$viewa" GET "/api/v1/runs/$second/source")
json 'd["spec"]' <body >source.txt 2>/dev/null
got=$(json 'd["doc"], d["fields"]["function"]["name"], d["fields"]["resources"]["mem"]' <body 2>/dev/null)
s2=$(call -t "$adminb" GET "/api/v1/runs/$second/source")
s3=$(call -t "$viewa" GET "/api/v1/runs/nosuchrun/source")
if [ "$s1" = 200 ] && [ "$got" = "1 second 32Mi" ] && diff <(cat two.yaml; echo) source.txt >out &&
	[ "$s2$s3" = 404404 ]; then
	ok run-source
else
	fail run-source "status $s1 ($got), other project $s2, unknown $s3"
fi

# another project's run answers as an unknown one: its existence is not told
s1=$(call -t "$adminb" GET "/api/v1/runs/$second")
m1=$(json 'd["error"]["message"]' <body 2>/dev/null)
s2=$(call -t "$adminb" GET "/api/v1/runs/nosuchrun")
m2=$(json 'd["error"]["message"]' <body 2>/dev/null)
s3=$(call -t "$adminb" DELETE "/api/v1/runs/$second")
if [ "$s1$s2$s3" = 404404404 ] && [ "$m1" = "no run \"$second\"" ] && [ "$m2" = 'no run "nosuchrun"' ]; then
	ok other-project-run-404
else
	fail other-project-run-404 "other project's run $s1 ($m1), unknown $s2 ($m2), delete $s3"
fi
# a token of alpha learns nothing of beta from a spec naming it: not its secrets' names, nor
# its functions
call -t "$admin" PUT /api/v1/projects/beta/secrets/dbpassword --data '{"value": "x"}' >/dev/null
printf 'project: beta\nfunction: nosuchfn\nsecrets: [dbpasword]\n' >probe.yaml
s1=$(call -t "$usera" POST /api/v1/runs --data-binary @probe.yaml)
if [ "$s1" = 403 ] && ! grep -q 'dbpassword\|nosuchfn\|did you mean' body; then
	ok authorized-before-planning
else
	fail authorized-before-planning "$s1 $(head -c 300 body)"
fi

# ---- secrets: set by an admin, used by a run, never shown ----------------------------------
value="v4lue-$RANDOM-never-shown"
s1=$(call -t "$admin" PUT /api/v1/projects/alpha/secrets/dbpass --data "{\"value\": \"$value\"}")
s2=$(call -t "$viewa" GET /api/v1/projects/alpha/secrets)
names=$(json '",".join(s["name"] for s in d["items"])' <body)
want=$(printf %s "$value" | sha256sum | cut -d' ' -f1)
printf 'project: alpha\nfunction:\n  name: usesecret\n  command: [sh, -c, "printf %%s \\"$DBPASS\\" | sha256sum | cut -d\\" \\" -f1"]\nsecrets: [dbpass]\n' >usesecret.yaml
call -t "$usera" POST /api/v1/runs --data-binary @usesecret.yaml >/dev/null
uid=$(json 'd["id"]' <body)
final=$(tok=$usera wait_final "$uid")
call -t "$usera" GET "/api/v1/runs/$uid/logs" >/dev/null
matched=$(cat body)
for p in "/api/v1/runs/$uid" "/api/v1/runs/$uid/spec" "/api/v1/runs/$uid/manifests" "/api/v1/runs/$uid/events"; do
	call -t "$admin" GET "$p" >/dev/null
done
if [ "$s1$s2" = 204200 ] && [ "$names" = dbpass ] && [ "$final" = Succeeded ] && [ "$matched" = "$want" ] &&
	! grep -q "$value" "$tmp/all-bodies" "$tmp"/serve.*.log && ! store_dump | grep -aq "$value"; then
	ok secret-never-shown
else
	fail secret-never-shown "set $s1, list $s2 ($names), run $final ($matched)"
fi
s1=$(call -t "$usera" DELETE /api/v1/projects/alpha/secrets/dbpass)
s2=$(call -t "$admin" DELETE /api/v1/projects/alpha/secrets/dbpass)
s3=$(call -t "$admin" DELETE /api/v1/projects/alpha/secrets/dbpass)
if [ "$s1$s2$s3" = 403204404 ]; then ok secret-delete; else fail secret-delete "user $s1, admin $s2, again $s3"; fi

# ---- functions: registered once, named by runs --------------------------------------------
printf 'function:\n  name: train\n  command: [sh, -c, "echo epochs $0", "3"]\nresources: {cpu: 200m, mem: 48Mi}\nenvs: [{name: MODE, value: fn}]\n' >fn.yaml
s1=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @fn.yaml)
s2=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @fn.yaml)
printf 'project: alpha\nfunction: train\nresources: {mem: 64Mi}\n' >byname.yaml
call -t "$usera" POST /api/v1/runs --data-binary @byname.yaml >/dev/null
fid=$(json 'd["id"]' <body)
final=$(tok=$usera wait_final "$fid")
call -t "$usera" GET "/api/v1/runs/$fid/spec" >/dev/null
cpu_origin=$(json '[f["origin"] for f in d["fields"] if f["path"]=="resources.cpu.requests"][0]' <body 2>/dev/null)
mem_origin=$(json '[f["origin"] for f in d["fields"] if f["path"]=="resources.mem.requests"][0]' <body 2>/dev/null)
printf 'project: alpha\nfunction: nosuch\n' >nosuch.yaml
s3=$(call -t "$usera" POST /api/v1/runs --data-binary @nosuch.yaml)
if [ "$s1$s2" = 201200 ] && [ "$final" = Succeeded ] && [ "$cpu_origin" = function ] &&
	[ "$mem_origin" = "run spec" ] && [ "$s3" = 422 ] && grep -q 'no function \\"nosuch\\"' body; then
	ok functions
else
	fail functions "register $s1/$s2, run $final, origins cpu '$cpu_origin' mem '$mem_origin', unknown $s3"
fi

# ---- bad input and refused requests, each with its status and message ---------------------
s1=$(call -t "$usera" GET '/api/v1/runs?state=Bogus')
m1=$(json 'd["error"]["message"]' <body)
s2=$(call -t "$usera" GET '/api/v1/runs?limit=0')
s3=$(call -t "$usera" GET '/api/v1/runs?after=x')
s4=$(call -t "$usera" POST "/api/v1/runs/$sid/stop?grace=-1")
s5=$(call -t "$usera" GET "/api/v1/runs/$sid/manifests?format=xml")
s6=$(call -t "$usera" GET '/api/v1/runs?after=99999999999999999999')
s7=$(call -t "$usera" GET '/api/v1/runs?limit=')
if [ "$s1$s2$s3$s4$s5$s6$s7" = 400400400400400400400 ] && echo "$m1" | grep -q 'state "Bogus" is not one of'; then
	ok bad-query-400
else
	fail bad-query-400 "state $s1 ($m1), limit $s2, after $s3, grace $s4, format $s5, huge after $s6, empty limit $s7"
fi
# %00 in a path is no NUL that cuts a name short; a length given twice is refused; 500 query
# arguments are answered
s1=$(call -t "$admin" PUT '/api/v1/projects/alpha/secrets/a%00b' -d '{"value": "x"}')
call -t "$admin" GET /api/v1/projects/alpha/secrets >/dev/null
names=$(json '",".join(s["name"] for s in d["items"])' <body)
s2=$(curl -s -o body -w '%{http_code}' -X POST -H 'Content-Length: 5' -H 'Transfer-Encoding: chunked' \
	-H "Authorization: Bearer $usera" --data-binary 'abcde' "$url/api/v1/parse")
s3=$(call GET "/healthz?$(python3 -c "print('&'.join('a%d=%d' % (i, i) for i in range(500)))")")
if [ "$s1" = 422 ] && ! echo ",$names," | grep -q ',a,' && [ "$s2" = 400 ] && [ "$s3" = 200 ]; then
	ok url-nul-two-lengths-many-args
else
	fail url-nul-two-lengths-many-args "secret a%00b $s1 (secrets: $names), length and chunks $s2, 500 arguments $s3"
fi
# a project named by the URL is a project name, as one named by a spec is: .. or Bad_Name
# would become runs' project (and a shared claim's directory)
printf 'function: {name: nop, command: ["true"]}\n' >noproject.yaml
s1=$(call -t "$admin" POST /api/v1/projects/../runs --path-as-is --data-binary @noproject.yaml)
s2=$(call -t "$admin" POST /api/v1/projects/Bad_Name/runs --data-binary @noproject.yaml)
s3=$(call -t "$admin" PUT /api/v1/projects/Bad_Name/secrets/x -d '{"value": "x"}')
s4=$(call -t "$admin" GET /api/v1/projects/a.b/functions)
call -t "$admin" GET '/api/v1/runs?limit=1000' >/dev/null
odd=$(json 'len([r for r in d["items"] if r["project"] in ("..", "Bad_Name")])' <body)
if [ "$s1$s2$s3$s4" = 422422422422 ] && [ "$odd" = 0 ]; then
	ok url-project-is-a-name
else
	fail url-project-is-a-name "runs of .. $s1, runs of Bad_Name $s2, secret $s3, functions $s4, $odd such runs stored"
fi
# ?file= is in every problem's place: a long one or one with a line break is refused, not
# repeated into each line of the answer
long=$(head -c 300 /dev/zero | tr '\0' f)
s1=$(call -t "$usera" POST "/api/v1/parse?file=$long" --data-binary @bad.yaml)
s2=$(call -t "$usera" POST '/api/v1/projects/alpha/validate?file=a%0Aforged:1:1:%20x' --data-binary @bad.yaml)
s3=$(call -t "$usera" POST "/api/v1/runs?file=$long" --data-binary @bad.yaml)
s4=$(call -t "$usera" POST "/api/v1/projects/alpha/functions?file=$long" --data-binary @fn.yaml)
if [ "$s1$s2$s3$s4" = 400400400400 ] && grep -q 'at most 255 bytes' body; then
	ok file-name-capped
else
	fail file-name-capped "parse $s1, validate $s2, runs $s3, functions $s4"
fi
s1=$(call -t "$usera" GET /api/v1/runs/nosuch/logs)
s2=$(call -t "$usera" GET /api/v1/runs/nosuch/events)
s3=$(call -t "$usera" POST /api/v1/runs/nosuch/stop)
if [ "$s1$s2$s3" = 404404404 ] && grep -q 'no run \\"nosuch\\"' body; then ok unknown-run-404; else fail unknown-run-404 "logs $s1, events $s2, stop $s3"; fi
s1=$(call -t "$admin" PUT /api/v1/projects/alpha/secrets/k --data 'not json {')
s2=$(call -t "$admin" PUT /api/v1/projects/alpha/secrets/k --data '{"val": "x"}')
m2=$(json 'd["error"]["message"]' <body)
s3=$(call -t "$admin" PUT '/api/v1/projects/alpha/secrets/bad%3Bname' --data '{"value": "x"}')
if [ "$s1$s2$s3" = 422422422 ] && echo "$m2" | grep -q '"value"'; then ok secret-bad-body-422; else fail secret-bad-body-422 "syntax $s1, no value $s2 ($m2), bad name $s3"; fi
s1=$(call -t "$admin" POST /api/v1/projects --data '{"name": "Bad_Name"}')
s2=$(call -t "$admin" POST /api/v1/projects --data '{"name": "alpha"}')
s3=$(call -t "$admin" POST /api/v1/projects --data '{"name": "gamma"}')
call -t "$admin" GET /api/v1/projects >/dev/null
p_admin=$(json '",".join(p["name"] for p in d["items"])' <body)
call -t "$usera" GET /api/v1/projects >/dev/null
p_user=$(json '",".join(p["name"] for p in d["items"])' <body)
if [ "$s1$s2$s3" = 422409201 ] && [ "$p_admin" = "alpha,beta,gamma" ] && [ "$p_user" = alpha ]; then
	ok projects
else
	fail projects "bad name $s1, existing $s2, new $s3, admin sees '$p_admin', user '$p_user'"
fi
printf 'project: beta\nfunction: {name: x, command: ["true"]}\n' >other.yaml
st=$(call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @other.yaml)
if [ "$st" = 422 ] && [ "$(json 'd["error"]["problems"][0]["text"]' <body)" = 'spec.yaml:1:10: project: "beta" is not the project of this request ("alpha")' ]; then
	ok project-mismatch-422
else
	fail project-mismatch-422 "$st $(cat body)"
fi
printf 'function: {image: busybox, command: ["true"]}\n' >noname.yaml
s1=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @noname.yaml)
m1=$(json 'd["error"]["message"]' <body)
printf 'function: train\n' >byref.yaml
s2=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @byref.yaml)
s3=$(call -t "$viewa" POST /api/v1/projects/alpha/functions --data-binary @fn.yaml)
s4=$(call -t "$usera" GET /api/v1/projects/alpha/functions/nosuch)
s5=$(call -t "$usera" DELETE /api/v1/projects/alpha/functions/nosuch)
s6=$(call -t "$usera" DELETE /api/v1/projects/alpha/functions/train)
s7=$(call -t "$usera" GET /api/v1/projects/alpha/functions)
if [ "$s1$s2$s3$s4$s5$s6$s7" = 422422403404404204200 ] && echo "$m1" | grep -q 'needs function.name' &&
	[ "$(json 'len(d["items"])' <body)" = 0 ]; then
	ok function-errors
else
	fail function-errors "no name $s1 ($m1), by name $s2, viewer $s3, get $s4, delete $s5/$s6, list $s7"
fi
call -t "$usera" GET /api/v1/whoami >/dev/null
who=$(json 'd["role"] + " " + ",".join(d["projects"])' <body)
s2=$(call -t "$adminb" GET /api/v1/policy) # it holds every project's overlay: not one project's
s1=$(call -t "$admin" GET /api/v1/policy)
if [ "$who" = "user alpha" ] && [ "$s1" = 200 ] && [ "$s2" = 403 ] && [ "$(json 'd["file"]' <body)" = "$tmp/policy.yaml" ] &&
	json 'd["text"]' <body | grep 'grace_period: 1' >/dev/null; then
	ok whoami-policy
else
	fail whoami-policy "whoami '$who', policy $s1, of a project's admin $s2"
fi
rid=$("$berth" token list -o json | json '[t["id"] for t in d if t["projects"] == "beta"][0]')
"$berth" token revoke "$rid" 2>out
s1=$(call -t "$adminb" GET /api/v1/whoami)
"$berth" token revoke "$rid" 2>out
rc=$?
"$berth" token revoke nosuchtoken 2>>out
rc2=$?
if [ "$s1" = 401 ] && [ $rc != 0 ] && grep -q "token \"$rid\" is revoked already" out &&
	[ $rc2 = 2 ] && grep -q 'no token "nosuchtoken"' out; then
	ok token-revoke
else
	fail token-revoke "after revoke $s1, again exit $rc, unknown exit $rc2"
fi
"$berth" token create --role user 2>out; r1=$?
"$berth" token create --project a --role root 2>>out; r2=$?
"$berth" token create --project Bad_Name --role user 2>>out; r3=$?
"$berth" token create --project 2>>out; r4=$?
if [ "$r1$r2$r3$r4" = 2222 ] && grep -q -- '--project P is needed' out &&
	grep -q -- '--role takes admin, user or viewer, not "root"' out &&
	grep -q 'project name "Bad_Name"' out && grep -q 'option --project needs a value' out; then
	ok token-create-errors
else
	fail token-create-errors "exits $r1 $r2 $r3 $r4"
fi

# ---- the CLI as a client ------------------------------------------------------------------
if id=$(BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run hello.yaml --wait 2>out) &&
	BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" get run "$id" -o json | grep -q '"state": "Succeeded"' &&
	[ "$("$berth" --server "$url" --token "$usera" logs "$id")" = "hello from $id" ] &&
	BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs | grep -q "^$id "; then
	ok cli-client-run-get-logs
else
	fail cli-client-run-get-logs "id '$id'"
fi
BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run bad.yaml 2>out
rc=$?
if [ $rc = 2 ] && diff cli.txt out >/dev/null; then ok cli-client-422-as-local; else fail cli-client-422-as-local "exit $rc"; fi
BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" run hello.yaml 2>out
rc=$?
if [ $rc != 0 ] && grep -q 'viewer' out; then ok cli-client-403; else fail cli-client-403 "exit $rc"; fi

# ---- labels: kept with each run, selected as kubectl selects them (issue 24) -----------------
for l in "la:team: a, tier: gpu" "lb:team: b" "lc:"; do
	printf 'project: alpha\nname: %s\nlabels: {%s}\nfunction: {name: f, image: busybox, command: ["true"]}\nresources: {cpu: 50m, mem: 16Mi}\n' \
		"${l%%:*}" "${l#*:}" >"${l%%:*}.yaml"
	call -t "$usera" POST /api/v1/runs --data-binary @"${l%%:*}.yaml" >/dev/null
	eval "${l%%:*}=\$(json 'd[\"id\"]' <body)"
done
ids() { call -t "$viewa" GET "$1" >/dev/null; json '" ".join(r["id"] for r in d["items"])' <body; }
s1=$(ids "/api/v1/runs?labelSelector=team%3Da")
s2=$(ids "/api/v1/projects/alpha/runs?labelSelector=team%21%3Da&limit=2")
s3=$(ids "/api/v1/runs?project=alpha&labelSelector=tier%3Dgpu,team")
s4=$(ids "/api/v1/runs?labelSelector=team%3Dnone")
st=$(call -t "$viewa" GET "/api/v1/runs?labelSelector=team%20in%20(a)")
if [ "$s1" = "$la" ] && [ "$s2" = "$lc $lb" ] && [ "$s3" = "$la" ] && [ -z "$s4" ] && [ "$st" = 400 ] &&
	grep -q 'is not a term: only equality-based' body; then
	ok runs-label-selector
else fail runs-label-selector "'$s1' '$s2' '$s3' '$s4' $st"; fi
call -t "$viewa" GET "/api/v1/runs/$la" >/dev/null
if [ "$(json 'd["labels"]' <body)" = "{'team': 'a', 'tier': 'gpu'}" ]; then ok run-labels; else fail run-labels "$(cat body)"; fi
# the CLI as a client: the selector and the limit go to the server, the sort is the CLI's
g=$(BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs -l team -o name | tr '\n' ' ')
n=$(BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs --limit 1 -o name | tr '\n' ' ')
o=$(BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs -l team --sort-by name -o name | tr '\n' ' ')
BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs -l 'a b' >out 2>&1
rc=$?
if [ "$g" = "$lb $la " ] && [ "$n" = "$lc " ] && [ "$o" = "$la $lb " ] && [ $rc = 2 ] &&
	grep -q 'label selector "a b"' out; then
	ok cli-client-get-selector-limit-sort
else fail cli-client-get-selector-limit-sort "'$g' '$n' '$o' exit $rc"; fi
# a watch through the server: the table, then the run that changes
BERTH_SERVER=$url BERTH_TOKEN=$usera timeout 9 "$berth" get runs -w -l team=w >watch.out 2>&1 &
wpid=$!
sleep 1
printf 'project: alpha\nname: watched\nlabels: {team: w}\nfunction: {name: f, image: busybox, command: [sh, -c, "sleep 1"]}\nresources: {cpu: 50m, mem: 16Mi}\n' >lw.yaml
call -t "$usera" POST /api/v1/runs --data-binary @lw.yaml >/dev/null
lw=$(json 'd["id"]' <body)
wait $wpid
if head -1 watch.out | grep -q '^ID ' && grep -qE "^$lw +watched-$lw +Succeeded" watch.out; then
	ok cli-client-get-watch
else fail cli-client-get-watch "$(cat watch.out)"; fi

# logs --tail, --since, --timestamps through the server: its query parameters, each checked
# before the log streams
spec three 'echo one; echo two; echo three' alpha >three.yaml
tid=$(BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run three.yaml --wait 2>/dev/null)
export BERTH_SERVER=$url BERTH_TOKEN=$viewa
t1=$("$berth" logs "$tid" --tail 1 2>&1)
ts=$("$berth" logs "$tid" --tail 2 --timestamps 2>&1)
sn=$("$berth" logs "$tid" --since 1h 2>&1 | wc -l)
unset BERTH_SERVER BERTH_TOKEN
s1=$(call -t "$viewa" GET "/api/v1/runs/$tid/logs?tail=x")
s2=$(call -t "$viewa" GET "/api/v1/runs/$tid/logs?since=5x")
m2=$(json 'd["error"]["message"]' <body)
s3=$(call -t "$viewa" GET "/api/v1/runs/$tid/logs?since=401d")
s4=$(call -t "$viewa" GET "/api/v1/runs/$tid/logs?tail=10000001")
s5=$(call -t "$viewa" GET "/api/v1/runs/$tid/logs?tail=2&since=30m")
if [ "$t1" = three ] && [ "$sn" = 3 ] && [ "$(printf '%s\n' "$ts" | sed 's/^[0-9T:.-]*Z //' | tr '\n' ' ')" = "two three " ] &&
	printf '%s\n' "$ts" | grep -qE '^20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z two$' &&
	[ "$s1$s2$s3$s4$s5" = 400400400400200 ] && [ "$(cat body)" = "$(printf 'two\nthree')" ] &&
	echo "$m2" | grep -q '^since: "5x" is not a duration'; then
	ok cli-client-logs-tail-since-timestamps
else
	fail cli-client-logs-tail-since-timestamps "tail '$t1', since lines $sn, ts '$ts', API $s1 $s2 $s3 $s4 $s5 ($m2)"
fi
# describe and events through the server: the same page as on this machine
export BERTH_SERVER=$url BERTH_TOKEN=$viewa
"$berth" describe run "$tid" >desc 2>&1; r1=$?
"$berth" events "$tid" >ev 2>&1; r2=$?
"$berth" events "$tid" -o json >evj 2>&1
unset BERTH_SERVER BERTH_TOKEN
if [ "$r1$r2" = 00 ] && grep -q "^ID: *$tid\$" desc && grep -q '^Project: *alpha$' desc &&
	grep -q '^  function.command  .*function (three.yaml:' desc && grep -q 'on the server' desc &&
	grep -qE '^  [0-9T:.-]+Z  Succeeded' desc &&
	[ "$(awk 'NR > 1 { print $2 }' ev | tr '\n' ' ')" = "Submitted Scheduled Started Succeeded " ] &&
	python3 -c 'import json; d=json.load(open("evj")); assert d["items"][-1]["kind"] == "Succeeded"'; then
	ok cli-client-describe-events
else
	cat desc ev >out
	fail cli-client-describe-events "describe $r1, events $r2"
fi
# another project's run is as unknown as a run that is not there
viewb=$("$berth" token create --project beta --role viewer 2>/dev/null)
BERTH_SERVER=$url BERTH_TOKEN=$viewb "$berth" describe "$tid" >out 2>&1; r1=$?
BERTH_SERVER=$url BERTH_TOKEN=$viewb "$berth" events "$tid" >>out 2>&1; r2=$?
if [ "$r1$r2" = 22 ] && [ "$(grep -c "no run \"$tid\"" out)" = 2 ]; then ok cli-client-describe-other-project
else fail cli-client-describe-other-project "describe $r1, events $r2"; fi

# validate, explain and run --dry-run ask the server: its policy decides (profile tiny is the
# server's alone), and nothing is created
printf 'project: alpha\nprofile: tiny\nfunction: {name: p, image: busybox, command: ["true"]}\n' >tiny.yaml
before=$(call -t "$admin" GET /api/v1/runs >/dev/null; json 'len(d["items"])' <body)
export BERTH_SERVER=$url BERTH_TOKEN=$usera
"$berth" validate tiny.yaml >v.out 2>&1; r1=$?
"$berth" explain tiny.yaml >x.out 2>&1; r2=$?
"$berth" run tiny.yaml --dry-run >d.out 2>&1; r3=$?
"$berth" validate bad.yaml 2>v.bad; r4=$?
"$berth" explain tiny.yaml -o json >xj.out 2>&1; r5=$?
unset BERTH_SERVER BERTH_TOKEN
after=$(call -t "$admin" GET /api/v1/runs >/dev/null; json 'len(d["items"])' <body)
: >empty-policy.yaml
if [ "$r1$r2$r3$r4$r5" = 00020 ] && [ "$before" = "$after" ] && grep -qx 'tiny.yaml: valid (1 run)' v.out &&
	grep -q '^resources.mem.requests  *48Mi  *profile' x.out && grep -q '^status: accepted$' x.out &&
	grep -qx "tiny.yaml: valid (1 run) for the server at $url (its policy and backend); nothing was created" d.out &&
	diff cli.txt v.bad >/dev/null && python3 -c 'import json; json.load(open("xj.out"))' &&
	! "$berth" validate --config empty-policy.yaml tiny.yaml >/dev/null 2>&1; then
	ok cli-client-validate-explain-dry-run
else
	cat v.out x.out d.out >out
	fail cli-client-validate-explain-dry-run "exits $r1 $r2 $r3 $r4 $r5, runs $before then $after"
fi
# the server checks the project of every document first: another project's spec is 403,
# and --project P is the project of every run (a spec naming another is refused at its place)
printf 'project: beta\nfunction: {name: p, image: busybox, command: ["true"]}\n' >beta.yaml
printf 'function: {name: p, image: busybox, command: ["true"]}\n' >noproj.yaml
export BERTH_SERVER=$url BERTH_TOKEN=$usera
"$berth" validate beta.yaml >out 2>&1; r1=$?
grep -q 'no access to project "beta"' out; g1=$?
"$berth" validate --project alpha beta.yaml >out 2>&1; r2=$?
grep -q '^beta.yaml:1:10: project: "beta" is not the project of this request' out; g2=$?
pid=$("$berth" run noproj.yaml --project alpha --wait 2>/dev/null); r3=$?
"$berth" run noproj.yaml --project beta >out 2>&1; r4=$?
unset BERTH_SERVER BERTH_TOKEN
call -t "$usera" GET "/api/v1/runs/$pid" >/dev/null
if [ "$r1$g1$r2$g2$r3" = 10200 ] && [ "$r4" != 0 ] && [ "$(json 'd["project"]' <body)" = alpha ]; then
	ok cli-client-project
else
	fail cli-client-project "validate beta $r1/$g1, --project alpha $r2/$g2, run --project alpha $r3 ($pid), beta $r4"
fi

# delete through the server: a running run is refused and left running; --force stops it first
spec holdon 'sleep 60' alpha >holdon.yaml
hid=$(BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run holdon.yaml 2>/dev/null)
export BERTH_SERVER=$url BERTH_TOKEN=$usera
"$berth" delete run "$hid" >out 2>&1; r1=$?
grep -q "is Running: stop it first" out; g1=$?
BERTH_TOKEN=$viewa "$berth" delete "$tid" --force >>out 2>&1; r2=$?
"$berth" delete "$hid" "$tid" --force --grace 0 >del.out 2>&1; r3=$?
unset BERTH_SERVER BERTH_TOKEN
s1=$(call -t "$usera" GET "/api/v1/runs/$hid")
s2=$(call -t "$usera" GET "/api/v1/runs/$tid")
if [ "$r1$g1$r3" = 100 ] && [ "$r2" != 0 ] && grep -qx "run $hid (holdon-$hid) stopped and deleted" del.out &&
	grep -qx "run $tid (three-$tid) deleted" del.out && [ "$s1$s2" = 404404 ]; then
	ok cli-client-delete
else
	cat del.out >>out
	fail cli-client-delete "running $r1/$g1, viewer $r2, force $r3, then $s1 $s2"
fi

# ---- metrics -------------------------------------------------------------------------------
call GET /metrics >/dev/null
if grep -q '^berth_runs{state="Succeeded"} [1-9]' body && grep -q '^berth_queue_length ' body &&
	grep -q 'berth_http_request_duration_seconds_bucket{route="/api/v1/runs",method="POST",code="2xx",le="+Inf"}' body &&
	grep -q '^berth_store_duration_seconds_count [1-9]' body; then
	ok metrics
else
	fail metrics "$(head -20 body)"
fi
stop_server

# ---- security.secret_writers: user: a project's users manage its secrets, and only its own -------
cp policy.yaml policy.admin-writes.yaml
printf 'security: {secret_writers: user}\n' >>policy.yaml
start
call -t "$admin" PUT /api/v1/projects/beta/secrets/betakey -d '{"value": "beta-only"}' >/dev/null
s1=$(call -t "$usera" PUT /api/v1/projects/alpha/secrets/mine -d '{"value": "v1"}')
s2=$(call -t "$usera" PUT /api/v1/projects/beta/secrets/mine -d '{"value": "v1"}')
s3=$(call -t "$usera" DELETE /api/v1/projects/beta/secrets/betakey)
s4=$(call -t "$viewa" PUT /api/v1/projects/alpha/secrets/mine -d '{"value": "v2"}')
s5=$(call -t "$viewa" DELETE /api/v1/projects/alpha/secrets/mine)
# the project in the path is one name: no way around it to beta's
s6=$(call -t "$usera" PUT '/api/v1/projects/alpha%2F..%2Fbeta/secrets/mine' -d '{"value": "v1"}')
s7=$(call -t "$usera" PUT '/api/v1/projects/%2A/secrets/mine' -d '{"value": "v1"}')
call -t "$admin" GET /api/v1/projects/beta/secrets >/dev/null
betanames=$(json '" ".join(s["name"] for s in d["items"])' <body)
call -t "$usera" GET /api/v1/whoami >/dev/null
writers=$(json 'd["secret_writers"]' <body)
s8=$(call -t "$usera" DELETE /api/v1/projects/alpha/secrets/mine)
if [ "$s1$s2$s3$s4$s5$s8" = 204403403403403204 ] && [ "${s6:0:1}${s7:0:1}" = 44 ] &&
	[ "$betanames" = "betakey dbpassword" ] && [ "$writers" = user ]; then
	ok secret-writers-user
else
	fail secret-writers-user "own $s1, beta $s2, beta delete $s3, viewer $s4/$s5, path tricks $s6 $s7, delete own $s8, beta holds '$betanames', whoami '$writers'"
fi
# the CLI as such a user: set, list, remove, and another project's refused
printf 'cli-value' | BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" secrets set from-cli --project alpha 2>out; r1=$?
BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" secrets list --project alpha >names 2>>out; r2=$?
printf 'x' | BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" secrets set from-cli --project beta 2>>out; r3=$?
BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" secrets rm from-cli --project alpha 2>>out; r4=$?
if [ "$r1$r2$r4" = 000 ] && [ "$r3" != 0 ] && grep -qx from-cli names && grep -q 'no access to project "beta"' out; then
	ok secret-writers-user-cli
else
	fail secret-writers-user-cli "set $r1, list $r2, other project $r3, rm $r4"
fi
stop_server
mv policy.admin-writes.yaml policy.yaml

# ---- insecure-local only on loopback ------------------------------------------------------------
"$berth" serve --listen 0.0.0.0:0 --insecure-local 2>out
if [ $? = 2 ] && grep -q loopback out; then ok insecure-local-loopback-only; else fail insecure-local-loopback-only "$(cat out)"; fi

"$berth" serve --listen nowhere 2>out; r1=$?
"$berth" serve --max-body 0 2>>out; r2=$?
"$berth" serve --bogus 2>>out; r3=$?
if [ "$r1$r2$r3" = 222 ] && grep -q 'is not HOST:PORT' out && grep -q -- '--max-body "0"' out; then
	ok serve-flag-errors
else
	fail serve-flag-errors "exits $r1 $r2 $r3"
fi

# ---- usage over time: the supervisor samples each worker (CPU, memory, and GPUs through
# nvidia-smi: a fake one here), the API serves the series, /metrics the last sample ------------
mkdir -p fakebin
cat >fakebin/nvidia-smi <<'SH'
#!/bin/sh
case "$1" in
-L) printf 'GPU 0: Fake (UUID: GPU-0)\nGPU 1: Fake (UUID: GPU-1)\n' ;;
--query-gpu=*) printf '0, 37, 1024\n1, 50, 2048\n' ;;
*) exit 2 ;;
esac
SH
chmod +x fakebin/nvidia-smi
cp policy.yaml policy.before-usage
printf 'local:\n  capacity: {cpu: "2", mem: 2Gi, gpu: "2"}\n' >policy.yaml
PATH=$tmp/fakebin:$PATH BERTH_SAMPLE_MS=200 start --insecure-local
printf 'function: {name: burn, command: [python3, -c, "import time\\nx = bytearray(40 << 20)\\nt = time.time()\\nwhile time.time() - t < 2.5: pass"]}\nresources: {cpu: "1", gpu: 1}\n' >burn.yaml
call POST /api/v1/runs --data-binary @burn.yaml >/dev/null
bid=$(json 'd["id"]' <body 2>/dev/null)
# /metrics while the run burns (2.5 s): asked until its sample is there, not
# once after a fixed sleep (a loaded machine starts the run later)
for i in $(seq 25); do
	sleep 0.2
	call GET /metrics >/dev/null
	cp body usage-metrics.txt
	grep -q "^berth_run_gpu_utilization_percent{project=\"default\",run=\"$bid\",rank=\"0\"} 37$" usage-metrics.txt && break
done
final=$(wait_final "$bid")
s1=$(call GET "/api/v1/runs/$bid/usage")
cp body usage.json
read -r n busy mem gpu gmem ranks < <(json 'len(d["items"]), max(x["cpu_milli"] for x in d["items"]), max(x["mem_bytes"] for x in d["items"]), d["items"][-1].get("gpu_util"), d["items"][-1].get("gpu_mem_bytes"), len(set(x["rank"] for x in d["items"]))' <usage.json 2>/dev/null | tr -d '(),')
last=$(json 'd["items"][-1]["t"]' <usage.json 2>/dev/null)
s2=$(call GET "/api/v1/runs/$bid/usage?after=$last")
after=$(json 'len(d["items"])' <body 2>/dev/null)
s3=$(call GET "/api/v1/runs/$bid/usage?after=x")
s4=$(call GET "/api/v1/runs/nosuchrun/usage")
if [ "$final" = Succeeded ] && [ "$s1$s2$s3$s4" = 200200400404 ] && [ "${n:-0}" -ge 5 ] &&
	[ "${busy:-0}" -ge 300 ] && [ "${mem:-0}" -ge $((40 << 20)) ] && [ "$gpu" = 37 ] &&
	[ "$gmem" = $((1024 << 20)) ] && [ "$ranks" = 1 ] && [ "$after" = 0 ] &&
	grep -q "^berth_run_cpu_cores{project=\"default\",run=\"$bid\",rank=\"0\"} [0-9]" usage-metrics.txt &&
	grep -q "^berth_run_gpu_utilization_percent{project=\"default\",run=\"$bid\",rank=\"0\"} 37$" usage-metrics.txt; then
	ok usage-over-time
else
	cp usage.json out
	fail usage-over-time "$final; usage $s1: $n samples, cpu max ${busy}m, mem max $mem, gpu $gpu% $gmem, ranks $ranks; after the last $s2 ($after); bad after $s3; no run $s4"
fi
# a run of 1,000 workers keeps 720,000 samples: an answer is a page of at most 10,000, ending at
# a whole t, and the next from its last t goes on (here 30 workers x 1,000 times, in the store)
store_sql <<EOF
WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k < 999),
     r(r) AS (SELECT 0 UNION ALL SELECT r + 1 FROM r WHERE r < 29)
INSERT INTO samples (run_id, rank, t, cpu_milli, mem, gpu_util, gpu_mem)
SELECT '$bid', r, 4000000000000 + k * 1000, 1, 1, -1, -1 FROM k, r;
EOF
pages=0 total=0 t=0 whole=1
while [ $pages -lt 10 ]; do
	[ "$(call GET "/api/v1/runs/$bid/usage?after=$t")" = 200 ] || break
	read -r k last cut < <(json 'len(d["items"]), d["items"][-1]["t"] if d["items"] else 0, int(bool(d["items"]) and sum(x["t"] == d["items"][-1]["t"] for x in d["items"]) < 30 and d["items"][-1]["t"] >= 4000000000000)' <body)
	[ "$k" = 0 ] && break
	[ "$k" -le 10000 ] || whole=0
	[ "$cut" = 0 ] || whole=0
	pages=$((pages + 1)) total=$((total + k)) t=$last
done
if [ "$pages" = 4 ] && [ "$total" = $((30000 + n)) ] && [ "$whole" = 1 ]; then
	ok usage-pages
else
	fail usage-pages "$pages pages, $total samples of $((30000 + n)), whole times: $whole"
fi
stop_server
cp policy.before-usage policy.yaml

# ---- the policy reloads on SIGHUP or when its file changes: checked whole, then in force
# for the next request; a policy with a problem is said on stderr and the old one stays -----
printf 'local:\n  capacity: {cpu: "2", mem: 2Gi}\nprofiles:\n  - {id: tiny, resources: {mem: 48Mi}}\n' >policy.yaml
start --insecure-local
profile_ids() { call GET /api/v1/profiles >/dev/null; json '",".join(p["id"] for p in d["profiles"])' <body 2>/dev/null; }
p0=$(profile_ids)
printf 'local:\n  capacity: {cpu: "2", mem: 2Gi}\nprofiles:\n  - {id: tiny, resources: {mem: 48Mi}}\n  - {id: big, resources: {mem: 1Gi}}\n' >policy.yaml
for _ in $(seq 40); do p1=$(profile_ids); [ "$p1" = tiny,big ] && break; sleep 0.1; done
printf 'profiles:\n  - {id: tiny, resources: {mem: 48Mi, bogus: 1}}\n' >policy.bad
cp policy.bad policy.yaml
kill -HUP "$spid"
sleep 1.5
p2=$(profile_ids)
printf 'local:\n  capacity: {cpu: "2", mem: 2Gi}\nprofiles:\n  - {id: tiny, resources: {mem: 48Mi}}\n' >policy.yaml
kill -HUP "$spid"
for _ in $(seq 40); do p3=$(profile_ids); [ "$p3" = tiny ] && break; sleep 0.1; done
# a policy file that goes away (a ConfigMap being replaced) is a change that does not
# load: said, and the policy in force stays
mv policy.yaml policy.gone
sleep 1.5
p4=$(profile_ids)
refused=$(grep -c "is not reloaded; the one loaded before stays in force" "$slog")
mv policy.gone policy.yaml
# a project's overlay reloads with the rest
printf 'profiles:\n  - {id: tiny, resources: {mem: 48Mi}}\nprojects:\n  gamma:\n    profiles: [{id: g1, resources: {mem: 32Mi}}]\n' >policy.yaml
kill -HUP "$spid"
for _ in $(seq 40); do
	call GET "/api/v1/profiles?project=gamma" >/dev/null
	p5=$(json '",".join(p["id"] for p in d["profiles"])' <body 2>/dev/null)
	[ "$p5" = g1,tiny ] && break
	sleep 0.1
done
if [ "$p0" = tiny ] && [ "$p5" = g1,tiny ] && [ "$p1" = tiny,big ] && [ "$p2" = tiny,big ] && [ "$p3" = tiny ] &&
	[ "$p4" = tiny ] && [ "$refused" = 2 ] && alive &&
	grep -q "policy $tmp/policy.yaml reloaded" "$slog" &&
	grep -q "the policy $tmp/policy.yaml is not reloaded; the one loaded before stays in force" "$slog" &&
	grep -q "policy.yaml:2:39: profiles\[0\].resources.bogus: unknown key" "$slog"; then
	ok policy-reload
else
	fail policy-reload "profiles: at start '$p0', file changed '$p1', a bad file '$p2', fixed '$p3', file gone '$p4', gamma's overlay '${p5:-}' ($refused refusals said)"
fi
stop_server
cp policy.before-usage policy.yaml

# /metrics needs no token, but its runs' gauges name runs: only those of the projects the
# token sees, none without one (a run's existence is not told to who may not see it)
viewb=$("$berth" token create --project beta --role viewer 2>/dev/null)
BERTH_SAMPLE_MS=200 start
call -t "$usera" POST /api/v1/runs --data-binary @sleeper.yaml >/dev/null
mid=$(json 'd["id"]' <body 2>/dev/null)
for _ in $(seq 50); do
	call -t "$admin" GET /metrics >/dev/null
	grep -q "run=\"$mid\"" body && break
	sleep 0.1
done
line="^berth_run_memory_bytes{project=\"alpha\",run=\"$mid\",rank=\"0\"} [0-9]"
sa=$(call -t "$admin" GET /metrics); na=$(grep -c "$line" body)
s0=$(call GET /metrics); n0=$(grep -c "run=\"$mid\"" body)
h0=$(grep -c '^# TYPE berth_run_memory_bytes gauge' body)
sb=$(call -t "$viewb" GET /metrics); nb=$(grep -c "run=\"$mid\"" body)
sv=$(call -t "$viewa" GET /metrics); nv=$(grep -c "$line" body)
sx=$(call -t berth_not-a-real-token GET /metrics)
call -t "$usera" POST "/api/v1/runs/$mid/stop?grace=0&wait=true" >/dev/null
if [ "$sa$s0$sb$sv$sx" = 200200200200401 ] && [ "$na$n0$h0$nb$nv" = 10101 ]; then
	ok metrics-runs-of-the-token
else
	fail metrics-runs-of-the-token "admin * $sa ($na), anonymous $s0 ($n0, type $h0), beta $sb ($nb), alpha viewer $sv ($nv), bad token $sx"
fi
stop_server

# ---- a full data dir: what adds data is refused (507) before the store is touched, /healthz
# says so (503), reads, stops and deletes go on. First a reserve over what any disk has.
spec full 'echo done' >full.yaml
BERTH_DISK_RESERVE=lots timeout 10 "$berth" serve --listen 127.0.0.1:0 2>out
r1=$?
BERTH_DISK_RESERVE=1Ei start --insecure-local
s1=$(call POST /api/v1/runs --data-binary @full.yaml)
m1=$(json 'd["error"]["code"] + ": " + d["error"]["message"]' <body 2>/dev/null)
s2=$(call PUT /api/v1/projects/alpha/secrets/k --data '{"value": "x"}')
s3=$(call GET /healthz)
h3=$(json 'd["status"] + ", " + d["store"] + ", " + d["disk"] + ", " + str(d["disk_reserve"])' <body 2>/dev/null)
s4=$(call GET /api/v1/runs)
s5=$(call POST /api/v1/projects/alpha/validate --data-binary @hello.yaml)
s6=$(call DELETE "/api/v1/runs/${id:-none}")
if [ $r1 = 2 ] && grep -q 'BERTH_DISK_RESERVE "lots" is not a number of bytes' out &&
	[ "$s1$s2$s3$s4$s5$s6" = 507507503200200204 ] &&
	echo "$m1" | grep -qx "insufficient-storage: the data dir $BERTH_HOME has [0-9.]*[KMGTP]i free, under the reserve of 1Ei: nothing new is accepted until space is freed" &&
	echo "$h3" | grep -qx "degraded, ok, [0-9.]*[KMGTP]i free under BERTH_HOME, under the reserve of 1Ei: nothing new is accepted, 1152921504606846976"; then
	ok disk-reserve-507-healthz-503
else
	fail disk-reserve-507-healthz-503 "bad env exit $r1; post $s1 ($m1), put $s2, healthz $s3 ($h3), list $s4, validate $s5, delete $s6"
fi
stop_server
BERTH_DISK_RESERVE=0 start --insecure-local
st=$(call GET /healthz)
h=$(json 'd["status"] + " " + d["disk"] + " " + str(d["disk_free"] > 0)' <body 2>/dev/null)
if [ "$st" = 200 ] && [ "$h" = "ok ok True" ]; then ok healthz-disk-ok; else fail healthz-disk-ok "$st $h"; fi
stop_server

# then a data dir that is really full: a tmpfs of 8 MiB (its default reserve: 1%, 83886 bytes: exact, never a rounded "81.9Ki"),
# filled by a file
small=$tmp/small
mkdir -p "$small"
if ! mount -t tmpfs -o size=8m tmpfs "$small" 2>out; then
	echo "skip server disk-full-tmpfs (cannot mount a tmpfs: $(head -1 out))"
	echo "skip server disk-full-store-507 (cannot mount a tmpfs)"
else
	mounted=$small
	# fill FREE: a file that leaves FREE bytes of the tmpfs free
	fill() { fallocate -l $(($(stat -f -c '%a * %S' "$small") - $1)) "$small/filler.$1"; }
	BERTH_HOME=$small/home start --insecure-local
	fill 32768
	s1=$(call POST /api/v1/runs --data-binary @full.yaml)
	m1=$(json 'd["error"]["message"]' <body 2>/dev/null)
	s2=$(call GET /healthz)
	h2=$(json 'd["status"] + ", " + d["disk"]' <body 2>/dev/null)
	s3=$(call GET /api/v1/runs)
	rm -f "$small"/filler.*
	for _ in $(seq 40); do # the free space is read again after a second
		s4=$(call GET /healthz)
		[ "$s4" = 200 ] && break
		sleep 0.1
	done
	s5=$(call POST /api/v1/runs --data-binary @full.yaml)
	final=$(wait_final "$(json 'd["id"]' <body 2>/dev/null)")
	if [ "$s1$s2$s3$s4$s5" = 507503200200201 ] && [ "$final" = Succeeded ] &&
		[ "$m1" = "the data dir $small/home has 32Ki free, under the reserve of 83886: nothing new is accepted until space is freed" ] &&
		[ "$h2" = "degraded, 32Ki free under BERTH_HOME, under the reserve of 83886: nothing new is accepted" ]; then
		ok disk-full-tmpfs
	else
		fail disk-full-tmpfs "full: post $s1 ($m1), healthz $s2 ($h2), list $s3; freed: healthz $s4, post $s5 ($final)"
	fi
	stop_server
	# with the check off, a write that finds no space is a 507 too (SQLite's SQLITE_FULL, a
	# file's ENOSPC), not a 500; and nothing is half created
	if [ -n "${BERTH_STORE:-}" ]; then
		echo "skip server disk-full-store-507 (the store is a PostgreSQL, not on this disk)"
	else
	BERTH_DISK_RESERVE=0 BERTH_HOME=$small/home start --insecure-local
	n0=$(call GET /api/v1/runs >/dev/null; json 'len(d["items"])' <body)
	fill 0
	s1=$(call POST /api/v1/runs --data-binary @full.yaml)
	m1=$(json 'd["error"]["code"] + ": " + d["error"]["message"]' <body 2>/dev/null)
	s2=$(call GET /api/v1/runs)
	n2=$(json 'len(d["items"])' <body 2>/dev/null)
	rm -f "$small"/filler.*
	if [ "$s1" = 507 ] && echo "$m1" | grep -q '^insufficient-storage: .*\(database or disk is full\|No space left on device\)' &&
		[ "$s2" = 200 ] && [ "$n2" = "$n0" ]; then
		ok disk-full-store-507
	else
		fail disk-full-store-507 "post $s1 ($m1), list $s2 ($n0 runs before, $n2 after)"
	fi
	stop_server
	fi
	umount -l "$small" && mounted=
fi

# ---- recovery: a run whose supervisor died while the server was down fails with
# that reason; a queued run stays queued and runs once there is room
start --insecure-local
printf 'function: {name: blocker, command: [sleep, "%s"]}\nresources: {cpu: "2"}\n' "$nap" >blocker.yaml
call POST /api/v1/runs --data-binary @blocker.yaml >/dev/null
bid=$(json 'd["id"]' <body)
spec queued 'echo queued' >queued.yaml
call POST /api/v1/runs --data-binary @queued.yaml >/dev/null
qid=$(json 'd["id"]' <body)
qstate=$(json 'd["state"]' <body)
kill -9 "$spid"
wait "$spid" 2>/dev/null
pkill -9 -f "__supervise $bid"
sleep 0.2
start --insecure-local
bstate=$(wait_final "$bid")
call GET "/api/v1/runs/$bid" >/dev/null
breason=$(json 'd.get("reason", "")' <body)
qfinal=$(wait_final "$qid")
if [ "$qstate" = Pending ] && [ "$bstate" = Failed ] && echo "$breason" | grep -q 'supervisor died' &&
	[ "$qfinal" = Succeeded ] && ! pgrep -f "sleep $nap" >/dev/null; then
	ok recovery-dead-and-queued
else
	fail recovery-dead-and-queued "queued was $qstate then $qfinal; blocker $bstate ($breason)"
fi
stop_server

# ---- quotas queue (as Kueue does): a sweep over a project's quota is accepted whole, what
# does not fit waits with the reason and starts in priority order as the quota frees; a run
# that needs more than the whole quota is refused; the quota's use in the API and /metrics
cp policy.yaml policy.saved
cat >policy.yaml <<'EOF2'
local:
  capacity: {cpu: "4", mem: 2Gi}
  grace_period: 1
  priority_values: {urgent: 1000}
# q: a sweep's project; r: a deployment's
quotas: {q: {cpu: "1", runs: 3}, r: {cpu: "3"}}
EOF2
start --insecure-local
qspec() { # N CPU: N documents of project q, each asking CPU
	for i in $(seq "$1"); do
		[ "$i" = 1 ] || echo ---
		printf 'project: q\nname: q%s\nfunction: {name: q, command: [sleep, "%s"]}\nresources: {cpu: %s, mem: 16Mi}\n' "$i" "$nap" "$2"
	done
}
count_q() { call GET '/api/v1/projects/q/runs?limit=1000' >/dev/null; json 'len(d["items"])' <body 2>/dev/null || echo 0; }
# five runs under runs: 3: the first three sleep 3, 4 and 5 s (the quota and the metrics are read
# while all three hold it: four calls, over a second on a loaded machine with PostgreSQL), the
# fourth (no priority) and the fifth (high) wait; the fifth starts first, when the first frees
# its place
for i in 1 2 3 4 5; do
	[ "$i" = 1 ] || echo ---
	printf 'project: q\nname: w%s\nfunction: {name: w, command: [sleep, "%s"]}\nresources: {cpu: 100m, mem: 16Mi}\n' "$i" "$([ "$i" -le 3 ] && echo "$((i + 2))" || echo 0.2)"
	[ "$i" = 5 ] && echo 'priority_class: urgent'
done >sweep.yaml
s1=$(call POST /api/v1/runs --data-binary @sweep.yaml)
states=$(call GET '/api/v1/projects/q/runs?limit=1000' >/dev/null; json '" ".join(sorted(r["state"] for r in d["items"]))' <body)
reasons=$(json '"|".join(sorted(set(r.get("reason", "") for r in d["items"] if r["state"] == "Pending")))' <body)
call GET /api/v1/projects/q/quota >/dev/null
quota=$(json '" ".join("%s=%s/%s/%s" % (x["resource"], x["used"], x["quota"], x["free"]) for x in d["resources"]) + " waiting=%d" % d["waiting"]' <body)
curl -s "$url/metrics" >metrics.txt
for _ in $(seq 100); do
	call GET '/api/v1/projects/q/runs?limit=1000' >/dev/null
	[ "$(json 'all(r["state"] == "Succeeded" for r in d["items"])' <body)" = True ] && break
	sleep 0.1
done
order=$(json '" ".join(r["name"].split("-")[0] for r in sorted(d["items"], key=lambda r: (r["started"], r["name"])) if r["name"][:2] in ("w4", "w5"))' <body)
done5=$(json 'sum(r["state"] == "Succeeded" for r in d["items"])' <body)
if [ "$s1" = 201 ] && [ "$states" = "Pending Pending Running Running Running" ] &&
	[ "$reasons" = "waiting for quota: runs 3 of 3 in use" ] &&
	[ "$quota" = "cpu=300m/1/700m mem=48Mi/None/None gpu=0/None/None runs=3/3/0 waiting=2" ] &&
	[ "$done5" = 5 ] && [ "$order" = "w5 w4" ]; then
	ok quota-queues-sweep
else
	fail quota-queues-sweep "$s1; $states; $reasons; $quota; $done5 done; order $order"
fi
if grep -qx 'berth_quota_used{project="q",resource="runs"} 3' metrics.txt &&
	grep -qx 'berth_quota_limit{project="q",resource="runs"} 3' metrics.txt &&
	grep -qx 'berth_quota_used{project="q",resource="cpu"} 0.3' metrics.txt &&
	grep -qx 'berth_quota_limit{project="q",resource="cpu"} 1' metrics.txt; then
	ok quota-metrics
else
	fail quota-metrics "$(grep berth_quota metrics.txt | tr '\n' ' ')"
fi
# a run that needs more than the whole quota can never fit it: refused, nothing stored
qspec 1 2 >qbig.yaml
n0=$(count_q)
s2=$(call POST /api/v1/runs --data-binary @qbig.yaml)
m2=$(json 'd["error"]["problems"][0]["text"]' <body 2>/dev/null)
if [ "$s2" = 422 ] && [ "$(count_q)" = "$n0" ] && echo "$m2" | grep -q "the run needs 2 cpu, more than project \"q\"'s whole quota of 1"; then
	ok quota-whole-refused
else
	fail quota-whole-refused "$s2 ($m2)"
fi
# validate says it would wait, before anything is created
qspec 2 400m >q2.yaml
qspec 4 100m >q4.yaml
call POST /api/v1/runs --data-binary @q4.yaml >/dev/null
qspec 1 100m >q1.yaml
call POST /api/v1/projects/q/validate --data-binary @q1.yaml >/dev/null
if grep -q 'would wait for quota: runs 3 of 3 in use' body; then
	ok quota-validate-would-wait
else
	fail quota-validate-would-wait "$(head -c 600 body)"
fi
stop_project q
# a deployment counts its replicas in the usage as it does in the check: two of 2 x 1 cpu
# do not fit a quota of 3 together: the second waits
dep() { printf 'project: r\nname: %s\naction: deploy\nreplicas: 2\nfunction: {name: d, command: [sleep, "%s"]}\nresources: {cpu: "1", mem: 16Mi}\n' "$1" "$nap"; }
dep d1 >d1.yaml
dep d2 >d2.yaml
s1=$(call POST /api/v1/runs --data-binary @d1.yaml)
s2=$(call POST /api/v1/runs --data-binary @d2.yaml)
st2=$(json 'd["state"] + ": " + d.get("reason", "")' <body 2>/dev/null)
if [ "$s1$s2" = 201201 ] && [ "$st2" = "Pending: waiting for quota: cpu 2 of 3 in use" ]; then
	ok quota-counts-replicas
else
	fail quota-counts-replicas "first $s1, second $s2 ($st2)"
fi
stop_project r
stop_server
# two processes on one store (this server and berth run) cannot both take the quota: it is
# checked in the transaction that admits the runs (each holds it 2 s here); what does not
# fit waits
BERTH_TEST_COMMIT_DELAY_MS=2000 start --insecure-local
qspec 2 100m >qa.yaml
qspec 1 100m | sed 's/name: q1/name: qb/' >qb.yaml
qspec 1 100m | sed 's/name: q1/name: qc/' >qc.yaml
curl -s -o qa.out -w '%{http_code}' -X POST --data-binary @qa.yaml "$url/api/v1/runs" >qa.status &
poster=$!
sleep 0.3
BERTH_TEST_COMMIT_DELAY_MS=2000 "$berth" run --config policy.yaml qb.yaml >qb.out 2>&1 &
cli1=$!
BERTH_TEST_COMMIT_DELAY_MS=2000 "$berth" run --config policy.yaml qc.yaml >qc.out 2>&1 &
cli2=$!
wait "$poster" "$cli1" "$cli2"
running=$(call GET '/api/v1/projects/q/runs?limit=1000' >/dev/null; json 'len([r for r in d["items"] if r["state"] == "Running"])' <body)
pending=$(json 'len([r for r in d["items"] if r["state"] == "Pending"])' <body)
if [ "$running" = 3 ] && [ "$pending" = 1 ] && grep -q 'waiting for quota: runs 3 of 3 in use' qb.out qc.out; then
	ok quota-across-processes
else
	fail quota-across-processes "$running running, $pending pending of a quota of 3 (server $(cat qa.status), cli: $(cat qb.out qc.out | tr '\n' ' '))"
fi
stop_project q
stop_server
start --insecure-local
# a submission whose usage other writers change at every try gives up after 8 with a 409,
# and stores nothing
stop_server
BERTH_TEST_USAGE_CHANGES=1 start --insecure-local
n0=$(count_q)
s1=$(call POST /api/v1/runs --data-binary @q2.yaml)
m1=$(json 'd["error"]["message"]' <body 2>/dev/null)
n1=$(count_q)
stop_server
start --insecure-local
if [ "$s1" = 409 ] && echo "$m1" | grep -q 'changed 8 times' && [ "$n1" = "$n0" ]; then
	ok quota-retries-give-up-409
else
	fail quota-retries-give-up-409 "$s1 ($m1), $n0 runs before, $n1 after"
fi
# the second document cannot run here: nothing of the first is left, and the server answers
printf 'project: whole\nname: first\nfunction: {name: a, command: ["true"]}\n---\nproject: whole\nname: second\naction: cronjob\nschedule: "* * * * *"\nfunction: {name: b, command: ["true"]}\n' >jobcron.yaml
s1=$(call POST /api/v1/runs --data-binary @jobcron.yaml)
m1=$(json 'd["error"]["message"]' <body 2>/dev/null)
s2=$(call GET /healthz)
call GET '/api/v1/projects/whole/runs' >/dev/null
n=$(json 'len(d["items"])' <body 2>/dev/null)
if [ "$s1" = 422 ] && echo "$m1" | grep -q cronjob && [ "$s2" = 200 ] && [ "$n" = 0 ] && kill -0 "$spid"; then
	ok batch-refused-whole
else
	fail batch-refused-whole "job then cronjob: $s1 ($m1), then healthz $s2, $n runs stored"
fi
if "$berth" run jobcron.yaml >out 2>&1; then rc=0; else rc=$?; fi
if [ "$rc" = 2 ] && grep -q cronjob out && ! grep -qi 'sanitizer\|runtime error' out; then
	ok cli-batch-refused-whole
else
	fail cli-batch-refused-whole "berth run of a job then a cronjob: exit $rc"
fi
# a function registered before a field was locked no longer sets it
printf 'function: {name: placed, command: ["true"]}\nnode_selector: {pool: fast}\n' >placed.yaml
s1=$(call POST /api/v1/projects/default/functions --data-binary @placed.yaml)
stop_server
cat >>policy.yaml <<'EOF2'
security:
  user_fields: [node_selector]
EOF2
start --insecure-local
printf 'function: placed\n' >useplaced.yaml
s2=$(call POST /api/v1/runs --data-binary @useplaced.yaml)
m2=$(json 'd["error"]["problems"][0]["text"]' <body 2>/dev/null)
s3=$(call POST /api/v1/projects/default/functions --data-binary @placed.yaml)
if [ "$s1" = 201 ] && [ "$s2" = 422 ] && echo "$m2" | grep -q 'node_selector is set by function "placed"' &&
	echo "$m2" | grep -q 'policy.yaml:8' && [ "$s3" = 422 ]; then
	ok function-checked-against-current-policy
else
	fail function-checked-against-current-policy "registered $s1; run after the lock $s2 ($m2); registered again $s3"
fi
stop_server
# a function stored deep by an older berth (1,000 nested lists in its inputs) is refused
# with its place when read, at every restart, and the server answers on
python3 -c '
print("INSERT INTO functions (project, name, spec, created, updated) VALUES (\x27default\x27, \x27deep\x27, \x27"
      "function: {name: deep, command: [\"true\"]}\ninputs: {x: " + "[" * 1000 + "1" + "]" * 1000 + "}\n"
      "\x27, 1, 1) ON CONFLICT (project, name) DO UPDATE SET spec = excluded.spec;")' | store_sql
start --insecure-local
s1=$(call GET /api/v1/projects/default/functions/deep)
s2=$(call GET /api/v1/projects/default/functions)
printf 'function: deep\n' >usedeep.yaml
s3=$(call POST /api/v1/runs --data-binary @usedeep.yaml)
cp body body0
stop_server
start --insecure-local
s4=$(call GET /healthz)
if [ "$s1" = 200 ] && [ "$s2" = 200 ] && [ "$s3" = 422 ] && grep -q 'no longer reads' body0 && [ "$s4" = 200 ]; then
	ok stored-deep-function-read-safely
else
	fail stored-deep-function-read-safely "get $s1, list $s2, run $s3, after a restart $s4"
fi
stop_server
# killed before its commit: none of the documents' runs exist, and no 201 came
qspec 40 10m | sed 's/project: q/project: atom/' >atom.yaml
BERTH_TEST_COMMIT_DELAY_MS=3000 start --insecure-local
curl -s -o atom.out -w '%{http_code}' -X POST --data-binary @atom.yaml "$url/api/v1/runs" >atom.status &
poster=$!
sleep 1.5
kill -9 "$spid"
wait "$spid" 2>/dev/null
wait "$poster"
start --insecure-local
call GET '/api/v1/projects/atom/runs' >/dev/null
n=$(json 'len(d["items"])' <body 2>/dev/null)
if [ "$n" = 0 ] && [ "$(cat atom.status)" != 201 ]; then
	ok kill9-mid-batch-leaves-nothing
else
	fail kill9-mid-batch-leaves-nothing "$n of 40 runs stored, answer $(cat atom.status)"
fi
stop_server
mv policy.saved policy.yaml

# ---- kill -9 while runs are submitted: every 201 survives and ends ----------------------------
start --insecure-local
spec quick 'echo done' >quick.yaml
: >accepted
(
	for _ in $(seq 60); do
		id=$(curl -s -X POST --data-binary @quick.yaml "$url/api/v1/runs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null) &&
			echo "$id" >>accepted
	done
) &
loader=$!
sleep 0.6
kill -9 "$spid"
wait "$spid" 2>/dev/null
wait "$loader"
n=$(wc -l <accepted)
start --insecure-local
count_final accepted
if [ "$n" -gt 0 ] && [ "$missing" = 0 ] && [ "$unfinished" = 0 ]; then
	ok "kill9-every-accepted-run-ends ($n accepted before and after the kill)"
else
	fail kill9-every-accepted-run-ends "$n accepted, $missing missing, $unfinished not final"
fi
stop_server

# ---- a queued run starts by the server's own pass when a running run's supervisor dies, with
# nothing else writing to the store (the pass over the queue is skipped only while nothing
# can start: no more free capacity than at its last pass, and no other writer since)
start --insecure-local
busy=$(wait_idle)
post_json() { curl -s -X POST -H 'Content-Type: application/json' --data-binary "$1" "$url/api/v1/runs" | json 'd["id"]'; }
hold=$(post_json '{"function": {"name": "hold", "command": ["sleep", "'"${nap}2"'"]}, "resources": {"cpu": "2"}}')
nxt=$(post_json '{"function": {"name": "next", "command": ["true"]}, "resources": {"cpu": "1"}}')
call GET "/api/v1/runs/$nxt" >/dev/null
queued=$(json 'd["state"]' <"$tmp/body" 2>/dev/null)
sleep 5.5 # one pass of the server over the queue, which can start nothing
pkill -9 -f "__supervise $hold"
pkill -9 -f "sleep ${nap}2"
for _ in $(seq 150); do
	call GET "/api/v1/runs/$nxt" >/dev/null
	s=$(json 'd["state"]' <"$tmp/body" 2>/dev/null)
	[ "$s" = Succeeded ] && break
	sleep 0.1
done
call GET "/api/v1/runs/$hold" >/dev/null
h=$(json 'd["state"]' <"$tmp/body" 2>/dev/null)
if [ "$queued" = Pending ] && [ "$s" = Succeeded ] && [ "$h" = Failed ]; then
	ok queue-started-by-the-server-after-a-dead-supervisor
else
	fail queue-started-by-the-server-after-a-dead-supervisor "queued run: $queued, then $s after 15 s; the held run: $h; not final before: ${busy:-none}"
fi
stop_server
# ---- durable answers, a power cut's stand-in: BERTH_FAULT kills the server (SIGKILL) just
# before the fsync that makes a create durable. No 201 comes, yet the run was committed
# (a kill keeps what the page cache holds: after a restart it is there): the answer waits
# for the fsync. With BERTH_STORE_SYNC=normal (no fsync) the same create is answered 201,
# which is what this test would see if answers did not wait. A berth command likewise
# does not print a token it made before that token is on disk.
arm=$tmp/fault-armed
if [ -n "${BERTH_STORE:-}" ]; then
	# the fault is SQLite's WAL fsync (store/sync.c): PostgreSQL's commit is durable when
	# it returns, with nothing of berth's between them
	for t in durable-no-201-before-fsync durable-control-normal-answers-without-fsync \
		durable-cli-prints-after-fsync; do
		echo "skip server $t (the store is a PostgreSQL: its commit is its own fsync)"
	done
else
printf 'project: durable\nname: %s\nfunction: {name: f, command: ["true"]}\nresources: {cpu: 100m, mem: 16Mi}\n' \
	probe >durable.yaml
BERTH_FAULT=kill-before-fsync:$arm start --insecure-local
touch "$arm"
code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' -X POST --data-binary @durable.yaml "$url/api/v1/runs")
wait "$spid" 2>/dev/null
died=$?
rm -f "$arm"
start --insecure-local
call GET /api/v1/projects/durable/runs >/dev/null
stored=$(json 'len([r for r in d["items"] if r["name"].startswith("probe")])' <body 2>/dev/null)
stop_server
if [ "$code" != 201 ] && [ "$died" = 137 ] && [ "$stored" = 1 ]; then
	ok "durable-no-201-before-fsync (killed before the fsync: answer $code, the run stored)"
else
	fail durable-no-201-before-fsync "answer $code (201 expected never), exit $died (137: SIGKILL), $stored run(s) stored (1)"
fi
BERTH_STORE_SYNC=normal BERTH_FAULT=kill-before-fsync:$arm start --insecure-local
touch "$arm"
code=$(curl -s -m 20 -o /dev/null -w '%{http_code}' -X POST --data-binary @durable.yaml "$url/api/v1/runs")
alive_after=no
kill -0 "$spid" 2>/dev/null && alive_after=yes
rm -f "$arm"
stop_server
if [ "$code" = 201 ] && [ "$alive_after" = yes ]; then
	ok "durable-control-normal-answers-without-fsync (201 with no fsync to wait for)"
else
	fail durable-control-normal-answers-without-fsync "answer $code, server alive: $alive_after"
fi
touch "$arm"
made=$(BERTH_FAULT=kill-before-fsync:$arm "$berth" token create --project durable --role viewer \
	--description durable-probe 2>/dev/null)
st=$?
rm -f "$arm"
if [ "$st" = 137 ] && [ -z "$made" ] && "$berth" token list 2>/dev/null | grep -q durable-probe; then
	ok "durable-cli-prints-after-fsync (killed before the fsync: nothing printed, the token stored)"
else
	fail durable-cli-prints-after-fsync "exit $st (137), printed '$made' (nothing), token list: $("$berth" token list 2>&1 | grep -c durable-probe)"
fi
# berth run starts the supervisor while its commit is made durable, and prints the run only after
printf 'project: durable\nname: cliprobe\nfunction: {name: f, command: ["true"]}\n' >cliprobe.yaml
touch "$arm"
printed=$(BERTH_FAULT=kill-before-fsync:$arm "$berth" run cliprobe.yaml 2>/dev/null)
st=$?
rm -f "$arm"
n=$("$berth" get runs --project durable -o json 2>/dev/null | grep -c '"name": "cliprobe-')
if [ "$st" = 137 ] && [ -z "$printed" ] && [ "$n" = 1 ]; then
	ok "durable-cli-run-prints-after-fsync (killed before the fsync: nothing printed, the run stored)"
else
	fail durable-cli-run-prints-after-fsync "exit $st (137), printed '$printed' (nothing), $n run(s) stored (1)"
fi
fi

if grep -qi "sanitizer\|runtime error" "$tmp"/serve.*.log; then
	fail server-clean "$(grep -i -m3 'sanitizer\|runtime error' "$tmp"/serve.*.log)"
else
	ok server-clean
fi
