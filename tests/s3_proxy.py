#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 proxy in front of a local S3 server, for
tests/test_s3.sh and tools/bench/bench_s3.py (standard library only).

    python3 tests/s3_proxy.py LISTEN_PORT UPSTREAM_PORT [--latency-ms MS]
        [--fail-every N [--fail-status S]] [--fail-after N] [--drop-every N]
        [--list-hostile MODE] [--whole-every N] [--redirect-once] [--redirect-to P]
        [--pause-after N [--pause-s S]] [--log]

Clients keep their connections (keep-alive); each request is forwarded on a
new connection to 127.0.0.1:UPSTREAM_PORT and its response streamed back.
Requests are forwarded byte for byte, so SigV4 signatures stay valid.

  --latency-ms MS   every request waits MS milliseconds before it is forwarded
  --fail-every N    every N-th request is answered with --fail-status (503;
                    429 for throttling) and S3's SlowDown XML, not forwarded
  --fail-after N    every request after the first N is answered so
  --drop-every N    every N-th GET gets its status line, headers and half of
                    its body, then the connection is closed (a dropped
                    connection mid-body)
  --lie-every N     every N-th GET's Content-Length claims 100 bytes more
                    than its body, then the connection is closed (a short body)
  --shift-every N   every N-th ranged GET's Content-Range claims bytes one
                    later than those sent (a server answering another range)
  --list-hostile M  every ListObjectsV2 answer made hostile: cut (cut after its
                    last </Contents>), dup (its first entry twice), alternate
                    (IsTruncated true, tokens A and B in turn), newtoken (an empty
                    page, IsTruncated true, a new token each time), html (a login
                    page), garbage (random bytes)
  --whole-every N   every N-th ranged GET goes upstream without its Range header:
                    the whole object with 200 (a CDN or plain server)
  --redirect-once   the first request for each path is answered 307 to itself
  --redirect-to P   every request is answered 307 to port P (another endpoint)
  --pause-after N   the request after the first N waits --pause-s seconds (once)
  --log             one line per request on stderr (method, path, what was done,
                    the access key id that signed it)

Prints "ready" on stdout once it listens.
"""
import argparse
import socket
import socketserver
import sys
import threading
import time

lock = threading.Lock()
count = {"requests": 0, "gets": 0, "lists": 0, "ranged": 0}
redirected = set()
paused = []


def read_head(sock, buf):
    """The next request or response head from sock (bytes before the blank
    line) and what came after it; (None, b"") at EOF."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def header(lines, name):
    name = name.lower() + b":"
    for line in lines[1:]:
        if line.lower().startswith(name):
            return line.split(b":", 1)[1].strip()
    return None


def shift_range(line):
    """'Content-Range: bytes A-B/T' as bytes A+1-B+1 (when that fits in T)."""
    try:
        a, rest = line.split(b"bytes", 1)[1].strip().split(b"-", 1)
        b, t = rest.split(b"/", 1)
        if int(b) + 1 < int(t):
            return b"Content-Range: bytes %d-%d/%s" % (int(a) + 1, int(b) + 1, t)
    except (ValueError, IndexError):
        pass
    return line


def hostile_listing(mode, body, n):
    """A ListObjectsV2 answer (bytes) made hostile the way mode says."""
    if mode == "cut":
        i = body.rfind(b"</Contents>")
        return body[: i + len(b"</Contents>")] if i >= 0 else body[: len(body) // 2]
    if mode == "dup":
        a = body.find(b"<Contents>")
        b = body.find(b"</Contents>")
        return body[:a] + body[a:b + 11] + body[a:] if a >= 0 else body
    if mode in ("alternate", "newtoken"):
        tok = (b"A" if n % 2 else b"B") if mode == "alternate" else b"T%d" % n
        head = body.split(b"<Contents>")[0] if mode == "newtoken" else body.split(b"</ListBucketResult>")[0]
        head = head.replace(b"<IsTruncated>false</IsTruncated>", b"<IsTruncated>true</IsTruncated>")
        for tag in (b"NextContinuationToken", b"KeyCount"):
            s, e = head.find(b"<" + tag + b">"), head.find(b"</" + tag + b">")
            if s >= 0 and e >= 0:
                head = head[:s] + head[e + len(tag) + 3:]
        return head + b"<NextContinuationToken>" + tok + b"</NextContinuationToken></ListBucketResult>"
    if mode == "html":
        return b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in</body></html>"
    return bytes((n * 7919 + i * 31) % 256 for i in range(300))


def key_id(lines):
    """The access key id of a SigV4 Authorization header ("-" unsigned)."""
    a = header(lines, b"authorization") or b""
    i = a.find(b"Credential=")
    return a[i + 11:].split(b"/")[0].decode(errors="replace") if i >= 0 else "-"


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        buf = b""
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle wait between head and body
        while True:
            head, buf = read_head(self.request, buf)
            if head is None:
                return
            lines = head.split(b"\r\n")
            method = lines[0].split(b" ")[0]
            clen = int(header(lines, b"content-length") or 0)
            while len(buf) < clen:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                buf += chunk
            body, buf = buf[:clen], buf[clen:]
            if not self.one(lines, method, body):
                return

    def one(self, lines, method, body):
        """One request; False when the client connection is to close."""
        a = self.server.args
        with lock:
            count["requests"] += 1
            n = count["requests"]
            if method == b"GET":
                count["gets"] += 1
            g = count["gets"]
        path = lines[0].split(b" ")[1].decode(errors="replace")
        is_list = method == b"GET" and "list-type=2" in path
        ranged = method == b"GET" and header(lines, b"range") is not None
        with lock:
            count["lists"] += is_list
            count["ranged"] += ranged
            nl, nr = count["lists"], count["ranged"]
            first = path not in redirected
            redirected.add(path)
            pause = a.pause_after is not None and n > a.pause_after and not paused
            if pause:
                paused.append(n)
        if pause:
            self.log("%s %s: paused %g s" % (method.decode(), path, a.pause_s))
            time.sleep(a.pause_s)
        if a.redirect_to or (a.redirect_once and first):
            port = a.redirect_to or self.server.server_address[1]
            loc = b"http://127.0.0.1:%d%s" % (port, path.encode())
            self.request.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % loc)
            self.log("%s %s: answered 307 to %s" % (method.decode(), path, loc.decode()))
            return True
        if (a.fail_every and n % a.fail_every == 0) or (a.fail_after is not None and n > a.fail_after):
            xml = b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>injected by s3_proxy</Message></Error>"
            reason = {503: b"Service Unavailable", 429: b"Too Many Requests"}.get(a.fail_status, b"Error")
            self.request.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s"
                                 % (a.fail_status, reason, len(xml), xml))
            self.log("%s %s: answered %d" % (method.decode(), path, a.fail_status))
            return True
        if a.latency_ms:
            time.sleep(a.latency_ms / 1000.0)
        fwd = [l for l in lines if not l.lower().startswith(b"connection:")] + [b"Connection: close"]
        whole = ranged and a.whole_every and nr % a.whole_every == 0
        if whole:
            fwd = [l for l in fwd if not l.lower().startswith(b"range:")]
        if is_list and a.list_hostile:
            return self.hostile(fwd, body, method, path, nl)
        up = socket.create_connection(("127.0.0.1", self.server.upstream))
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            up.sendall(b"\r\n".join(fwd) + b"\r\n\r\n" + body)
            rhead, rest = read_head(up, b"")
            if rhead is None:
                return False
            rlines = rhead.split(b"\r\n")
            status = int(rlines[0].split(b" ")[1])
            rlen = header(rlines, b"content-length")
            framed = rlen is not None or (header(rlines, b"transfer-encoding") or b"").lower() == b"chunked"
            keep = framed or method == b"HEAD" or status in (204, 304)
            out = [l for l in rlines if not l.lower().startswith(b"connection:")]
            lie = a.lie_every and method == b"GET" and g % a.lie_every == 0 and rlen is not None
            if lie:
                out = [b"Content-Length: %d" % (int(rlen) + 100) if l.lower().startswith(b"content-length:") else l for l in out]
                keep = False
            if a.shift_every and method == b"GET" and g % a.shift_every == 0:
                out = [shift_range(l) if l.lower().startswith(b"content-range:") else l for l in out]
            out.append(b"Connection: keep-alive" if keep else b"Connection: close")
            self.request.sendall(b"\r\n".join(out) + b"\r\n\r\n")
            cut = None
            if a.drop_every and method == b"GET" and g % a.drop_every == 0 and rlen is not None and int(rlen) > 1:
                cut = int(rlen) // 2
            sent = self.relay(up, rest, cut)
            if rlen is not None and method != b"HEAD" and sent < int(rlen):
                keep = False  # the upstream body ended early (a 412 announcing a length): no keep-alive past it
            if cut is not None:
                self.log("%s %s: cut after %d of %s body bytes" % (method.decode(), path, sent, rlen.decode()))
                self.request.shutdown(socket.SHUT_RDWR)
                return False
            self.log("%s %s: %d, %d body bytes%s%s, key %s" % (method.decode(), path, status, sent, ", length lied" if lie else "",
                                                              ", Range dropped" if whole else "", key_id(lines)))
            if not keep:
                self.request.shutdown(socket.SHUT_RDWR)
            return keep
        finally:
            up.close()

    def hostile(self, fwd, body, method, path, nl):
        """A listing fetched whole upstream, answered made hostile (pages
        after the first of the token modes: made up, empty)."""
        mode = self.server.args.list_hostile
        if mode in ("alternate", "newtoken") and "continuation-token=" in path:
            new = hostile_listing(mode, b"<?xml version=\"1.0\"?>\n<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", nl)
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s" % (len(new), new))
            self.log("%s %s: listing made up (%s), %d bytes" % (method.decode(), path, mode, len(new)))
            return True
        up = socket.create_connection(("127.0.0.1", self.server.upstream))
        try:
            up.sendall(b"\r\n".join(fwd) + b"\r\n\r\n" + body)
            data = b""
            while True:
                k = up.recv(65536)
                if not k:
                    break
                data += k
        finally:
            up.close()
        head, rest = data.split(b"\r\n\r\n", 1)
        if b"chunked" in head.lower():
            out, i = b"", 0
            while True:
                j = rest.index(b"\r\n", i)
                size = int(rest[i:j].split(b";")[0], 16)
                if size == 0:
                    break
                out += rest[j + 2:j + 2 + size]
                i = j + 2 + size + 2
            rest = out
        new = hostile_listing(self.server.args.list_hostile, rest, nl)
        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s" % (len(new), new))
        self.log("%s %s: listing made hostile (%s), %d bytes" % (method.decode(), path, self.server.args.list_hostile, len(new)))
        return True

    def relay(self, up, rest, cut):
        """The upstream body to the client until EOF (or `cut` bytes)."""
        sent = 0
        data = rest
        mem = bytearray(1 << 20)
        while True:
            if data:
                if cut is not None and sent + len(data) >= cut:
                    self.request.sendall(data[: cut - sent])
                    return cut
                self.request.sendall(data)
                sent += len(data)
            k = up.recv_into(mem)
            if k == 0:
                return sent
            data = memoryview(mem)[:k]

    def log(self, msg):
        if self.server.args.log:
            sys.stderr.write("proxy: %s\n" % msg)
            sys.stderr.flush()


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 256  # clients open many connections at once (the default 5 drops SYNs: 1 s stalls)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("upstream", type=int)
    ap.add_argument("--latency-ms", type=float, default=0)
    ap.add_argument("--fail-every", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--fail-after", type=int, default=None)
    ap.add_argument("--drop-every", type=int, default=0)
    ap.add_argument("--lie-every", type=int, default=0)
    ap.add_argument("--shift-every", type=int, default=0)
    ap.add_argument("--list-hostile", choices=["cut", "dup", "alternate", "newtoken", "html", "garbage"])
    ap.add_argument("--whole-every", type=int, default=0)
    ap.add_argument("--redirect-once", action="store_true")
    ap.add_argument("--redirect-to", type=int, default=0)
    ap.add_argument("--pause-after", type=int, default=None)
    ap.add_argument("--pause-s", type=float, default=3)
    ap.add_argument("--log", action="store_true")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.upstream = args.upstream
    srv.args = args
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
