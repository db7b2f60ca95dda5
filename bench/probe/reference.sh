#!/usr/bin/env bash
# reference.sh: the probe reference run under results/probe-nginx: nginx's
# limit_req at 50 requests per second per client address, burst=20
# nodelay, probed from four loopback addresses; then a picture of the
# top of its page (results/probe-nginx/page.png) in headless Chromium.
#
#   bench/probe/reference.sh        # or: make results
set -euo pipefail
cd "$(dirname "$0")/../.."

PORT=${PORT:-18482}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
tmp=$(mktemp -d)
chmod 755 "$tmp"
server=""
cleanup() {
	[ -n "$server" ] && kill -QUIT "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/html" "$tmp/logs"
echo ok >"$tmp/html/index.html"
# limit_req runs in the preaccess phase, after `return` would have
# answered: the location serves a file.
cat >"$tmp/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log;
events { worker_connections 4096; }
http {
    access_log $tmp/logs/access.log;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;
    limit_req_zone \$binary_remote_addr zone=api:1m rate=50r/s;
    server {
        listen 127.0.0.1:$PORT;
        root $tmp/html;
        location / {
            limit_req zone=api burst=20 nodelay;
            limit_req_status 429;
        }
    }
}
CONF
"$NGINX" -p "$tmp" -c "$tmp/nginx.conf" &
server=$!
for _ in $(seq 100); do
	(echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.1
done

go build -o "$tmp/ratebench" ./cmd/ratebench
"$tmp/ratebench" probe -url "http://127.0.0.1:$PORT/index.html" -source-addrs 127.0.0.1-127.0.0.4 -out results/probe-nginx
chromium --headless --no-sandbox --hide-scrollbars --window-size=1200,900 \
	--screenshot=results/probe-nginx/page.png "file://$PWD/results/probe-nginx/report.html" 2>/dev/null
