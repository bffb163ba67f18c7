-- SPDX-License-Identifier: MIT
-- The egress front's decision by name (haproxy.cfg.in): whether the execution a plain request came
-- from may reach its host and port. The relay writes each execution's list, already checked by the
-- worker against the host's and the key's, to LISTS/ADDRESS, ADDRESS being the execution's own in
-- 127.64.0.0/10 that its connections come from; an entry a line, as lib/egress.c formats them
-- ("pypi.org", "*.example.com", either with ":PORT"). The rule of coverage is lib/egress.c's
-- egress_rule_covers(), for a request's one name and port: a rule with a port covers that port
-- alone, one without covers 80 and 443; "*.s" covers the names below s, not s itself.
--
-- Squid's helper (egress-acl.c) decides for tunnels with the C of lib/egress.c; HAProxy runs no
-- helper, so the same few lines are here, and tests/egress/proxy.bats holds both to the same cases.
-- The file is read at each request (tmpfs, a few hundred bytes): an execution's list lives only as
-- long as the execution, and nothing of it is kept here.

local lists = nil

-- Whether name is a host name as lib/egress.c's name_valid() takes one: labels of 1 to 63 letters,
-- digits and '-' (not at either end), at least two, the last not all digits (no address). The C
-- also refuses what inet_aton() reads as an address ("1.0x1"); no list holds such a name, so no
-- entry covers one here either.
local function name_valid(name)
    if #name == 0 or #name > 253 or not name:find("^[a-z0-9.-]+$") then
        return false
    end
    local labels, last = 0, nil
    for label in (name .. "."):gmatch("([^.]*)%.") do
        if #label == 0 or #label > 63 or label:sub(1, 1) == "-" or label:sub(-1) == "-" then
            return false
        end
        labels = labels + 1
        last = label
    end
    return labels >= 2 and not last:find("^[0-9]+$")
end

local function covers(entry, name, port)
    local rule, rule_port = entry:match("^([^:]+):?([0-9]*)$")
    if not rule then
        return false
    end
    if rule_port ~= "" then
        if tonumber(rule_port) ~= port then
            return false
        end
    elseif port ~= 80 and port ~= 443 then
        return false
    end
    if rule:sub(1, 2) == "*." then
        local suffix = rule:sub(2)
        return #name > #suffix and name:sub(-#suffix) == suffix
    end
    return rule == name
end

-- sandboxd_egress_check: txn.egress_ok set to 1 when the list of the connection's client covers
-- txn.host at txn.port (HAProxy's host_only and port_only of the one Host header; port 0, none
-- given, is 80). Anything unreadable or unexpected leaves it unset: refused.
core.register_action("sandboxd_egress_check", { "http-req" }, function(txn)
    local client = txn.f:src()
    local name = txn:get_var("txn.host")
    local port = tonumber(txn:get_var("txn.port")) or 0
    if port == 0 then
        port = 80
    end
    if not name or not name_valid(name) then
        return
    end
    -- The name logged (haproxy.cfg.in's log-format): only a well-formed one.
    txn:set_var("txn.name", name)
    if not client or not client:find("^127%.[0-9.]+$") then
        return
    end
    local f = io.open(lists .. "/" .. client, "r")
    if not f then
        return
    end
    for entry in f:lines() do
        if covers(entry, name, port) then
            f:close()
            txn:set_var("txn.egress_ok", 1)
            return
        end
    end
    f:close()
end, 0)

-- The lists' directory: haproxy.cfg.in's global section sets it ("setenv") before it loads this
-- (HAProxy 2.6, Debian 12's, passes no argument to a Lua file).
lists = os.getenv("SANDBOXD_EGRESS_LISTS")
if not lists or lists == "" then
    error("egress-list.lua: SANDBOXD_EGRESS_LISTS, the lists' directory, is not set")
end
