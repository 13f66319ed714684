#!/usr/bin/env bash
# The Debian packages the test suite uses, installed in one apt-get call when any is missing (as
# root). infra/local/test.sh runs it; .ci/run starts it beside `npm ci`, since the one waits on the
# network and disk while the other does too, and a fresh CI machine has none of them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

missing=()
# The README's session (test/docs/readme.test.ts) is run as written, with curl.
command -v curl >/dev/null || missing+=(curl)
# The live route page is tested in a real headless Chromium (Debian's, driven by playwright-core).
command -v chromium >/dev/null || missing+=(chromium)
# Live links are made through a real nginx with infra/proxy/nginx.conf (test/http/public-url.test.ts).
command -v nginx >/dev/null || missing+=(nginx)
# Labels are read back with poppler's pdftotext (test/shipments/labels/scripts-pdf.test.ts).
command -v pdftotext >/dev/null || missing+=(poppler-utils)
# The compatibility pass and the tests that start servers of their own run Debian's PostgreSQL 15.
find_pg_bin >/dev/null || missing+=(postgresql-15)
# The bus of every pass (infra/local/start-nats.sh).
command -v nats-server >/dev/null || missing+=(nats-server)

[ "${#missing[@]}" = 0 ] || apt_install "${missing[@]}"
