-- bench/server_watch.lua: what an open run page asks while it is open: a watch of its
-- project's runs (GET .../runs?watch=true&rv=N, N from its last answer), asked again as
-- soon as it answers. The first rv is the script's argument (a list's "rv").
--   wrk -t1 -cPAGES -d30s -s bench/server_watch.lua URL -- RV
local rv = "0"

function init(args)
	if args[1] then rv = args[1] end
end

function request()
	return wrk.format("GET", "/api/v1/projects/default/runs?watch=true&timeout=30&rv=" .. rv)
end

function response(status, headers, body)
	local v = body:match('"rv": "(%d+)"')
	if v and tonumber(v) > tonumber(rv) then rv = v end
end
